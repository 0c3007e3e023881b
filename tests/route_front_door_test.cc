// Issue 23, "the router holds the front door", against the real binaries:
// two `prosgrow serve` replicas on the tiny synthetic model (no ../shared)
// behind `prosgrow route`.
//   * the bad-input catalogue (bad_input_catalogue.h) and serve's front-door
//     limits get the same answers through the router as from a replica;
//   * a replica killed mid-stream on /v1/messages and on a streamed OpenAI
//     tool call: the client's stream continues on the other replica, in its
//     own API's format, with the answer the survivor gives in one piece.
// Conditions are awaited; nothing asserts a time.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "bad_input_catalogue.h"
#include "testing/http_test_util.h"
#include "testing/serve_process.h"

namespace pg {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::ServeProcess;

class RouteFrontDoor : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pg_route_front_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    model_ = (dir_ / "tiny.gguf").string();
    const Status st = testing::MakeTinyModel(PROSGROW_BINARY, model_);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  void TearDown() override {
    for (auto* p : {&router_, &a_, &b_})
      if (*p) (*p)->Stop();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // Two replicas with `flags`, and the router with `route_flags`.
  void Fleet(const std::vector<std::string>& flags, const std::vector<std::string>& route_flags) {
    std::vector<std::string> f = {"--threads", "1"};
    f.insert(f.end(), flags.begin(), flags.end());
    auto a = ServeProcess::Start(PROSGROW_BINARY, model_, f, (dir_ / "a.log").string());
    auto b = ServeProcess::Start(PROSGROW_BINARY, model_, f, (dir_ / "b.log").string());
    ASSERT_TRUE(a.ok() && b.ok()) << a.status().ToString() << b.status().ToString();
    a_ = std::move(*a);
    b_ = std::move(*b);
    auto r = ServeProcess::StartRoute(PROSGROW_BINARY, {a_->base_url(), b_->base_url()}, route_flags,
                                      (dir_ / "route.log").string());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    router_ = std::move(*r);
    // Both replicas up in the router's eyes, so either may serve.
    ASSERT_TRUE(testing::WaitUntil([&] {
      const std::string m = router_->Metrics();
      return testing::Sample(m, "prosgrow_route_replica_up{replica=\"" + a_->base_url() + "\"}") == 1 &&
             testing::Sample(m, "prosgrow_route_replica_up{replica=\"" + b_->base_url() + "\"}") == 1;
    })) << router_->Metrics();
  }

  fs::path dir_;
  std::string model_;
  std::unique_ptr<ServeProcess> a_, b_, router_;
};

TEST_F(RouteFrontDoor, TheCatalogueGetsServesAnswers) {
  std::vector<std::string> route_flags = {"--max-body-bytes", "64KiB"};
  Fleet(test::kCatalogueServeFlags, route_flags);
  for (const test::BadInput& c : test::BadInputCatalogue()) {
    auto direct = a_->Client()->Post(c.path, c.body, "application/json");
    auto routed = router_->Client()->Post(c.path, c.body, "application/json");
    ASSERT_TRUE(direct && routed) << c.name;
    EXPECT_EQ(direct->status, c.status) << c.name << ": " << direct->body;
    EXPECT_EQ(routed->status, direct->status) << c.name << ": " << routed->body;
    EXPECT_EQ(json::parse(routed->body, nullptr, false), json::parse(direct->body, nullptr, false))
        << c.name << "\nrouted: " << routed->body << "\ndirect: " << direct->body;
  }
  // Serve's front-door limits, with serve's answers: header count, nesting,
  // wrong method, and Anthropic's error shape on /v1/messages.
  httplib::Headers many;
  for (int i = 0; i < 150; ++i) many.emplace("X-Filler-" + std::to_string(i), "x");
  std::string deep = std::string(300, '[') + std::string(300, ']');
  struct Probe {
    const char* name;
    std::function<httplib::Result(httplib::Client&)> send;
  } probes[] = {
      {"too many headers",
       [&](httplib::Client& c) { return c.Post("/v1/completions", many, R"({"prompt":"x"})", "application/json"); }},
      {"too deep",
       [&](httplib::Client& c) { return c.Post("/v1/chat/completions", "{\"a\":" + deep + "}", "application/json"); }},
      {"wrong method", [](httplib::Client& c) { return c.Get("/v1/chat/completions"); }},
      {"PATCH", [](httplib::Client& c) { return c.Patch("/v1/chat/completions", "{}", "application/json"); }},
      {"anthropic malformed", [](httplib::Client& c) { return c.Post("/v1/messages", "{", "application/json"); }},
      {"anthropic bad field",
       [](httplib::Client& c) {
         return c.Post("/v1/messages", R"({"max_tokens":-1,"messages":[{"role":"user","content":"x"}]})",
                       "application/json");
       }},
  };
  for (const Probe& p : probes) {
    auto direct = p.send(*a_->Client());
    auto routed = p.send(*router_->Client());
    ASSERT_TRUE(direct && routed) << p.name;
    EXPECT_GE(direct->status, 400) << p.name;
    EXPECT_EQ(routed->status, direct->status) << p.name << ": " << routed->body;
    EXPECT_EQ(json::parse(routed->body, nullptr, false), json::parse(direct->body, nullptr, false))
        << p.name << "\nrouted: " << routed->body << "\ndirect: " << direct->body;
  }
  EXPECT_TRUE(a_->Alive() && b_->Alive() && router_->Alive());
}

// What a client assembles from a stream: the text and tool arguments, in
// order, and the events' kinds.
struct Assembled {
  std::string output;              // text deltas and tool-argument deltas, concatenated
  std::vector<std::string> kinds;  // Anthropic event names, or "chunk" / "[DONE]" / "error"
  int tool_call_ids = 0;           // OpenAI tool-call ids / Anthropic tool_use blocks seen
};

Assembled Assemble(const std::string& sse) {
  Assembled a;
  for (size_t at = 0; at < sse.size();) {
    size_t end = sse.find("\n\n", at);
    if (end == std::string::npos) break;
    const std::string ev = sse.substr(at, end - at);
    at = end + 2;
    const size_t d = ev.find("data: ");
    if (d == std::string::npos) continue;
    const std::string data = ev.substr(d + 6);
    if (data == "[DONE]") {
      a.kinds.push_back("[DONE]");
      continue;
    }
    json j = json::parse(data, nullptr, false);
    if (j.contains("error")) {
      a.kinds.push_back("error");
      continue;
    }
    if (j.contains("type")) {  // Anthropic
      a.kinds.push_back(j["type"]);
      if (j["type"] == "content_block_start" && j["content_block"]["type"] == "tool_use") ++a.tool_call_ids;
      if (j["type"] == "content_block_delta") {
        const json& delta = j["delta"];
        a.output += delta.value("text", "") + delta.value("partial_json", "");
      }
      continue;
    }
    a.kinds.push_back("chunk");
    if (!j.contains("choices") || j["choices"].empty()) continue;
    const json& delta = j["choices"][0]["delta"];
    if (delta.contains("content") && delta["content"].is_string()) a.output += delta["content"].get<std::string>();
    if (delta.contains("tool_calls")) {
      for (const json& c : delta["tool_calls"]) {
        if (c.contains("id")) ++a.tool_call_ids;
        if (c.contains("function")) a.output += c["function"].value("arguments", "");
      }
    }
  }
  return a;
}

// POSTs a streaming request to `port`; `on_bytes` sees the body as it comes
// (and the serving replica, from X-Prosgrow-Replica). Returns the whole body.
std::string Stream(int port, const std::string& path, const json& body,
                   const std::function<void(const std::string& so_far, const std::string& replica)>& on_bytes) {
  httplib::Client cli("127.0.0.1", port);
  cli.set_read_timeout(300);
  std::string got, replica;
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.body = body.dump();
  req.set_header("Content-Type", "application/json");
  req.response_handler = [&](const httplib::Response& r) {
    replica = r.get_header_value("X-Prosgrow-Replica");
    return true;
  };
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    got.append(data, n);
    if (on_bytes) on_bytes(got, replica);
    return true;
  };
  httplib::Response res;
  httplib::Error err = httplib::Error::Success;
  cli.send(req, res, err);
  return got;
}

