#include "server/responses_handler.h"

#include <ctime>
#include <optional>

#include "base/clock.h"
#include "base/log.h"
#include "server/generation_pipeline.h"
#include "server/error_response.h"
#include "server/generation_output.h"
#include "server/guarded_stream.h"
#include "server/ignored_fields.h"
#include "server/openai_response.h"
#include "server/responses_request.h"
#include "server/responses_response.h"
#include "server/tool_call_chunks.h"

namespace pg {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

constexpr const char* kEndpoint = "responses";  // client_disconnects label

// What the response needs once generation runs.
struct ResponsesPlan {
  ResponsesHeader header;
  bool tools = false;
  ToolCallFormat format = kDefaultToolCallFormat;
  bool parallel = true;
  ojson tool_defs;
  std::string session_id;
  bool store = true;
  ojson history;  // the conversation before this response's output (no instructions)
  std::shared_ptr<ResponseStore> store_to;
};

// Between the two JSON flavours; generated text may hold invalid UTF-8
// (random weights), which becomes U+FFFD as in DumpJson.
ojson ToOrdered(const json& j) {
  return ojson::parse(j.dump(-1, ' ', false, json::error_handler_t::replace), nullptr, false);
}
json ToUnordered(const ojson& j) {
  return json::parse(j.dump(-1, ' ', false, ojson::error_handler_t::replace), nullptr, false);
}

void Remember(const ResponsesPlan& plan, const json& output) {
  if (!plan.store) return;
  ojson conversation = plan.history;
  for (const json& m : ResponsesOutputAsMessages(output)) conversation.push_back(ToOrdered(m));
  plan.store_to->Put("", plan.header.id, std::move(conversation));
}

json Echo(const ResponsesRequest& r) {
  const ApiRequest& api = r.api;
  json echo = {{"instructions", r.instructions.empty() ? json(nullptr) : json(r.instructions)},
               {"tools", json::array()},
               {"tool_choice", "auto"},
               {"parallel_tool_calls", api.parallel_tool_calls},
               {"max_output_tokens", api.max_tokens_given ? json(api.sampling.max_tokens) : json(nullptr)},
               {"temperature", api.sampling.temperature},
               {"top_p", api.sampling.top_p},
               {"previous_response_id",
                r.previous_response_id.empty() ? json(nullptr) : json(r.previous_response_id)},
               {"store", r.store},
               {"text", {{"format", {{"type", "text"}}}}},
               {"truncation", "disabled"},
               {"reasoning", {{"effort", nullptr}, {"summary", nullptr}}},
               {"metadata", json::object()},
               {"user", api.user.empty() ? json(nullptr) : json(api.user)}};
  for (auto it = r.echo.begin(); it != r.echo.end(); ++it) echo[it.key()] = ToUnordered(it.value());
  return echo;
}

struct StreamState {
  StreamState(Gauge* g, ResponsesHeader h) : writer(std::move(h)) { in_flight.emplace(g); }
  std::optional<InFlightGauge> in_flight;
  std::unique_ptr<GenerationRunner> runner;
  ResponsesPlan plan;
  ResponsesStreamWriter writer;
  std::optional<GenerationOutput> output;  // the model's tool-call parser (with tools)
  bool started = false;
  bool done = false;
};

std::string Deltas(ResponsesStreamWriter& w, const std::vector<json>& deltas) {
  std::string out;
  for (const json& d : deltas) out += w.Delta(d);
  return out;
}

// Unlike chat completions and messages, a function_call item cut by the
// token limit carries its arguments closed into a JSON object (as the
// Responses API has always answered here), streamed or not.

// A call found: the optimized policy retains the session's KV for its result.
void NoteCalls(const HandlerContext& ctx, const std::string& session_id, const std::vector<ToolCall>& calls) {
  if (!calls.empty() && !session_id.empty()) ctx.service->NoteToolCall(session_id);
}

void RunStream(const HandlerContext& ctx, std::shared_ptr<StreamState> state, httplib::Response& res) {
  ServerMetrics* metrics = ctx.metrics;
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  HandlerContext c = ctx;
  res.set_chunked_content_provider(
      "text/event-stream",
      [c, state](size_t, httplib::DataSink& sink) -> bool {
        auto write = [&](const std::string& s) { return s.empty() || sink.write(s.data(), s.size()); };
        if (!state->started) {
          state->started = true;
          return write(state->writer.Start());
        }
        GenerationStep step;
        bool finished = state->runner->Poll(kPollSeconds, &step);
        if (c.stopping->load() || !sink.is_writable()) return false;
        GenerationOutput* out = state->output ? &*state->output : nullptr;
        const std::string now =
            out ? Deltas(state->writer, ToolCallDeltas(out->Push(step.text), out->calls(), /*close_cut=*/false))
                : state->writer.Delta({{"content", step.text}});
        if (!write(now)) return false;
        if (!finished) return true;

        const GenerationResult& r = state->runner->result();
        state->done = true;
        c.metrics->CountTokens(r);
        state->in_flight.reset();
        if (std::optional<ApiError> err = EngineFailure(r)) {
          c.metrics->errors->Inc({err->kind()});
          write(state->writer.Fail(*err));
          sink.done();
          return true;
        }
        if (out) {
          std::vector<ToolCallEvent> events = out->Finish();
          if (!write(Deltas(state->writer, ToolCallDeltas(events, out->calls(), /*close_cut=*/true)))) {
            return false;
          }
          NoteCalls(c, state->plan.session_id, out->calls());
        }
        std::string end = state->writer.Finish(r.finish_reason, ResponsesUsageJson(r));
        Remember(state->plan, state->writer.output());
        if (!write(end)) return false;
        sink.done();
        return true;
      },
      [state, metrics](bool) {
        if (!state->done) {
          state->runner->Cancel();  // the client went away: free the KV now
          metrics->client_disconnects->Inc({kEndpoint});
        }
      });
}

void RunToCompletion(const HandlerContext& ctx, GenerationRunner* runner, const ResponsesPlan& plan,
                     httplib::Response& res) {
  std::string text;
  std::vector<TokenEvent> tokens;
  if (!CollectAll(ctx, runner, kEndpoint, &text, &tokens)) {
    res.status = 499;  // nobody reads it; marks the disconnect in the logs
    return;
  }
  const GenerationResult& r = runner->result();
  ctx.metrics->CountTokens(r);
  if (std::optional<ApiError> err = EngineFailure(r)) return SendApiError(res, *err, ctx.metrics);
  GenerationOutput parsed(plan.tools, plan.format, plan.tool_defs, plan.parallel);
  parsed.Push(text);
  parsed.Finish();
  GenerationEnd end = parsed.End(r);
  NoteCalls(ctx, plan.session_id, end.calls);
  for (ToolCall& c : end.calls) c.arguments_json = c.CompleteArguments();  // a cut call's arguments closed
  json output = ResponsesOutputItems(end.text, end.calls, plan.header.namespaces);
  const bool cut = r.finish_reason == "length";
  Remember(plan, output);
  res.status = 200;
  res.set_content(DumpJson(ResponsesObjectJson(plan.header, cut ? "incomplete" : "completed", output,
                                               ResponsesUsageJson(r), r.finish_reason)),
                  "application/json");
}

}  // namespace

