#include "server/http_server.h"

#include <fmt/format.h>
#include <httplib.h>

#include <ctime>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/check.h"
#include "base/clock.h"
#include "base/log.h"
#include "server/anthropic/anthropic_handler.h"
#include "server/common/api_error.h"
#include "server/common/tenant.h"
#include "server/common/tenant_keys.h"
#include "server/core/chat_prompt.h"
#include "server/core/json_text.h"
#include "server/core/request_log.h"
#include "server/core/server_metrics.h"
#include "server/error_response.h"
#include "server/http/guarded_http_server.h"
#include "server/http/guarded_stream.h"
#include "server/openai/codex_model_info.h"
#include "server/openai/completion_handler.h"
#include "server/openai/openai_error.h"
#include "server/openai/openai_response.h"
#include "server/openai/template_handler.h"
#include "server/openai/tokenize_handler.h"
#include "server/responses/responses_handler.h"

namespace pg {
namespace {

using json = nlohmann::json;

std::string EndpointLabel(const std::string& path) {
  static const char* kKnown[] = {"/v1/chat/completions", "/v1/completions", "/v1/models", "/health", "/metrics"};
  for (const char* k : kKnown) {
    if (path == k) return k;
  }
  if (path == "/v1/messages" || path == "/v1/messages/count_tokens" || path == "/tokenize") return path;
  if (path == "/apply-template" || path == "/v1/responses" || path == "/kv-events") return path;
  if (path.rfind("/v1/sessions/", 0) == 0) return "/v1/sessions/{id}/release";
  if (path.rfind("/v1/models/", 0) == 0) return "/v1/models/{id}";
  return "other";
}

}  // namespace

struct HttpServer::Impl {
  Impl(ServerOptions o, InferenceService* s)
      : options(std::move(o)),
        service(s),
        metrics(&registry),
        server(options),
        started_unix(static_cast<int64_t>(std::time(nullptr))) {}

  const ChatPrompt* Chat() {
    std::call_once(chat_once, [this] {
      ChatPromptOptions prompt_options;
      prompt_options.serialize_parallel_tool_calls = options.serialize_parallel_tool_calls;
      Result<std::unique_ptr<ChatPrompt>> made = ChatPrompt::Create(service->info(), prompt_options);
      if (!made.ok()) {
        PG_LOG_WARN("chat template unusable ({}); using the ChatML fallback", made.status().message());
        ServiceInfo fallback = service->info();
        fallback.chat_template.clear();
        made = ChatPrompt::Create(fallback, prompt_options);
      }
      PG_CHECK_MSG(made.ok(), "the fallback chat template must parse");
      chat = std::move(made).value();
      PG_LOG_INFO("tool-call format: {}", ToolCallFormatName(chat->tool_call_format()));
    });
    return chat.get();
  }

  // The tenant whose key the request carries ("Authorization: Bearer KEY" or
  // "x-api-key: KEY"); the anonymous tenant when no keys are configured;
  // nullopt for a missing or wrong key.
  std::optional<Tenant> Authorized(const httplib::Request& req) const {
    if (!keys || !keys->Enabled()) return Tenant{};
    std::string given = BearerToken(req.get_header_value("Authorization"));
    if (given.empty()) given = req.get_header_value("x-api-key");  // Anthropic clients
    return keys->Find(given);
  }

