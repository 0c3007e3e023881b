#include "server/anthropic/anthropic_cache_control.h"

#include <algorithm>

#include "server/core/request.h"

namespace pg {
namespace {

using json = nlohmann::ordered_json;

// Text that no template writes on its own; '~' sorts after letters, so a
// template that sorts keys still writes the marker key last.
constexpr const char* kMarker = "~~prosgrow-cache-breakpoint~~";

// Copies of (messages, tools) with the marker at the end of the block; a
// tool may need more than one try (templates render tools differently).
std::vector<std::pair<json, json>> MarkedVariants(const ApiRequest& api, const CacheBreakpoint& bp) {
  std::vector<std::pair<json, json>> out;
  auto add = [&](auto&& edit) {
    json messages = api.messages, tools = api.tools;
    if (edit(messages, tools)) out.emplace_back(std::move(messages), std::move(tools));
  };
  switch (bp.kind) {
    case CacheBreakpoint::Kind::kContent:
      add([&](json& m, json&) {
        if (bp.index >= m.size() || !m[bp.index]["content"].is_string()) return false;
        std::string c = m[bp.index]["content"].get<std::string>();
        m[bp.index]["content"] = c.insert(std::min(bp.offset, c.size()), kMarker);
        return true;
      });
      break;
    case CacheBreakpoint::Kind::kToolArguments:
      add([&](json& m, json&) {
        if (bp.index >= m.size() || !m[bp.index].contains("tool_calls")) return false;
        json& calls = m[bp.index]["tool_calls"];
        if (bp.call >= calls.size()) return false;
        calls[bp.call]["function"]["arguments"][kMarker] = kMarker;
        return true;
      });
      break;
    case CacheBreakpoint::Kind::kTool:
      for (int depth = 0; depth < 3; ++depth) {
        add([&](json&, json& t) {
          if (!t.is_array() || bp.index >= t.size()) return false;
          json* obj = &t[bp.index];
          if (depth >= 1) obj = &(*obj)["function"];
          if (depth >= 2) obj = &(*obj)["parameters"];
          if (!obj->is_object()) return false;
          (*obj)[kMarker] = kMarker;
          return true;
        });
      }
      break;
  }
  return out;
}

// How many of `prompt`'s tokens the text's first `bytes` bytes account for.
int64_t PrefixTokens(const Tokenizer& tok, const std::string& rendered, size_t bytes,
                     const std::vector<int32_t>& prompt) {
  std::vector<int32_t> prefix = EncodeChatText(tok, rendered.substr(0, bytes));
  size_t n = 0;
  while (n < prefix.size() && n < prompt.size() && prefix[n] == prompt[n]) ++n;
  return static_cast<int64_t>(n);
}

}  // namespace

std::vector<BreakpointPrefix> BreakpointPrefixes(const ChatPrompt& chat, const Tokenizer& tok, const ApiRequest& api,
                                                 const std::vector<CacheBreakpoint>& breakpoints,
                                                 const std::string& rendered, const std::vector<int32_t>& prompt) {
  std::vector<BreakpointPrefix> out;
  for (const CacheBreakpoint& bp : breakpoints) {
    BreakpointPrefix p;
    p.ttl_s = bp.ttl_s;
    for (auto& [messages, tools] : MarkedVariants(api, bp)) {
      Result<std::string> marked = chat.Render(messages, tools, api.template_kwargs);
      if (!marked.ok() || *marked == rendered) continue;
      auto [a, b] = std::mismatch(rendered.begin(), rendered.end(), marked->begin(), marked->end());
      p.tokens = PrefixTokens(tok, rendered, static_cast<size_t>(a - rendered.begin()), prompt);
      break;
    }
    out.push_back(p);
  }
  return out;
}

std::vector<KvHint> CacheHints(const std::vector<BreakpointPrefix>& prefixes) {
  std::vector<KvHint> hints;
  for (const BreakpointPrefix& p : prefixes) {
    if (p.tokens > 0) hints.push_back(KvHint{KvHint::Action::kRetain, p.tokens, p.ttl_s});
  }
  return hints;
}

AnthropicCacheUsage AccountCacheUsage(int64_t prompt_tokens, int64_t cached_tokens,
                                      const std::vector<BreakpointPrefix>& prefixes) {
  AnthropicCacheUsage u;
  u.cache_read_input_tokens = std::clamp<int64_t>(cached_tokens, 0, prompt_tokens);
  std::vector<BreakpointPrefix> sorted;
  for (const BreakpointPrefix& p : prefixes) {
    if (p.tokens > 0) sorted.push_back(p);
  }
  std::sort(sorted.begin(), sorted.end(), [](const auto& x, const auto& y) { return x.tokens < y.tokens; });
  int64_t covered = u.cache_read_input_tokens;  // tokens before this are read or already counted
  for (const BreakpointPrefix& p : sorted) {
    const int64_t end = std::min(p.tokens, prompt_tokens);
    if (end <= covered) continue;
    (p.ttl_s > 300 ? u.ephemeral_1h_input_tokens : u.ephemeral_5m_input_tokens) += end - covered;
    u.cache_creation_input_tokens += end - covered;
    covered = end;
  }
  u.input_tokens = prompt_tokens - u.cache_read_input_tokens - u.cache_creation_input_tokens;
  return u;
}

}  // namespace pg
