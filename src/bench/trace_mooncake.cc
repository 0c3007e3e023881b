#include "bench/trace_mooncake.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench/hashed_prompt.h"

namespace pg::bench {

Result<std::vector<MooncakeRequest>> ParseMooncake(const std::string& text, const std::string& name) {
  std::vector<MooncakeRequest> out;
  std::istringstream in(text);
  std::string line;
  int64_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::string at = fmt::format("{} line {}", name, lineno);
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return Corrupt(at + ": not a JSON object");
    MooncakeRequest r;
    for (const char* key : {"timestamp", "input_length", "output_length"}) {
      if (!j.contains(key) || !j[key].is_number() || j[key].get<double>() < 0) {
        return Corrupt(fmt::format("{}: missing or negative '{}'", at, key));
      }
    }
    r.timestamp_ms = j["timestamp"].get<double>();
    r.input_length = j["input_length"].get<int64_t>();
    r.output_length = std::max<int64_t>(1, j["output_length"].get<int64_t>());
    if (r.input_length < 1) return Corrupt(at + ": input_length < 1");
    if (!j.contains("hash_ids") || !j["hash_ids"].is_array()) return Corrupt(at + ": missing 'hash_ids' array");
    for (const auto& h : j["hash_ids"]) {
      if (!h.is_number_integer()) return Corrupt(at + ": hash id is not an integer");
      r.hash_ids.push_back(h.get<int64_t>());
    }
    out.push_back(std::move(r));
  }
  if (out.empty()) return Corrupt(name + ": no requests");
  return out;
}

Result<std::unique_ptr<MooncakeWorkload>> MooncakeWorkload::Load(const std::string& file, const TokenSpace& space,
                                                                 const WorkloadOptions& opt) {
  std::ifstream in(file);
  if (!in) return NotFound("cannot read mooncake trace " + file);
  std::stringstream ss;
  ss << in.rdbuf();
  PG_ASSIGN_OR_RETURN(auto reqs, ParseMooncake(ss.str(), file));
  auto w = FromRequests(std::move(reqs), space, opt);
  if (w->SessionsPerPass() == 0) {
    return InvalidArgument(fmt::format("every request of {} exceeds --max-context {}", file, opt.max_context));
  }
  return w;
}

std::unique_ptr<MooncakeWorkload> MooncakeWorkload::FromRequests(std::vector<MooncakeRequest> reqs,
                                                                 const TokenSpace& space, const WorkloadOptions& opt) {
  const int64_t skipped = static_cast<int64_t>(std::erase_if(reqs, [&](const MooncakeRequest& r) {
    const int64_t in = std::llround(r.input_length * opt.length_scale);
    const int64_t out = std::max<int64_t>(1, std::llround(r.output_length * opt.length_scale));
    return opt.max_context > 0 && in + out > opt.max_context;
  }));
  return std::unique_ptr<MooncakeWorkload>(new MooncakeWorkload(std::move(reqs), space, opt, skipped));
}

std::string MooncakeWorkload::Describe() const {
  return fmt::format("trace:mooncake ({} requests, {} skipped by max_context, length x{}, time x{}, seed {})",
                     reqs_.size(), skipped_, opt_.length_scale, opt_.time_scale, space_.seed());
}

SessionScript MooncakeWorkload::MakeSession(int64_t k) const {
  const MooncakeRequest& r = reqs_[static_cast<size_t>(k)];
  SessionScript s;
  s.label = fmt::format("mooncake#{}", k);
  SessionEvent e;
  e.arrival_s = r.timestamp_ms / 1000.0 * opt_.time_scale;
  e.prompt = HashedPrompt(space_, /*scope=*/0, r.hash_ids, kBlockTokens, r.input_length, opt_.length_scale,
                          TailBlockId(static_cast<uint64_t>(k)));
  e.max_tokens = static_cast<int32_t>(std::max<int64_t>(1, std::llround(r.output_length * opt_.length_scale)));
  s.events.push_back(std::move(e));
  return s;
}

}  // namespace pg::bench