  // Wraps a /v1 handler with the API-key check; no exception leaves it.
  httplib::Server::Handler Api(std::function<void(const httplib::Request&, httplib::Response&)> fn) {
    return [this, fn = std::move(fn)](const httplib::Request& req, httplib::Response& res) {
      if (!server.BeginHandling(req, res)) return;  // a chunked body past --max-body-bytes: 413
      if (std::string synthetic = SyntheticAcceptanceHeaderValue(service->info()); !synthetic.empty())
        res.set_header(kSyntheticAcceptanceHeader, synthetic);
      std::optional<Tenant> tenant = Authorized(req);
      if (!tenant) {
        res.set_header("WWW-Authenticate", "Bearer");
        return SendError(res, ErrorShapeForPath(req.path), Unauthorized("missing or invalid API key"), &metrics);
      }
      if (req.get_header_value("X-Session-Id").size() > kMaxSessionIdBytes) {
        return SendError(
            res, ErrorShapeForPath(req.path),
            BadRequest(fmt::format("X-Session-Id is longer than {} bytes", kMaxSessionIdBytes), "X-Session-Id"),
            &metrics);
      }
      TenantScope scope(&*tenant);
      try {
        fn(req, res);
      } catch (const std::exception& e) {
        PG_LOG_ERROR("handler for {} threw: {}", req.path, e.what());
        SendError(res, ErrorShapeForPath(req.path), ServerError("internal error"), &metrics);
      }
    };
  }

  void SetUpRoutes();
  void AddGenerationRoutes(const HandlerContext& ctx);
  void AddInfoRoutes();
  void AddWrongMethodRoutes();
  void AddErrorHandlers();

