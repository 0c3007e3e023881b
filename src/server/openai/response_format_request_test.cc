// The output-format fields (response_format_request.h), parsed through the
// chat and completions routes.
#include "server/openai/response_format_request.h"

#include <gtest/gtest.h>

#include "server/core/request.h"
#include "server/openai/request_test_util.h"

namespace pg {
namespace {

constexpr auto Chat = testing::ParseChatBody;
constexpr auto Completion = testing::ParseCompletionBody;

// llama.cpp's and vLLM's ways of giving a schema are the json_schema
// constraint, each naming itself in errors; two at once is refused. All of
// them, and response_format, on completions too.
TEST(ResponseFormatRequest, OtherServersSchemaFormsAreTheJsonSchemaConstraint) {
  const std::string user = R"({"messages":[{"role":"user","content":"hi"}],)";
  struct Case {
    std::string body;
    bool chat;
    const char* param;
  } ok[] = {{user + R"("response_format":{"type":"json_object","schema":{"type":"object"}}})", true,
             "response_format.schema"},
            {user + R"("json_schema":{"type":"object"}})", true, "json_schema"},
            {user + R"("guided_json":"{\"type\":\"object\"}"})", true, "guided_json"},
            {user + R"("json_schema":{"type":"object"},"response_format":{"type":"text"}})", true, "json_schema"},
            {R"({"prompt":"x","json_schema":{"type":"object"}})", false, "json_schema"},
            {R"({"prompt":"x","guided_json":{"type":"object"}})", false, "guided_json"},
            {R"({"prompt":"x","structured_outputs":{"json":{"type":"object"},"disable_fallback":true}})", false,
             "structured_outputs.json"},
            {user + R"("structured_outputs":{"json":"{\"type\":\"object\"}"}})", true, "structured_outputs.json"},
            {R"({"prompt":"x","response_format":{"type":"json_schema","json_schema":{"name":"o","schema":)"
             R"({"type":"object"}}}})",
             false, "response_format.json_schema.schema"}};
  for (const Case& c : ok) {
    auto r = c.chat ? Chat(c.body) : Completion(c.body);
    ASSERT_TRUE(r.ok()) << c.body << ": " << r.error.message;
    EXPECT_EQ(r.value.response_format, ApiRequest::ResponseFormat::kJsonSchema) << c.body;
    EXPECT_EQ(r.value.response_schema["type"], "object") << c.body;
    EXPECT_EQ(r.value.response_schema_param, c.param) << c.body;
  }
  const std::pair<std::string, const char*> bad[] = {
      {user + R"("json_schema":5})", "json_schema"},
      {user + R"("guided_json":"{not json"})", "guided_json"},
      {user + R"("json_schema":{},"guided_json":{}})", "guided_json"},
      {user + R"("json_schema":{},"response_format":{"type":"json_object"}})", "response_format"},
      {user + R"("response_format":{"type":"json_object","schema":"object"}})", "response_format.schema"},
      {user + R"("response_format":{"type":"text","schema":{}}})", "response_format.schema"},
      {user + R"("response_format":{"type":"json_schema","schema":{}}})", "response_format.schema"},
      {user + R"("structured_outputs":{"choice":[]}})", "structured_outputs.choice"},
      {user + R"("structured_outputs":{"choice":["a",""]}})", "structured_outputs.choice"},
      {user + R"("guided_choice":"a"})", "guided_choice"},
      {user + R"("guided_choice":["a"],"json_schema":{}})", "guided_choice"},
      {user + R"("structured_outputs":{"regex":"a+"}})", "structured_outputs.regex"},
      {user + R"("structured_outputs":{"jsn":{}}})", "structured_outputs.jsn"},
      {user + R"("structured_outputs":{"json":7}})", "structured_outputs.json"},
      {user + R"("structured_outputs":{"json":{},"json_object":true}})", "structured_outputs.json_object"},
      {user + R"("structured_outputs":{"json_object":true},"response_format":{"type":"json_object"}})",
       "response_format"},
      {user + R"("structured_outputs":[]})", "structured_outputs"}};
  for (const auto& [body, param] : bad) {
    auto r = Chat(body);
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.error.http_status, 400) << body;
    EXPECT_EQ(r.error.param, param) << body << ": " << r.error.message;
  }
}

TEST(ResponseFormatRequest, ChoicesAreTheChoiceConstraint) {
  for (const std::string body : {R"({"prompt":"x","structured_outputs":{"choice":["yes","no"]}})",
                                 R"({"prompt":"x","guided_choice":["yes","no"]})"}) {
    auto r = Completion(body);
    ASSERT_TRUE(r.ok()) << body << ": " << r.error.message;
    EXPECT_EQ(r.value.response_format, ApiRequest::ResponseFormat::kChoice);
    EXPECT_EQ(r.value.response_choices, (std::vector<std::string>{"yes", "no"}));
  }
}

}  // namespace
}  // namespace pg
