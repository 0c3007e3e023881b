#include "bench/trace_kv_cache_tester.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench/hashed_prompt.h"

namespace pg::bench {
namespace {

using nlohmann::json;

Result<std::vector<KvTraceEntry>> ParseEntries(const json& arr, const std::string& where, int depth) {
  if (!arr.is_array()) return Corrupt(where + ": 'requests' is not an array");
  if (depth > 16) return Corrupt(where + ": subagents nested deeper than 16");
  std::vector<KvTraceEntry> out;
  for (size_t i = 0; i < arr.size(); ++i) {
    const json& r = arr[i];
    std::string at = fmt::format("{} request {}", where, i);
    if (!r.is_object()) return Corrupt(at + ": not an object");
    KvTraceEntry e;
    auto num = [&](const char* key, double dflt) -> Result<double> {
      if (!r.contains(key) || r[key].is_null()) return dflt;
      if (!r[key].is_number()) return Corrupt(fmt::format("{}: '{}' is not a number", at, key));
      double v = r[key].get<double>();
      if (!std::isfinite(v) || v < 0) return Corrupt(fmt::format("{}: '{}' = {} is negative", at, key, v));
      return v;
    };
    PG_ASSIGN_OR_RETURN(e.t, num("t", 0));
    PG_ASSIGN_OR_RETURN(e.think_time, num("think_time", 0));
    std::string type = r.contains("type") && r["type"].is_string() ? r["type"].get<std::string>() : "";
    if (type == "subagent" || (r.contains("requests") && !r.contains("hash_ids"))) {
      e.subagent = true;
      if (!r.contains("requests")) return Corrupt(at + ": subagent without 'requests'");
      PG_ASSIGN_OR_RETURN(e.requests, ParseEntries(r["requests"], at + " (subagent)", depth + 1));
      out.push_back(std::move(e));
      continue;
    }
    if (!r.contains("hash_ids") || !r["hash_ids"].is_array()) return Corrupt(at + ": missing 'hash_ids' array");
    PG_ASSIGN_OR_RETURN(double in, num("in", -1));
    PG_ASSIGN_OR_RETURN(double outn, num("out", -1));
    if (in < 1 || outn < 0) return Corrupt(at + ": missing or bad 'in'/'out'");
    e.in = static_cast<int64_t>(in);
    e.out = std::max<int64_t>(1, static_cast<int64_t>(outn));
    for (const json& h : r["hash_ids"]) {
      if (!h.is_number_integer()) return Corrupt(at + ": hash id is not an integer");
      e.hash_ids.push_back(h.get<int64_t>());
    }
    out.push_back(std::move(e));
  }
  return out;
}

// Whether the first request of `entries` (depth-first) fits max_context.
bool FirstFits(const std::vector<KvTraceEntry>& entries, const KvTrace& t, const WorkloadOptions& opt) {
  for (const KvTraceEntry& e : entries) {
    if (e.subagent) continue;
    int64_t in = static_cast<int64_t>(e.hash_ids.size()) * ScaledBlockTokens(t.block_size, opt.length_scale) +
                 std::max<int64_t>(0, std::llround((e.in - static_cast<int64_t>(e.hash_ids.size()) * t.block_size) *
                                                   opt.length_scale));
    int64_t out = std::max<int64_t>(1, std::llround(e.out * opt.length_scale));
    return opt.max_context <= 0 || in + out <= opt.max_context;
  }
  return false;  // no request at all
}

}  // namespace

Result<KvTrace> ParseKvTrace(const std::string& json_text, const std::string& name) {
  json j = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Corrupt(name + ": not valid JSON");
  if (!j.is_object()) return Corrupt(name + ": top level is not an object");
  KvTrace t;
  t.id = j.contains("id") && j["id"].is_string() ? j["id"].get<std::string>() : name;
  if (j.contains("block_size")) {
    if (!j["block_size"].is_number_integer() || j["block_size"].get<int64_t>() < 1 ||
        j["block_size"].get<int64_t>() > 1 << 20) {
      return Corrupt(name + ": bad 'block_size'");
    }
    t.block_size = j["block_size"].get<int64_t>();
  }
  if (j.contains("hash_id_scope")) {
    if (!j["hash_id_scope"].is_string()) return Corrupt(name + ": 'hash_id_scope' is not a string");
    std::string s = j["hash_id_scope"].get<std::string>();
    if (s != "local" && s != "global") return Corrupt(name + ": hash_id_scope '" + s + "' is not local|global");
    t.global_scope = s == "global";
  }
  if (!j.contains("requests")) return Corrupt(name + ": missing 'requests'");
  PG_ASSIGN_OR_RETURN(t.requests, ParseEntries(j["requests"], name, 0));
  return t;
}

Result<std::unique_ptr<KvCacheTesterWorkload>> KvCacheTesterWorkload::Load(const std::string& path,
                                                                           const TokenSpace& space,
                                                                           const WorkloadOptions& opt) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> files;
  if (fs::is_directory(path, ec)) {
    for (const auto& de : fs::directory_iterator(path, ec)) {
      if (de.path().extension() == ".json") files.push_back(de.path());
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) return NotFound("no *.json trace files in " + path);
  } else if (fs::is_regular_file(path, ec)) {
    files.push_back(path);
  } else {
    return NotFound("trace path not found: " + path);
  }
  std::vector<KvTrace> traces;
  for (const fs::path& f : files) {
    std::ifstream in(f);
    if (!in) return IoError("cannot read " + f.string());
    std::stringstream ss;
    ss << in.rdbuf();
    PG_ASSIGN_OR_RETURN(KvTrace t, ParseKvTrace(ss.str(), f.filename().string()));
    traces.push_back(std::move(t));
  }
  auto w = FromTraces(std::move(traces), space, opt);
  if (w->traces().empty()) {
    return InvalidArgument(
        fmt::format("every trace in {} exceeds --max-context {} on its first request", path, opt.max_context));
  }
  return w;
}

