// ServerOptions: what the HTTP server listens on and the limits it enforces
// on every connection. Filled by `prosgrow serve` from its flags
// (AddServerFlags) or directly by tests. Plain value type.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "server/common/request_limits.h"
#include "server/common/tenant_keys.h"

namespace CLI {
class App;
}

namespace pg {

// What this binary is, filled by `prosgrow serve` (the server includes no
// backend code, so the kernel ISA arrives here as a string).
struct BuildInfo {
  std::string version = "unknown";
  std::string commit = "unknown";
  std::string build_type = "unknown";
  std::string isa = "unknown";  // CPU kernel level the runtime dispatch selected
};

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;           // 0 = ephemeral; HttpServer::port() reports the bound one
  std::string api_key;       // "" = no authentication
  std::string api_key_file;  // read into api_key by Validate() when set
  // Tenants (docs/server.md, "Multi-tenant deployment"; server/common/tenant_keys.h):
  // "TENANT KEY" lines, re-read on SIGHUP; api_key is tenant "default".
  std::string api_keys_file;
  std::vector<std::string> tenant_share_cache;  // each "a,b[,...]": tenants sharing one cache
  int threads = 128;                            // HTTP worker threads (each holds one connection)

  int64_t max_body_bytes = 8 << 20;     // larger bodies get 413
  int64_t max_header_bytes = 64 << 10;  // request line + headers, per request; more gets 431
  int64_t max_headers = 100;            // header lines per request; more gets 431
  int64_t max_url_bytes = 8 << 10;      // request line (method, URL, version, CRLF); longer gets 414
  double header_timeout_s = 10;         // whole request line + headers must arrive in this
  double body_timeout_s = 60;           // whole body must arrive in this
  double read_timeout_s = 5;            // per read while a request is arriving
  double write_timeout_s = 30;          // per write of a response
  double keep_alive_timeout_s = 5;      // idle wait for the next request on a connection
  int keep_alive_max_requests = 100;    // requests per connection
  RequestLimits limits;                 // what one request body may contain
  BuildInfo build;                      // reported by /metrics (prosgrow_build_info)
  int responses_store = 1024;           // responses kept for previous_response_id (0 = none)
  // Replay an assistant turn with N parallel tool calls as N successive
  // call/result turns, for templates that refuse parallel calls (Llama 3.1).
  bool serialize_parallel_tool_calls = false;

  // Checks ranges (port 0..65535, every limit within its documented range;
  // the message names the flag), loads api_key_file and checks
  // api_keys_file and tenant_share_cache.
  Status Validate();
  // What TenantKeys::Create needs from these options.
  TenantKeysConfig KeysConfig() const;
};

// Registers --host, --port, --api-key, --api-key-file, --api-keys-file,
// --tenant-share-cache, --http-threads,
// --http-timeout and the request limits (docs/server.md, "Request limits"):
// --max-body-bytes and --max-header-bytes (accept "8MiB"), --max-headers,
// --max-url-bytes, --max-json-depth, --max-messages, --max-tools, --max-stop,
// --max-logit-bias. The values land in *options when the app parses; call
// options->Validate() afterwards (it checks the ranges).
void AddServerFlags(CLI::App& app, ServerOptions* options);
// The same without --host, --port, --api-key and --api-key-file: the HTTP
// workers, the write timeout and the request limits (`prosgrow route`, whose
// front door enforces serve's limits with serve's flags).
void AddServerLimitFlags(CLI::App& app, ServerOptions* options);

}  // namespace pg
