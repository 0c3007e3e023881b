#include "server/responses/responses_handler.h"

#include <fmt/format.h>

#include <ctime>
#include <optional>

#include "server/common/api_error.h"
#include "server/common/request_limits.h"
#include "server/common/tenant.h"
#include "server/core/fit_to_context.h"
#include "server/core/generation_handler.h"
#include "server/core/generation_pipeline.h"
#include "server/core/ignored_fields.h"
#include "server/core/json_text.h"
#include "server/core/request.h"
#include "server/core/response_id.h"
#include "server/core/tool_call_chunks.h"
#include "server/responses/responses_error.h"
#include "server/responses/responses_request.h"
#include "server/responses/responses_response.h"
#include "tokenizer/tokenizer.h"

namespace pg {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

// Between the two JSON flavours; generated text may hold invalid UTF-8
// (random weights), which becomes U+FFFD as in DumpJson.
ojson ToOrdered(const json& j) {
  return ojson::parse(j.dump(-1, ' ', false, json::error_handler_t::replace), nullptr, false);
}
json ToUnordered(const ojson& j) {
  return json::parse(j.dump(-1, ' ', false, ojson::error_handler_t::replace), nullptr, false);
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
               {"previous_response_id", r.previous_response_id.empty() ? json(nullptr) : json(r.previous_response_id)},
               {"store", r.store},
               {"text", {{"format", {{"type", "text"}}}}},
               {"truncation", "disabled"},
               {"reasoning", {{"effort", nullptr}, {"summary", nullptr}}},
               {"metadata", json::object()},
               {"user", api.user.empty() ? json(nullptr) : json(api.user)}};
  for (auto it = r.echo.begin(); it != r.echo.end(); ++it) echo[it.key()] = ToUnordered(it.value());
  return echo;
}

// The response in the Responses API's words: ResponsesStreamWriter's events
// for a stream, the response object for a whole body. The conversation is
// stored (store: true) under the caller's tenant when the response ends.
// Unlike chat completions and messages, a function_call item cut by the
// token limit carries its arguments closed into a JSON object (as the
// Responses API has always answered here), streamed or not.
class ResponsesWriter final : public ResponseWriter {
 public:
  struct Storage {
    std::shared_ptr<ResponseStore> store;  // null: store: false
    std::string tenant;
    ojson history;  // the conversation before this response's output (no instructions)
  };
  ResponsesWriter(ResponsesHeader h, Storage storage)
      : header_(h), stream_(std::move(h)), storage_(std::move(storage)) {}

  const std::string& id() const override { return header_.id; }
  std::string StreamStart(const GenerationResult&) override { return stream_.Start(); }
  std::string StreamStep(const WriterStep& step) override {
    return Deltas(ToolCallDeltas(step.events, step.out.calls(), /*close_cut=*/false));
  }
  std::string StreamEnd(const WriterStep& step, const GenerationEnd&, const GenerationResult& r) override {
    std::string bytes = Deltas(ToolCallDeltas(step.events, step.out.calls(), /*close_cut=*/true));
    bytes += stream_.Finish(r.finish_reason, ResponsesUsageJson(r));
    Remember(stream_.output());
    return bytes;
  }
  std::string StreamError(const ApiError& error) override { return stream_.Fail(error); }
  std::string Body(const GenerationEnd& end, const std::vector<TokenEvent>&, const GenerationResult& r) override {
    std::vector<ToolCall> calls = end.calls;
    for (ToolCall& c : calls) c.arguments_json = c.CompleteArguments();  // a cut call's arguments closed
    json output = ResponsesOutputItems(end.text, calls, header_.namespaces);
    Remember(output);
    const std::string status = r.finish_reason == "length" ? "incomplete" : "completed";
    return DumpJson(ResponsesObjectJson(header_, status, output, ResponsesUsageJson(r), r.finish_reason));
  }

