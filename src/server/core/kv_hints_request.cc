#include "server/core/kv_hints_request.h"

#include <cmath>
#include <initializer_list>
#include <string>

#include "server/common/api_error.h"
#include "server/core/request.h"

namespace pg {
namespace {

using json = nlohmann::ordered_json;

struct HintReader {
  FieldReader& r;
  int64_t n_ctx;

  bool Bad(const std::string& param, const std::string& message) {
    r.Fail(BadRequest(fmt::format("'{}' {}", param, message), param, "invalid_kv_hint"));
    return false;
  }

  // `namespaced`: the envelope also takes "kv.<action>" (the action types of
  // the SGLang / Dynamo envelopes, e.g. "kv.demote").
  bool Action(const json& v, const std::string& param, bool namespaced, KvHint* h) {
    if (!v.is_string()) return Bad(param, fmt::format("must be a string, got {}", JsonTypeName(v)));
    const std::string given = v.get<std::string>();
    const std::string a = namespaced && given.rfind("kv.", 0) == 0 ? given.substr(3) : given;
    if (a == "retain")
      h->action = KvHint::Action::kRetain;
    else if (a == "pin")
      h->action = KvHint::Action::kPin;
    else if (a == "demote")
      h->action = KvHint::Action::kDemote;
    else if (a == "prefetch")
      h->action = KvHint::Action::kPrefetch;
    else {
      const char* names = namespaced ? "retain, pin, demote, prefetch (or kv.retain, kv.pin, kv.demote, kv.prefetch)"
                                     : "retain, pin, demote, prefetch";
      return Bad(param, fmt::format("must be one of {}; got \"{}\"", names, given));
    }
    return true;
  }

  // A version: the integer 1 (prosgrow's first envelope) or one of the
  // strings in `names` (the string versions of the SGLang / vLLM / Dynamo
  // envelopes). Anything else is refused, naming the field.
  bool Version(const json& v, const std::string& param, std::initializer_list<const char*> names) {
    if (v.is_number_integer() && v.get<int64_t>() == 1) return true;
    std::string accepted = "1";
    for (const char* n : names) {
      if (v.is_string() && v.get<std::string>() == n) return true;
      accepted += fmt::format(" or \"{}\"", n);
    }
    return Bad(param, fmt::format("must be {} (the versions prosgrow reads), got {}", accepted, v.dump()));
  }

  bool PrefixTokens(const json& v, const std::string& param, KvHint* h) {
    const bool integral =
        v.is_number_integer() || (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
    if (!integral) return Bad(param, fmt::format("must be an integer, got {}", JsonTypeName(v)));
    const double n = v.get<double>();
    if (n < 1 || n > double(n_ctx)) {
      return Bad(param, fmt::format("must be in [1, {}] (the model's context), got {}", n_ctx, v.dump()));
    }
    h->prefix_tokens = int64_t(n);
    return true;
  }

  bool Ttl(const json& v, const std::string& param, KvHint* h) {
    if (!v.is_number()) return Bad(param, fmt::format("must be a number, got {}", JsonTypeName(v)));
    const double t = v.get<double>();
    if (!(t > 0 && t <= kMaxKvHintTtlS)) {
      return Bad(param, fmt::format("must be in (0, {}] seconds, got {}", kMaxKvHintTtlS, v.dump()));
    }
    h->ttl_s = t;
    return true;
  }

  // The fields of a payload (or of a short-form hint, minus "action").
  bool Field(const std::string& key, const json& v, const std::string& base, KvHint* h) {
    if (key == "prefix_tokens") return v.is_null() || PrefixTokens(v, base + ".prefix_tokens", h);
    if (key == "ttl_s") return v.is_null() || Ttl(v, base + ".ttl_s", h);
    return Bad(base + "." + key, "is not a kv_hints field (expected prefix_tokens, ttl_s)");
  }

  // A hint object and its action under `key` ("action", or "action_type" in
  // an envelope), which is required.
  bool ObjectAndAction(const json& v, const std::string& base, const char* key, bool namespaced, KvHint* h) {
    if (!v.is_object()) return Bad(base, fmt::format("must be an object, got {}", JsonTypeName(v)));
    auto a = v.find(key);
    if (a == v.end()) return Bad(base + "." + key, "is required");
    return Action(*a, base + "." + key, namespaced, h);
  }

  bool ShortHint(const json& v, const std::string& base, KvHint* h) {
    if (!ObjectAndAction(v, base, "action", false, h)) return false;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (it.key() != "action" && !Field(it.key(), it.value(), base, h)) return false;
    }
    return true;
  }

  bool EnvelopeAction(const json& v, const std::string& base, KvHint* h) {
    if (!ObjectAndAction(v, base, "action_type", true, h)) return false;
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string& k = it.key();
      const json& x = it.value();
      if (k == "action_type") continue;
      if (k == "action_id") {
        if (!x.is_string()) return Bad(base + ".action_id", fmt::format("must be a string, got {}", JsonTypeName(x)));
      } else if (k == "action_version") {
        if (!Version(x, base + ".action_version", {"1", "1.0"})) return false;
      } else if (k == "payload") {
        if (x.is_null()) continue;
        if (!x.is_object()) return Bad(base + ".payload", fmt::format("must be an object, got {}", JsonTypeName(x)));
        for (auto p = x.begin(); p != x.end(); ++p)
          if (!Field(p.key(), p.value(), base + ".payload", h)) return false;
      } else {
        return Bad(base + "." + k,
                   "is not a kv_hints action field (expected action_id, action_type, action_version, payload)");
      }
    }
    return true;
  }

  bool List(const json& list, const std::string& base, bool envelope, ApiRequest* req) {
    if (!list.is_array()) return Bad(base, fmt::format("must be an array, got {}", JsonTypeName(list)));
    if (list.size() > size_t(kMaxKvHints)) {
      return Bad(base, fmt::format("has {} hints, more than the limit of {}", list.size(), kMaxKvHints));
    }
    for (size_t i = 0; i < list.size(); ++i) {
      KvHint h;
      const std::string param = fmt::format("{}[{}]", base, i);
      if (!(envelope ? EnvelopeAction(list[i], param, &h) : ShortHint(list[i], param, &h))) return false;
      req->kv_hints.push_back(h);
    }
    return true;
  }

  bool Envelope(const json& v, ApiRequest* req) {
    const json* actions = nullptr;
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string& k = it.key();
      const json& x = it.value();
      if (k == "actions") {
        actions = &x;
      } else if (k == "protocol_version") {
        if (!Version(x, "kv_hints.protocol_version", {"0.1"})) return false;
      } else if (k == "message_id") {
        if (!x.is_string()) return Bad("kv_hints.message_id", fmt::format("must be a string, got {}", JsonTypeName(x)));
      } else {
        return Bad("kv_hints." + k,
                   "is not a kv_hints envelope field (expected protocol_version, message_id, actions)");
      }
    }
    if (actions == nullptr) return Bad("kv_hints.actions", "is required");
    return List(*actions, "kv_hints.actions", true, req);
  }
};

}  // namespace

void ReadKvHints(FieldReader& r, int64_t n_ctx, ApiRequest* req) {
  const json* v = r.Get("kv_hints");
  if (v == nullptr) return;
  HintReader h{r, n_ctx};
  if (v->is_array())
    h.List(*v, "kv_hints", false, req);
  else if (v->is_object())
    h.Envelope(*v, req);
  else
    h.Bad("kv_hints", fmt::format("must be an array of hints or an envelope object, got {}", JsonTypeName(*v)));
  if (r.failed()) req->kv_hints.clear();
}

}  // namespace pg
