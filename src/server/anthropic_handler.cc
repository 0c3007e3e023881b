#include "server/anthropic_handler.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "base/clock.h"
#include "base/log.h"
#include "server/anthropic_cache_control.h"
#include "server/anthropic_request.h"
#include "server/anthropic_response.h"
#include "server/anthropic_tool_stream.h"
#include "server/generation_pipeline.h"
#include "server/guarded_stream.h"
#include "server/ignored_fields.h"
#include "server/request_log.h"
#include "tokenizer/tokenizer.h"

namespace pg {
namespace {

using json = nlohmann::json;

constexpr const char* kEndpoint = "messages";  // client_disconnects label

// What the response needs to know about its request once generation runs.
struct MessagePlan {
  MessageHeader header;
  bool tools = false;
  bool parallel = true;
  std::string session_id;
  std::vector<std::string> stops;
  std::vector<BreakpointPrefix> prefixes;
};

// The finished message's parts, shared by both response forms.
struct MessageEnd {
  std::string text;
  std::vector<ToolCall> calls;
  std::string stop_reason;
  std::string stop_sequence;
  json usage;
};

MessageEnd EndMessage(const HandlerContext& ctx, const MessagePlan& plan, const GenerationResult& r,
                      const Tokenizer& tok, std::string text, const std::vector<int32_t>& ids) {
  MessageEnd end;
  if (r.finish_reason == "stop" && !plan.stops.empty()) {
    end.stop_sequence = MatchedStopSequence(tok.Decode(ids), text, plan.stops);
  }
  std::string reason = FinishWithTools(ctx, plan.tools, plan.parallel, plan.session_id, nlohmann::ordered_json(),
                                       r.finish_reason, &text, &end.calls);
  end.text = std::move(text);
  end.stop_reason = AnthropicStopReason(reason, end.stop_sequence);
  if (end.stop_reason != "stop_sequence") end.stop_sequence.clear();
  AnthropicCacheUsage cache = AccountCacheUsage(r.prompt_tokens, r.cache.cached_tokens, plan.prefixes);
  end.usage = AnthropicUsageJson(cache, r.completion_tokens, r);
  return end;
}

void Append(std::vector<int32_t>* ids, const std::vector<TokenEvent>& tokens) {
  for (const TokenEvent& t : tokens) ids->push_back(t.token);
}

struct StreamState {
  explicit StreamState(Gauge* g, MessageHeader h) : writer(std::move(h)) { in_flight.emplace(g); }
  std::optional<InFlightGauge> in_flight;  // reset before the last event
  std::unique_ptr<GenerationRunner> runner;
  MessagePlan plan;
  AnthropicStreamWriter writer;
  bool started = false;
  bool done = false;
  std::string text;          // all visible text
  ToolTextGate gate;         // with tools: what can be sent before the calls are parsed
  std::vector<int32_t> ids;  // generated tokens, for the stop sequence
};

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
          return write(state->writer.Start(state->runner->result().prompt_tokens));
        }
        GenerationStep step;
        bool finished = state->runner->Poll(kPollSeconds, &step);
        if (c.stopping->load() || !sink.is_writable()) return false;
        state->text += step.text;
        Append(&state->ids, step.tokens);
        const std::string now = state->plan.tools ? state->gate.Push(step.text) : step.text;
        if (!write(state->writer.Text(now))) return false;
        if (!finished) return true;

        const GenerationResult& r = state->runner->result();
        state->done = true;
        c.metrics->CountTokens(r);
        state->in_flight.reset();
        if (std::optional<ApiError> err = EngineFailure(r)) {
          c.metrics->errors->Inc({err->kind()});
          write(state->writer.Error(*err));
          sink.done();
          return true;
        }
        MessageEnd end = EndMessage(c, state->plan, r, state->runner->tokenizer(), state->text, state->ids);
        if (state->plan.tools && !write(state->writer.Text(state->gate.Remainder(end.text, !end.calls.empty())))) {
          return false;
        }
        if (!write(state->writer.Finish(end.calls, end.stop_reason, end.stop_sequence, end.usage))) return false;
        sink.done();
        return true;
      },
      [state, metrics](bool) {
        if (!state->done) {
          state->runner->Cancel();  // the client went away (or the server is stopping): free the KV now
          metrics->client_disconnects->Inc({kEndpoint});
        }
      });
}

void RunToCompletion(const HandlerContext& ctx, GenerationRunner* runner, const MessagePlan& plan,
                     httplib::Response& res) {
  std::string text;
  std::vector<TokenEvent> tokens;
  if (!CollectAll(ctx, runner, kEndpoint, &text, &tokens)) {
    res.status = 499;  // nobody reads it; marks the disconnect in the logs
    return;
  }
  const GenerationResult& r = runner->result();
  ctx.metrics->CountTokens(r);
  if (std::optional<ApiError> err = EngineFailure(r)) return SendAnthropicError(res, *err, ctx.metrics);
  std::vector<int32_t> ids;
  Append(&ids, tokens);
  MessageEnd end = EndMessage(ctx, plan, r, runner->tokenizer(), std::move(text), ids);
  res.status = 200;
  res.set_content(
      DumpJson(AnthropicMessageJson(plan.header, end.text, end.calls, end.stop_reason, end.stop_sequence, end.usage)),
      "application/json");
}

