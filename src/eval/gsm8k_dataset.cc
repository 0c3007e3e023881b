#include "eval/gsm8k_dataset.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace pg {
namespace {

bool IsBlank(std::string_view line) {
  for (char c : line) {
    if (c != ' ' && c != '\t' && c != '\r') return false;
  }
  return true;
}

}  // namespace

Result<Gsm8kDataset> Gsm8kDataset::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError(fmt::format("cannot open dataset {}", path));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return IoError(fmt::format("cannot read dataset {}", path));
  return Parse(text.str(), path);
}

Result<Gsm8kDataset> Gsm8kDataset::Parse(std::string_view jsonl, const std::string& source) {
  Gsm8kDataset dataset;
  size_t line_no = 0;
  size_t begin = 0;
  while (begin < jsonl.size()) {
    size_t end = jsonl.find('\n', begin);
    if (end == std::string_view::npos) end = jsonl.size();
    std::string_view line = jsonl.substr(begin, end - begin);
    begin = end + 1;
    ++line_no;
    if (IsBlank(line)) continue;

    nlohmann::json row = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    auto where = [&](std::string_view why) { return InvalidArgument(fmt::format("{}:{}: {}", source, line_no, why)); };
    if (row.is_discarded()) return where("not valid JSON");
    if (!row.is_object()) return where("not a JSON object");
    auto q = row.find("question");
    auto a = row.find("answer");
    if (q == row.end() || !q->is_string()) return where("missing string field \"question\"");
    if (a == row.end() || !a->is_string()) return where("missing string field \"answer\"");
    Gsm8kRow parsed;
    parsed.index = static_cast<int>(dataset.rows_.size());
    parsed.question = q->get<std::string>();
    parsed.solution = a->get<std::string>();
    if (parsed.question.empty()) return where("empty \"question\"");
    std::optional<ExtractedNumber> ref = ParseReferenceAnswer(parsed.solution);
    if (!ref) return where("\"answer\" does not end with \"#### N\"");
    if (!std::isfinite(ref->value)) return where("the number after \"####\" is too large");
    parsed.reference = std::move(*ref);
    dataset.rows_.push_back(std::move(parsed));
  }
  if (dataset.rows_.empty()) return InvalidArgument(fmt::format("{}: dataset has no rows", source));
  return dataset;
}

std::string CleanSolution(const Gsm8kRow& row) {
  std::string_view text = row.solution;
  size_t marker = text.rfind("####");
  if (marker != std::string_view::npos) text = text.substr(0, marker);
  std::string out;
  out.reserve(text.size() + 32);
  size_t i = 0;
  while (i < text.size()) {
    if (text.compare(i, 2, "<<") == 0) {
      size_t close = text.find(">>", i + 2);
      if (close != std::string_view::npos) {
        i = close + 2;
        continue;
      }
    }
    out.push_back(text[i++]);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ' || out.back() == '\r')) out.pop_back();
  if (!out.empty()) out += "\n";
  out += fmt::format("The answer is {}.", row.reference.text);
  return out;
}

}  // namespace pg
