#include "server/core/request_log.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace pg {
namespace {

thread_local RequestLogRecord t_record;

std::string Count(int64_t n) { return n < 0 ? "-" : std::to_string(n); }

}  // namespace

void BeginRequestLog(double now_s) { t_record = RequestLogRecord{now_s}; }

void NoteRequestTokens(const GenerationResult& result) {
  t_record.prompt_tokens = result.prompt_tokens;
  t_record.completion_tokens = result.completion_tokens;
  t_record.cached_tokens = result.cache.cached_tokens;
}

void NoteRequestSkippedTools(const std::vector<std::string>& types) {
  t_record.skipped_tools.clear();
  for (const std::string& t : types) t_record.skipped_tools += (t_record.skipped_tools.empty() ? "" : ",") + t;
}

std::string ErrorCodeOf(const std::string& body) {
  if (body.empty() || body.size() > (1 << 16) || body[0] != '{') return "";
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("error") || !j["error"].is_object()) return "";
  const nlohmann::json& e = j["error"];
  if (e.contains("code") && e["code"].is_string()) return e["code"].get<std::string>();
  if (e.contains("type") && e["type"].is_string()) return e["type"].get<std::string>();
  return "";
}

void NoteRequestResponse(int status, const std::string& body) {
  if (status < 400) {
    t_record.error.clear();
    return;
  }
  // A body already compressed reads as none: the code noted where the error
  // was written (SendError) stands.
  std::string code = ErrorCodeOf(body);
  if (!code.empty()) t_record.error = std::move(code);
}

std::string RequestLogLine(const std::string& method, const std::string& path, int status, double now_s) {
  const std::string& code = t_record.error;
  std::string line = fmt::format(
      "request {} {} status={} error={} prompt_tokens={} completion_tokens={} cached_tokens={} "
      "duration_ms={:.1f}",
      method, path, status, code.empty() ? "-" : code, Count(t_record.prompt_tokens), Count(t_record.completion_tokens),
      Count(t_record.cached_tokens), t_record.start_s > 0 ? (now_s - t_record.start_s) * 1000 : 0.0);
  if (!t_record.skipped_tools.empty()) line += " skipped_tools=" + t_record.skipped_tools;
  return line;
}

}  // namespace pg
