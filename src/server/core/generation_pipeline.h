// The steps every generation endpoint takes between a validated ApiRequest
// and the text it answers with, used by HandleGeneration
// (generation_handler.h) for every API dialect:
//
//   CheckModelName -> ChatPromptTokens (template + tokenize) -> FitToContext
//   -> StartGeneration (the one place an ApiRequest becomes a
//      GenerationRequest) -> CollectAll or the stream loop of
//      generation_handler.cc.
//
// Thread-safety: free functions over thread-safe HandlerContext members;
// a runner is used by one HTTP thread.
#pragma once

#include <httplib.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "metrics/metrics_registry.h"
#include "server/common/api_error.h"
#include "server/common/request_limits.h"
#include "server/core/fit_to_context.h"
#include "server/core/generation_runner.h"
#include "server/core/handler_context.h"
#include "server/core/request.h"

namespace pg {

// 404 when a client names a model other than the one served ("" = any).
std::optional<ApiError> CheckModelName(const std::string& requested, const ServiceInfo& info);

// Renders `messages` (+ `tools`) through the chat template and tokenizes the
// text (special tokens parsed; a BOS the template already wrote is not
// doubled). 400 naming `param` when the template raises. `template_kwargs`:
// the request's chat_template_kwargs (an object, or null).
ApiResult<std::vector<int32_t>> ChatPromptTokens(const HandlerContext& ctx, const nlohmann::ordered_json& messages,
                                                 const nlohmann::ordered_json& tools,
                                                 const std::string& param = "messages",
                                                 const nlohmann::ordered_json& template_kwargs = nullptr);

// The model's default sampling (ServiceInfo::sampling_defaults, from
// generation_config.json) for each field the request's body does not set
// (absent or null): temperature, top_p, top_k, min_p, repetition_penalty.
void ApplySamplingDefaults(const SamplingDefaults& d, const nlohmann::ordered_json& body, SamplingParams* s);

// After FitToContext: a request that named no completion cap gets
// --default-max-tokens when that is set and smaller than the room left.
void ApplyDefaultMaxTokens(const RequestLimits& limits, ApiRequest* api);

// The control tokens that spell the tool-call markers of `format`
// (ToolCallMarkers): GenerationStart::render_special, so the tool-call
// parser sees them (decoding drops control tokens otherwise).
std::vector<int32_t> ToolMarkerTokens(ToolCallFormat format, const Tokenizer& tok);

// Builds the GenerationRequest from `api` (sampling, stop strings, session,
// cache TTL, KV hints) and submits it. 429 when the queue is full. Anything
// else derived from the ApiRequest for the engine (output constraints for
// tool_choice required / named) belongs here, so both APIs get it.
struct GenerationStart {
  std::string id;          // the request id ("chatcmpl-...", "msg_...")
  std::string session_id;  // "" = none
  double arrival_s = 0;
  std::vector<int32_t> render_special;  // control tokens shown in the text (tool-call markers)
};
ApiResult<std::unique_ptr<GenerationRunner>> StartGeneration(const HandlerContext& ctx, ApiRequest* api,
                                                             std::vector<int32_t> prompt, const GenerationStart& start);

// The engine's session name for a request: X-Session-Id, else `user` (or
// Anthropic's metadata.user_id), scoped by the caller's tenant
// (TenantSessionId). "" = none. Call on the handler's thread.
std::string SessionIdOf(const httplib::Request& req, const ApiRequest& api);

// Non-streaming: polls until the generation finishes, appending its text and
// tokens. False when the client disconnected or the server is stopping (the
// request is then cancelled and counted under `endpoint`).
bool CollectAll(const HandlerContext& ctx, GenerationRunner* runner, const char* endpoint, std::string* text,
                std::vector<TokenEvent>* tokens);

// An engine-side end that is not a normal finish ("error", "cancelled").
std::optional<ApiError> EngineFailure(const GenerationResult& r);

// Keeps the in-flight gauge right whichever way a request ends.
class InFlightGauge {
 public:
  explicit InFlightGauge(Gauge* g) : g_(g) { g_->Add(1); }
  ~InFlightGauge() { g_->Add(-1); }
  InFlightGauge(const InFlightGauge&) = delete;
  InFlightGauge& operator=(const InFlightGauge&) = delete;

 private:
  Gauge* g_;
};

// Seconds between polls of a runner.
inline constexpr double kPollSeconds = 0.05;

}  // namespace pg
