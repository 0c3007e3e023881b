#include "server/core/request_fields.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <utility>

#include "server/common/api_error.h"
#include "server/common/request_limits.h"
#include "server/common/tenant.h"
#include "server/core/known_keys.h"
#include "server/core/kv_hints_request.h"
#include "server/core/request.h"

namespace pg {
namespace {

using json = nlohmann::ordered_json;

constexpr double kMinRepetitionPenalty = 1e-6;  // both spelled out in the 400's message
constexpr double kMaxRepetitionPenalty = 1e6;

// A client's string for an error message: at most ~40 bytes, cut on a UTF-8
// character boundary (the body was checked to be valid UTF-8).
std::string Excerpt(const std::string& text) {
  constexpr size_t kMax = 40;
  if (text.size() <= kMax) return text;
  size_t end = kMax;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end) + "...";
}

// logit_bias: {"<token id>": bias in [-100, 100], ...} -> sorted (id, bias).
void ReadLogitBias(FieldReader& r, int64_t n_vocab, const RequestLimits& limits, SamplingParams* s) {
  const json* lb = r.GetSized(
      {"logit_bias", true, "an object", "entries", limits.max_logit_bias, "--max-logit-bias", "too_many_logit_bias"});
  if (!lb) return;
  s->logit_bias.reserve(lb->size());
  for (auto it = lb->begin(); it != lb->end(); ++it) {
    const std::string& key = it.key();
    int64_t id = -1;
    auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (key.empty() || end != key.data() + key.size() || (ec != std::errc() && ec != std::errc::result_out_of_range)) {
      r.Fail(
          BadRequest(fmt::format("'logit_bias' key \"{}\" is not a token id (a decimal integer string)", Excerpt(key)),
                     "logit_bias", "invalid_logit_bias"));
      return;
    }
    if (ec != std::errc() || id < 0 || id >= n_vocab) {
      r.Fail(BadRequest(fmt::format("'logit_bias' key \"{}\" is outside the vocabulary [0, {})", Excerpt(key), n_vocab),
                        "logit_bias", "invalid_logit_bias"));
      return;
    }
    const json& v = it.value();
    if (!v.is_number()) {
      r.Fail(BadRequest(fmt::format("'logit_bias' value for \"{}\" must be a number, got {}", key, JsonTypeName(v)),
                        "logit_bias", "invalid_type"));
      return;
    }
    const double bias = v.get<double>();
    if (!(bias >= -100 && bias <= 100)) {
      r.Fail(BadRequest(fmt::format("'logit_bias' value for \"{}\" must be in [-100, 100], got {}", key, bias),
                        "logit_bias", "invalid_logit_bias"));
      return;
    }
    s->logit_bias.emplace_back(static_cast<int32_t>(id), static_cast<float>(bias));
  }
  std::sort(s->logit_bias.begin(), s->logit_bias.end());
  for (size_t i = 1; i < s->logit_bias.size(); ++i) {
    if (s->logit_bias[i].first == s->logit_bias[i - 1].first) {
      r.Fail(BadRequest(fmt::format("'logit_bias' names token id {} twice", s->logit_bias[i].first), "logit_bias",
                        "invalid_logit_bias"));
      return;
    }
  }
}

// stop_token_ids: [id, ...], each < n_vocab, at most kMaxStopTokenIds.
// min_tokens: 0 .. max_tokens (checked against max_tokens once both are read).
void ReadEndControls(FieldReader& r, int64_t n_vocab, int64_t n_ctx, ApiRequest* req) {
  SamplingParams& s = req->sampling;
  int64_t i = 0;
  if (r.Int("min_tokens", &i)) {
    if (i < 0 || i > n_ctx) {
      r.Fail(BadRequest(fmt::format("'min_tokens' must be in [0, {}] (the model's context), got {}", n_ctx, i),
                        "min_tokens"));
    } else if (req->max_tokens_given && i > s.max_tokens) {
      r.Fail(
          BadRequest(fmt::format("'min_tokens' ({}) is more than 'max_tokens' ({})", i, s.max_tokens), "min_tokens"));
    } else {
      s.min_tokens = static_cast<int>(i);
    }
  }
  const json* ids = r.GetSized({"stop_token_ids", false, "an array of token ids", "ids", kMaxStopTokenIds, "", ""});
  if (!ids) return;
  for (const json& id : *ids) {
    const int64_t v = id.is_number_integer() && !(id.is_number_unsigned() && id.get<uint64_t>() > uint64_t(INT64_MAX))
                          ? id.get<int64_t>()
                          : -1;
    if (!id.is_number_integer() || v < 0 || v >= n_vocab) {
      r.Fail(BadRequest(fmt::format("'stop_token_ids' entry {} is not a token id in [0, {})", id.dump(), n_vocab),
                        "stop_token_ids", "invalid_token"));
      return;
    }
    s.stop_token_ids.push_back(static_cast<int32_t>(v));
  }
}

}  // namespace

