// ServerOptions: what the HTTP server listens on and the limits it enforces
// on every connection. Filled by `prosgrow serve` from its flags
// (AddServerFlags) or directly by tests. Plain value type.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "server/request_limits.h"

namespace CLI {
class App;
}

namespace pg {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;             // 0 = ephemeral; HttpServer::port() reports the bound one
  std::string api_key;         // "" = no authentication
  std::string api_key_file;    // read into api_key by ResolveApiKey() when set
  int threads = 128;           // HTTP worker threads (each holds one connection)

  int64_t max_body_bytes = 8 << 20;    // larger bodies get 413
  int64_t max_header_bytes = 64 << 10; // request line + headers, per request
  double header_timeout_s = 10;        // whole request line + headers must arrive in this
  double body_timeout_s = 60;          // whole body must arrive in this
  double read_timeout_s = 5;           // per read while a request is arriving
  double write_timeout_s = 30;         // per write of a response
  double keep_alive_timeout_s = 5;     // idle wait for the next request on a connection
  int keep_alive_max_requests = 100;   // requests per connection
  RequestLimits limits;                // what one request body may contain

  // Checks ranges (port 0..65535, positive limits) and loads api_key_file.
  Status Validate();
};

// Registers --host, --port, --api-key, --api-key-file, --http-threads,
// --max-body-bytes (accepts "8MiB") and --http-timeout on `app`. The values
// land in *options when the app parses; call options->Validate() afterwards.
void AddServerFlags(CLI::App& app, ServerOptions* options);

}  // namespace pg
