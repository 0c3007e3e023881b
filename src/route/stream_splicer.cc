#include "route/stream_splicer.h"

#include <initializer_list>

namespace pg {
namespace {

using json = nlohmann::json;

// Fields two replicas of one model may fill differently for the same answer
// (logprobs: they belong to a chunk's tokens, and chunking differs).
bool Volatile(const std::string& key) {
  return key == "id" || key == "created" || key == "usage" || key == "system_fingerprint" || key == "logprobs";
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
    if (k == "id" && v.is_string() && r->is_string())
      (*ids)[r->get<std::string>()] = v.get<std::string>();
    else
      LearnIds(v, *r, ids);
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

// The string fields of `j` named in `names`, appended to *found.
void StringFields(json& j, std::initializer_list<const char*> names, std::vector<json*>* found) {
  if (!j.is_object()) return;
  for (const char* n : names)
    if (auto it = j.find(n); it != j.end() && it->is_string()) found->push_back(&*it);
}

// The streamed strings of an event: Anthropic's content_block_delta text,
// partial_json or thinking; OpenAI's choice-0 text, delta content,
// reasoning_content or one tool call's arguments.
std::vector<json*> StreamedFields(json& j, bool anthropic) {
  std::vector<json*> found;
  if (anthropic) {
    if (j.value("type", "") == "content_block_delta" && j.contains("delta"))
      StringFields(j["delta"], {"text", "partial_json", "thinking"}, &found);
    return found;
  }
  if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].size() != 1) return found;
  json& c = j["choices"][0];
  StringFields(c, {"text"}, &found);
  if (!c.is_object() || !c.contains("delta") || !c["delta"].is_object()) return found;
  json& d = c["delta"];
  StringFields(d, {"content", "reasoning_content"}, &found);
  if (d.contains("tool_calls") && d["tool_calls"].is_array() && d["tool_calls"].size() == 1) {
    json& call = d["tool_calls"][0];
    if (call.is_object() && call.contains("function")) StringFields(call["function"], {"arguments"}, &found);
  }
  return found;
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
  if (dialect_ == Dialect::kResponses && refused_.empty())
    refused_ = "a Responses stream is not continued on another replica";
  if (!refused_.empty() || finished_ || done_) return false;
  replacing_ = true;
  run_ = 0, matched_ = 0, entered_ = false;
  ids_.clear();
  return true;
}

std::string StreamSplicer::ErrorEvent(const std::string& message) const {
  if (dialect_ == Dialect::kAnthropic) {
    json e = {{"type", "error"}, {"error", {{"type", "api_error"}, {"message", message}}}};
    return "event: error\ndata: " + Dump(e) + "\n\n";
  }
  if (dialect_ == Dialect::kResponses) {
    json e = {{"type", "error"}, {"code", "replica_lost"}, {"message", message}, {"param", nullptr}};
    return "event: error\ndata: " + Dump(e) + "\n\n";
  }
  json e = {{"error", {{"message", message}, {"type", "server_error"}, {"code", "replica_lost"}}}};
  return "data: " + Dump(e) + "\n\n";
}

std::string StreamSplicer::EndEvent() const {
  if (dialect_ == Dialect::kAnthropic) return "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
  return "data: [DONE]\n\n";
}

void StreamSplicer::Relayed(const json& j) {
  json copy = j;
  json* streamed = nullptr;
  std::string skeleton = Skeleton(copy, &streamed);
  std::string text = streamed ? streamed->get<std::string>() : "";
  if (!runs_.empty() && runs_.back().skeleton == skeleton) {
    runs_.back().text += text;
  } else {
    runs_.push_back(Run{std::move(skeleton), std::move(text), j});
  }
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
  if (replacing_) return OnReplacementEvent(j, name, out);
  Relayed(j);
  out->append(event).append("\n\n");
}

std::string StreamSplicer::Skeleton(json& j, json** streamed) const {
  std::vector<json*> fields = StreamedFields(j, dialect_ == Dialect::kAnthropic);
  *streamed = fields.size() == 1 ? fields[0] : nullptr;  // several: all part of the skeleton
  if (*streamed == nullptr) return Dump(Normalized(j));
  std::string text = (*streamed)->get<std::string>();
  **streamed = "";
  std::string skeleton = Dump(Normalized(j));
  **streamed = std::move(text);
  return skeleton;
}

void StreamSplicer::OnReplacementEvent(json& j, const std::string& event_name, std::string* out) {
  json* streamed = nullptr;
  const std::string skeleton = Skeleton(j, &streamed);
  std::string text = streamed ? streamed->get<std::string>() : "";
  while (run_ < runs_.size()) {
    Run& r = runs_[run_];
    if (r.skeleton != skeleton) {
      if (!entered_ || matched_ < r.text.size()) {
        refused_ = "the replacement replica's output differs from what was already sent";
        return;
      }
      ++run_, matched_ = 0, entered_ = false;  // the client has all of this run
      continue;
    }
    if (!entered_) LearnIds(r.first, j, &ids_);
    entered_ = true;
    const std::string_view rest = std::string_view(r.text).substr(matched_);
    if (rest.substr(0, text.size()) == text) {  // the client has this event's part
      matched_ += text.size();
      return;
    }
    // Only the last run may go on past what the client has.
    if (std::string_view(text).substr(0, rest.size()) != rest || run_ + 1 < runs_.size()) {
      refused_ = "the replacement replica's output differs from what was already sent";
      return;
    }
    text.erase(0, rest.size());
    *streamed = text;
    if (dialect_ == Dialect::kOpenAi && j["choices"][0].contains("logprobs"))
      j["choices"][0]["logprobs"] = nullptr;  // they were for the whole chunk
    break;
  }
  RewriteIds(&j, ids_);
  Relayed(j);
  run_ = runs_.size() - 1, matched_ = runs_.back().text.size(), entered_ = true;
  if (!event_name.empty()) out->append("event: ").append(event_name).append("\n");
  out->append("data: ").append(Dump(j)).append("\n\n");
}

}  // namespace pg
