// OpenAiHttp: the HTTP side of a client of an OpenAI-compatible server
// (prosgrow, llama.cpp's llama-server, vLLM, SGLang), shared by `prosgrow
// bench` (streamed, measured requests: bench/stream_client.h) and `prosgrow
// eval` (blocking requests: eval/openai_client.h). It owns the URL rules, the
// connection (timeouts, bearer token, keep-alive), GET, a blocking JSON POST
// and a streamed POST whose Server-Sent Events it parses (sse_parser.h).
// What goes in a request body and what a reply means stays with the callers.
//
// URL: "http[s]://host[:port][/prefix]"; a trailing "/" and "/v1" are dropped
// from the prefix, and every path given below ("/v1/models") is sent after it.
//
// Thread-safety: one OpenAiHttp per thread (it owns one connection).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "base/status.h"

namespace httplib {
class Client;
}

namespace pg {

struct ServerUrl {
  std::string origin;  // "http[s]://host:port"
  std::string prefix;  // "" or "/some/base" (no trailing '/', "/v1" removed)
};
// InvalidArgument naming the URL when it is not http(s), has no host or a bad port.
Result<ServerUrl> ParseServerUrl(const std::string& url);

struct HttpOptions {
  std::string url;
  std::string api_key;           // "Authorization: Bearer KEY" when not empty
  double timeout_s = 600;        // read and write timeout per request
  double connect_timeout_s = 0;  // 0 = timeout_s
  bool keep_alive = false;       // keep the connection between requests
};

struct HttpReply {
  bool sent = false;    // a response arrived (any status)
  int status = 0;       // HTTP status, 0 when none
  std::string body;     // the body (non-streamed, or the first 4 KiB of a non-200 stream)
  std::string error;    // transport error, one line, when !sent
  std::string replica;  // X-Prosgrow-Replica: where `prosgrow route` relayed it ("" = none)
};

class OpenAiHttp {
 public:
  static Result<std::unique_ptr<OpenAiHttp>> Create(const HttpOptions& opt);
  ~OpenAiHttp();
  OpenAiHttp(const OpenAiHttp&) = delete;
  OpenAiHttp& operator=(const OpenAiHttp&) = delete;

  const ServerUrl& url() const { return url_; }

  // GET; the body of a 200 response, else Unavailable naming the path.
  Result<std::string> Get(const std::string& path);
  // POST a JSON body and wait for the whole reply.
  HttpReply PostJson(const std::string& path, const std::string& json_body);
  // POST a JSON body asking for an event stream: on_status(status) when the
  // headers arrive; on_data(data) for every SSE event of a 200 reply, in
  // order; on_start() just before each send attempt (a kept-alive connection
  // the server closed while idle fails at once with no byte read, and the
  // request is then sent once more on a fresh connection).
  struct StreamHandlers {
    std::function<void()> on_start;
    std::function<void(int status)> on_status;
    std::function<void(const std::string& data)> on_data;
  };
  // error is "stream line longer than 64 MiB" when an SSE line overflowed.
  HttpReply PostStream(const std::string& path, const std::string& json_body, const StreamHandlers& h);

 private:
  OpenAiHttp(const HttpOptions& opt, ServerUrl url);
  ServerUrl url_;
  std::unique_ptr<httplib::Client> http_;
};

// The first model id listed by GET /v1/models.
Result<std::string> FirstModelId(OpenAiHttp& http);

}  // namespace pg
