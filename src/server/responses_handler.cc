#include "server/responses_handler.h"

#include <ctime>
#include <optional>

#include "base/clock.h"
#include "base/log.h"
#include "server/generation_pipeline.h"
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
  std::unique_ptr<ToolCallChunks> tool_chunks;
  bool started = false;
  bool done = false;
};

std::string Deltas(ResponsesStreamWriter& w, const std::vector<json>& deltas) {
  std::string out;
  for (const json& d : deltas) out += w.Delta(d);
  return out;
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
        const std::string now = state->tool_chunks ? Deltas(state->writer, state->tool_chunks->Push(step.text))
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
        if (state->tool_chunks) {
          if (!write(Deltas(state->writer, state->tool_chunks->Finish()))) return false;
          if (!state->tool_chunks->ids().empty() && !state->plan.session_id.empty()) {
            c.service->NoteToolCall(state->plan.session_id);
          }
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
  std::vector<ToolCall> calls;
  FinishWithTools(ctx, plan.tools, plan.parallel, plan.session_id, plan.tool_defs, r.finish_reason, &text, &calls);
  json output = ResponsesOutputItems(text, calls, plan.header.namespaces);
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
  plan.parallel = api.parallel_tool_calls;
  plan.tool_defs = api.tools;
  plan.session_id = req.has_header("X-Session-Id") ? req.get_header_value("X-Session-Id") : api.user;
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
    if (plan.tools) {
      state->tool_chunks = std::make_unique<ToolCallChunks>(chat->tool_call_format(), plan.tool_defs, plan.parallel);
    }
    state->plan = std::move(plan);
    RunStream(ctx_, std::move(state), res);
  } else {
    InFlightGauge in_flight(ctx_.metrics->in_flight);
    RunToCompletion(ctx_, started.value.get(), plan, res);
  }
}

}  // namespace pg
