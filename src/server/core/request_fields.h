// Request fields: the reader both request parsers use (ParseChatRequest in
// chat_request.cc, ParseCompletionRequest in completion_request.cc) and the fields
// the two endpoints share. Internal to src/server. Pure; thread-safe.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "server/common/api_error.h"
#include "server/common/request_limits.h"
#include "server/core/request.h"

namespace pg {

inline constexpr int kMaxTopLogprobs = 20;
inline constexpr int kMaxStopTokenIds = 1024;  // most 'stop_token_ids' per request

// "null", "boolean", "string", "array", "object", "number" or "integer".
const char* JsonTypeName(const nlohmann::ordered_json& v);

// Reads optional top-level fields; remembers the first error. A null value
// counts as absent.
class FieldReader {
 public:
  explicit FieldReader(const nlohmann::ordered_json& body) : body_(body) {}

  bool failed() const { return error_.has_value(); }
  const ApiError& error() const { return *error_; }
  void Fail(ApiError e) {
    if (!error_) error_ = std::move(e);
  }

  const nlohmann::ordered_json* Get(const char* key) const {
    auto it = body_.find(key);
    if (it == body_.end() || it->is_null()) return nullptr;
    return &*it;
  }

  // A JSON array (or object) field with a size limit: what Get(key) finds, or
  // nullptr when it is absent, when it is not an array (object) -- "'KEY'
  // must be EXPECTED" -- or when it holds more than `limit` elements: "'KEY'
  // has N UNIT, more than the limit of LIMIT (FLAG)", with the error code
  // `code` (no flag, no code: "" each).
  struct Sized {
    const char* key;
    bool object;           // an object rather than an array
    const char* expected;  // "an array of strings"
    const char* unit;      // "strings", "entries"
    int64_t limit;
    const char* flag;  // "--max-stop"
    const char* code;  // "too_many_stop_strings"
  };
  const nlohmann::ordered_json* GetSized(const Sized& f) {
    const nlohmann::ordered_json* v = Get(f.key);
    if (!v) return nullptr;
    if (f.object ? !v->is_object() : !v->is_array()) {
      WrongType(f.key, f.expected, *v);
      return nullptr;
    }
    if (v->size() > static_cast<size_t>(f.limit)) {
      const std::string flag = *f.flag ? fmt::format(" ({})", f.flag) : "";
      Fail(BadRequest(
          fmt::format("'{}' has {} {}, more than the limit of {}{}", f.key, v->size(), f.unit, f.limit, flag), f.key,
          f.code));
      return nullptr;
    }
    return v;
  }

  // What Get(key) finds when it is a JSON object; nullptr when it is absent
  // or (a failure: "'KEY' must be an object") anything else.
  const nlohmann::ordered_json* GetObject(const char* key) {
    const nlohmann::ordered_json* v = Get(key);
    if (!v || v->is_object()) return v;
    WrongType(key, "an object", *v);
    return nullptr;
  }

  bool Bool(const char* key, bool* out) {
    const nlohmann::ordered_json* v = Get(key);
    if (!v) return false;
    if (!v->is_boolean()) return WrongType(key, "a boolean", *v);
    *out = v->get<bool>();
    return true;
  }

  bool Number(const char* key, double* out) {
    const nlohmann::ordered_json* v = Get(key);
    if (!v) return false;
    if (!v->is_number()) return WrongType(key, "a number", *v);
    *out = v->get<double>();
    return true;
  }

  bool Int(const char* key, int64_t* out) {
    const nlohmann::ordered_json* v = Get(key);
    if (!v) return false;
    if (v->is_number_integer()) {
      *out = v->get<int64_t>();
      if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) *out = INT64_MAX;
      return true;
    }
    if (v->is_number_float()) {
      double d = v->get<double>();
      if (std::floor(d) == d && std::fabs(d) < 9e15) {
        *out = static_cast<int64_t>(d);
        return true;
      }
    }
    return WrongType(key, "an integer", *v);
  }

  bool String(const char* key, std::string* out) {
    const nlohmann::ordered_json* v = Get(key);
    if (!v) return false;
    if (!v->is_string()) return WrongType(key, "a string", *v);
    *out = v->get<std::string>();
    return true;
  }

  bool WrongType(const char* key, const char* expected, const nlohmann::ordered_json& v) {
    Fail(BadRequest(fmt::format("'{}' must be {}, got {}", key, expected, JsonTypeName(v)), key, "invalid_type"));
    return false;
  }

 private:
  const nlohmann::ordered_json& body_;
  std::optional<ApiError> error_;
};

// vLLM's cache_salt (a string of 1..256 bytes; null = none): salts the KV
// cache inside the caller's tenant (server/common/tenant.h). Both APIs read it.
void ReadCacheSalt(FieldReader& r, ApiRequest* req);

// Fields shared by both endpoints: model, sampling, max_tokens, n, stream,
// stream_options, stop, user, cache_ttl_s (0..86400 s), cache_salt, logit_bias, min_tokens,
// stop_token_ids, kv_hints (the list: openai_fields.cc).
void ReadCommonFields(FieldReader& r, int64_t n_vocab, int64_t n_ctx, const RequestLimits& limits, ApiRequest* req);

}  // namespace pg