 private:
  std::string Deltas(const std::vector<json>& deltas) {
    std::string out;
    for (const json& d : deltas) out += stream_.Delta(d);
    return out;
  }
  void Remember(const json& output) {
    if (!storage_.store) return;
    ojson conversation = storage_.history;
    for (const json& m : ResponsesOutputAsMessages(output)) conversation.push_back(ToOrdered(m));
    storage_.store->Put(storage_.tenant, header_.id, std::move(conversation));
  }

  ResponsesHeader header_;
  ResponsesStreamWriter stream_;
  Storage storage_;
};

// OpenAI's Responses API as an ApiDialect: Parse reads the body into a chat
// ApiRequest; Prompt prepends the stored conversation of
// previous_response_id (looked up under the caller's tenant) and renders it.
class ResponsesDialect final : public ApiDialect {
 public:
  explicit ResponsesDialect(std::shared_ptr<ResponseStore> store) : store_(std::move(store)) {}

  const char* endpoint() const override { return "responses"; }
  void SendError(httplib::Response& res, const ApiError& error, ServerMetrics* metrics) const override {
    SendResponsesError(res, error, metrics);
  }

  ApiResult<ApiRequest> Parse(const ojson& body, const ServiceInfo& info, const RequestLimits& limits) override {
    ApiResult<ResponsesRequest> parsed = ParseResponsesRequest(body, info.n_ctx, thinking_switch_, limits);
    if (!parsed.ok()) return parsed.error;
    request_ = std::move(parsed.value);
    return request_.api;
  }

  ApiResult<std::vector<int32_t>> Prompt(const HandlerContext& ctx, ApiRequest* api) override {
    history_ = ojson::array();
    if (!request_.previous_response_id.empty()) {
      std::optional<ojson> previous = store_->Get(Tenant::Current().id, request_.previous_response_id);
      if (!previous) {
        return BadRequest("Previous response with id '" + request_.previous_response_id +
                              "' not found (it was not stored, or this server dropped or never had it)",
                          "previous_response_id", "previous_response_not_found");
      }
      history_ = std::move(*previous);
      ojson messages = ojson::array();
      if (!request_.instructions.empty()) messages.push_back(api->messages[0]);
      for (const ojson& m : history_) messages.push_back(m);
      for (const ojson& m : request_.input) messages.push_back(m);
      api->messages = std::move(messages);
    }
    for (const ojson& m : request_.input) history_.push_back(m);
    if (std::optional<OrphanToolResult> o = FirstOrphanToolResult(api->messages)) {
      return BadRequest(fmt::format("input: the function_call_output for call_id '{}' answers no function_call "
                                    "(in 'input' or the conversation of previous_response_id)",
                                    o->tool_call_id),
                        "input", "unknown_call_id");
    }
    Result<std::string> rendered = ctx.chat()->Render(api->messages, api->tools, api->template_kwargs);
    if (!rendered.ok()) return BadRequest(rendered.status().message(), "input");
    return EncodeChatText(ctx.service->tokenizer(), *rendered);
  }

  std::unique_ptr<ResponseWriter> Writer(const ApiRequest&, const ServiceInfo& info, const Tokenizer&) override {
    ResponsesHeader header{NewResponseId("resp_"), info.model_name, static_cast<int64_t>(std::time(nullptr)),
                           Echo(request_), request_.namespaces};
    ResponsesWriter::Storage storage{request_.store ? store_ : nullptr, Tenant::Current().id, std::move(history_)};
    return std::make_unique<ResponsesWriter>(std::move(header), std::move(storage));
  }

  void BeforeStart(const httplib::Request&, const ApiRequest& api, const std::string& id,
                   httplib::Response& res) override {
    ReportIgnoredFields(id, api.ignored_fields, res);
  }

  void set_thinking_switch(bool on) { thinking_switch_ = on; }

 private:
  std::shared_ptr<ResponseStore> store_;
  bool thinking_switch_ = false;
  ResponsesRequest request_;
  ojson history_;
};

}  // namespace

void ResponsesHandler::Create(const httplib::Request& req, httplib::Response& res) const {
  ResponsesDialect dialect(store_);
  dialect.set_thinking_switch(ctx_.chat()->has_thinking_switch());
  HandleGeneration(ctx_, req, res, dialect);
}

}  // namespace pg
