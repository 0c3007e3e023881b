#include "server/server_options.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "base/units.h"

namespace pg {

Status ServerOptions::Validate() {
  if (port < 0 || port > 65535) return InvalidArgument(fmt::format("--port {} is outside 0..65535", port));
  if (threads < 1 || threads > 4096) return InvalidArgument(fmt::format("--http-threads {} is outside 1..4096", threads));
  if (max_body_bytes < 1024) return InvalidArgument("--max-body-bytes must be at least 1KiB");
  if (max_header_bytes < 1024) return InvalidArgument("max_header_bytes must be at least 1KiB");
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
  return Status::Ok();
}

void AddServerFlags(CLI::App& app, ServerOptions* options) {
  app.add_option("--host", options->host, "address to listen on")->capture_default_str();
  app.add_option("--port", options->port, "TCP port (0 = any free port)")->capture_default_str();
  app.add_option("--api-key", options->api_key, "require 'Authorization: Bearer KEY'");
  app.add_option("--api-key-file", options->api_key_file, "read the API key from this file");
  app.add_option("--http-threads", options->threads, "HTTP worker threads (max concurrent connections)")
      ->capture_default_str();
  app.add_option_function<std::string>(
      "--max-body-bytes",
      [options](const std::string& text) {
        Result<uint64_t> bytes = ParseByteSize(text);
        if (!bytes.ok()) throw CLI::ValidationError("--max-body-bytes", bytes.status().message());
        if (*bytes > (uint64_t{1} << 40)) throw CLI::ValidationError("--max-body-bytes", "larger than 1TiB");
        options->max_body_bytes = static_cast<int64_t>(*bytes);
      },
      "largest accepted request body, e.g. 8MiB");
  app.add_option("--http-timeout", options->write_timeout_s, "seconds a response write may block")
      ->capture_default_str();
}

}  // namespace pg
