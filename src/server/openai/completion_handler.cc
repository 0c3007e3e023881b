#include "server/openai/completion_handler.h"

#include <ctime>
#include <memory>

#include "server/common/api_error.h"
#include "server/common/request_limits.h"
#include "server/core/fit_to_context.h"
#include "server/core/generation_handler.h"
#include "server/core/generation_pipeline.h"
#include "server/core/request.h"
#include "server/openai/openai_request.h"
#include "server/openai/openai_writer.h"
#include "tokenizer/tokenizer.h"

namespace pg {
namespace {

// OpenAI's chat completions (chat) or text completions, as an ApiDialect.
class OpenAiDialect final : public ApiDialect {
 public:
  explicit OpenAiDialect(bool chat) : chat_(chat) {}

  const char* endpoint() const override { return chat_ ? "chat" : "completions"; }
  void SendError(httplib::Response& res, const ApiError& error, ServerMetrics* metrics) const override {
    SendOpenAiError(res, error, metrics);
  }

  ApiResult<ApiRequest> Parse(const nlohmann::ordered_json& body, const ServiceInfo& info,
                              const RequestLimits& limits) override {
    return chat_ ? ParseChatRequest(body, info.n_vocab, info.n_ctx, limits)
                 : ParseCompletionRequest(body, info.n_vocab, info.n_ctx, limits);
  }

  ApiResult<std::vector<int32_t>> Prompt(const HandlerContext& ctx, ApiRequest* api) override {
    if (chat_) return ChatPromptTokens(ctx, api->messages, api->tools, "messages", api->template_kwargs);
    if (api->prompt_is_tokens) return std::move(api->prompt_tokens);
    return ctx.service->tokenizer().Encode(api->prompt_text, /*add_special=*/true, /*parse_special=*/true);
  }

  std::unique_ptr<ResponseWriter> Writer(const ApiRequest& api, const ServiceInfo& info,
                                         const Tokenizer& tok) override {
    OpenAiWriterOptions o;
    o.header.chat = chat_;
    o.header.id = NewResponseId(chat_ ? "chatcmpl-" : "cmpl-");
    o.header.model = info.model_name;
    o.header.created = static_cast<int64_t>(std::time(nullptr));
    o.include_usage = api.stream && api.include_usage;
    o.logprobs = api.sampling.logprobs;
    return std::make_unique<OpenAiWriter>(std::move(o), tok);
  }

 private:
  bool chat_;
};

}  // namespace

void CompletionHandler::Handle(const httplib::Request& req, httplib::Response& res, bool chat) const {
  OpenAiDialect dialect(chat);
  HandleGeneration(ctx_, req, res, dialect);
}

}  // namespace pg
