#include "client/openai_http.h"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "client/sse_parser.h"

namespace pg {
namespace {

void SetTimeout(double s, const std::function<void(time_t, time_t)>& set) {
  const auto secs = static_cast<time_t>(s);
  set(secs, static_cast<time_t>((s - static_cast<double>(secs)) * 1e6));
}

}  // namespace

Result<ServerUrl> ParseServerUrl(const std::string& url) {
  // Debian's cpp-httplib is built with OpenSSL, so https:// works too.
  const size_t scheme_end = url.rfind("http://", 0) == 0 ? 7 : url.rfind("https://", 0) == 0 ? 8 : 0;
  if (scheme_end == 0) return InvalidArgument("URL must start with http:// or https://, got '" + url + "'");
  const size_t slash = url.find('/', scheme_end);
  ServerUrl p;
  p.origin = url.substr(0, slash);
  const std::string host = p.origin.substr(scheme_end);
  if (host.empty() || host[0] == ':') return InvalidArgument("URL has no host: '" + url + "'");
  const size_t colon = host.rfind(':');
  if (colon != std::string::npos && host.back() != ']') {
    const std::string port = host.substr(colon + 1);
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
        std::stoi(port) < 1 || std::stoi(port) > 65535) {
      return InvalidArgument("URL has a bad port: '" + url + "'");
    }
  }
  if (slash != std::string::npos) p.prefix = url.substr(slash);
  while (!p.prefix.empty() && p.prefix.back() == '/') p.prefix.pop_back();
  if (p.prefix.size() >= 3 && p.prefix.compare(p.prefix.size() - 3, 3, "/v1") == 0)
    p.prefix.resize(p.prefix.size() - 3);
  return p;
}

Result<std::unique_ptr<OpenAiHttp>> OpenAiHttp::Create(const HttpOptions& opt) {
  PG_ASSIGN_OR_RETURN(ServerUrl url, ParseServerUrl(opt.url));
  if (!(opt.timeout_s > 0) || !std::isfinite(opt.timeout_s)) {
    return InvalidArgument("timeout must be a positive number of seconds");
  }
  return std::unique_ptr<OpenAiHttp>(new OpenAiHttp(opt, std::move(url)));
}

OpenAiHttp::OpenAiHttp(const HttpOptions& opt, ServerUrl url) : url_(std::move(url)) {
  http_ = std::make_unique<httplib::Client>(url_.origin);
  http_->set_keep_alive(opt.keep_alive);
  http_->set_tcp_nodelay(true);  // a request body's last segment leaves at once, not after the peer's delayed ACK
  SetTimeout(opt.connect_timeout_s > 0 ? opt.connect_timeout_s : opt.timeout_s,
             [&](time_t s, time_t us) { http_->set_connection_timeout(s, us); });
  SetTimeout(opt.timeout_s, [&](time_t s, time_t us) { http_->set_read_timeout(s, us); });
  SetTimeout(opt.timeout_s, [&](time_t s, time_t us) { http_->set_write_timeout(s, us); });
  if (!opt.api_key.empty()) http_->set_bearer_token_auth(opt.api_key);
}

OpenAiHttp::~OpenAiHttp() = default;

Result<std::string> OpenAiHttp::Get(const std::string& path) {
  auto res = http_->Get((url_.prefix + path).c_str());
  if (!res) return Unavailable(fmt::format("GET {}{}: {}", url_.origin, path, httplib::to_string(res.error())));
  if (res->status != 200) return Unavailable(fmt::format("GET {}: HTTP {}", path, res->status));
  return res->body;
}

HttpReply OpenAiHttp::PostJson(const std::string& path, const std::string& json_body) {
  HttpReply r;
  const std::string full = url_.prefix + path;
  httplib::Result res = http_->Post(full.c_str(), json_body, "application/json");
  if (!res) {
    r.error = fmt::format("request to {}{} failed: {}", url_.origin, full, httplib::to_string(res.error()));
    return r;
  }
  r.sent = true;
  r.status = res->status;
  r.replica = res->get_header_value("X-Prosgrow-Replica");
  r.body = std::move(res->body);
  return r;
}

HttpReply OpenAiHttp::PostStream(const std::string& path, const std::string& json_body, const StreamHandlers& h) {
  HttpReply r;
  SseParser parser([&](const std::string& data) {
    if (h.on_data) h.on_data(data);
  });
  httplib::Request req;
  req.method = "POST";
  req.path = url_.prefix + path;
  req.body = json_body;
  req.set_header("Content-Type", "application/json");
  req.set_header("Accept", "text/event-stream");
  req.response_handler = [&](const httplib::Response& res) {
    r.status = res.status;
    r.replica = res.get_header_value("X-Prosgrow-Replica");
    if (h.on_status) h.on_status(res.status);
    return true;
  };
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    if (r.status != 200) {
      if (r.body.size() < 4096) r.body.append(data, std::min<size_t>(n, 4096));
      return true;
    }
    parser.Feed(data, n);
    return !parser.overflowed();
  };
  httplib::Response res;
  httplib::Error err = httplib::Error::Success;
  if (h.on_start) h.on_start();
  bool sent = http_->send(req, res, err);
  if (!sent && r.status == 0 && parser.bytes_fed() == 0 &&
      (err == httplib::Error::Read || err == httplib::Error::Write)) {
    if (h.on_start) h.on_start();
    sent = http_->send(req, res, err);
  }
  if (sent && r.status == 200) parser.Finish();
  if (r.status != 200 && r.body.empty()) r.body = res.body;
  if (parser.overflowed()) {
    r.sent = true;
    r.error = "stream line longer than 64 MiB";
  } else if (!sent) {
    r.error = fmt::format("transport: {}", httplib::to_string(err));
  } else {
    r.sent = true;
  }
  return r;
}

Result<std::string> FirstModelId(OpenAiHttp& http) {
  PG_ASSIGN_OR_RETURN(std::string body, http.Get("/v1/models"));
  const auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("data") && j["data"].is_array() && !j["data"].empty() && j["data"][0].is_object() &&
      j["data"][0].contains("id") && j["data"][0]["id"].is_string()) {
    return j["data"][0]["id"].get<std::string>();
  }
  return NotFound("/v1/models lists no model");
}

}  // namespace pg
