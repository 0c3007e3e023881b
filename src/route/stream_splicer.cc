#include "route/stream_splicer.h"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace pg {
namespace {

using json = nlohmann::json;

// The one choice's generated-text field of a chunk (chat delta.content or
// completions text), or null when the chunk has none.
json* TextField(json& choice) {
  if (choice.contains("delta") && choice["delta"].is_object()) {
    json& d = choice["delta"];
    return d.contains("content") && d["content"].is_string() ? &d["content"] : nullptr;
  }
  return choice.contains("text") && choice["text"].is_string() ? &choice["text"] : nullptr;
}

}  // namespace

void StreamSplicer::Feed(std::string_view bytes, std::string* out) {
  pending_.append(bytes);
  for (size_t end = pending_.find("\n\n"); end != std::string::npos; end = pending_.find("\n\n")) {
    std::string event = pending_.substr(0, end);
    pending_.erase(0, end + 2);
    OnEvent(event, out);
  }
}

bool StreamSplicer::BeginReplacement() {
  pending_.clear();  // half an event from the dead upstream is never relayed
  if (!refused_.empty() || finished_ || done_) return false;
  replacing_ = true;
  matched_ = 0;
  return true;
}

std::string StreamSplicer::ErrorEvent(const std::string& message) {
  json e = {{"error", {{"message", message}, {"type", "server_error"}, {"code", "replica_lost"}}}};
  return "data: " + e.dump() + "\n\n";
}

bool StreamSplicer::CatchUp(std::string* text) {
  const size_t common = std::min(text->size(), relayed_text_.size() - matched_);
  if (relayed_text_.compare(matched_, common, *text, 0, common) != 0) return false;
  matched_ += common;
  text->erase(0, common);
  return true;
}

void StreamSplicer::OnEvent(const std::string& event, std::string* out) {
  if (diverged()) return;  // nothing more of the other answer reaches the client
  if (event.rfind("data: ", 0) != 0) {  // not an OpenAI data event: relayed, never spliced
    if (refused_.empty()) refused_ = "the stream is not an OpenAI chunk stream";
    if (!replacing_) out->append(event).append("\n\n");
    return;
  }
  const std::string data = event.substr(6);
  if (data == "[DONE]") {
    done_ = true;
    out->append("data: [DONE]\n\n");
    return;
  }
  json j = json::parse(data, nullptr, false);
  json* choices = j.is_object() && j.contains("choices") && j["choices"].is_array() ? &j["choices"] : nullptr;
  json* choice = choices && choices->size() == 1 ? &(*choices)[0] : nullptr;
  if (!j.is_object() || j.contains("error") || (choices && choices->size() > 1) ||
      (choice && (!choice->is_object() || (choice->contains("index") && (*choice)["index"] != 0) ||
                  (choice->contains("delta") && (*choice)["delta"].contains("tool_calls"))))) {
    if (refused_.empty()) refused_ = "the stream carries what cannot be matched as text";
    if (!replacing_) out->append(event).append("\n\n");
    return;
  }
  json* text_field = choice ? TextField(*choice) : nullptr;
  std::string text = text_field ? text_field->get<std::string>() : "";
  const bool role = choice && choice->contains("delta") && (*choice)["delta"].contains("role");
  const bool finish = choice && choice->contains("finish_reason") && !(*choice)["finish_reason"].is_null();
  if (!replacing_) {
    if (id_.empty() && j.contains("id") && j["id"].is_string()) id_ = j["id"].get<std::string>();
    relayed_text_ += text;
    matched_ = relayed_text_.size();
    role_sent_ = role_sent_ || role;
    finished_ = finished_ || finish;
    out->append(event).append("\n\n");
    return;
  }
  if (!id_.empty() && j.contains("id")) j["id"] = id_;
  const size_t before = text.size();
  if (!caught_up() && !CatchUp(&text)) {
    refused_ = "the replacement replica's output differs from what was already sent";
    return;
  }
  if (text.empty() && !finish && !j.contains("usage") && (!role || role_sent_)) return;  // nothing new
  if (role && role_sent_) (*choice)["delta"].erase("role");
  if (text.size() != before) {
    if (text_field) *text_field = text;
    if (choice->contains("logprobs")) (*choice)["logprobs"] = nullptr;  // they were for the whole chunk
  }
  relayed_text_ += text;
  matched_ = relayed_text_.size();
  role_sent_ = role_sent_ || role;
  finished_ = finished_ || finish;
  out->append("data: ").append(j.dump(-1, ' ', false, json::error_handler_t::replace)).append("\n\n");
}

}  // namespace pg
