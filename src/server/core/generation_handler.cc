#include "server/core/generation_handler.h"

#include <memory>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/log.h"
#include "server/common/api_error.h"
#include "server/core/fit_to_context.h"
#include "server/core/generation_pipeline.h"
#include "server/core/json_body.h"
#include "server/core/request.h"
#include "server/http/guarded_stream.h"
#include "tokenizer/tokenizer.h"

namespace pg {
namespace {

// What the shared path needs to finish a response once generation runs.
struct ResponsePlan {
  std::unique_ptr<ResponseWriter> writer;
  const char* endpoint = "";  // the dialect's client_disconnects label (the dialect itself ends with the handler)
  std::string session_id;     // "" = none
  bool tools = false;
  ToolCallFormat format = kDefaultToolCallFormat;
  nlohmann::ordered_json tool_defs;  // the request's tools (GLM argument types)
  bool parallel = true;

  GenerationOutput NewOutput() const { return GenerationOutput(tools, format, tool_defs, parallel); }
};

// A call found: the optimized policy retains the session's KV for its result.
void NoteToolCall(const HandlerContext& ctx, const ResponsePlan& plan, const GenerationEnd& end) {
  if (!end.calls.empty() && !plan.session_id.empty()) ctx.service->NoteToolCall(plan.session_id);
}

// One streamed response, shared by the content provider's calls.
struct StreamState {
  StreamState(Gauge* g, ResponsePlan p) : plan(std::move(p)), output(plan.NewOutput()) { in_flight.emplace(g); }
  std::optional<InFlightGauge> in_flight;  // reset before the last bytes: a client never sees itself in flight
  std::unique_ptr<GenerationRunner> runner;
  ResponsePlan plan;
  GenerationOutput output;
  bool started = false;
  bool done = false;
};

// The end of a stream: the writer's last events (or its error event).
bool FinishStream(const HandlerContext& ctx, StreamState* s, httplib::DataSink& sink) {
  auto write = [&](const std::string& b) { return b.empty() || sink.write(b.data(), b.size()); };
  const GenerationResult& r = s->runner->result();
  s->done = true;
  ctx.metrics->CountTokens(r);  // accounted before the final bytes leave
  s->in_flight.reset();
  if (std::optional<ApiError> err = EngineFailure(r)) {
    ctx.metrics->errors->Inc({err->kind()});
    write(s->plan.writer->StreamError(*err));
    sink.done();
    return true;
  }
  std::vector<ToolCallEvent> events = s->output.Finish();
  GenerationEnd end = s->output.End(r);
  NoteToolCall(ctx, s->plan, end);
  if (!write(s->plan.writer->StreamEnd({events, {}, s->output}, end, r))) return false;
  sink.done();
  return true;
}

// One call of the content provider: what became visible since the last.
bool StreamStep(const HandlerContext& ctx, StreamState* s, httplib::DataSink& sink) {
  auto write = [&](const std::string& b) { return b.empty() || sink.write(b.data(), b.size()); };
  ResponseWriter& w = *s->plan.writer;
  if (!s->started && !w.StartNeedsAdmission()) {
    s->started = true;
    return write(w.StreamStart(s->runner->result()));
  }
  GenerationStep step;
  bool finished = s->runner->Poll(kPollSeconds, &step);
  if (ctx.stopping->load()) return false;
  if (!sink.is_writable()) {
    PG_LOG_DEBUG("{}: client gone", w.id());
    return false;
  }
  if (!s->started) {
    if (!s->runner->admitted()) return true;  // nothing generated yet
    s->started = true;
    if (!write(w.StreamStart(s->runner->result()))) return false;
  }
  const std::vector<ToolCallEvent> events = s->output.Push(step.text);
  if (!write(w.StreamStep({events, step.tokens, s->output}))) return false;
  return finished ? FinishStream(ctx, s, sink) : true;
}

void StreamResponse(const HandlerContext& ctx, std::shared_ptr<StreamState> state, httplib::Response& res) {
  ServerMetrics* metrics = ctx.metrics;
  const char* endpoint = state->plan.endpoint;
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  HandlerContext c = ctx;
  res.set_chunked_content_provider(
      "text/event-stream",
      [c, state](size_t, httplib::DataSink& sink) -> bool { return StreamStep(c, state.get(), sink); },
      [state, metrics, endpoint](bool) {
        if (!state->done) {
          state->runner->Cancel();  // the client went away (or the server is stopping): free the KV now
          metrics->client_disconnects->Inc({endpoint});
        }
      });
}

void RespondWhole(const HandlerContext& ctx, GenerationRunner* runner, const ResponsePlan& plan,
                  const ApiDialect& dialect, httplib::Response& res) {
  InFlightGauge in_flight(ctx.metrics->in_flight);
  std::string text;
  std::vector<TokenEvent> tokens;
  if (!CollectAll(ctx, runner, plan.endpoint, &text, &tokens)) {
    res.status = 499;  // "client closed request": nobody reads it; marks the disconnect in the logs
    return;
  }
  const GenerationResult& r = runner->result();
  ctx.metrics->CountTokens(r);
  if (std::optional<ApiError> err = EngineFailure(r)) return dialect.SendError(res, *err, ctx.metrics);
  GenerationOutput output = plan.NewOutput();
  output.Push(text);
  output.Finish();
  GenerationEnd end = output.End(r);
  NoteToolCall(ctx, plan, end);
  res.status = 200;
  res.set_content(plan.writer->Body(end, tokens, r), "application/json");
}

// Validated request and prompt tokens, or the error already sent.
std::optional<std::vector<int32_t>> PrepareRequest(const HandlerContext& ctx, const httplib::Request& req,
                                                   httplib::Response& res, ApiDialect& dialect, ApiRequest* api) {
  auto fail = [&](const ApiError& e) -> std::optional<std::vector<int32_t>> {
    dialect.SendError(res, e, ctx.metrics);
    return std::nullopt;
  };
  if (!ctx.service->ready()) return fail(ServiceUnavailable("the model is still loading"));
  if (std::optional<ApiError> e = dialect.CheckHeaders(req)) return fail(*e);
  const ServiceInfo& info = ctx.service->info();
  ApiResult<nlohmann::ordered_json> body = ParseJsonBody(req.body, ctx.limits.max_json_depth);
  if (!body.ok()) return fail(body.error);
  ApiResult<ApiRequest> parsed = dialect.Parse(body.value, info, ctx.limits);
  if (!parsed.ok()) return fail(parsed.error);
  *api = std::move(parsed.value);
  ApplySamplingDefaults(info.sampling_defaults, body.value, &api->sampling);
  if (std::optional<ApiError> e = CheckModelName(api->model, info)) return fail(*e);
  ApiResult<std::vector<int32_t>> prompt = dialect.Prompt(ctx, api);
  if (!prompt.ok()) return fail(prompt.error);
  if (std::optional<ApiError> e = FitToContext(api, static_cast<int64_t>(prompt.value.size()), info.n_ctx,
                                               info.max_seq_tokens, dialect.context_wording())) {
    return fail(*e);
  }
  ApplyDefaultMaxTokens(ctx.limits, api);
  return std::move(prompt.value);
}

}  // namespace

void HandleGeneration(const HandlerContext& ctx, const httplib::Request& req, httplib::Response& res,
                      ApiDialect& dialect) {
  if (GuardedStream* conn = GuardedStream::Current()) conn->BeginHandling();
  const double arrival = NowSeconds();
  ApiRequest api;
  std::optional<std::vector<int32_t>> prompt = PrepareRequest(ctx, req, res, dialect, &api);
  if (!prompt) return;
  if (!api.skipped_tools.empty() && ctx.metrics) ctx.metrics->CountSkippedTools(api.skipped_tools);

  const Tokenizer& tok = ctx.service->tokenizer();
  ResponsePlan plan;
  plan.writer = dialect.Writer(api, ctx.service->info(), tok);
  plan.endpoint = dialect.endpoint();
  plan.session_id = SessionIdOf(req, api);
  plan.tools = api.chat && !api.tools.is_null();
  plan.format = ctx.chat()->tool_call_format();
  plan.tool_defs = api.tools;
  plan.parallel = api.parallel_tool_calls;
  dialect.BeforeStart(req, api, plan.writer->id(), res);

  GenerationStart start{plan.writer->id(), plan.session_id, arrival};
  if (plan.tools) start.render_special = ToolMarkerTokens(plan.format, tok);
  ApiResult<std::unique_ptr<GenerationRunner>> started = StartGeneration(ctx, &api, std::move(*prompt), start);
  if (!started.ok()) return dialect.SendError(res, started.error, ctx.metrics);
  PG_LOG_DEBUG("{}: submitted ({} prompt tokens, {} KV hints, stream={})", start.id,
               started.value->result().prompt_tokens, api.kv_hints.size(), api.stream);
  if (!api.stream) return RespondWhole(ctx, started.value.get(), plan, dialect, res);
  auto state = std::make_shared<StreamState>(ctx.metrics->in_flight, std::move(plan));
  state->runner = std::move(started.value);
  StreamResponse(ctx, std::move(state), res);
}

}  // namespace pg
