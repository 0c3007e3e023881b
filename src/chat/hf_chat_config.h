// The chat template and special-token texts of a Hugging Face model
// directory: tokenizer_config.json (`chat_template` as a string or as a list
// of {name, template}; `bos_token` / `eos_token` / `unk_token` / `pad_token`
// as strings or AddedToken objects; `add_bos_token` / `add_eos_token`) and
// chat_template.jinja, which, when present, replaces the config's default
// template as it does in transformers.
//
// The tokenizer side (src/tokenizer/hf_tokenizer.h) takes the token texts as
// HfSpecialTokens; the fields here carry the same names.
// Thread-safety: plain data.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "chat/chat_template.h"

namespace pg {

struct HfChatConfig {
  // The template used for chat: chat_template.jinja, else the config's string,
  // else its template named "default". Absent when the directory has none
  // (a list without "default" sets only named_templates: no guess is made).
  std::optional<ChatTemplate> chat_template;
  // Every template of the list form, in file order (name, source).
  std::vector<std::pair<std::string, std::string>> named_templates;
  std::optional<std::string> bos_token, eos_token, unk_token, pad_token;
  std::optional<bool> add_bos_token, add_eos_token;
};

// Reads DIR/tokenizer_config.json and DIR/chat_template.jinja, each if present.
// Errors (unreadable file, bad JSON, a field of the wrong type, a template
// that does not parse) are one line naming the file and the field.
Result<HfChatConfig> LoadHfChatConfig(const std::string& dir);

// tokenizer_config.json's text; `name` is used in error messages.
Result<HfChatConfig> ParseHfTokenizerConfig(const std::string& text, const std::string& name);

// The bos_token / eos_token a template sees ("" when the config has none).
ChatRenderOptions HfRenderOptions(const HfChatConfig& config);

}  // namespace pg