// The steps both endpoints share: readiness, version, JSON body.
std::optional<ApiError> Precheck(const HandlerContext& ctx, const httplib::Request& req) {
  if (GuardedStream* conn = GuardedStream::Current()) conn->BeginHandling();
  if (!ctx.service->ready()) return ServiceUnavailable("the model is still loading");
  return CheckAnthropicVersion(req);
}

// anthropic-beta values this server understands: each names behaviour it
// implements or accepts (docs/server.md, "Anthropic betas"). Others are
// named in the ignored-fields header.
constexpr const char* kKnownBetas[] = {
    "claude-code-20250219",          "interleaved-thinking-2025-05-14",  "context-management-2025-06-27",
    "effort-2025-11-24",             "advanced-tool-use-2025-11-20",     "prompt-caching-2024-07-31",
    "extended-cache-ttl-2025-04-11", "token-counting-2024-11-01",        "fine-grained-tool-streaming-2025-05-14",
    "mid-conversation-tool-changes-2026-07-01", "per-turn-control-2026-07-01", "thinking-token-count-2026-05-13"};

// Names what this request carried without effect (fields, unknown betas)
// and the context edits executed, in response headers and the log.
void ReportAnthropicExtensions(const httplib::Request& req, const AnthropicRequest& parsed, const std::string& id,
                               httplib::Response& res) {
  std::vector<std::string> ignored = parsed.api.ignored_fields;
  std::string betas = req.get_header_value("anthropic-beta");
  for (size_t start = 0; start < betas.size();) {
    size_t end = betas.find(',', start);
    if (end == std::string::npos) end = betas.size();
    std::string beta = betas.substr(start, end - start);
    beta.erase(0, beta.find_first_not_of(' '));
    beta.erase(beta.find_last_not_of(' ') + 1);
    if (!beta.empty() && std::find(std::begin(kKnownBetas), std::end(kKnownBetas), beta) == std::end(kKnownBetas)) {
      ignored.push_back("anthropic-beta:" + beta);
    }
    start = end + 1;
  }
  ReportIgnoredFields(id, ignored, res);
  if (!parsed.applied_edits.empty()) {
    res.set_header("x-prosgrow-context-edits", DumpJson(parsed.applied_edits));
    PG_LOG_INFO("{}: context_management applied: {}", id, DumpJson(parsed.applied_edits));
  }
}

}  // namespace

void SendAnthropicError(httplib::Response& res, const ApiError& error, ServerMetrics* metrics) {
  res.status = AnthropicHttpStatus(error.http_status);
  res.set_content(DumpJson(AnthropicErrorJson(error)), "application/json");
  if (metrics) metrics->errors->Inc({error.kind()});
  NoteRequestError(error.code.empty() ? error.type : error.code);  // for the request's log line
}

bool IsAnthropicPath(const std::string& path) {
  static const std::string kPrefix = "/v1/messages";
  return path.rfind(kPrefix, 0) == 0 && (path.size() == kPrefix.size() || path[kPrefix.size()] == '/');
}

void RewriteAnthropicError(httplib::Response& res) {
  if (res.status < 400 || res.body.empty()) return;
  json body = json::parse(res.body, nullptr, false);
  if (!body.is_object() || !body.contains("error") || !body["error"].is_object() || body.contains("type")) return;
  ApiError e;
  e.http_status = res.status;
  const json& message = body["error"]["message"];
  e.message = message.is_string() ? message.get<std::string>() : "HTTP error " + std::to_string(res.status);
  res.status = AnthropicHttpStatus(e.http_status);
  // httplib has already set Content-Length for the old body (headers are a
  // multimap: replace, do not add).
  res.body = DumpJson(AnthropicErrorJson(e));
  res.headers.erase("Content-Length");
  res.set_header("Content-Length", std::to_string(res.body.size()));
}

std::optional<ApiError> CheckAnthropicVersion(const httplib::Request& req) {
  if (!req.has_header("anthropic-version")) return std::nullopt;
  // A date, YYYY-MM-DD, from 2023-01-01 on: the shape served is 2023-06-01's,
  // which later versions (SDKs send their own date) keep.
  const std::string v = req.get_header_value("anthropic-version");
  bool date = v.size() == 10 && v[4] == '-' && v[7] == '-';
  for (size_t i = 0; date && i < v.size(); ++i) date = i == 4 || i == 7 || (v[i] >= '0' && v[i] <= '9');
  if (date && v >= "2023-01-01" && v.substr(5, 2) >= "01" && v.substr(5, 2) <= "12" && v.substr(8) >= "01" &&
      v.substr(8) <= "31") {
    return std::nullopt;
  }
  return BadRequest("anthropic-version '" + v + "' is not a supported version; send a date such as 2023-06-01 (or "
                    "omit the header)",
                    "anthropic-version");
}

