#include "bench/request_record.h"

#include <type_traits>

namespace pg::bench {
namespace {

// The record's top-level JSON fields, each with its key: the one list that
// RecordToJson and RecordFromJson both walk (R: RequestRecord, const or not).
template <typename R, typename Fn>
void ForEachField(R& r, Fn&& fn) {
  fn("index", r.index);
  fn("session", r.session);
  fn("turn", r.turn);
  fn("warmup", r.warmup);
  fn("ok", r.ok);
  fn("error", r.error);
  fn("http_status", r.http_status);
  fn("served_by", r.served_by);
  fn("send_s", r.send_s);
  fn("ttft_s", r.ttft_s);
  fn("e2e_s", r.e2e_s);
  fn("itl_s", r.itl_s);
  fn("max_tokens", r.max_tokens);
  fn("sent_prompt_tokens", r.sent_prompt_tokens);
  fn("ideal_cached_tokens", r.ideal_cached_tokens);
  fn("prompt_tokens", r.prompt_tokens);
  fn("output_tokens", r.output_tokens);
  fn("output_from_usage", r.output_from_usage);
  fn("output_chunks", r.output_chunks);
  fn("cached_tokens", r.cached_tokens);
  fn("cached_source", r.cached_source);
  fn("finish_reason", r.finish_reason);
  fn("output_hash", r.output_hash);
}

// The fields of the object "cached_by_tier".
template <typename R, typename Fn>
void ForEachTierField(R& r, Fn&& fn) {
  fn("device", r.cached_device);
  fn("host", r.cached_host);
  fn("disk", r.cached_disk);
  fn("remote", r.cached_remote);
}

// The fields of the object "speculative" (written when spec_source is set).
template <typename R, typename Fn>
void ForEachSpecField(R& r, Fn&& fn) {
  fn("steps", r.spec_steps);
  fn("drafted_tokens", r.spec_drafted);
  fn("accepted_tokens", r.spec_accepted);
  fn("synthetic_acceptance", r.spec_synthetic);
  fn("source", r.spec_source);
}

// j[key] into *out when it is there with the right JSON type (of a list:
// its numbers); otherwise *out is left alone.
template <typename T>
void Get(const nlohmann::json& j, const char* key, T* out) {
  if (!j.contains(key)) return;
  const auto& v = j[key];
  if constexpr (std::is_same_v<T, std::string>) {
    if (v.is_string()) *out = v.get<std::string>();
  } else if constexpr (std::is_same_v<T, bool>) {
    if (v.is_boolean()) *out = v.get<bool>();
  } else if constexpr (std::is_same_v<T, std::vector<double>>) {
    if (!v.is_array()) return;
    for (const auto& g : v) {
      if (g.is_number()) out->push_back(g.get<double>());
    }
  } else {
    if (v.is_number()) *out = v.get<T>();
  }
}

// A field visitor that reads each field from the object o.
auto ReadFrom(const nlohmann::json& o) {
  return [&o](const char* key, auto& field) { Get(o, key, &field); };
}

// A field visitor that writes each field into the object o.
auto WriteTo(nlohmann::json& o) {
  return [&o](const char* key, const auto& field) { o[key] = field; };
}

}  // namespace

nlohmann::json RecordToJson(const RequestRecord& r) {
  nlohmann::json j;
  ForEachField(r, WriteTo(j));
  if (r.error.empty()) j.erase("error");  // these two only when set
  if (r.served_by.empty()) j.erase("served_by");
  ForEachTierField(r, WriteTo(j["cached_by_tier"]));
  if (!r.spec_source.empty()) ForEachSpecField(r, WriteTo(j["speculative"]));
  return j;
}

RequestRecord RecordFromJson(const nlohmann::json& j) {
  RequestRecord r;
  if (!j.is_object()) return r;
  ForEachField(r, ReadFrom(j));
  if (j.contains("cached_by_tier") && j["cached_by_tier"].is_object()) {
    ForEachTierField(r, ReadFrom(j["cached_by_tier"]));
  }
  if (j.contains("speculative") && j["speculative"].is_object()) ForEachSpecField(r, ReadFrom(j["speculative"]));
  return r;
}

}  // namespace pg::bench
