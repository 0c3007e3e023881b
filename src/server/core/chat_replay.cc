#include "server/core/chat_replay.h"

#include <fmt/format.h>

#include "server/core/json_string_at.h"

namespace pg {
namespace {

using ojson = nlohmann::ordered_json;

size_t CallCount(const ojson& m) {
  auto it = m.find("tool_calls");
  return it != m.end() && it->is_array() ? it->size() : 0;
}

}  // namespace

ojson SerializeParallelToolCalls(const ojson& messages) {
  ojson out = ojson::array();
  for (size_t i = 0; i < messages.size(); ++i) {
    const ojson& m = messages[i];
    if (StringAt(m, "role") != "assistant" || CallCount(m) < 2) {
      out.push_back(m);
      continue;
    }
    // The results that follow this turn, by call id.
    size_t end = i + 1;
    while (end < messages.size() && StringAt(messages[end], "role") == "tool") ++end;
    std::vector<bool> used(end - i - 1, false);
    const ojson& calls = m["tool_calls"];
    for (size_t c = 0; c < calls.size(); ++c) {
      ojson turn = m;
      if (c > 0) turn["content"] = "";
      if (c > 0) turn.erase("reasoning_content");
      turn["tool_calls"] = ojson::array({calls[c]});
      out.push_back(std::move(turn));
      const std::string id = StringAt(calls[c], "id");
      for (size_t r = i + 1; r < end; ++r) {
        if (!used[r - i - 1] && StringAt(messages[r], "tool_call_id") == id) {
          used[r - i - 1] = true;
          out.push_back(messages[r]);
          break;
        }
      }
    }
    for (size_t r = i + 1; r < end; ++r) {
      if (!used[r - i - 1]) out.push_back(messages[r]);  // results that answer no call of this turn
    }
    i = end - 1;
  }
  return out;
}

std::string ExplainTemplateError(const ojson& messages, const Status& error,
                                 const std::function<Status(const ojson&)>& render) {
  // The shortest failing prefix: [0, lo) renders, [0, hi) fails.
  size_t lo = 0, hi = messages.size();
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    ojson prefix = ojson::array();
    for (size_t i = 0; i < mid; ++i) prefix.push_back(messages[i]);
    (render(prefix).ok() ? lo : hi) = mid;
  }
  if (hi == 0 || hi > messages.size()) return error.message();
  const ojson& turn = messages[hi - 1];
  const size_t calls = CallCount(turn);
  std::string what = fmt::format("turn {} ({}", hi - 1, StringAt(turn, "role", "?"));
  if (calls > 0) what += fmt::format(", {} tool call{}", calls, calls == 1 ? "" : "s");
  what += ")";
  std::string out =
      fmt::format("the model's chat template cannot render {} of the conversation: {}", what, error.message());
  if (calls > 1) {
    out +=
        "; this template does not replay parallel tool calls: start the server with "
        "--serialize-parallel-tool-calls to replay them as successive turns (docs/server.md), or send one "
        "call per turn";
  }
  return out;
}

}  // namespace pg
