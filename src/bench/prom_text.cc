#include "bench/prom_text.h"

#include <cstdlib>
#include <sstream>

namespace pg::bench {

void ForEachLabelledSample(const std::string& text, const std::function<void(const LabelledSample&)>& fn) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t open = line.find('{'), close = line.rfind('}');
    if (open == std::string::npos || close == std::string::npos) continue;
    LabelledSample s;
    s.line = line;
    s.name = s.line.substr(0, open);
    s.value = std::strtod(line.c_str() + close + 1, nullptr);
    fn(s);
  }
}

std::string LabelValue(std::string_view line, const std::string& key) {
  const std::string pat = key + "=\"";
  const size_t at = line.find(pat);
  if (at == std::string_view::npos) return "";
  const size_t end = line.find('"', at + pat.size());
  return end == std::string_view::npos ? "" : std::string(line.substr(at + pat.size(), end - at - pat.size()));
}

}  // namespace pg::bench
