// libFuzzer target for the request path of `prosgrow serve`, everything the
// server does with client bytes before (and after) the model runs:
//
//   body bytes -> ParseJsonBody (UTF-8, bounded depth)
//     -> ParseChatRequest       -> ChatPrompt::Render, for the built-in default
//                                  and each real template -> Tokenizer::Encode
//     -> ParseCompletionRequest -> Tokenizer::Encode under every tokenizer
//     -> FitToContext
//   and, as if the model had echoed the prompt back, the output path:
//     IncrementalDecoder -> StopStringFilter (the request's stop strings)
//     -> GenerationOutput (the template's tool-call format) -> the response JSON.
//   The raw bytes also go to the tool-call parser (model output is arbitrary).
//
// Every input is tried as both a chat and a completion body (no selector
// byte, so the corpus files are plain request bodies). Besides crashes,
// leaks and UB, it checks what callers rely on:
//   - every rejection is an ApiError with a 4xx status whose JSON is one line
//     and parses back; no exception escapes (one would abort the fuzzer);
//   - an accepted request respects RequestLimits;
//   - Decode(Encode(x)) == x for valid UTF-8 x (no special-token parsing;
//     SPM: no user-defined token nor U+2581 in x, see CheckRoundTrip);
//   - streaming decode + stop filtering emits exactly the decoded text, or,
//     when a stop string hit, a prefix of it that holds no stop string;
//   - parsed tool calls have a name and arguments that are a JSON object.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "base/bounded_json.h"
#include "base/utf8.h"
#include "chat/tool_call_parser.h"
#include "request_fuzz_env.h"
#include "server/core/fit_to_context.h"
#include "server/core/generation_output.h"
#include "server/core/json_body.h"
#include "server/core/json_text.h"
#include "server/core/request.h"
#include "server/core/stop_string_filter.h"
#include "server/openai/openai_error.h"
#include "server/openai/openai_request.h"
#include "server/openai/openai_response.h"

namespace pg {
namespace {

using json = nlohmann::ordered_json;

// PG_FUZZ_VERBOSE=1: say what happened to each input at each stage (triage).
bool Verbose() {
  static const bool verbose = std::getenv("PG_FUZZ_VERBOSE") != nullptr;
  return verbose;
}

void Note(const std::string& stage, const std::string& what) {
  if (Verbose()) std::fprintf(stderr, "  %s: %s\n", stage.c_str(), what.substr(0, 400).c_str());
}

void Require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "request_path_fuzz: check failed: %s\n", what);
  std::abort();
}

void CheckApiError(const ApiError& e) {
  Note("rejected", e.message);
  Require(e.http_status >= 400 && e.http_status < 500, "a client mistake gets a 4xx");
  Require(!e.message.empty(), "an error says why");
  const std::string body = OpenAiErrorJson(e);
  Require(body.find('\n') == std::string::npos, "error JSON is one line");
  Require(nlohmann::json::accept(body), "error JSON parses");
}

void CheckToolCalls(const std::vector<ParsedToolCall>& calls) {
  std::vector<ToolCall> api;
  for (const ParsedToolCall& c : calls) {
    Require(!c.name.empty(), "a tool call has a name");
    json args;
    Require(ParseBoundedJson(c.arguments_json, kDefaultMaxJsonDepth, &args).kind == JsonParseError::Kind::kNone,
            "tool-call arguments are JSON");
    Require(args.is_object(), "tool-call arguments are an object");
    api.push_back(ToolCall{"call_fuzz", c.name, c.arguments_json});
  }
  (void)DumpJson(ToolCallsJson(api, /*with_index=*/true));
}

