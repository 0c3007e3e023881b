// The bad-input catalogue: requests a client gets wrong, each with the
// status and a part of the message prosgrow answers. The same catalogue is
// sent to a real `prosgrow serve` (serve_real_api_test.cc) and through
// `prosgrow route` in front of such replicas (route_front_door_test.cc),
// which must give the same answers. Written for a server started with
// kCatalogueServeFlags (a 256-token context, 64 KiB bodies).
#pragma once

#include <string>
#include <vector>

namespace pg::test {

inline const std::vector<std::string> kCatalogueServeFlags = {"--ctx-size", "256", "--max-body-bytes", "64KiB"};

struct BadInput {
  const char* name;
  const char* path;
  std::string body;
  int status;
  const char* message_part;
};

inline std::vector<BadInput> BadInputCatalogue() {
  std::string long_prompt;
  for (int i = 0; i < 400; ++i) long_prompt += "word" + std::to_string(i) + " ";
  const std::string user = R"("messages":[{"role":"user","content":"x"}])";
  const std::string schema_tool =
      R"("tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}])";
  return {
      {"malformed json", "/v1/chat/completions", "{\"messages\": [", 400, "not valid JSON"},
      {"not an object", "/v1/chat/completions", "[1,2,3]", 400, "JSON object"},
      {"wrong type", "/v1/chat/completions", "{" + user + R"(,"temperature":"hot"})", 400, "temperature"},
      {"negative max_tokens", "/v1/completions", R"({"prompt":"x","max_tokens":-3})", 400, "max_tokens"},
      {"absurd max_tokens", "/v1/completions", R"({"prompt":"x","max_tokens":1000000000})", 400, "max_tokens"},
      {"temperature < 0", "/v1/completions", R"({"prompt":"x","temperature":-1})", 400, "temperature"},
      {"top_p 0", "/v1/completions", R"({"prompt":"x","top_p":0})", 400, "top_p"},
      {"top_p > 1", "/v1/completions", R"({"prompt":"x","top_p":1.5})", 400, "top_p"},
      {"n > 1", "/v1/chat/completions", "{" + user + R"(,"n":3})", 400, "'n'"},
      {"empty messages", "/v1/chat/completions", R"({"messages":[]})", 400, "messages"},
      {"bad role", "/v1/chat/completions", R"({"messages":[{"role":"robot","content":"x"}]})", 400, "role"},
      {"token out of vocab", "/v1/completions", R"({"prompt":[1,2,99999999]})", 400, "vocabulary"},
      {"negative token", "/v1/completions", R"({"prompt":[-4]})", 400, "vocabulary"},
      {"invalid utf-8", "/v1/completions", "{\"prompt\":\"caf\xe9\"}", 400, "UTF-8"},
      {"prompt too long", "/v1/completions", R"({"prompt":")" + long_prompt + R"("})", 400, "context is 256 tokens"},
      {"prompt + max_tokens too long", "/v1/completions", R"({"prompt":"hi","max_tokens":256})", 400,
       "lower max_tokens"},
      // Issue 23: fields that do nothing are refused by name.
      {"unknown field", "/v1/chat/completions", "{" + user + R"(,"frobnicate":1})", 400, "unknown field 'frobnicate'"},
      {"unknown completions field", "/v1/completions", R"({"prompt":"x","tools":[]})", 400, "unknown field 'tools'"},
      {"vLLM guided_json not JSON", "/v1/chat/completions", "{" + user + R"(,"guided_json":"{type"})", 400,
       "guided_json"},
      {"llama.cpp grammar", "/v1/completions", R"({"prompt":"x","grammar":"root ::= \"a\""})", 400, "GBNF"},
      {"llama.cpp json_schema a number", "/v1/chat/completions", "{" + user + R"(,"json_schema":5})", 400,
       "json_schema"},
      {"json_schema and response_format", "/v1/chat/completions",
       "{" + user + R"(,"json_schema":{},"response_format":{"type":"json_object"}})", 400, "send one of them"},
      {"store true", "/v1/chat/completions", "{" + user + R"(,"store":true})", 400, "stores none"},
      {"min_tokens > max_tokens", "/v1/completions", R"({"prompt":"x","max_tokens":4,"min_tokens":9})", 400,
       "min_tokens"},
      {"stop_token_ids out of vocab", "/v1/completions", R"({"prompt":"x","stop_token_ids":[99999999]})", 400,
       "stop_token_ids"},
      {"chat_template_kwargs sets messages", "/v1/chat/completions",
       "{" + user + R"(,"chat_template_kwargs":{"messages":[]}})", 400, "chat_template_kwargs"},
      // Issue 23: three that used to get a 200.
      {"$ref only to itself", "/v1/chat/completions",
       "{" + user +
           R"(,"max_tokens":4,"response_format":{"type":"json_schema","json_schema":{"name":"loop","schema":)"
           R"({"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/a"}}}}}})",
       400, "ill-founded"},
      {"tool parameters a number", "/v1/chat/completions",
       "{" + user + R"(,"tools":[{"type":"function","function":{"name":"f","parameters":7}}]})", 400,
       "parameters must be a JSON schema object"},
      {"tool message without tool_call_id", "/v1/chat/completions",
       R"({"messages":[{"role":"user","content":"x"},{"role":"assistant","content":null,"tool_calls":)"
       R"([{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},)"
       R"({"role":"tool","content":"42"}],)" +
           schema_tool + "}",
       400, "tool_call_id"},
      // The bad-input audit: fields that were accepted and did nothing, or
      // not what they said.
      {"llama.cpp response_format schema a string", "/v1/chat/completions",
       "{" + user + R"(,"response_format":{"type":"json_object","schema":"object"}})", 400,
       "'response_format.schema' must be a JSON schema object"},
      {"response_format.json_schema unknown key", "/v1/chat/completions",
       "{" + user + R"(,"response_format":{"type":"json_schema","json_schema":{"name":"a","schema":{},"scheme":1}}})",
       400, "response_format.json_schema.scheme: unknown field"},
      {"tool of another type", "/v1/chat/completions",
       "{" + user + R"(,"tools":[{"type":"retrieval","function":{"name":"f"}}]})", 400, "function tools only"},
      {"tool declared twice", "/v1/chat/completions",
       "{" + user +
           R"(,"tools":[{"type":"function","function":{"name":"f"}},)"
           R"({"type":"function","function":{"name":"f"}}]})",
       400, "tool 'f' is declared twice"},
      {"tool description a number", "/v1/chat/completions",
       "{" + user + R"(,"tools":[{"type":"function","function":{"name":"f","description":5}}]})", 400,
       "description must be a string"},
      {"tool message answering no call", "/v1/chat/completions",
       R"({"messages":[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"c9","content":"42"}]})", 400,
       "tool_call_id 'c9' answers no tool call"},
      {"stream_options without stream", "/v1/completions", R"({"prompt":"x","stream_options":{"include_usage":true}})",
       400, "only allowed with \"stream\": true"},
      {"stream_options unknown key", "/v1/chat/completions",
       "{" + user + R"(,"stream":true,"stream_options":{"include_usage":true,"continuous":true}})", 400,
       "stream_options.continuous: unknown field"},
      {"max_tokens and max_completion_tokens disagree", "/v1/chat/completions",
       "{" + user + R"(,"max_tokens":4,"max_completion_tokens":8})", 400, "disagree"},
      {"NUL byte after the body", "/v1/completions", R"({"prompt":"x"})" + std::string(1, '\0') + R"({"n":5})", 400,
       "NUL byte at offset 14"},
      {"unknown model", "/v1/chat/completions", R"({"model":"gpt-9",)" + user + "}", 404, "gpt-9"},
      {"unknown route", "/v1/embeddings", R"({"input":"x"})", 404, "no route"},
      {"oversized body", "/v1/completions", R"({"prompt":")" + std::string(100 << 10, 'a') + R"("})", 413,
       "larger than"},
  };
}

