// The bad-input audit on a real `prosgrow serve` (serve_real_fixture.h):
// the dialects' part of the catalogue (Responses, Anthropic Messages) in
// each API's error shape, every method a route does not take answered 405
// (PATCH and OPTIONS too), and the server still serving afterwards. The
// OpenAI routes' catalogue runs in serve_real_api_test.cc.
#include "bad_input_catalogue.h"
#include "serve_real_fixture.h"

namespace pg::serve_real {
namespace {

// The error's message when `body` has the API's error shape for `path`, else "".
std::string ErrorMessage(const std::string& path, const json& body) {
  if (!body.is_object() || !body.contains("error") || !body["error"].is_object()) return "";
  const json& e = body["error"];
  if (path.rfind("/v1/messages", 0) == 0) {
    if (body.value("type", "") != "error" || !e["type"].is_string()) return "";
  } else if (!e.contains("type") || !e.contains("param") || !e.contains("code")) {
    return "";
  }
  return e["message"].is_string() ? e["message"].get<std::string>() : "";
}

TEST_F(ServeReal, DialectBadInputsGetTheirApisErrors) {
  std::vector<std::string> flags = {"--threads", "2"};
  flags.insert(flags.end(), test::kCatalogueServeFlags.begin(), test::kCatalogueServeFlags.end());
  auto s = Serve(flags, "dialect-errors");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ServeProcess& srv = **s;
  for (const test::BadInput& c : test::BadDialectInputCatalogue()) {
    auto res = srv.Client()->Post(c.path, c.body, "application/json");
    ASSERT_TRUE(res) << c.name;
    EXPECT_EQ(res->status, c.status) << c.name << ": " << res->body;
    const std::string message = ErrorMessage(c.path, json::parse(res->body, nullptr, false));
    EXPECT_NE(message, "") << c.name << ": not the API's error shape: " << res->body;
    EXPECT_NE(message.find(c.message_part), std::string::npos) << c.name << ": " << message;
  }
  // A wrong method is a 405 in the path's shape, whichever method it is.
  std::unique_ptr<httplib::Client> owned = srv.Client();
  httplib::Client& client = *owned;
  for (const char* path : {"/v1/chat/completions", "/v1/messages", "/v1/responses"}) {
    for (const char* method : {"GET", "PUT", "PATCH", "DELETE", "OPTIONS"}) {
      httplib::Request req;
      req.method = method;
      req.path = path;
      auto res = client.send(req);
      ASSERT_TRUE(res) << method << " " << path;
      EXPECT_EQ(res->status, 405) << method << " " << path << ": " << res->body;
      EXPECT_EQ(res->get_header_value("Allow"), "POST") << method << " " << path;
      EXPECT_NE(ErrorMessage(path, json::parse(res->body, nullptr, false)).find("use POST"), std::string::npos)
          << method << " " << path << ": " << res->body;
    }
  }
  auto patch = client.Patch("/v1/models", "{}", "application/json");
  ASSERT_TRUE(patch);
  EXPECT_EQ(patch->status, 405) << patch->body;
  // Nothing above reached the engine, and the server still serves.
  int status = 0;
  json ok = Post(srv, "/v1/chat/completions", kChatHi, &status);
  EXPECT_EQ(status, 200) << ok.dump();
  EXPECT_EQ(Metric(srv, "prosgrow_requests_finished_total"), 1);
  EXPECT_TRUE(srv.Alive());
  EXPECT_EQ(srv.Stop(), 0) << srv.Log();
}

}  // namespace
}  // namespace pg::serve_real