void FuzzToolCallParser(std::string_view raw) {
  for (bool bare_json : {true, false}) {
    ParsedAssistant parsed = ParseToolCalls(raw, ToolCallParseOptions{bare_json});
    CheckToolCalls(parsed.tool_calls);
  }
  // Every format; streamed in two pieces it must give the one-shot result.
  for (ToolCallFormat f : {ToolCallFormat::kHermes, ToolCallFormat::kLlama3Json, ToolCallFormat::kGlm45,
                           ToolCallFormat::kDeepSeekV3, ToolCallFormat::kDeepSeekV31}) {
    ToolCallParseOptions opt;
    opt.format = f;
    ParsedAssistant whole = ParseToolCalls(raw, opt);
    CheckToolCalls(whole.tool_calls);
    ToolCallStream stream(f);
    std::vector<ToolCallEvent> events;
    stream.Push(raw.substr(0, raw.size() / 2), &events);
    stream.Push(raw.substr(raw.size() / 2), &events);
    stream.Finish(&events);
    ParsedAssistant split;
    AppendToolCallEvents(events, &split);
    Require(split.content == whole.content && split.tool_calls.size() == whole.tool_calls.size(),
            "streamed tool calls equal the one-shot parse");
    for (size_t i = 0; i < split.tool_calls.size(); ++i) {
      Require(split.tool_calls[i].name == whole.tool_calls[i].name &&
                  split.tool_calls[i].arguments_json == whole.tool_calls[i].arguments_json,
              "streamed tool calls equal the one-shot parse");
    }
  }
}