  ServerOptions options;
  InferenceService* service;
  MetricsRegistry registry;
  ServerMetrics metrics;
  GuardedHttpServer server;
  std::unique_ptr<TenantKeys> keys;  // set by Bind (null before: nothing is served yet)
  int64_t started_unix;
  std::atomic<bool> stopping{false};
  std::once_flag chat_once;
  std::unique_ptr<ChatPrompt> chat;
  std::unique_ptr<CompletionHandler> completions;
  std::unique_ptr<AnthropicHandler> anthropic;
  std::unique_ptr<ResponsesHandler> responses;
  std::unique_ptr<TemplateHandler> apply_template;
};

void HttpServer::Impl::SetUpRoutes() {
  HandlerContext ctx;
  ctx.service = service;
  ctx.chat = [this] { return Chat(); };
  ctx.metrics = &metrics;
  ctx.stopping = &stopping;
  ctx.limits = options.limits;
  AddGenerationRoutes(ctx);
  AddInfoRoutes();
  AddWrongMethodRoutes();
  AddErrorHandlers();
}

// The API endpoints: generation (OpenAI, Anthropic), tokenize, apply-template.
void HttpServer::Impl::AddGenerationRoutes(const HandlerContext& ctx) {
  completions = std::make_unique<CompletionHandler>(ctx);

  server.Post("/v1/chat/completions", Api([this](const httplib::Request& req, httplib::Response& res) {
                completions->Handle(req, res, /*chat=*/true);
              }));
  server.Post("/v1/completions", Api([this](const httplib::Request& req, httplib::Response& res) {
                completions->Handle(req, res, /*chat=*/false);
              }));
  anthropic = std::make_unique<AnthropicHandler>(ctx);
  server.Post("/tokenize",
              Api([ctx](const httplib::Request& req, httplib::Response& res) { HandleTokenize(ctx, req, res); }));
  server.Post("/v1/messages",
              Api([this](const httplib::Request& req, httplib::Response& res) { anthropic->Messages(req, res); }));
  server.Post("/v1/messages/count_tokens",
              Api([this](const httplib::Request& req, httplib::Response& res) { anthropic->CountTokens(req, res); }));
  responses = std::make_unique<ResponsesHandler>(ctx, static_cast<size_t>(options.responses_store));
  server.Post("/v1/responses",
              Api([this](const httplib::Request& req, httplib::Response& res) { responses->Create(req, res); }));
  // llama.cpp's /apply-template; behind the API key as in llama.cpp.
  apply_template = std::make_unique<TemplateHandler>(ctx);
  server.Post("/apply-template",
              Api([this](const httplib::Request& req, httplib::Response& res) { apply_template->Handle(req, res); }));
}

// Models, sessions, health, KV events and metrics.
void HttpServer::Impl::AddInfoRoutes() {
  auto model_json = [this] {
    const ServiceInfo& info = service->info();
    json m{{"id", info.model_name},  {"object", "model"},          {"created", started_unix},
           {"owned_by", "prosgrow"}, {"vocab_size", info.n_vocab}, {"context_length", info.n_ctx}};
    m.update(SpeculativeModelJson(info));  // speculative drafters; synthetic acceptance said out loud
    m.update(CodexModelInfoJson(info));    // what Codex CLI's model catalogue reads
    return m;
  };
  server.Get(
      "/v1/models", Api([model_json](const httplib::Request&, httplib::Response& res) {
        const json models = json::array({model_json()});  // "models": where Codex reads its catalogue
        res.set_content(DumpJson({{"object", "list"}, {"data", models}, {"models", models}}), "application/json");
      }));
  server.Get(R"(/v1/models/(.+))", Api([this, model_json](const httplib::Request& req, httplib::Response& res) {
               if (req.matches[1] != service->info().model_name) {
                 return SendOpenAiError(
                     res,
                     NotFoundError("model '" + std::string(req.matches[1]) + "' does not exist", "model_not_found"),
                     &metrics);
               }
               res.set_content(DumpJson(model_json()), "application/json");
             }));
  server.Post(R"(/v1/sessions/([^/]+)/release)", Api([this](const httplib::Request& req, httplib::Response& res) {
                std::string id = req.matches[1];
                if (id.size() > kMaxSessionIdBytes) {
                  return SendOpenAiError(
                      res, BadRequest(fmt::format("session id is longer than {} bytes", kMaxSessionIdBytes)), &metrics);
                }
                service->ReleaseSession(TenantSessionId(Tenant::Current(), id));  // only the caller's own session
                res.set_content(DumpJson({{"id", id}, {"object", "session"}, {"released", true}}), "application/json");
              }));
  server.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    bool ready = service->ready() && !stopping.load();
    res.status = ready ? 200 : 503;
    res.set_content(ready ? R"({"status":"ok"})" : R"({"status":"loading"})", "application/json");
  });
  // Where this replica publishes its KV events (--kv-events), so a router
  // needs only the replica's URL. 404 when it publishes none.
  // Behind the API key: it names the endpoints that carry block hashes.
  server.Get("/kv-events", Api([this](const httplib::Request&, httplib::Response& res) {
               const ServiceInfo& info = service->info();
               if (info.kv_events_endpoint.empty()) {
                 return SendOpenAiError(
                     res, NotFoundError("this server publishes no KV events (start it with --kv-events)"), &metrics);
               }
               json j{
                   {"endpoint", info.kv_events_endpoint},   {"replay_endpoint", info.kv_events_replay_endpoint},
                   {"topic", info.kv_events_topic},         {"format", "vllm"},
                   {"block_size", info.kv_block_size},      {"hash", "first 63 bits of the chained SHA-256 block hash"},
                   {"token_ids", info.kv_events_token_ids}, {"media", {"GPU", "CPU", "DISK"}}};
               if (!info.kv_events_curve_public_key.empty()) j["curve_public_key"] = info.kv_events_curve_public_key;
               res.set_content(DumpJson(j), "application/json");
             }));
  registry.AddInfo("prosgrow_build_info", "Version, git commit, build type and CPU kernel ISA of this server.",
                   {{"version", options.build.version},
                    {"commit", options.build.commit},
                    {"build_type", options.build.build_type},
                    {"isa", options.build.isa}});
  server.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(registry.Render() + service->MetricsText(), "text/plain; version=0.0.4; charset=utf-8");
  });
}

