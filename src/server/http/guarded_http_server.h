// GuardedHttpServer: the front door that `prosgrow serve` and `prosgrow
// route` share. An httplib::Server whose connections run over GuardedStream
// (header bytes, header count, request-line length, header and body
// deadlines, per-read and per-write timeouts), with at most 2 x threads
// connections waiting for a worker (past that: 503 and close), a body limit
// checked both on Content-Length and on decoded chunked bodies, and every
// error httplib or a limit produces answered as an ApiError naming the flag
// (docs/server.md, "Request limits"). The limits come from ServerOptions,
// the flags of AddServerFlags.
//
// Thread-safety: configure (InstallErrorAnswers, routes) before Bind; then
// httplib's own contract: listen_after_bind() on one thread, stop() from any.
#pragma once

#include <httplib.h>

#include <functional>
#include <string>

#include "base/status.h"
#include "server/common/api_error.h"
#include "server/http/guarded_stream.h"
#include "server/http/server_options.h"

namespace pg {

class GuardedHttpServer final : public httplib::Server {
 public:
  explicit GuardedHttpServer(const ServerOptions& options);

  // Writes an API error into a response (the owner's format and metrics).
  using ErrorWriter = std::function<void(const httplib::Request&, httplib::Response&, const ApiError&)>;
  // An API error's JSON body where no request path picks the words: a raw
  // answer written before httplib parsed the request, and the 503 to a
  // connection past the queue.
  using ErrorBody = std::function<std::string(const ApiError&)>;
  // Installs the answers to what never reaches a handler: a stream limit hit
  // before httplib could answer (a raw response with `raw_body`'s body;
  // `on_raw_error` counts it), a connection past the queue (the same),
  // httplib's own 404 / 413 / 414 / 400 (malformed request) and a handler
  // that threw. Each becomes an ApiError written by `write_error`.
  void InstallErrorAnswers(ErrorWriter write_error, std::function<void(const ApiError&)> on_raw_error,
                           ErrorBody raw_body);

  // Call first in every handler: marks the connection as handling (reads are
  // over) and checks the decoded body against --max-body-bytes (a chunked
  // body is decoded without httplib's size check). False, with the 413
  // written, when the body is too large.
  bool BeginHandling(const httplib::Request& req, httplib::Response& res);

  // Routes every method httplib dispatches on `path` but `allow` (HEAD
  // follows GET) to `refuse`, which answers 405 with an Allow header.
  void RefuseOtherMethods(const char* path, const char* allow, const Handler& refuse);

  // Validates the options' limits, sets httplib's own (payload, keep-alive,
  // worker pool), binds options.host:options.port (0 = any free port) with a
  // listen backlog of 1024, and returns the bound port.
  Result<int> Bind();

  const ServerOptions& options() const { return options_; }

 private:
  bool process_and_close_socket(socket_t sock) override;
  // After an error answer that ends the connection, reads and drops what the
  // client still sends (at most kMaxDrainBytes, within the body timeout,
  // until the read timeout passes without input or the client closes), so
  // closing does not reset the connection before the client has read the answer.
  void DrainBeforeClose(int sock) const;
  static constexpr int64_t kMaxDrainBytes = int64_t{64} << 20;
  // Idle wait between requests, in short slices so stop() is not held up.
  bool WaitForRequest(const GuardedStream& stream);

  ServerOptions options_;
  StreamLimits limits_;
  std::function<std::string(const GuardedStream&)> limit_answer_;
  std::string busy_answer_;  // the raw 503 to a connection past the queue
  ErrorWriter write_error_;
};

}  // namespace pg