void CheckRoundTrip(const Tokenizer& tok, const std::string& text) {
  if (!IsValidUtf8(text)) return;
  const std::vector<int32_t> ids = tok.Encode(text, /*add_special=*/false, /*parse_special=*/false);
  // SPM, as llama.cpp, prefixes a space to the text after a special token
  // (user-defined ones are split out even here), and decodes U+2581 (its
  // space marker) to a space: such text cannot round-trip.
  if (tok.model() == "llama") {
    if (text.find("\xE2\x96\x81") != std::string::npos) return;
    for (int32_t id : ids) {
      if (tok.token_type(id) == TokenType::kUserDefined) return;
    }
  }
  const std::string back = tok.Decode(ids);
  if (back != text) {
    Note("text", nlohmann::json(text).dump());
    Note("decoded", nlohmann::json(back).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  Require(back == text, "Decode(Encode(text)) == text");
}

// What CompletionHandler::Handle does with the prompt text.
std::vector<int32_t> EncodePrompt(const Tokenizer& tok, const std::string& text) {
  std::vector<int32_t> ids = tok.Encode(text, /*add_special=*/true, /*parse_special=*/true);
  for (int32_t id : ids) Require(tok.IsValid(id), "Encode returns valid ids");
  if (ids.size() >= 2 && tok.bos_id() >= 0 && ids[0] == tok.bos_id() && ids[1] == tok.bos_id()) {
    ids.erase(ids.begin());
  }
  return ids;
}

void CheckFit(const ApiRequest& req, size_t prompt_tokens, int64_t n_ctx) {
  ApiRequest r;
  r.chat = req.chat;
  r.sampling = req.sampling;
  r.max_tokens_given = req.max_tokens_given;
  const int64_t n = static_cast<int64_t>(prompt_tokens);
  if (std::optional<ApiError> err = FitToContext(&r, n, n_ctx)) return CheckApiError(*err);
  Require(r.sampling.max_tokens >= 1 && n + r.sampling.max_tokens <= n_ctx, "a fitted request fits");
}

// The output path, as if the model generated `ids`: stream-decode, filter
// stop strings, split tool calls, build the response.
void SimulateOutput(const FuzzChatPrompt& p, const std::vector<int32_t>& ids, const std::vector<std::string>& stop) {
  IncrementalDecoder decoder(*p.tokenizer);
  StopStringFilter filter(stop);
  std::string emitted;
  for (int32_t id : ids) {
    emitted += filter.Push(decoder.Push(id));
    if (filter.stopped()) break;
  }
  if (!filter.stopped()) emitted += filter.Push(decoder.Flush());
  if (!filter.stopped()) emitted += filter.Flush();
  const std::string full = p.tokenizer->Decode(ids);
  if (!filter.stopped()) {
    Require(emitted == full, "without a stop string, the stream is the decoded text");
  } else {
    Require(full.compare(0, emitted.size(), emitted) == 0, "a stopped stream is a prefix of the text");
    for (const std::string& s : stop) {
      Require(s.empty() || emitted.find(s) == std::string::npos, "a stopped stream holds no stop string");
    }
  }
  GenerationOutput output(true, p.prompt->tool_call_format(), nullptr, true);
  output.Push(emitted);
  output.Finish();
  GenerationResult result;
  result.finish_reason = "stop";
  GenerationEnd end = output.End(result);
  std::vector<ParsedToolCall> parsed;
  for (const ToolCall& c : end.calls) parsed.push_back(ParsedToolCall{c.name, c.arguments_json, ""});
  CheckToolCalls(parsed);
  ResponseHeader h{true, "chatcmpl-fuzz", "fuzz", 0};
  (void)DumpJson(FullResponseJson(h, end.text, end.calls, end.finish_reason, nullptr, result));
}

void CheckChatRequest(const ApiRequest& req, const RequestLimits& limits) {
  Require(req.messages.is_array() && !req.messages.empty(), "messages is a non-empty array");
  Require(req.messages.size() <= static_cast<size_t>(limits.max_messages), "messages within the limit");
  Require(req.tools.is_null() || req.tools.size() <= static_cast<size_t>(limits.max_tools), "tools within the limit");
  Require(req.stop.size() <= static_cast<size_t>(limits.max_stop), "stop within the limit");
  for (const json& m : req.messages) {
    Require(m.is_object() && m.contains("role") && m["role"].is_string(), "a message has a string role");
    Require(!m.contains("content") || m["content"].is_string(), "content is normalised to a string");
  }
}

void RunChat(const RequestFuzzEnv& env, const json& body) {
  ApiResult<ApiRequest> r = ParseChatRequest(body, env.n_vocab, env.n_ctx, env.limits);
  if (!r.ok()) return CheckApiError(r.error);
  CheckChatRequest(r.value, env.limits);
  for (const FuzzChatPrompt& p : env.prompts) {
    Result<std::string> text = p.prompt->Render(r.value.messages, r.value.tools);
    if (!text.ok()) {
      Note(p.name, text.status().message());
      CheckApiError(BadRequest(text.status().message(), "messages"));
      continue;
    }
    std::vector<int32_t> ids = EncodePrompt(*p.tokenizer, *text);
    Note(p.name, std::to_string(text->size()) + " bytes, " + std::to_string(ids.size()) + " tokens");
    CheckFit(r.value, ids.size(), env.n_ctx);
    CheckRoundTrip(*p.tokenizer, *text);
    SimulateOutput(p, ids, r.value.stop);
    if (&p == &env.prompts.front()) CheckRoundTrip(*env.spm, *text);
  }
}

void RunCompletion(const RequestFuzzEnv& env, const json& body) {
  ApiResult<ApiRequest> r = ParseCompletionRequest(body, env.n_vocab, env.n_ctx, env.limits);
  if (!r.ok()) return CheckApiError(r.error);
  const ApiRequest& req = r.value;
  Require(req.stop.size() <= static_cast<size_t>(env.limits.max_stop), "stop within the limit");
  if (req.prompt_is_tokens) {
    Require(!req.prompt_tokens.empty(), "a token prompt is not empty");
    for (int32_t id : req.prompt_tokens) Require(id >= 0 && id < env.n_vocab, "prompt ids are in the vocabulary");
    (void)env.bpe[0]->Decode(req.prompt_tokens, /*render_special=*/true);
    CheckFit(req, req.prompt_tokens.size(), env.n_ctx);
    return;
  }
  std::vector<const Tokenizer*> toks;
  for (const auto& t : env.bpe) toks.push_back(t.get());
  toks.push_back(env.spm.get());
  for (const Tokenizer* tok : toks) {
    const size_t n = EncodePrompt(*tok, req.prompt_text).size();
    Note("completion " + tok->model() + "/" + tok->pre(), std::to_string(n) + " tokens");
    CheckFit(req, n, env.n_ctx);
    CheckRoundTrip(*tok, req.prompt_text);
  }
}

}  // namespace
}  // namespace pg

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const pg::RequestFuzzEnv& env = pg::GetRequestFuzzEnv();
  const std::string body(reinterpret_cast<const char*>(data), size);
  pg::FuzzToolCallParser(body);
  pg::ApiResult<nlohmann::ordered_json> parsed = pg::ParseJsonBody(body, env.limits.max_json_depth);
  if (!parsed.ok()) {
    pg::CheckApiError(parsed.error);
    return 0;
  }
  pg::RunChat(env, parsed.value);
  pg::RunCompletion(env, parsed.value);
  return 0;
}