// Known paths with the wrong method: 405 naming the right one.
void HttpServer::Impl::AddWrongMethodRoutes() {
  auto not_allowed = [this](const char* allow) {
    return [this, allow](const httplib::Request& req, httplib::Response& res) {
      res.set_header("Allow", allow);
      ApiError e = BadRequest(req.method + " is not allowed on " + req.path + " (use " + allow + ")");
      e.http_status = 405;
      SendError(res, ErrorShapeForPath(req.path), e, &metrics);
    };
  };
  auto refuse = [&](const char* p, const char* allow) { server.RefuseOtherMethods(p, allow, not_allowed(allow)); };
  for (const char* p : {"/v1/chat/completions", "/v1/completions", "/v1/responses", R"(/v1/sessions/([^/]+)/release)",
                        "/v1/messages", "/v1/messages/count_tokens", "/apply-template", "/tokenize"}) {
    refuse(p, "POST");
  }
  for (const char* p : {"/v1/models", R"(/v1/models/(.+))", "/health", "/metrics", "/kv-events"}) refuse(p, "GET");
}

// httplib's own errors, handler exceptions and the request count.
void HttpServer::Impl::AddErrorHandlers() {
  // Errors httplib or a stream limit produces, answered as API errors in the
  // path's API (error_response.h).
  server.InstallErrorAnswers([this](const httplib::Request& req, httplib::Response& res,
                                    const ApiError& e) { SendError(res, ErrorShapeForPath(req.path), e, &metrics); },
                             [this](const ApiError& e) { metrics.errors->Inc({e.kind()}); }, OpenAiErrorJson);
  // Counted when the status line is about to be written (httplib calls the
  // post-routing handler after the error handler, before any response byte),
  // so a client that has its response and scrapes /metrics sees its request.
  // A logger would run after the last byte: too late for that client.
  // One log line per request, once its response (a stream too) is sent.
  server.set_pre_routing_handler([](const httplib::Request&, httplib::Response&) {
    BeginRequestLog(NowSeconds());
    return httplib::Server::HandlerResponse::Unhandled;
  });
  server.set_logger([](const httplib::Request& req, const httplib::Response& res) {
    PG_LOG_INFO("{}", RequestLogLine(req.method, req.path, res.status, NowSeconds()));
  });
  server.set_post_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    NoteRequestResponse(res.status, res.body);  // for the log line (httplib's own errors; SendError notes its own)
    metrics.requests->Inc({EndpointLabel(req.path), std::to_string(res.status)});
  });
}

HttpServer::HttpServer(ServerOptions options, InferenceService* service)
    : impl_(std::make_unique<Impl>(std::move(options), service)) {
  impl_->SetUpRoutes();
}

HttpServer::~HttpServer() { Stop(); }

MetricsRegistry& HttpServer::metrics_registry() { return impl_->registry; }

bool HttpServer::running() const { return impl_->server.is_running(); }

Status HttpServer::Bind() {
  Impl& m = *impl_;
  PG_RETURN_IF_ERROR(m.options.Validate());
  PG_ASSIGN_OR_RETURN(m.keys, TenantKeys::Create(m.options.KeysConfig()));
  if (m.keys->Enabled()) PG_LOG_INFO("API keys: {} (tenants isolated)", m.keys->size());
  PG_ASSIGN_OR_RETURN(port_, m.server.Bind());
  PG_LOG_INFO("listening on http://{}:{}", m.options.host, port_);
  return Status::Ok();
}

Status HttpServer::Start() {
  PG_RETURN_IF_ERROR(Bind());
  thread_ = std::thread([this] { impl_->server.listen_after_bind(); });
  return Status::Ok();
}

Status HttpServer::Run() {
  PG_RETURN_IF_ERROR(Bind());
  if (!impl_->server.listen_after_bind() && !impl_->stopping.load())
    return IoError("HTTP server stopped with an error");
  return Status::Ok();
}

Status HttpServer::ReloadKeys() {
  if (!impl_->keys) return Status::Ok();
  Status st = impl_->keys->Reload();
  if (st.ok()) {
    PG_LOG_INFO("API keys reloaded: {}", impl_->keys->size());
  } else {
    PG_LOG_WARN("API keys not reloaded, keeping the old ones: {}", st.message());
  }
  return st;
}

void HttpServer::Stop() {
  impl_->stopping.store(true);
  impl_->server.stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace pg