const char* JsonTypeName(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "boolean";
    case json::value_t::string: return "string";
    case json::value_t::array: return "array";
    case json::value_t::object: return "object";
    case json::value_t::number_float: return "number";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "integer";
    default: return "unknown";
  }
}

// vLLM's cache_salt: 1..kMaxCacheSaltBytes bytes, salting the KV cache inside
// the caller's tenant (tenant.h).
void ReadCacheSalt(FieldReader& r, ApiRequest* req) {
  const nlohmann::ordered_json* v = r.Get("cache_salt");
  if (!v || v->is_null()) return;
  if (!v->is_string()) {
    r.WrongType("cache_salt", "a string", *v);
    return;
  }
  const std::string& salt = v->get_ref<const std::string&>();
  if (salt.empty() || salt.size() > kMaxCacheSaltBytes) {
    r.Fail(BadRequest(fmt::format("'cache_salt' must be 1..{} bytes, got {}", kMaxCacheSaltBytes, salt.size()),
                      "cache_salt"));
    return;
  }
  req->cache_salt = salt;
}

namespace {

// temperature, top_p, min_p, the penalties.
void ReadSamplingNumbers(FieldReader& r, SamplingParams& s) {
  double d = 0;
  if (r.Number("temperature", &d)) {
    if (d < 0 || d > 100)
      r.Fail(BadRequest(fmt::format("'temperature' must be in [0, 100], got {}", d), "temperature"));
    s.temperature = static_cast<float>(d);
  }
  if (r.Number("top_p", &d)) {
    if (!(d > 0 && d <= 1)) r.Fail(BadRequest(fmt::format("'top_p' must be in (0, 1], got {}", d), "top_p"));
    s.top_p = static_cast<float>(d);
  }
  if (r.Number("min_p", &d)) {
    if (!(d >= 0 && d <= 1)) r.Fail(BadRequest(fmt::format("'min_p' must be in [0, 1], got {}", d), "min_p"));
    s.min_p = static_cast<float>(d);
  }
  for (auto [key, out] :
       {std::pair{"presence_penalty", &s.presence_penalty}, std::pair{"frequency_penalty", &s.frequency_penalty}}) {
    if (!r.Number(key, &d)) continue;
    if (d < -2 || d > 2)
      r.Fail(BadRequest(fmt::format("'{}' must be in [-2, 2], got {}", key, d), key));
    else
      *out = static_cast<float>(d);
  }
  // > 0 as in vLLM and llama.cpp; the bounds keep logit / penalty and
  // logit * penalty finite in float.
  if (r.Number("repetition_penalty", &d)) {
    if (!(d >= kMinRepetitionPenalty && d <= kMaxRepetitionPenalty)) {
      r.Fail(BadRequest(fmt::format("'repetition_penalty' must be > 0 (1 = off), within [1e-6, 1e6], got {}", d),
                        "repetition_penalty"));
    } else {
      s.repetition_penalty = static_cast<float>(d);
    }
  }
}

// top_k, seed, max_tokens / max_completion_tokens, n, best_of.
void ReadIntegerFields(FieldReader& r, int64_t n_ctx, ApiRequest* req) {
  SamplingParams& s = req->sampling;
  int64_t i;
  if (r.Int("top_k", &i)) {
    if (i < -1 || i > 1000000)
      r.Fail(BadRequest(fmt::format("'top_k' must be -1, 0 (off) or positive, got {}", i), "top_k"));
    s.top_k = i <= 0 ? 0 : static_cast<int>(i);
  }
  if (r.Int("seed", &i)) {
    s.has_seed = true;
    s.seed = static_cast<uint64_t>(i);
  }
  for (const char* key : {"max_tokens", "max_completion_tokens"}) {
    const bool both = req->max_tokens_given;  // max_tokens was read: one must not silently win
    if (!r.Int(key, &i)) continue;
    if (both && i != s.max_tokens) {
      r.Fail(BadRequest(
          fmt::format("'max_tokens' ({}) and 'max_completion_tokens' ({}) disagree; send one", s.max_tokens, i), key));
      continue;
    }
    if (i < 1) {
      r.Fail(BadRequest(fmt::format("'{}' must be at least 1, got {}", key, i), key));
    } else if (i > n_ctx) {
      r.Fail(BadRequest(fmt::format("'{}' is {}, more than the model's context of {} tokens", key, i, n_ctx), key));
    } else {
      s.max_tokens = static_cast<int>(i);
      req->max_tokens_given = true;
    }
  }
  if (r.Int("n", &i) && i != 1) {
    r.Fail(BadRequest(fmt::format("'n' must be 1 (only one choice per request is supported), got {}", i), "n"));
  }
  if (r.Int("best_of", &i) && i != 1) r.Fail(BadRequest("'best_of' must be 1", "best_of"));
}

void ReadCacheTtl(FieldReader& r, ApiRequest* req) {
  double d = 0;
  if (r.Number("cache_ttl_s", &d)) {
    if (d < 0 || d > kMaxKvHintTtlS) {
      r.Fail(BadRequest(fmt::format("'cache_ttl_s' must be in [0, {}] seconds, got {}", kMaxKvHintTtlS, d),
                        "cache_ttl_s"));
    }
    req->cache_ttl_s = d;
  }
}

// stream_options (with "stream": true only, as OpenAI and vLLM rule):
// include_usage, and include_obfuscation (no-op: no obfuscation padding is
// ever sent). Read after 'stream'.
void ReadStreamOptions(FieldReader& r, ApiRequest* req) {
  const json* so = r.Get("stream_options");
  if (!so) return;
  if (!so->is_object()) return (void)r.WrongType("stream_options", "an object", *so);
  if (!req->stream) {
    return r.Fail(BadRequest("'stream_options' is only allowed with \"stream\": true", "stream_options"));
  }
  if (auto e = UnknownKey(*so, {"include_usage", "include_obfuscation"}, "stream_options")) return r.Fail(*e);
  for (auto it = so->begin(); it != so->end(); ++it) {
    const std::string param = "stream_options." + it.key();
    if (it->is_null()) continue;
    if (!it->is_boolean()) return (void)r.WrongType(param.c_str(), "a boolean", *it);
    if (it.key() == "include_usage") req->include_usage = it->get<bool>();
  }
}

// stop: a string or an array of at most limits.max_stop non-empty strings.
void ReadStop(FieldReader& r, const RequestLimits& limits, ApiRequest* req) {
  const json* stop = r.Get("stop");
  if (!stop) return;
  if (stop->is_string()) {
    req->stop.push_back(stop->get<std::string>());
  } else if (stop->is_array()) {
    if (stop->size() > static_cast<size_t>(limits.max_stop)) {
      r.Fail(BadRequest(
          fmt::format("'stop' has {} strings, more than the limit of {} (--max-stop)", stop->size(), limits.max_stop),
          "stop", "too_many_stop_strings"));
    }
    for (const json& s1 : *stop) {
      if (!s1.is_string()) {
        r.WrongType("stop", "a string or an array of strings", s1);
        break;
      }
      req->stop.push_back(s1.get<std::string>());
    }
  } else {
    r.WrongType("stop", "a string or an array of strings", *stop);
  }
  for (const std::string& s1 : req->stop) {
    if (s1.empty()) r.Fail(BadRequest("'stop' strings must not be empty", "stop"));
  }
}

}  // namespace

void ReadCommonFields(FieldReader& r, int64_t n_vocab, int64_t n_ctx, const RequestLimits& limits, ApiRequest* req) {
  r.String("model", &req->model);
  ReadSamplingNumbers(r, req->sampling);
  ReadIntegerFields(r, n_ctx, req);
  r.Bool("ignore_eos", &req->sampling.ignore_eos);
  r.Bool("stream", &req->stream);
  r.String("user", &req->user);
  ReadCacheTtl(r, req);
  ReadCacheSalt(r, req);
  ReadStreamOptions(r, req);
  ReadStop(r, limits, req);
  ReadLogitBias(r, n_vocab, limits, &req->sampling);
  ReadEndControls(r, n_vocab, n_ctx, req);
  ReadKvHints(r, n_ctx, req);
}

}  // namespace pg
