#include "chat/hf_chat_config.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace pg {
namespace {

using json = nlohmann::json;

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return NotFound(path + ": cannot open");
  std::stringstream ss;
  ss << f.rdbuf();
  if (f.bad()) return Internal(path + ": read failed");
  return ss.str();
}

// A special token given as a string, an AddedToken object, or null.
Status TokenText(const json& j, const char* key, const std::string& name, std::optional<std::string>* out) {
  if (!j.contains(key) || j[key].is_null()) return Status::Ok();
  const json& v = j[key];
  if (v.is_string()) {
    *out = v.get<std::string>();
  } else if (v.is_object() && v.contains("content") && v["content"].is_string()) {
    *out = v["content"].get<std::string>();
  } else {
    return InvalidArgument(name + ": " + key + " is neither a string nor an AddedToken with a content");
  }
  return Status::Ok();
}

Status Flag(const json& j, const char* key, const std::string& name, std::optional<bool>* out) {
  if (!j.contains(key) || j[key].is_null()) return Status::Ok();
  if (!j[key].is_boolean()) return InvalidArgument(name + ": " + key + " is not a boolean");
  *out = j[key].get<bool>();
  return Status::Ok();
}

Result<ChatTemplate> ParseTemplate(const std::string& source, const std::string& where) {
  auto t = ChatTemplate::Parse(source);
  if (!t.ok()) return Status(t.status().code(), where + ": " + t.status().message());
  return t;
}

Status ReadTemplates(const json& j, const std::string& name, HfChatConfig* out) {
  if (!j.contains("chat_template") || j["chat_template"].is_null()) return Status::Ok();
  const json& ct = j["chat_template"];
  if (ct.is_string()) {
    PG_ASSIGN_OR_RETURN(out->chat_template, ParseTemplate(ct.get<std::string>(), name + ": chat_template"));
    return Status::Ok();
  }
  if (!ct.is_array()) return InvalidArgument(name + ": chat_template is neither a string nor a list");
  for (size_t i = 0; i < ct.size(); ++i) {
    const json& e = ct[i];
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string() || !e.contains("template") ||
        !e["template"].is_string()) {
      return InvalidArgument(name + ": chat_template[" + std::to_string(i) + "] is not {name, template}");
    }
    const std::string tname = e["name"].get<std::string>();
    const std::string source = e["template"].get<std::string>();
    PG_ASSIGN_OR_RETURN(ChatTemplate t, ParseTemplate(source, name + ": chat_template '" + tname + "'"));
    if (tname == "default") out->chat_template = t;
    out->named_templates.emplace_back(tname, source);
  }
  return Status::Ok();
}

}  // namespace

Result<HfChatConfig> ParseHfTokenizerConfig(const std::string& text, const std::string& name) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgument(name + ": not a JSON object");
  HfChatConfig out;
  PG_RETURN_IF_ERROR(ReadTemplates(j, name, &out));
  PG_RETURN_IF_ERROR(TokenText(j, "bos_token", name, &out.bos_token));
  PG_RETURN_IF_ERROR(TokenText(j, "eos_token", name, &out.eos_token));
  PG_RETURN_IF_ERROR(TokenText(j, "unk_token", name, &out.unk_token));
  PG_RETURN_IF_ERROR(TokenText(j, "pad_token", name, &out.pad_token));
  PG_RETURN_IF_ERROR(Flag(j, "add_bos_token", name, &out.add_bos_token));
  PG_RETURN_IF_ERROR(Flag(j, "add_eos_token", name, &out.add_eos_token));
  return out;
}

Result<HfChatConfig> LoadHfChatConfig(const std::string& dir) {
  namespace fs = std::filesystem;
  HfChatConfig out;
  const std::string config = (fs::path(dir) / "tokenizer_config.json").string();
  if (fs::exists(config)) {
    PG_ASSIGN_OR_RETURN(std::string text, ReadFile(config));
    PG_ASSIGN_OR_RETURN(out, ParseHfTokenizerConfig(text, config));
  }
  const std::string jinja = (fs::path(dir) / "chat_template.jinja").string();
  if (fs::exists(jinja)) {
    PG_ASSIGN_OR_RETURN(std::string source, ReadFile(jinja));
    PG_ASSIGN_OR_RETURN(out.chat_template, ParseTemplate(source, jinja));
  }
  return out;
}

ChatRenderOptions HfRenderOptions(const HfChatConfig& config) {
  ChatRenderOptions opt;
  opt.bos_token = config.bos_token.value_or("");
  opt.eos_token = config.eos_token.value_or("");
  return opt;
}

}  // namespace pg
