#include "server/completion_handler.h"

#include <ctime>
#include <memory>
#include <optional>

#include "base/clock.h"
#include "base/log.h"
#include "server/api_request.h"
#include "server/generation_pipeline.h"
#include "server/generation_runner.h"
#include "server/guarded_stream.h"
#include "server/openai_response.h"
#include "server/request_log.h"
#include "server/tool_call_chunks.h"
#include "tokenizer/tokenizer.h"

namespace pg {
namespace {

using json = nlohmann::json;

using InFlight = InFlightGauge;

// What a response needs to know about its request once generation runs.
struct ResponsePlan {
  ResponseHeader header;
  bool stream = false;
  bool include_usage = false;
  bool logprobs = false;
  bool tools = false;        // chat with tools: look for tool calls at the end
  bool parallel_tool_calls = true;  // false: keep only the first call
  nlohmann::ordered_json tool_defs;   // the request's tools (GLM argument types)
  std::string session_id;
};

// Streaming state, shared by the content provider calls of one response.
struct StreamState {
  StreamState(Gauge* g) { in_flight.emplace(g); }
  std::optional<InFlight> in_flight;     // reset before the last chunk, so a client never sees itself in flight
  std::unique_ptr<GenerationRunner> runner;
  ResponsePlan plan;
  bool sent_role = false;
  bool done = false;
  std::unique_ptr<ToolCallChunks> tool_chunks;  // chat with tools: parsed as it streams
  int64_t text_offset = 0;               // completions logprobs text_offset
};

void RunStream(const HandlerContext& ctx, std::shared_ptr<StreamState> state, httplib::Response& res) {
  const char* endpoint = state->plan.header.chat ? "chat" : "completions";
  ServerMetrics* metrics = ctx.metrics;
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  HandlerContext c = ctx;
  res.set_chunked_content_provider(
      "text/event-stream",
      [c, state](size_t, httplib::DataSink& sink) -> bool {
        const ResponsePlan& p = state->plan;
        const Tokenizer& tok = state->runner->tokenizer();
        auto send = [&](const json& j) {
          std::string event = SseEvent(DumpJson(j));
          return sink.write(event.data(), event.size());
        };
        if (p.header.chat && !state->sent_role) {
          state->sent_role = true;
          return send(ChunkJson(p.header, {{"role", "assistant"}, {"content", ""}}, "", nullptr, p.include_usage));
        }
        GenerationStep step;
        bool finished = state->runner->Poll(kPollSeconds, &step);
        if (c.stopping->load()) return false;
        if (!sink.is_writable()) {
          PG_LOG_DEBUG("{}: client gone", p.header.id);
          return false;
        }

        // Text and logprobs of this step (held back entirely for tools).
        auto emit = [&](const std::string& text, const std::vector<TokenEvent>& tokens) -> bool {
          if (text.empty() && (!p.logprobs || tokens.empty())) return true;
          json lp = nullptr;
          if (p.logprobs) {
            lp = p.header.chat ? ChatLogprobsJson(tokens, tok) : CompletionLogprobsJson(tokens, tok, &state->text_offset);
          }
          return send(ChunkJson(p.header, {{"content", text}}, "", lp, p.include_usage));
        };
        // Chat with tools: content and tool-call deltas in order; the step's
        // logprobs ride on its first content delta (or an empty one).
        auto emit_deltas = [&](std::vector<json> deltas, const std::vector<TokenEvent>& tokens) -> bool {
          bool lp_sent = !p.logprobs || tokens.empty();
          for (json& d : deltas) {
            json lp = nullptr;
            if (!lp_sent && d.contains("content")) {
              lp = ChatLogprobsJson(tokens, tok);
              lp_sent = true;
            }
            if (!send(ChunkJson(p.header, d, "", lp, p.include_usage))) return false;
          }
          return lp_sent || emit("", tokens);
        };
        if (p.tools) {
          if (!emit_deltas(state->tool_chunks->Push(step.text), step.tokens)) return false;
        } else if (!emit(step.text, step.tokens)) {
          PG_LOG_DEBUG("{}: write failed", p.header.id);
          return false;
        }
        if (!finished) return true;

        const GenerationResult& r = state->runner->result();
        state->done = true;
        // Accounted before the final chunk and [DONE] leave.
        c.metrics->CountTokens(r);
        state->in_flight.reset();
        if (std::optional<ApiError> err = EngineFailure(r)) {
          c.metrics->errors->Inc({err->kind()});
          std::string body = SseEvent(err->ToJson()) + "data: [DONE]\n\n";
          sink.write(body.data(), body.size());
          sink.done();
          return true;
        }
        std::string reason = r.finish_reason;
        if (p.tools) {
          if (!emit_deltas(state->tool_chunks->Finish(), {})) return false;
          if (!state->tool_chunks->ids().empty() && (reason == "stop" || reason == "length")) {
            reason = "tool_calls";
            if (!p.session_id.empty()) c.service->NoteToolCall(p.session_id);
          }
        }
        if (!send(ChunkJson(p.header, json::object(), reason, nullptr, p.include_usage))) return false;
        if (p.include_usage && !send(UsageChunkJson(p.header, r))) return false;
        static const std::string kDone = "data: [DONE]\n\n";
        if (!sink.write(kDone.data(), kDone.size())) return false;
        sink.done();
        return true;
      },
      [state, metrics, endpoint](bool success) {
        if (!state->done) {
          // The client went away (or the server is stopping): free the KV now.
          state->runner->Cancel();
          metrics->client_disconnects->Inc({endpoint});
        }
      });
}

void RunToCompletion(const HandlerContext& ctx, GenerationRunner* runner, const ResponsePlan& plan,
                     httplib::Response& res) {
  std::string text;
  std::vector<TokenEvent> tokens;
  if (!CollectAll(ctx, runner, plan.header.chat ? "chat" : "completions", &text, &tokens)) {
    // Nobody reads this; 499 ("client closed request") marks it in the logs.
    res.status = 499;
    res.set_content(ServiceUnavailable("client disconnected or server stopping").ToJson(), "application/json");
    return;
  }
  const GenerationResult& r = runner->result();
  ctx.metrics->CountTokens(r);
  if (std::optional<ApiError> err = EngineFailure(r)) return SendApiError(res, *err, ctx.metrics);
  std::vector<ToolCall> calls;
  std::string reason = FinishWithTools(ctx, plan.tools, plan.parallel_tool_calls, plan.session_id, plan.tool_defs,
                                       r.finish_reason, &text, &calls);
  json lp = nullptr;
  if (plan.logprobs) {
    int64_t offset = 0;
    lp = plan.header.chat ? ChatLogprobsJson(tokens, runner->tokenizer())
                          : CompletionLogprobsJson(tokens, runner->tokenizer(), &offset);
  }
  res.status = 200;
  res.set_content(DumpJson(FullResponseJson(plan.header, text, calls, reason, lp, r)), "application/json");
}

}  // namespace

void SendApiError(httplib::Response& res, const ApiError& error, ServerMetrics* metrics) {
  res.status = error.http_status;
  res.set_content(error.ToJson(), "application/json");
  if (metrics) metrics->errors->Inc({error.kind()});
  NoteRequestError(error.code.empty() ? error.type : error.code);  // for the request's log line
}

void CompletionHandler::Handle(const httplib::Request& req, httplib::Response& res, bool chat) const {
  if (GuardedStream* conn = GuardedStream::Current()) conn->BeginHandling();
  double arrival = NowSeconds();
  InferenceService* service = ctx_.service;
  if (!service->ready()) return SendApiError(res, ServiceUnavailable("the model is still loading"), ctx_.metrics);
  const ServiceInfo& info = service->info();

  ApiResult<nlohmann::ordered_json> body = ParseJsonBody(req.body, ctx_.limits.max_json_depth);
  if (!body.ok()) return SendApiError(res, body.error, ctx_.metrics);
  ApiResult<ApiRequest> parsed = chat ? ParseChatRequest(body.value, info.n_vocab, info.n_ctx, ctx_.limits)
                                      : ParseCompletionRequest(body.value, info.n_vocab, info.n_ctx, ctx_.limits);
  if (!parsed.ok()) return SendApiError(res, parsed.error, ctx_.metrics);
  ApiRequest& api = parsed.value;
  if (std::optional<ApiError> err = CheckModelName(api.model, info)) return SendApiError(res, *err, ctx_.metrics);

  // Prompt tokens.
  const Tokenizer& tok = service->tokenizer();
  std::vector<int32_t> prompt;
  if (chat) {
    ApiResult<std::vector<int32_t>> tokens = ChatPromptTokens(ctx_, api.messages, api.tools, "messages", api.template_kwargs);
    if (!tokens.ok()) return SendApiError(res, tokens.error, ctx_.metrics);
    prompt = std::move(tokens.value);
  } else if (api.prompt_is_tokens) {
    prompt = std::move(api.prompt_tokens);
  } else {
    prompt = tok.Encode(api.prompt_text, /*add_special=*/true, /*parse_special=*/true);
  }
  if (std::optional<ApiError> err =
          FitToContext(&api, static_cast<int64_t>(prompt.size()), info.n_ctx, info.max_seq_tokens)) {
    return SendApiError(res, *err, ctx_.metrics);
  }
  ApplyDefaultMaxTokens(ctx_.limits, &api);

  ResponsePlan plan;
  plan.header.chat = chat;
  plan.header.id = NewResponseId(chat ? "chatcmpl-" : "cmpl-");
  plan.header.model = info.model_name;
  plan.header.created = static_cast<int64_t>(std::time(nullptr));
  plan.stream = api.stream;
  plan.include_usage = api.stream && api.include_usage;
  plan.logprobs = api.sampling.logprobs;
  plan.tools = chat && !api.tools.is_null();
  plan.parallel_tool_calls = api.parallel_tool_calls;
  plan.tool_defs = api.tools;
  plan.session_id = req.has_header("X-Session-Id") ? req.get_header_value("X-Session-Id") : api.user;

  GenerationStart start{plan.header.id, plan.session_id, arrival};
  if (plan.tools) start.render_special = ToolMarkerTokens(ctx_.chat()->tool_call_format(), tok);
  ApiResult<std::unique_ptr<GenerationRunner>> started = StartGeneration(ctx_, &api, std::move(prompt), start);
  if (!started.ok()) return SendApiError(res, started.error, ctx_.metrics);
  std::unique_ptr<GenerationRunner> runner = std::move(started.value);
  PG_LOG_DEBUG("{}: submitted ({} prompt tokens, stream={})", plan.header.id, runner->result().prompt_tokens,
               plan.stream);

  if (plan.stream) {
    auto state = std::make_shared<StreamState>(ctx_.metrics->in_flight);
    state->runner = std::move(runner);
    state->plan = std::move(plan);
    if (state->plan.tools) {
      state->tool_chunks = std::make_unique<ToolCallChunks>(ctx_.chat()->tool_call_format(), state->plan.tool_defs,
                                                            state->plan.parallel_tool_calls);
    }
    RunStream(ctx_, std::move(state), res);
  } else {
    InFlight in_flight(ctx_.metrics->in_flight);
    RunToCompletion(ctx_, runner.get(), plan, res);
  }
}

}  // namespace pg
