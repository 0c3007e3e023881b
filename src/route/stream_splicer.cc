#include "route/stream_splicer.h"

#include <algorithm>

namespace pg {
namespace {

using json = nlohmann::json;

// Fields two replicas of one model may fill differently for the same answer.
bool Volatile(const std::string& key) {
  return key == "id" || key == "created" || key == "usage" || key == "system_fingerprint";
}

// j without its volatile fields, at any depth.
json Normalized(const json& j) {
  if (j.is_array()) {
    json out = json::array();
    for (const json& v : j) out.push_back(Normalized(v));
    return out;
  }
  if (!j.is_object()) return j;
  json out = json::object();
  for (const auto& [k, v] : j.items())
    if (!Volatile(k)) out[k] = Normalized(v);
  return out;
}

// Pairs each "id" of `repl` with the one at the same place in `orig`.
void LearnIds(const json& orig, const json& repl, std::map<std::string, std::string>* ids) {
  if (orig.is_array() && repl.is_array()) {
    for (size_t i = 0; i < std::min(orig.size(), repl.size()); ++i) LearnIds(orig[i], repl[i], ids);
    return;
  }
  if (!orig.is_object() || !repl.is_object()) return;
  for (const auto& [k, v] : orig.items()) {
    auto r = repl.find(k);
    if (r == repl.end()) continue;
    if (k == "id" && v.is_string() && r->is_string()) (*ids)[r->get<std::string>()] = v.get<std::string>();
    else LearnIds(v, *r, ids);
  }
}

void RewriteIds(json* j, const std::map<std::string, std::string>& ids) {
  if (j->is_array()) {
    for (json& v : *j) RewriteIds(&v, ids);
    return;
  }
  if (!j->is_object()) return;
  for (auto& [k, v] : j->items()) {
    if (k == "id" && v.is_string()) {
      if (auto it = ids.find(v.get<std::string>()); it != ids.end()) v = it->second;
    } else {
      RewriteIds(&v, ids);
    }
  }
}

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// The one choice's generated-text field of a chunk (chat delta.content or
// completions text), or null when the chunk has none.
json* TextField(json& choice) {
  if (choice.contains("delta") && choice["delta"].is_object()) {
    json& d = choice["delta"];
    return d.contains("content") && d["content"].is_string() ? &d["content"] : nullptr;
  }
  return choice.contains("text") && choice["text"].is_string() ? &choice["text"] : nullptr;
}

// An OpenAI chunk whose only output is choice 0's text (or none: a usage chunk).
bool IsTextChunk(const json& j) {
  if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].size() > 1) return false;
  if (j["choices"].empty()) return true;
  const json& c = j["choices"][0];
  if (!c.is_object() || c.value("index", 0) != 0) return false;
  return !(c.contains("delta") && c["delta"].is_object() && c["delta"].contains("tool_calls"));
}

// An OpenAI chunk with several choices, or another than choice 0.
bool NotChoiceZero(const json& j) {
  if (!j.contains("choices") || !j["choices"].is_array()) return false;
  const json& cs = j["choices"];
  return cs.size() > 1 || (cs.size() == 1 && (!cs[0].is_object() || cs[0].value("index", 0) != 0));
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
  events_matched_ = 0;
  ids_.clear();
  return true;
}

std::string StreamSplicer::ErrorEvent(const std::string& message) const {
  if (dialect_ == Dialect::kAnthropic) {
    json e = {{"type", "error"}, {"error", {{"type", "api_error"}, {"message", message}}}};
    return "event: error\ndata: " + Dump(e) + "\n\n";
  }
  json e = {{"error", {{"message", message}, {"type", "server_error"}, {"code", "replica_lost"}}}};
  return "data: " + Dump(e) + "\n\n";
}

std::string StreamSplicer::EndEvent() const {
  if (dialect_ == Dialect::kAnthropic) return "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
  return "data: [DONE]\n\n";
}

bool StreamSplicer::CatchUp(std::string* text) {
  const size_t common = std::min(text->size(), relayed_text_.size() - matched_);
  if (relayed_text_.compare(matched_, common, *text, 0, common) != 0) return false;
  matched_ += common;
  text->erase(0, common);
  return true;
}