// The same for the routes `prosgrow route` does not carry, or carries with
// another error shape: OpenAI's Responses API and Anthropic's Messages API
// (serve_real_bad_input_test.cc), for a server started with
// kCatalogueServeFlags.
inline std::vector<BadInput> BadDialectInputCatalogue() {
  const std::string fn = R"({"type":"function","name":"f")";
  const std::string msg = R"({"model":"tiny","max_tokens":4,"messages":[{"role":"user","content":"x"}])";
  return {
      {"responses: empty input", "/v1/responses", R"({"input":[]})", 400, "'input' must not be an empty array"},
      {"responses: tool parameters a number", "/v1/responses",
       R"({"input":"x","tools":[)" + fn + R"(,"parameters":7}]})", 400,
       "tools[0].parameters: must be a JSON schema object"},
      {"responses: tool strict a string", "/v1/responses", R"({"input":"x","tools":[)" + fn + R"(,"strict":"yes"}]})",
       400, "tools[0].strict: must be a boolean"},
      {"responses: text.format unknown key", "/v1/responses",
       R"({"input":"x","text":{"format":{"type":"json_object","schema":{"type":"object"}}}})", 400,
       "text.format.schema: unknown field (text.format has type)"},
      {"responses: text.format name a number", "/v1/responses",
       R"({"input":"x","text":{"format":{"type":"json_schema","name":5,"schema":{"type":"object"}}}})", 400,
       "text.format.name: must be a string"},
      {"responses: reasoning.effort unknown", "/v1/responses", R"({"input":"x","reasoning":{"effort":"extreme"}})", 400,
       "reasoning.effort: must be one of"},
      {"responses: service_tier a number", "/v1/responses", R"({"input":"x","service_tier":5})", 400,
       "'service_tier' must be a string"},
      {"responses: function_call_output answering no call", "/v1/responses",
       R"({"input":[{"role":"user","content":"x"},{"type":"function_call_output","call_id":"c9","output":"1"}]})", 400,
       "call_id 'c9' answers no function_call"},
      {"responses: unknown previous_response_id", "/v1/responses",
       R"({"input":"x","previous_response_id":"resp_missing"})", 400, "resp_missing"},
      {"responses: image input", "/v1/responses",
       R"({"input":[{"role":"user","content":[{"type":"input_image","image_url":"data:,"}]}]})", 400,
       "'input_image' is not supported"},
      {"messages: thinking.budget_tokens a string", "/v1/messages",
       msg + R"(,"thinking":{"type":"enabled","budget_tokens":"lots"}})", 400,
       "thinking.budget_tokens: must be a positive integer"},
      {"messages: thinking.display a number", "/v1/messages", msg + R"(,"thinking":{"type":"adaptive","display":1}})",
       400, "thinking.display: must be a string"},
      {"messages: image block", "/v1/messages",
       R"({"model":"tiny","max_tokens":4,"messages":[{"role":"user","content":[{"type":"image","source":)"
       R"({"type":"base64","media_type":"image/png","data":"AAAA"}}]}]})",
       400, "content block type 'image' is not supported"},
      {"messages: tool_result answering no tool_use", "/v1/messages",
       R"({"model":"tiny","max_tokens":4,"messages":[{"role":"user","content":[{"type":"tool_result",)"
       R"("tool_use_id":"toolu_9","content":"1"}]}]})",
       400, "answers no earlier tool_use block"},
      {"messages: missing max_tokens", "/v1/messages", R"({"model":"tiny","messages":[{"role":"user","content":"x"}]})",
       400, "'max_tokens' is required"},
  };
}

}  // namespace pg::test
