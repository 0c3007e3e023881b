// CheckResult: one line of `prosgrow doctor` (and of serve's start-up
// preflight): what was checked, the verdict, what was found and, when the
// verdict is not ok, how to fix it. Plain value type.
#pragma once

#include <string>
#include <vector>

namespace pg {

struct CheckResult {
  enum class Verdict { kOk, kWarn, kFail, kSkip };
  std::string name;  // "cpu", "memory", "disk tier", "redis", "kv events", "block hashes", ...
  Verdict verdict = Verdict::kOk;
  std::string detail;  // what was found, one line
  std::string fix;     // what to do about it ("" when ok)

  static CheckResult Ok(std::string name, std::string detail);
  static CheckResult Warn(std::string name, std::string detail, std::string fix);
  static CheckResult Fail(std::string name, std::string detail, std::string fix);
  static CheckResult Skip(std::string name, std::string detail);
};

const char* VerdictName(CheckResult::Verdict v);  // "ok", "warn", "FAIL", "skip"

// "[ ok ] cpu: ...", "[FAIL] disk tier: ... -- fix: ...". Newlines in the
// detail or fix become spaces, so every check stays one line.
std::string FormatCheck(const CheckResult& r);

bool AnyFailed(const std::vector<CheckResult>& results);

}  // namespace pg
