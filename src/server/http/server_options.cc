#include "server/http/server_options.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <sstream>

#include "base/units.h"
#include "server/common/request_limits.h"
#include "server/common/tenant_keys.h"
#include "server/http/guarded_stream.h"

namespace pg {

namespace {

// "--flag V is outside LO..HI" when v is out of range.
Status CheckRange(const char* flag, int64_t v, int64_t lo, int64_t hi) {
  if (v >= lo && v <= hi) return Status::Ok();
  return InvalidArgument(fmt::format("{} {} is outside {}..{}", flag, v, lo, hi));
}

Status CheckLimits(const ServerOptions& o) {
  PG_RETURN_IF_ERROR(CheckRange("--max-body-bytes", o.max_body_bytes, 1024, int64_t{1} << 40));
  PG_RETURN_IF_ERROR(CheckRange("--max-header-bytes", o.max_header_bytes, 1024, 16 << 20));
  PG_RETURN_IF_ERROR(CheckRange("--max-headers", o.max_headers, 1, 10000));
  PG_RETURN_IF_ERROR(CheckRange("--max-url-bytes", o.max_url_bytes, 256, kMaxRequestLineBytes));
  if (o.max_url_bytes > o.max_header_bytes) {
    return InvalidArgument(
        fmt::format("--max-url-bytes {} is larger than --max-header-bytes {}", o.max_url_bytes, o.max_header_bytes));
  }
  const RequestLimits& l = o.limits;
  PG_RETURN_IF_ERROR(CheckRange("--max-json-depth", l.max_json_depth, 4, 1024));
  PG_RETURN_IF_ERROR(CheckRange("--max-messages", l.max_messages, 1, 1000000));
  PG_RETURN_IF_ERROR(CheckRange("--max-tools", l.max_tools, 0, 100000));
  PG_RETURN_IF_ERROR(CheckRange("--max-stop", l.max_stop, 0, 1024));
  PG_RETURN_IF_ERROR(CheckRange("--max-logit-bias", l.max_logit_bias, 0, 1000000));
  PG_RETURN_IF_ERROR(CheckRange("--responses-store", o.responses_store, 0, 1000000));
  PG_RETURN_IF_ERROR(CheckRange("--default-max-tokens", l.default_max_tokens, 0, 1 << 30));
  return Status::Ok();
}

// A byte-size flag ("64KiB", "8MiB", "1048576") stored into *out.
void AddByteSizeFlag(CLI::App& app, const std::string& name, int64_t* out, const std::string& help) {
  app.add_option_function<std::string>(
      name,
      [name, out](const std::string& text) {
        Result<uint64_t> bytes = ParseByteSize(text);
        if (!bytes.ok()) throw CLI::ValidationError(name, bytes.status().message());
        if (*bytes > (uint64_t{1} << 40)) throw CLI::ValidationError(name, "larger than 1TiB");
        *out = static_cast<int64_t>(*bytes);
      },
      help + fmt::format(" [{}]", *out));
}

}  // namespace

Status ServerOptions::Validate() {
  if (port < 0 || port > 65535) return InvalidArgument(fmt::format("--port {} is outside 0..65535", port));
  if (threads < 1 || threads > 4096)
    return InvalidArgument(fmt::format("--http-threads {} is outside 1..4096", threads));
  PG_RETURN_IF_ERROR(CheckLimits(*this));
  for (double t : {header_timeout_s, body_timeout_s, read_timeout_s, write_timeout_s, keep_alive_timeout_s}) {
    if (!(t > 0) || t > 86400) return InvalidArgument("HTTP timeouts must be in (0, 86400] seconds");
  }
  if (keep_alive_max_requests < 1) return InvalidArgument("keep_alive_max_requests must be >= 1");
  if (!api_key_file.empty()) {
    std::ifstream in(api_key_file);
    if (!in) return IoError(fmt::format("cannot read --api-key-file {}", api_key_file));
    std::stringstream ss;
    ss << in.rdbuf();
    std::string key = ss.str();
    while (!key.empty() && (key.back() == '\n' || key.back() == '\r' || key.back() == ' ')) key.pop_back();
    if (key.empty()) return InvalidArgument(fmt::format("--api-key-file {} is empty", api_key_file));
    if (!api_key.empty() && api_key != key) return InvalidArgument("--api-key and --api-key-file disagree; give one");
    api_key = key;
  }
  if (!tenant_share_cache.empty() && api_keys_file.empty()) {
    return InvalidArgument("--tenant-share-cache needs --api-keys-file");
  }
  Result<std::unique_ptr<TenantKeys>> keys = TenantKeys::Create(KeysConfig());
  return keys.ok() ? Status::Ok() : keys.status();
}

TenantKeysConfig ServerOptions::KeysConfig() const {
  return TenantKeysConfig{api_key, api_keys_file, tenant_share_cache};
}

void AddServerFlags(CLI::App& app, ServerOptions* options) {
  app.add_option("--host", options->host, "address to listen on")->capture_default_str();
  app.add_option("--port", options->port, "TCP port (0 = any free port)")->capture_default_str();
  app.add_option("--api-key", options->api_key, "require 'Authorization: Bearer KEY'");
  app.add_option("--api-key-file", options->api_key_file, "read the API key from this file");
  app.add_option("--api-keys-file", options->api_keys_file,
                 "tenants: 'TENANT KEY' per line, '#' comments; re-read on SIGHUP");
  app.add_option("--tenant-share-cache", options->tenant_share_cache,
                 "tenants that share one KV cache, e.g. a,b (repeatable; default: none share)");
  AddServerLimitFlags(app, options);
}

void AddServerLimitFlags(CLI::App& app, ServerOptions* options) {
  app.add_option("--http-threads", options->threads, "HTTP worker threads (max concurrent connections)")
      ->capture_default_str();
  app.add_option("--http-timeout", options->write_timeout_s, "seconds a response write may block")
      ->capture_default_str();
  // Request limits (docs/server.md); ranges are checked by Validate().
  AddByteSizeFlag(app, "--max-body-bytes", &options->max_body_bytes,
                  "largest request body, e.g. 8MiB; 1KiB to 1TiB (413)");
  AddByteSizeFlag(app, "--max-header-bytes", &options->max_header_bytes,
                  "largest request line + headers, e.g. 64KiB; 1KiB to 16MiB (431)");
  app.add_option("--max-headers", options->max_headers, "most header lines per request (431)")->capture_default_str();
  app.add_option("--max-url-bytes", options->max_url_bytes, "longest request line, 256 to 8192 (414)")
      ->capture_default_str();
  RequestLimits& l = options->limits;
  app.add_option("--max-json-depth", l.max_json_depth, "deepest JSON nesting in a body (400)")->capture_default_str();
  app.add_option("--max-messages", l.max_messages, "most chat messages per request (400)")->capture_default_str();
  app.add_option("--max-tools", l.max_tools, "most tools per request (400)")->capture_default_str();
  app.add_option("--max-stop", l.max_stop, "most stop strings per request (400)")->capture_default_str();
  app.add_option("--max-logit-bias", l.max_logit_bias, "most logit_bias entries per request (400)")
      ->capture_default_str();
  app.add_option("--default-max-tokens", l.default_max_tokens,
                 "completion cap of a request that sets no max_tokens / max_output_tokens (0 = the context's room)")
      ->capture_default_str();
  app.add_option("--responses-store", options->responses_store,
                 "responses kept for previous_response_id on /v1/responses (least recently used dropped; 0 = none)")
      ->capture_default_str();
  app.add_flag("--serialize-parallel-tool-calls", options->serialize_parallel_tool_calls,
               "replay parallel tool calls as successive call/result turns (for templates that refuse them, "
               "e.g. Llama 3.1)");
}

}  // namespace pg