void AnthropicHandler::Messages(const httplib::Request& req, httplib::Response& res) const {
  const double arrival = NowSeconds();
  if (std::optional<ApiError> e = Precheck(ctx_, req)) return SendAnthropicError(res, *e, ctx_.metrics);
  const ServiceInfo& info = ctx_.service->info();
  ApiResult<nlohmann::ordered_json> body = ParseJsonBody(req.body, ctx_.limits.max_json_depth);
  if (!body.ok()) return SendAnthropicError(res, body.error, ctx_.metrics);
  ApiResult<AnthropicRequest> parsed =
      ParseAnthropicMessages(body.value, info.n_ctx, ctx_.limits, ctx_.chat()->has_thinking_switch());
  if (!parsed.ok()) return SendAnthropicError(res, parsed.error, ctx_.metrics);
  ApiRequest& api = parsed.value.api;
  if (std::optional<ApiError> e = CheckModelName(api.model, info)) return SendAnthropicError(res, *e, ctx_.metrics);

  Result<std::string> rendered = ctx_.chat()->Render(api.messages, api.tools, api.template_kwargs);
  if (!rendered.ok()) return SendAnthropicError(res, BadRequest(rendered.status().message()), ctx_.metrics);
  const Tokenizer& tok = ctx_.service->tokenizer();
  std::vector<int32_t> prompt = EncodeChatText(tok, *rendered);
  MessagePlan plan;
  plan.prefixes = BreakpointPrefixes(*ctx_.chat(), tok, api, parsed.value.breakpoints, *rendered, prompt);
  for (const KvHint& h : CacheHints(plan.prefixes)) api.kv_hints.push_back(h);
  if (std::optional<ApiError> e = FitToContext(&api, static_cast<int64_t>(prompt.size()), info.n_ctx,
                                               info.max_seq_tokens)) {
    return SendAnthropicError(res, *e, ctx_.metrics);
  }

  plan.header = {NewResponseId("msg_"), info.model_name};
  plan.tools = !api.tools.is_null();
  plan.parallel = api.parallel_tool_calls;
  plan.session_id = req.has_header("X-Session-Id") ? req.get_header_value("X-Session-Id") : api.user;
  plan.stops = api.stop;
  ReportAnthropicExtensions(req, parsed.value, plan.header.id, res);
  ApiResult<std::unique_ptr<GenerationRunner>> started =
      StartGeneration(ctx_, &api, std::move(prompt), {plan.header.id, plan.session_id, arrival});
  if (!started.ok()) return SendAnthropicError(res, started.error, ctx_.metrics);
  PG_LOG_DEBUG("{}: submitted ({} prompt tokens, {} cache hints, stream={})", plan.header.id,
               started.value->result().prompt_tokens, api.kv_hints.size(), api.stream);
  if (api.stream) {
    auto state = std::make_shared<StreamState>(ctx_.metrics->in_flight, plan.header);
    state->runner = std::move(started.value);
    state->plan = std::move(plan);
    RunStream(ctx_, std::move(state), res);
  } else {
    InFlightGauge in_flight(ctx_.metrics->in_flight);
    RunToCompletion(ctx_, started.value.get(), plan, res);
  }
}

void AnthropicHandler::CountTokens(const httplib::Request& req, httplib::Response& res) const {
  if (std::optional<ApiError> e = Precheck(ctx_, req)) return SendAnthropicError(res, *e, ctx_.metrics);
  ApiResult<nlohmann::ordered_json> body = ParseJsonBody(req.body, ctx_.limits.max_json_depth);
  if (!body.ok()) return SendAnthropicError(res, body.error, ctx_.metrics);
  ApiResult<AnthropicRequest> parsed =
      ParseAnthropicCountTokens(body.value, ctx_.limits, ctx_.chat()->has_thinking_switch());
  if (!parsed.ok()) return SendAnthropicError(res, parsed.error, ctx_.metrics);
  const ApiRequest& api = parsed.value.api;
  if (std::optional<ApiError> e = CheckModelName(api.model, ctx_.service->info())) {
    return SendAnthropicError(res, *e, ctx_.metrics);
  }
  Result<std::string> rendered = ctx_.chat()->Render(api.messages, api.tools, api.template_kwargs);
  if (!rendered.ok()) return SendAnthropicError(res, BadRequest(rendered.status().message()), ctx_.metrics);
  std::vector<int32_t> prompt = EncodeChatText(ctx_.service->tokenizer(), *rendered);
  res.status = 200;
  res.set_content(DumpJson({{"input_tokens", prompt.size()}}), "application/json");
}

}  // namespace pg