void StreamSplicer::Relayed(const json& j) {
  log_.push_back(j);
  if (dialect_ == Dialect::kAnthropic) {
    const std::string type = j.value("type", "");
    if (type == "message_stop") done_ = true;
    if (type == "message_delta" && j.contains("delta") && j["delta"].is_object() &&
        j["delta"].contains("stop_reason") && !j["delta"]["stop_reason"].is_null())
      finished_ = true;
    return;
  }
  if (j.contains("choices") && j["choices"].is_array() && !j["choices"].empty() && j["choices"][0].is_object()) {
    const json& c = j["choices"][0];
    if (c.contains("finish_reason") && !c["finish_reason"].is_null()) finished_ = true;
  }
}

void StreamSplicer::OnEvent(const std::string& event, std::string* out) {
  if (diverged()) return;  // nothing more of the other answer reaches the client
  std::string name, data;
  bool has_data = false;
  for (size_t at = 0; at <= event.size();) {
    size_t nl = event.find('\n', at);
    if (nl == std::string::npos) nl = event.size();
    const std::string_view line(event.data() + at, nl - at);
    if (line.rfind("event: ", 0) == 0) name = line.substr(7);
    if (line.rfind("data: ", 0) == 0) data += std::string(line.substr(6)), has_data = true;
    at = nl + 1;
  }
  if (!has_data) {  // a comment or an event without data: relayed, never matched
    if (!replacing_) out->append(event).append("\n\n");
    return;
  }
  if (data == "[DONE]") {
    done_ = true;
    out->append("data: [DONE]\n\n");
    return;
  }
  json j = json::parse(data, nullptr, false);
  const bool openai = dialect_ == Dialect::kOpenAi;
  const bool unmatchable =
      !j.is_object() || j.contains("error") || j.value("type", "") == "error" || (openai && NotChoiceZero(j));
  if (unmatchable) {
    if (refused_.empty()) refused_ = "the stream carries what cannot be matched (an error, or several choices)";
    if (!replacing_) out->append(event).append("\n\n");
    return;
  }
  if (replacing_ && by_events_) return OnMatchedEvent(j, name, out);
  if (openai && IsTextChunk(j)) return OnTextChunk(j, event, out);
  if (!replacing_) {  // tool-call deltas, Anthropic events: matched event by event
    by_events_ = true;
    Relayed(j);
    out->append(event).append("\n\n");
    return;
  }
  // Text matching, and the replacement sends what is not text: only once it
  // has caught up (before, it differs from what the client has).
  if (!text_caught_up()) {
    refused_ = "the replacement replica's output differs from what was already sent";
    return;
  }
  if (!id_.empty() && j.contains("id")) j["id"] = id_;
  Relayed(j);
  if (!name.empty()) out->append("event: ").append(name).append("\n");
  out->append("data: ").append(Dump(j)).append("\n\n");
}

void StreamSplicer::OnMatchedEvent(json& j, const std::string& event_name, std::string* out) {
  if (events_matched_ < log_.size()) {
    if (Normalized(j) != Normalized(log_[events_matched_])) {
      refused_ = "the replacement replica's output differs from what was already sent";
      return;
    }
    LearnIds(log_[events_matched_], j, &ids_);
    ++events_matched_;
    return;  // the client has this one
  }
  RewriteIds(&j, ids_);
  Relayed(j);
  ++events_matched_;  // the log grew by this event: the next one is new too
  if (!event_name.empty()) out->append("event: ").append(event_name).append("\n");
  out->append("data: ").append(Dump(j)).append("\n\n");
}

void StreamSplicer::OnTextChunk(json& j, const std::string& event, std::string* out) {
  json* choice = j["choices"].empty() ? nullptr : &j["choices"][0];
  json* text_field = choice ? TextField(*choice) : nullptr;
  std::string text = text_field ? text_field->get<std::string>() : "";
  const bool role = choice && choice->contains("delta") && (*choice)["delta"].contains("role");
  const bool finish = choice && choice->contains("finish_reason") && !(*choice)["finish_reason"].is_null();
  if (!replacing_) {
    if (id_.empty() && j.contains("id") && j["id"].is_string()) id_ = j["id"].get<std::string>();
    relayed_text_ += text;
    matched_ = relayed_text_.size();
    role_sent_ = role_sent_ || role;
    Relayed(j);
    out->append(event).append("\n\n");
    return;
  }
  if (!id_.empty() && j.contains("id")) j["id"] = id_;
  const size_t before = text.size();
  if (!text_caught_up() && !CatchUp(&text)) {
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
  Relayed(j);
  out->append("data: ").append(Dump(j)).append("\n\n");
}

}  // namespace pg