// A request whose answer is a long forced tool call (its one string argument
// is 1500 to 1600 characters, so it always ends): the kill lands mid-stream.
json LongToolCall(bool anthropic) {
  const json schema = {{"type", "object"},
                       {"properties", {{"text", {{"type", "string"}, {"minLength", 1500}, {"maxLength", 1600}}}}},
                       {"required", {"text"}}};
  json body = {{"max_tokens", 3000},
               {"temperature", 0},
               {"stream", true},
               {"messages", {{{"role", "user"}, {"content", "Write it down."}}}}};
  // One call (a forced tool_choice allows several in parallel otherwise).
  if (anthropic) {
    body["model"] = "tiny";
    body["tools"] = {{{"name", "note"}, {"description", "keep a note"}, {"input_schema", schema}}};
    body["tool_choice"] = {{"type", "tool"}, {"name", "note"}, {"disable_parallel_tool_use", true}};
  } else {
    body["tools"] = {{{"type", "function"}, {"function", {{"name", "note"}, {"parameters", schema}}}}};
    body["tool_choice"] = {{"type", "function"}, {"function", {{"name", "note"}}}};
    body["parallel_tool_calls"] = false;
  }
  return body;
}

void KillMidStreamAndCompare(RouteFrontDoor* t, ServeProcess& router, ServeProcess& a, ServeProcess& b,
                             const std::string& path, bool anthropic) {
  std::map<std::string, ServeProcess*> by_url = {{a.base_url(), &a}, {b.base_url(), &b}};
  ServeProcess* killed = nullptr;
  // Killed once the stream has begun: Anthropic's message_start (a tool_use
  // block is sent whole at the end), OpenAI's first tool-call delta.
  const std::string marker = anthropic ? "message_start" : "\"arguments\"";
  const std::string sse =
      Stream(router.port(), path, LongToolCall(anthropic), [&](const std::string& so_far, const std::string& replica) {
        if (killed || so_far.find(marker) == std::string::npos) return;
        auto it = by_url.find(replica);
        if (it == by_url.end()) return;
        killed = it->second;
        killed->Kill();
      });
  ASSERT_NE(killed, nullptr) << "the stream never began: " << sse.substr(0, 2000);
  ServeProcess& survivor = killed == &a ? b : a;
  const Assembled got = Assemble(sse);
  ASSERT_FALSE(got.kinds.empty());
  // Resumed: the stream ends as the API ends one, with the survivor's answer.
  EXPECT_EQ(got.kinds.back(), anthropic ? "message_stop" : "[DONE]")
      << sse.substr(sse.size() - std::min<size_t>(sse.size(), 2000));
  EXPECT_EQ(std::count(got.kinds.begin(), got.kinds.end(), "error"), 0);
  if (anthropic) {
    EXPECT_EQ(std::count(got.kinds.begin(), got.kinds.end(), "message_start"), 1);
  }
  EXPECT_EQ(got.tool_call_ids, 1);
  EXPECT_EQ(testing::Sample(router.Metrics(), "prosgrow_route_resumed_streams_total"), 1) << router.Metrics();
  const Assembled whole = Assemble(Stream(survivor.port(), path, LongToolCall(anthropic), nullptr));
  EXPECT_EQ(got.output, whole.output);
  EXPECT_TRUE(json::parse(got.output, nullptr, false).is_object()) << got.output.substr(0, 300);
  (void)t;
}

TEST_F(RouteFrontDoor, AnthropicToolStreamResumesOnTheOtherReplica) {
  Fleet({}, {});
  KillMidStreamAndCompare(this, *router_, *a_, *b_, "/v1/messages", /*anthropic=*/true);
}

TEST_F(RouteFrontDoor, OpenAiToolCallStreamResumesOnTheOtherReplica) {
  Fleet({}, {});
  KillMidStreamAndCompare(this, *router_, *a_, *b_, "/v1/chat/completions", /*anthropic=*/false);
}

}  // namespace
}  // namespace pg
