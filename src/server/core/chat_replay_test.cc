#include "server/core/chat_replay.h"

#include <gtest/gtest.h>

namespace pg {
namespace {

using json = nlohmann::ordered_json;

TEST(ChatReplay, ParallelCallsBecomeSuccessiveTurns) {
  json in = json::parse(R"([{"role": "user", "content": "q"},
      {"role": "assistant", "content": "two calls", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": {"x": 1}}},
        {"id": "b", "type": "function", "function": {"name": "g", "arguments": {}}}]},
      {"role": "tool", "tool_call_id": "b", "content": "B"},
      {"role": "tool", "tool_call_id": "a", "content": "A"},
      {"role": "user", "content": "next"}])");
  json out = SerializeParallelToolCalls(in);
  json want = json::parse(R"([{"role": "user", "content": "q"},
      {"role": "assistant", "content": "two calls", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": {"x": 1}}}]},
      {"role": "tool", "tool_call_id": "a", "content": "A"},
      {"role": "assistant", "content": "", "tool_calls": [
        {"id": "b", "type": "function", "function": {"name": "g", "arguments": {}}}]},
      {"role": "tool", "tool_call_id": "b", "content": "B"},
      {"role": "user", "content": "next"}])");
  EXPECT_EQ(out, want);
  // Nothing to do: the same list.
  json single = json::parse(R"([{"role": "user", "content": "q"}, {"role": "assistant", "content": "", "tool_calls": [
      {"id": "a", "type": "function", "function": {"name": "f", "arguments": {}}}]},
      {"role": "tool", "tool_call_id": "a", "content": "A"}])");
  EXPECT_EQ(SerializeParallelToolCalls(single), single);
}

TEST(ChatReplay, ExplainNamesTheFirstTurnTheTemplateRefuses) {
  json msgs = json::parse(R"([{"role": "user", "content": "q"}, {"role": "assistant", "content": "ok"},
      {"role": "user", "content": "q2"},
      {"role": "assistant", "content": "", "tool_calls": [{"id": "a"}, {"id": "b"}]},
      {"role": "tool", "tool_call_id": "a", "content": "A"}])");
  int renders = 0;
  auto render = [&](const json& m) {
    ++renders;
    for (const json& t : m) {
      if (t.contains("tool_calls") && t["tool_calls"].size() > 1)
        return InvalidArgument("chat template raised: single only");
    }
    return Status::Ok();
  };
  std::string why = ExplainTemplateError(msgs, InvalidArgument("chat template raised: single only"), render);
  EXPECT_NE(why.find("turn 3 (assistant, 2 tool calls)"), std::string::npos) << why;
  EXPECT_NE(why.find("chat template raised: single only"), std::string::npos) << why;
  EXPECT_NE(why.find("--serialize-parallel-tool-calls"), std::string::npos) << why;
  EXPECT_LE(renders, 3);
  // A refusal that is not about parallel calls offers no flag.
  auto refuse_user = [](const json& m) {
    return m.size() >= 3 ? InvalidArgument("roles must alternate") : Status::Ok();
  };
  why = ExplainTemplateError(msgs, InvalidArgument("roles must alternate"), refuse_user);
  EXPECT_NE(why.find("turn 2 (user)"), std::string::npos) << why;
  EXPECT_EQ(why.find("--serialize"), std::string::npos) << why;
}

}  // namespace
}  // namespace pg
