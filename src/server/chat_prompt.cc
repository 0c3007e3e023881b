#include "server/chat_prompt.h"

#include "chat/chat_template.h"
#include "chat/tool_call_parser.h"

namespace pg {

struct ChatPrompt::Impl {
  ChatTemplate tmpl;
  ChatRenderOptions options;
};

ChatPrompt::~ChatPrompt() = default;

Result<std::unique_ptr<ChatPrompt>> ChatPrompt::Create(const ServiceInfo& info) {
  bool fallback = info.chat_template.empty();
  PG_ASSIGN_OR_RETURN(ChatTemplate tmpl, ChatTemplate::Parse(fallback ? DefaultChatTemplate() : info.chat_template));
  std::unique_ptr<ChatPrompt> p(new ChatPrompt());
  p->impl_ = std::make_unique<Impl>(Impl{std::move(tmpl), ChatRenderOptions{}});
  p->impl_->options.bos_token = info.bos_token;
  p->impl_->options.eos_token = info.eos_token;
  p->impl_->options.add_generation_prompt = true;
  p->fallback_ = fallback;
  p->tool_call_format_ = DetectToolCallFormat(fallback ? DefaultChatTemplate() : info.chat_template);
  return p;
}

Result<std::string> ChatPrompt::Render(const nlohmann::ordered_json& messages,
                                       const nlohmann::ordered_json& tools) const {
  return RenderChat(impl_->tmpl, messages, tools, impl_->options);
}

Result<std::string> ChatPrompt::Render(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& tools,
                                       bool add_generation_prompt,
                                       const nlohmann::ordered_json& template_kwargs) const {
  ChatRenderOptions options = impl_->options;
  options.add_generation_prompt = add_generation_prompt;
  return RenderChat(impl_->tmpl, messages, tools, options, template_kwargs);
}

AssistantOutput ChatPrompt::ParseToolCalls(std::string_view generated, const nlohmann::ordered_json& tools) const {
  ToolCallParseOptions opt;
  opt.format = tool_call_format_;
  opt.tools = tools;
  ParsedAssistant parsed = pg::ParseToolCalls(generated, opt);
  AssistantOutput out;
  out.content = std::move(parsed.content);
  for (ParsedToolCall& c : parsed.tool_calls) {
    out.tool_calls.push_back(ToolCall{NewResponseId("call_"), std::move(c.name), std::move(c.arguments_json)});
  }
  return out;
}

AssistantOutput ChatPrompt::ParseToolCalls(std::string_view generated) const {
  return ParseToolCalls(generated, nullptr);
}

}  // namespace pg
