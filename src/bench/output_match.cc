#include "bench/output_match.h"

#include <fmt/format.h>
#include <xxhash.h>

#include <map>
#include <utility>

namespace pg::bench {

std::string OutputHash(const std::string& text) {
  if (text.empty()) return "";
  return fmt::format("{:016x}", XXH3_64bits(text.data(), text.size()));
}

OutputMatch MatchOutputs(const std::vector<RequestRecord>& a, const std::vector<RequestRecord>& b) {
  std::map<std::pair<std::string, int32_t>, const RequestRecord*> by_key;
  for (const RequestRecord& r : a) {
    if (r.ok && !r.output_hash.empty()) by_key[{r.session, r.turn}] = &r;
  }
  OutputMatch m;
  for (const RequestRecord& r : b) {
    if (!r.ok || r.output_hash.empty()) continue;
    auto it = by_key.find({r.session, r.turn});
    if (it == by_key.end()) continue;
    ++m.matched;
    if (it->second->output_hash == r.output_hash) {
      ++m.identical;
    } else if (m.differing.size() < 5) {
      m.differing.push_back(fmt::format("{} turn {}", r.session, r.turn));
    }
  }
  return m;
}

std::string DescribeOutputMatch(const OutputMatch& m) {
  if (m.matched == 0) return "identical outputs: n/a (no request succeeded in both runs with a recorded output)";
  std::string s = fmt::format("identical outputs: {} / {} matched requests ({:.1f}%)", m.identical, m.matched,
                              100.0 * static_cast<double>(m.identical) / static_cast<double>(m.matched));
  if (!m.differing.empty()) {
    s += "; first differing:";
    for (const std::string& d : m.differing) s += " [" + d + "]";
  }
  return s;
}

}  // namespace pg::bench
