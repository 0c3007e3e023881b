// HttpServer: the OpenAI-compatible HTTP API over an InferenceService.
//
//   POST /v1/chat/completions   POST /v1/completions     (completion_handler.h)
//   GET  /v1/models             GET  /health (503 while the model loads)
//   GET  /metrics (Prometheus)  POST /v1/sessions/{id}/release
//   POST /v1/messages           POST /v1/messages/count_tokens  (anthropic_handler.h)
//   POST /apply-template (template_handler.h; behind the API key)
//
// cpp-httplib parses HTTP; every connection runs over a GuardedStream that
// bounds slow or oversized headers and bodies. With API keys set (--api-key,
// --api-keys-file; server/common/tenant_keys.h), /v1/*, /tokenize, /apply-template
// and /kv-events require "Authorization: Bearer KEY" or "x-api-key: KEY"
// (compared in constant time); the key's tenant scopes the request's cache
// salt and session names (server/common/tenant.h). /health and /metrics stay open
// for probes and scrapers.
//
// Thread-safety: Start/Stop/Run from one controlling thread; requests are
// served on options.threads worker threads.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "base/status.h"
#include "engine/inference_service.h"
#include "metrics/metrics_registry.h"
#include "server/http/server_options.h"

namespace pg {

class HttpServer {
 public:
  // `service` must outlive the server.
  HttpServer(ServerOptions options, InferenceService* service);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and serves on a background thread. After OK, port() is the bound
  // port (useful with options.port == 0).
  Status Start();
  // Binds and serves on the calling thread until Stop() (from another thread
  // or a signal-watching thread).
  Status Run();
  // Re-reads --api-keys-file (SIGHUP). A bad file keeps the keys in force,
  // logs one line and returns why. Any thread.
  Status ReloadKeys();
  // Stops accepting, ends streams, joins the workers. Idempotent.
  void Stop();

  int port() const { return port_; }
  bool running() const;
  MetricsRegistry& metrics_registry();

 private:
  struct Impl;
  Status Bind();
  std::unique_ptr<Impl> impl_;
  int port_ = -1;
  std::thread thread_;
};

}  // namespace pg
