#include "server/openai/template_handler.h"

#include "server/common/api_error.h"
#include "server/core/json_body.h"
#include "server/core/json_text.h"
#include "server/core/request.h"
#include "server/core/request_fields.h"
#include "server/openai/openai_request.h"
#include "server/openai/openai_response.h"

namespace pg {

void TemplateHandler::Handle(const httplib::Request& req, httplib::Response& res) const {
  InferenceService* service = ctx_.service;
  if (!service->ready()) return SendOpenAiError(res, ServiceUnavailable("the model is still loading"), ctx_.metrics);
  const ServiceInfo& info = service->info();

  ApiResult<nlohmann::ordered_json> body = ParseJsonBody(req.body, ctx_.limits.max_json_depth);
  if (!body.ok()) return SendOpenAiError(res, body.error, ctx_.metrics);
  bool add_generation_prompt = true;
  FieldReader fields(body.value);
  fields.Bool("add_generation_prompt", &add_generation_prompt);
  if (fields.failed()) return SendOpenAiError(res, fields.error(), ctx_.metrics);
  ApiResult<ApiRequest> parsed =
      ParseChatRequest(body.value, info.n_vocab, info.n_ctx, ctx_.limits, {"add_generation_prompt"});
  if (!parsed.ok()) return SendOpenAiError(res, parsed.error, ctx_.metrics);
  const ApiRequest& api = parsed.value;
  if (!api.model.empty() && api.model != info.model_name) {
    return SendOpenAiError(
        res,
        NotFoundError("model '" + api.model + "' does not exist; this server serves '" + info.model_name + "'",
                      "model_not_found"),
        ctx_.metrics);
  }
  Result<std::string> prompt = ctx_.chat()->Render(api.messages, api.tools, add_generation_prompt, api.template_kwargs);
  if (!prompt.ok()) return SendOpenAiError(res, BadRequest(prompt.status().message(), "messages"), ctx_.metrics);
  res.status = 200;
  res.set_content(DumpJson({{"prompt", *prompt}}), "application/json");
}

}  // namespace pg
