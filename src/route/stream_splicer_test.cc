#include "route/stream_splicer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

namespace pg {
namespace {

using json = nlohmann::json;

std::string Chunk(const std::string& id, const json& delta, const json& finish = nullptr) {
  json j = {{"id", id},
            {"object", "chat.completion.chunk"},
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
  EXPECT_NE(s.ErrorEvent(s.refused()).find("replica_lost"), std::string::npos);
}

// A streamed tool call, chunked as a replica sends it: the call's id comes
// with its first delta only.
std::string ToolStream(const std::string& id, const std::string& call_id,
                       const std::vector<std::string>& parts = {"{\"city\"", ": \"Par", "is\"}"}) {
  auto call = [](json fn, const std::string& cid) {
    json c = {{"index", 0}, {"function", std::move(fn)}};
    if (!cid.empty()) c["id"] = cid, c["type"] = "function";
    return json{{"tool_calls", json::array({c})}};
  };
  std::string s = Chunk(id, {{"role", "assistant"}, {"content", ""}});
  s += Chunk(id, call({{"name", "get_weather"}, {"arguments", ""}}, call_id));
  for (const std::string& part : parts) s += Chunk(id, call({{"arguments", part}}, ""));
  return s + Chunk(id, json::object(), "tool_calls") + "data: [DONE]\n\n";
}

// The arguments and call ids a client received.
std::string Arguments(const std::string& sse, std::set<std::string>* call_ids) {
  std::string args;
  for (size_t at = 0; (at = sse.find("data: {", at)) != std::string::npos; ++at) {
    json j = json::parse(sse.substr(at + 6, sse.find("\n\n", at) - at - 6));
    const json& d = j["choices"][0]["delta"];
    if (!d.contains("tool_calls")) continue;
    const json& c = d["tool_calls"][0];
    if (c.contains("id")) call_ids->insert(c["id"].get<std::string>());
    args += c["function"].value("arguments", "");
  }
  return args;
}

TEST(StreamSplicer, ToolCallStreamsResumeEventByEvent) {
  const std::string first = ToolStream("a", "call_1");
  const std::string second = ToolStream("b", "call_2");  // another replica: other ids, same events
  for (size_t cut = 1; cut < first.size(); ++cut) {
    StreamSplicer s;
    std::string out;
    s.Feed(first.substr(0, cut), &out);
    if (s.done()) continue;
    if (!s.BeginReplacement()) {
      EXPECT_TRUE(s.finished()) << cut;
      continue;
    }
    // The ids the client has stay; those it never saw are the replacement's.
    const std::string chunk_id = out.empty() ? "b" : "a";
    const std::string call_id = out.find("call_1") == std::string::npos ? "call_2" : "call_1";
    s.Feed(second, &out);
    std::set<std::string> call_ids;
    EXPECT_EQ(Arguments(out, &call_ids), "{\"city\": \"Paris\"}") << cut;
    EXPECT_EQ(call_ids, std::set<std::string>{call_id}) << cut;  // one call, one id
    std::set<std::string> ids;
    Text(out, &ids);
    EXPECT_EQ(ids, std::set<std::string>{chunk_id}) << cut;
    EXPECT_TRUE(s.done() && s.refused().empty()) << cut << " " << s.refused();
  }
}

// A replica's stream loop sends what each poll found: the replacement's
// arguments come in other pieces than the first stream's.
TEST(StreamSplicer, ToolCallStreamsResumeWhateverTheChunking) {
  const std::string first = ToolStream("a", "call_1", {"{", "\"ci", "ty\": \"Paris\"}"});
  const std::string second = ToolStream("b", "call_2", {"{\"city\": \"Pa", "ris\"}"});
  for (size_t cut = 1; cut < first.size(); ++cut) {
    StreamSplicer s;
    std::string out;
    s.Feed(first.substr(0, cut), &out);
    if (s.done() || !s.BeginReplacement()) continue;
    s.Feed(second, &out);
    std::set<std::string> call_ids;
    EXPECT_EQ(Arguments(out, &call_ids), "{\"city\": \"Paris\"}") << cut;
    EXPECT_EQ(call_ids.size(), 1u) << cut;
    EXPECT_TRUE(s.done() && s.refused().empty()) << cut << " " << s.refused();
  }
  // Arguments that part ways with what the client has are refused.
  StreamSplicer s;
  std::string out;
  s.Feed(first.substr(0, first.find("data: ", first.find("Paris"))), &out);  // the client has "Paris"
  ASSERT_TRUE(s.BeginReplacement());
  const size_t before = out.size();
  s.Feed(ToolStream("b", "call_2", {"{\"city\": \"Rome\"}"}), &out);
  EXPECT_EQ(out.size(), before);
  EXPECT_TRUE(s.diverged());
}

std::string Named(const json& j) { return "event: " + j["type"].get<std::string>() + "\ndata: " + j.dump() + "\n\n"; }

// An Anthropic Messages stream: text, then a tool_use block.
std::string AnthropicStream(const std::string& msg_id, const std::string& tool_id, int cached) {
  std::string s = Named({{"type", "message_start"},
                         {"message",
                          {{"id", msg_id},
                           {"type", "message"},
                           {"role", "assistant"},
                           {"usage", {{"input_tokens", 9}, {"cache_read_input_tokens", cached}}}}}});
  s += Named({{"type", "ping"}});
  s += Named({{"type", "content_block_start"}, {"index", 0}, {"content_block", {{"type", "text"}, {"text", ""}}}});
  for (const char* t : {"Let me", " check."})
    s += Named({{"type", "content_block_delta"}, {"index", 0}, {"delta", {{"type", "text_delta"}, {"text", t}}}});
  s += Named({{"type", "content_block_stop"}, {"index", 0}});
  s += Named({{"type", "content_block_start"},
              {"index", 1},
              {"content_block", {{"type", "tool_use"}, {"id", tool_id}, {"name", "f"}, {"input", json::object()}}}});
  s += Named({{"type", "content_block_delta"},
              {"index", 1},
              {"delta", {{"type", "input_json_delta"}, {"partial_json", "{\"a\": 1}"}}}});
  s += Named({{"type", "content_block_stop"}, {"index", 1}});
  s += Named({{"type", "message_delta"}, {"delta", {{"stop_reason", "tool_use"}}}, {"usage", {{"output_tokens", 5}}}});
  return s + Named({{"type", "message_stop"}});
}

TEST(StreamSplicer, AnthropicStreamsResumeWithTheClientsIds) {
  using D = StreamSplicer::Dialect;
  const std::string first = AnthropicStream("msg_1", "toolu_1", 0);
  const std::string second = AnthropicStream("msg_2", "toolu_2", 32);  // its cache differs: usage is not matched
  for (size_t cut = 1; cut < first.size(); ++cut) {
    StreamSplicer s(D::kAnthropic);
    std::string out;
    s.Feed(first.substr(0, cut), &out);
    if (s.done()) continue;
    if (!s.BeginReplacement()) {
      EXPECT_TRUE(s.finished()) << cut;
      EXPECT_EQ(s.EndEvent(), "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
      continue;
    }
    const bool saw_start = out.find("msg_1") != std::string::npos;
    const bool saw_tool = out.find("toolu_1") != std::string::npos;
    s.Feed(second, &out);
    EXPECT_TRUE(s.done() && s.refused().empty()) << cut << " " << s.refused();
    // The ids the client has stay: one message id, one tool_use id.
    EXPECT_EQ(out.find("msg_2") == std::string::npos, saw_start) << cut;
    EXPECT_EQ(out.find("toolu_2") == std::string::npos, saw_tool) << cut;
    size_t starts = 0;
    for (size_t at = 0; (at = out.find("event: message_start", at)) != std::string::npos; ++at) ++starts;
    EXPECT_EQ(starts, 1u) << cut;
    EXPECT_NE(out.find("\"partial_json\":\"{\\\"a\\\": 1}\""), std::string::npos) << cut;
  }
}

TEST(StreamSplicer, DivergentEventsEndInTheClientsFormat) {
  StreamSplicer s(StreamSplicer::Dialect::kAnthropic);
  std::string out;
  const std::string first = AnthropicStream("msg_1", "toolu_1", 0);
  s.Feed(first.substr(0, first.find(" check.")), &out);
  ASSERT_TRUE(s.BeginReplacement());
  const size_t before = out.size();
  std::string other = AnthropicStream("msg_2", "toolu_2", 0);
  const size_t at = other.find("Let me");
  other.replace(at, 6, "Not me");
  s.Feed(other, &out);
  EXPECT_TRUE(s.diverged());
  EXPECT_EQ(out.size(), before);
  const std::string err = s.ErrorEvent(s.refused());
  EXPECT_EQ(err.rfind("event: error\ndata: ", 0), 0u) << err;
  json j = json::parse(err.substr(err.find("data: ") + 6));
  EXPECT_EQ(j["type"], "error");
  EXPECT_EQ(j["error"]["type"], "api_error");
}

TEST(StreamSplicer, ErrorEventsAndSeveralChoicesAreNotSpliced) {
  StreamSplicer s;
  std::string out;
  json two = {{"id", "a"},
              {"choices", json::array({{{"index", 0}, {"delta", {{"content", "x"}}}},
                                       {{"index", 1}, {"delta", {{"content", "y"}}}}})}};
  s.Feed("data: " + two.dump() + "\n\n", &out);
  EXPECT_FALSE(out.empty());  // relayed as is
  EXPECT_FALSE(s.BeginReplacement());
  EXPECT_FALSE(s.refused().empty());
}

}  // namespace
}  // namespace pg

namespace pg {
namespace {

// A Responses stream is relayed as it comes and never continued elsewhere:
// when its replica is lost it ends with a Responses error event.
TEST(StreamSplicer, ResponsesStreamsEndWithAResponsesError) {
  StreamSplicer s(StreamSplicer::Dialect::kResponses);
  std::string out;
  const std::string created =
      "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\"}}\n\n";
  s.Feed(created, &out);
  EXPECT_EQ(out, created);
  EXPECT_FALSE(s.BeginReplacement());
  const std::string end = s.ErrorEvent("lost");
  ASSERT_EQ(end.rfind("event: error\ndata: ", 0), 0u) << end;
  json j = json::parse(end.substr(19));
  EXPECT_EQ(j["type"], "error");
  EXPECT_EQ(j["code"], "replica_lost");
  EXPECT_EQ(j["message"], "lost");
}

}  // namespace
}  // namespace pg