void ResponsesHandler::Create(const httplib::Request& req, httplib::Response& res) const {
  if (GuardedStream* conn = GuardedStream::Current()) conn->BeginHandling();
  const double arrival = NowSeconds();
  if (!ctx_.service->ready()) return SendApiError(res, ServiceUnavailable("the model is still loading"), ctx_.metrics);
  const ServiceInfo& info = ctx_.service->info();
  ApiResult<ojson> body = ParseJsonBody(req.body, ctx_.limits.max_json_depth);
  if (!body.ok()) return SendApiError(res, body.error, ctx_.metrics);
  const ChatPrompt* chat = ctx_.chat();
  ApiResult<ResponsesRequest> parsed =
      ParseResponsesRequest(body.value, info.n_ctx, chat->has_thinking_switch(), ctx_.limits);
  if (!parsed.ok()) return SendApiError(res, parsed.error, ctx_.metrics);
  ResponsesRequest& rr = parsed.value;
  ApiRequest& api = rr.api;
  if (std::optional<ApiError> e = CheckModelName(api.model, info)) return SendApiError(res, *e, ctx_.metrics);

  ResponsesPlan plan;
  plan.history = ojson::array();
  if (!rr.previous_response_id.empty()) {
    std::optional<ojson> previous = store_->Get("", rr.previous_response_id);
    if (!previous) {
      return SendApiError(res,
                          BadRequest("Previous response with id '" + rr.previous_response_id +
                                         "' not found (it was not stored, or this server dropped or never had it)",
                                     "previous_response_id", "previous_response_not_found"),
                          ctx_.metrics);
    }
    plan.history = std::move(*previous);
    ojson messages = ojson::array();
    if (!rr.instructions.empty()) messages.push_back(api.messages[0]);
    for (const ojson& m : plan.history) messages.push_back(m);
    for (const ojson& m : rr.input) messages.push_back(m);
    api.messages = std::move(messages);
  }
  for (const ojson& m : rr.input) plan.history.push_back(m);

  Result<std::string> rendered = chat->Render(api.messages, api.tools, api.template_kwargs);
  if (!rendered.ok()) return SendApiError(res, BadRequest(rendered.status().message(), "input"), ctx_.metrics);
  const Tokenizer& tok = ctx_.service->tokenizer();
  std::vector<int32_t> prompt = EncodeChatText(tok, *rendered);
  if (std::optional<ApiError> e =
          FitToContext(&api, static_cast<int64_t>(prompt.size()), info.n_ctx, info.max_seq_tokens)) {
    return SendApiError(res, *e, ctx_.metrics);
  }
  ApplyDefaultMaxTokens(ctx_.limits, &api);

  plan.header = {NewResponseId("resp_"), info.model_name, static_cast<int64_t>(std::time(nullptr)), Echo(rr),
                 rr.namespaces};
  plan.tools = !api.tools.is_null();
  plan.format = chat->tool_call_format();
  plan.parallel = api.parallel_tool_calls;
  plan.tool_defs = api.tools;
  plan.session_id = SessionIdOf(req, api);
  plan.store = rr.store;
  plan.store_to = store_;
  ReportIgnoredFields(plan.header.id, api.ignored_fields, res);

  GenerationStart start{plan.header.id, plan.session_id, arrival};
  if (plan.tools) start.render_special = ToolMarkerTokens(chat->tool_call_format(), tok);
  ApiResult<std::unique_ptr<GenerationRunner>> started = StartGeneration(ctx_, &api, std::move(prompt), start);
  if (!started.ok()) return SendApiError(res, started.error, ctx_.metrics);
  PG_LOG_DEBUG("{}: submitted ({} prompt tokens, stream={})", plan.header.id, started.value->result().prompt_tokens,
               api.stream);
  if (api.stream) {
    auto state = std::make_shared<StreamState>(ctx_.metrics->in_flight, plan.header);
    state->runner = std::move(started.value);
    if (plan.tools) state->output.emplace(true, plan.format, plan.tool_defs, plan.parallel);
    state->plan = std::move(plan);
    RunStream(ctx_, std::move(state), res);
  } else {
    InFlightGauge in_flight(ctx_.metrics->in_flight);
    RunToCompletion(ctx_, started.value.get(), plan, res);
  }
}

}  // namespace pg
