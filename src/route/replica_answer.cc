#include "route/replica_answer.h"

#include <nlohmann/json.hpp>

namespace pg {
namespace {

using json = nlohmann::json;

// SAX reader that stops at the top-level "id" string.
struct IdReader : json::json_sax_t {
  int depth = 0;
  bool at_id = false;
  std::string id;
  bool Value() {
    at_id = false;
    return true;
  }
  bool null() override { return Value(); }
  bool boolean(bool) override { return Value(); }
  bool number_integer(number_integer_t) override { return Value(); }
  bool number_unsigned(number_unsigned_t) override { return Value(); }
  bool number_float(number_float_t, const string_t&) override { return Value(); }
  bool string(string_t& s) override {
    if (at_id) {
      id = s;
      return false;  // found: stop reading
    }
    return true;
  }
  bool binary(binary_t&) override { return Value(); }
  bool start_object(std::size_t) override {
    at_id = false;
    ++depth;
    return true;
  }
  bool key(string_t& k) override {
    at_id = depth == 1 && k == "id";
    return true;
  }
  bool end_object() override {
    --depth;
    return true;
  }
  bool start_array(std::size_t) override {
    at_id = false;
    ++depth;
    return true;
  }
  bool end_array() override {
    --depth;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const json::exception&) override { return false; }
};

}  // namespace

bool ValidReplicaStatus(int status) { return status >= 200 && status <= 599; }

ApiError BadGateway(std::string message) {
  ApiError e = ServerError(std::move(message));
  e.http_status = 502;
  e.code = "bad_gateway";
  return e;
}

bool IsJsonText(std::string_view body) { return json::accept(body.begin(), body.end()); }

std::string TopLevelId(std::string_view body) {
  IdReader reader;
  json::sax_parse(body.begin(), body.end(), &reader);
  return reader.id;
}

std::string CreatedResponseId(std::string_view events) {
  for (size_t at = events.find("data: "); at != std::string_view::npos; at = events.find("data: ", at)) {
    at += 6;
    const size_t end = events.find('\n', at);
    const std::string_view data = events.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    if (data.find("\"response.created\"") == std::string_view::npos) continue;
    json j = json::parse(data.begin(), data.end(), nullptr, false);
    if (j.is_object() && j.value("type", "") == "response.created" && j.contains("response") &&
        j["response"].is_object() && j["response"].contains("id") && j["response"]["id"].is_string())
      return j["response"]["id"].get<std::string>();
  }
  return "";
}

}  // namespace pg
