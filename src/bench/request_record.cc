#include "bench/request_record.h"

namespace pg::bench {

nlohmann::json RecordToJson(const RequestRecord& r) {
  nlohmann::json j;
  j["index"] = r.index;
  j["session"] = r.session;
  j["turn"] = r.turn;
  j["warmup"] = r.warmup;
  j["ok"] = r.ok;
  if (!r.error.empty()) j["error"] = r.error;
  j["http_status"] = r.http_status;
  if (!r.served_by.empty()) j["served_by"] = r.served_by;
  j["send_s"] = r.send_s;
  j["ttft_s"] = r.ttft_s;
  j["e2e_s"] = r.e2e_s;
  j["itl_s"] = r.itl_s;
  j["max_tokens"] = r.max_tokens;
  j["sent_prompt_tokens"] = r.sent_prompt_tokens;
  j["ideal_cached_tokens"] = r.ideal_cached_tokens;
  j["prompt_tokens"] = r.prompt_tokens;
  j["output_tokens"] = r.output_tokens;
  j["output_from_usage"] = r.output_from_usage;
  j["output_chunks"] = r.output_chunks;
  j["cached_tokens"] = r.cached_tokens;
  j["cached_source"] = r.cached_source;
  j["cached_by_tier"] = {{"device", r.cached_device}, {"host", r.cached_host}, {"disk", r.cached_disk},
                         {"remote", r.cached_remote}};
  j["finish_reason"] = r.finish_reason;
  j["output_hash"] = r.output_hash;
  if (!r.spec_source.empty()) {
    j["speculative"] = {{"steps", r.spec_steps},       {"drafted_tokens", r.spec_drafted},
                        {"accepted_tokens", r.spec_accepted}, {"synthetic_acceptance", r.spec_synthetic},
                        {"source", r.spec_source}};
  }
  return j;
}

namespace {
template <typename T>
void Get(const nlohmann::json& j, const char* key, T* out) {
  if (!j.contains(key)) return;
  const auto& v = j[key];
  if constexpr (std::is_same_v<T, std::string>) {
    if (v.is_string()) *out = v.get<std::string>();
  } else if constexpr (std::is_same_v<T, bool>) {
    if (v.is_boolean()) *out = v.get<bool>();
  } else {
    if (v.is_number()) *out = v.get<T>();
  }
}
}  // namespace

RequestRecord RecordFromJson(const nlohmann::json& j) {
  RequestRecord r;
  if (!j.is_object()) return r;
  Get(j, "index", &r.index);
  Get(j, "session", &r.session);
  Get(j, "turn", &r.turn);
  Get(j, "warmup", &r.warmup);
  Get(j, "ok", &r.ok);
  Get(j, "error", &r.error);
  Get(j, "http_status", &r.http_status);
  Get(j, "served_by", &r.served_by);
  Get(j, "send_s", &r.send_s);
  Get(j, "ttft_s", &r.ttft_s);
  Get(j, "e2e_s", &r.e2e_s);
  if (j.contains("itl_s") && j["itl_s"].is_array()) {
    for (const auto& g : j["itl_s"]) {
      if (g.is_number()) r.itl_s.push_back(g.get<double>());
    }
  }
  Get(j, "max_tokens", &r.max_tokens);
  Get(j, "sent_prompt_tokens", &r.sent_prompt_tokens);
  Get(j, "ideal_cached_tokens", &r.ideal_cached_tokens);
  Get(j, "prompt_tokens", &r.prompt_tokens);
  Get(j, "output_tokens", &r.output_tokens);
  Get(j, "output_from_usage", &r.output_from_usage);
  Get(j, "output_chunks", &r.output_chunks);
  Get(j, "cached_tokens", &r.cached_tokens);
  Get(j, "cached_source", &r.cached_source);
  if (j.contains("cached_by_tier") && j["cached_by_tier"].is_object()) {
    const auto& t = j["cached_by_tier"];
    Get(t, "device", &r.cached_device);
    Get(t, "host", &r.cached_host);
    Get(t, "disk", &r.cached_disk);
    Get(t, "remote", &r.cached_remote);
  }
  Get(j, "finish_reason", &r.finish_reason);
  Get(j, "output_hash", &r.output_hash);
  if (j.contains("speculative") && j["speculative"].is_object()) {
    const auto& s = j["speculative"];
    Get(s, "steps", &r.spec_steps);
    Get(s, "drafted_tokens", &r.spec_drafted);
    Get(s, "accepted_tokens", &r.spec_accepted);
    Get(s, "synthetic_acceptance", &r.spec_synthetic);
    Get(s, "source", &r.spec_source);
  }
  return r;
}

}  // namespace pg::bench