std::unique_ptr<KvCacheTesterWorkload> KvCacheTesterWorkload::FromTraces(std::vector<KvTrace> traces,
                                                                         const TokenSpace& space,
                                                                         const WorkloadOptions& opt) {
  const int64_t skipped =
      static_cast<int64_t>(std::erase_if(traces, [&](const KvTrace& t) { return !FirstFits(t.requests, t, opt); }));
  return std::unique_ptr<KvCacheTesterWorkload>(new KvCacheTesterWorkload(std::move(traces), space, opt, skipped));
}

std::string KvCacheTesterWorkload::Describe() const {
  return fmt::format("trace:kv-cache-tester ({} traces, {} skipped by max_context, length x{}, time x{}, seed {})",
                     traces_.size(), skipped_, opt_.length_scale, opt_.time_scale, space_.seed());
}

void KvCacheTesterWorkload::BuildSession(const KvTrace& trace, const std::vector<KvTraceEntry>& entries, uint64_t scope,
                                         uint64_t* ordinal, SessionScript* out) const {
  for (const KvTraceEntry& e : entries) {
    SessionEvent ev;
    ev.wait_before_s = e.think_time * opt_.time_scale;
    if (e.subagent) {
      SessionScript child;
      child.label = fmt::format("{}/sub{}", out->label, out->children.size());
      BuildSession(trace, e.requests, scope, ordinal, &child);
      if (child.events.empty()) continue;
      ev.kind = SessionEvent::Kind::kSpawn;
      ev.child = static_cast<int32_t>(out->children.size());
      out->children.push_back(std::move(child));
      out->events.push_back(std::move(ev));
      continue;
    }
    ev.prompt =
        HashedPrompt(space_, scope, e.hash_ids, trace.block_size, e.in, opt_.length_scale, TailBlockId((*ordinal)++));
    ev.max_tokens = static_cast<int32_t>(std::max<int64_t>(1, std::llround(e.out * opt_.length_scale)));
    if (opt_.max_context > 0 && static_cast<int64_t>(ev.prompt.size()) + ev.max_tokens > opt_.max_context) {
      return;  // truncate the session here
    }
    out->events.push_back(std::move(ev));
  }
}

SessionScript KvCacheTesterWorkload::MakeSession(int64_t k) const {
  const int64_t n = static_cast<int64_t>(traces_.size());
  const KvTrace& trace = traces_[static_cast<size_t>(k % n)];
  const uint64_t instance = static_cast<uint64_t>(k / n);
  const uint64_t scope = trace.global_scope ? 0 : ((static_cast<uint64_t>(k % n) + 1) << 32) | instance;
  SessionScript s;
  s.label = fmt::format("{}#{}", trace.id, instance);
  // Unique tails: request ordinals of session k start at k << 20, so tails
  // never collide across sessions, also under the global scope.
  uint64_t ordinal = static_cast<uint64_t>(k) << 20;
  BuildSession(trace, trace.requests, scope, &ordinal, &s);
  return s;
}

}  // namespace pg::bench
