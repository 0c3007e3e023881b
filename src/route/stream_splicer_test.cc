#include "route/stream_splicer.h"

#include <gtest/gtest.h>

#include <set>

#include <nlohmann/json.hpp>

namespace pg {
namespace {

using json = nlohmann::json;

std::string Chunk(const std::string& id, const json& delta, const json& finish = nullptr) {
  json j = {{"id", id}, {"object", "chat.completion.chunk"},
            {"choices", json::array({{{"index", 0}, {"delta", delta}, {"finish_reason", finish}}})}};
  return "data: " + j.dump() + "\n\n";
}

// A chat stream saying `words` in order, as a replica would send it.
std::string Stream(const std::string& id, const std::vector<std::string>& words) {
  std::string s = Chunk(id, {{"role", "assistant"}, {"content", ""}});
  for (const std::string& w : words) s += Chunk(id, {{"content", w}});
  s += Chunk(id, json::object(), "stop");
  return s + "data: [DONE]\n\n";
}

// The text and ids of the chunks a client received.
std::string Text(const std::string& sse, std::set<std::string>* ids = nullptr, int* roles = nullptr) {
  std::string text;
  for (size_t at = 0; (at = sse.find("data: {", at)) != std::string::npos; ++at) {
    json j = json::parse(sse.substr(at + 6, sse.find("\n\n", at) - at - 6));
    if (ids) ids->insert(j["id"].get<std::string>());
    const json& d = j["choices"][0]["delta"];
    if (d.contains("content")) text += d["content"].get<std::string>();
    if (roles && d.contains("role")) ++*roles;
  }
  return text;
}

TEST(StreamSplicer, RelaysCompleteEventsOnly) {
  StreamSplicer s;
  const std::string all = Stream("a", {"Hello", " world"});
  std::string out;
  s.Feed(all.substr(0, 30), &out);
  EXPECT_EQ(out, "");  // half of the first event
  s.Feed(all.substr(30), &out);
  EXPECT_EQ(out, all);
  EXPECT_TRUE(s.done());
}

TEST(StreamSplicer, ReplacementContinuesWhereTheStreamBroke) {
  const std::string first = Stream("a", {"The", " quick", " brown", " fox"});
  const std::string second = Stream("b", {"The quick", " br", "own", " fox"});  // other chunking
  // Break the first stream at every byte: the client always ends with the
  // whole text once, one role chunk, the first stream's id, and [DONE].
  for (size_t cut = 1; cut < first.size(); ++cut) {
    StreamSplicer s;
    std::string out;
    s.Feed(first.substr(0, cut), &out);
    if (s.done()) continue;
    const std::string id = out.empty() ? "b" : "a";  // the client's first id stays
    if (!s.BeginReplacement()) {
      EXPECT_TRUE(s.finished()) << cut;  // only after the finish chunk
      continue;
    }
    s.Feed(second, &out);
    std::set<std::string> ids;
    int roles = 0;
    EXPECT_EQ(Text(out, &ids, &roles), "The quick brown fox") << cut;
    EXPECT_EQ(roles, 1) << cut;
    EXPECT_EQ(ids, std::set<std::string>{id}) << cut;
    EXPECT_TRUE(s.done()) << cut;
    EXPECT_TRUE(s.refused().empty()) << cut;
  }
}

TEST(StreamSplicer, DivergentReplacementIsRefused) {
  StreamSplicer s;
  std::string out;
  const std::string first = Stream("a", {"heads", " again"});
  s.Feed(first.substr(0, first.find(" again")), &out);
  ASSERT_TRUE(s.BeginReplacement());
  const size_t before = out.size();
  s.Feed(Stream("b", {"tails", " again"}), &out);
  EXPECT_TRUE(s.diverged());
  EXPECT_EQ(out.size(), before);  // nothing of the other answer reached the client
  EXPECT_NE(StreamSplicer::ErrorEvent(s.refused()).find("replica_lost"), std::string::npos);
}

TEST(StreamSplicer, ToolCallsAndOtherStreamsAreNotSpliced) {
  StreamSplicer s;
  std::string out;
  json tool = {{"tool_calls", json::array({{{"index", 0}, {"function", {{"arguments", "{"}}}}})}};
  s.Feed(Chunk("a", tool), &out);
  EXPECT_FALSE(out.empty());  // relayed as is
  EXPECT_FALSE(s.BeginReplacement());
  EXPECT_FALSE(s.refused().empty());

  StreamSplicer anthropic;
  anthropic.Feed("event: message_start\ndata: {\"type\":\"message_start\"}\n\n", &out);
  EXPECT_FALSE(anthropic.BeginReplacement());
}

}  // namespace
}  // namespace pg
