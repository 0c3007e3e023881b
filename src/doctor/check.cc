#include "doctor/check.h"

#include <fmt/format.h>

#include <utility>

namespace pg {
namespace {

std::string OneLine(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

CheckResult Make(std::string name, CheckResult::Verdict v, std::string detail, std::string fix) {
  CheckResult r;
  r.name = std::move(name);
  r.verdict = v;
  r.detail = std::move(detail);
  r.fix = std::move(fix);
  return r;
}

}  // namespace

CheckResult CheckResult::Ok(std::string name, std::string detail) {
  return Make(std::move(name), Verdict::kOk, std::move(detail), "");
}
CheckResult CheckResult::Warn(std::string name, std::string detail, std::string fix) {
  return Make(std::move(name), Verdict::kWarn, std::move(detail), std::move(fix));
}
CheckResult CheckResult::Fail(std::string name, std::string detail, std::string fix) {
  return Make(std::move(name), Verdict::kFail, std::move(detail), std::move(fix));
}
CheckResult CheckResult::Skip(std::string name, std::string detail) {
  return Make(std::move(name), Verdict::kSkip, std::move(detail), "");
}

const char* VerdictName(CheckResult::Verdict v) {
  switch (v) {
    case CheckResult::Verdict::kOk: return "ok";
    case CheckResult::Verdict::kWarn: return "warn";
    case CheckResult::Verdict::kFail: return "FAIL";
    case CheckResult::Verdict::kSkip: return "skip";
  }
  return "?";
}

std::string FormatCheck(const CheckResult& r) {
  std::string line = fmt::format("[{:^4}] {}: {}", VerdictName(r.verdict), r.name, OneLine(r.detail));
  if (!r.fix.empty()) line += " -- fix: " + OneLine(r.fix);
  return line;
}

bool AnyFailed(const std::vector<CheckResult>& results) {
  for (const CheckResult& r : results)
    if (r.verdict == CheckResult::Verdict::kFail) return true;
  return false;
}

}  // namespace pg
