#include "server/core/chat_prompt.h"

#include "chat/chat_template.h"
#include "chat/tool_call_format.h"
#include "server/core/chat_replay.h"
#include "tokenizer/tokenizer.h"

namespace pg {

struct ChatPrompt::Impl {
  ChatTemplate tmpl;
  ChatRenderOptions options;
  ChatPromptOptions prompt_options;

  // Every Render goes through here: the replay transformation, then the
  // template; a template error names the turn it refuses.
  Result<std::string> Render(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& tools,
                             const ChatRenderOptions& opt, const nlohmann::ordered_json& extra) const {
    const nlohmann::ordered_json replayed = prompt_options.serialize_parallel_tool_calls && messages.is_array()
                                                ? SerializeParallelToolCalls(messages)
                                                : messages;
    Result<std::string> text = RenderChat(tmpl, replayed, tools, opt, extra);
    if (text.ok() || !replayed.is_array() || text.status().code() != StatusCode::kInvalidArgument) return text;
    return InvalidArgument(ExplainTemplateError(replayed, text.status(), [&](const nlohmann::ordered_json& m) {
      return RenderChat(tmpl, m, tools, opt, extra).status();
    }));
  }
};

ChatPrompt::~ChatPrompt() = default;

Result<std::unique_ptr<ChatPrompt>> ChatPrompt::Create(const ServiceInfo& info, ChatPromptOptions options) {
  bool fallback = info.chat_template.empty();
  PG_ASSIGN_OR_RETURN(ChatTemplate tmpl, ChatTemplate::Parse(fallback ? DefaultChatTemplate() : info.chat_template));
  std::unique_ptr<ChatPrompt> p(new ChatPrompt());
  p->impl_ = std::make_unique<Impl>(Impl{std::move(tmpl), ChatRenderOptions{}, options});
  p->impl_->options.bos_token = info.bos_token;
  p->impl_->options.eos_token = info.eos_token;
  p->impl_->options.add_generation_prompt = true;
  p->fallback_ = fallback;
  p->thinking_switch_ = !fallback && info.chat_template.find("enable_thinking") != std::string::npos;
  p->tool_call_format_ = DetectToolCallFormat(fallback ? DefaultChatTemplate() : info.chat_template);
  return p;
}

Result<std::string> ChatPrompt::Render(const nlohmann::ordered_json& messages,
                                       const nlohmann::ordered_json& tools) const {
  return impl_->Render(messages, tools, impl_->options, nullptr);
}

Result<std::string> ChatPrompt::Render(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& tools,
                                       const nlohmann::ordered_json& extra) const {
  return impl_->Render(messages, tools, impl_->options, extra);
}

Result<std::string> ChatPrompt::Render(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& tools,
                                       bool add_generation_prompt,
                                       const nlohmann::ordered_json& template_kwargs) const {
  ChatRenderOptions options = impl_->options;
  options.add_generation_prompt = add_generation_prompt;
  return impl_->Render(messages, tools, options, template_kwargs);
}

std::vector<int32_t> EncodeChatText(const Tokenizer& tok, const std::string& text) {
  std::vector<int32_t> prompt = tok.Encode(text, /*add_special=*/true, /*parse_special=*/true);
  // Templates usually write the BOS text themselves; do not double it.
  if (prompt.size() >= 2 && tok.bos_id() >= 0 && prompt[0] == tok.bos_id() && prompt[1] == tok.bos_id()) {
    prompt.erase(prompt.begin());
  }
  return prompt;
}

}  // namespace pg
