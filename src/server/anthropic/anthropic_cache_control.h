// Anthropic prompt caching on prosgrow's KV cache.
//
// A cache_control breakpoint asks to keep the prompt prefix that ends with
// its block. BreakpointPrefixes finds that prefix in prompt tokens: it
// renders the conversation a second time with a marker added at the end of
// the block (appended to the block's text; for a tool or a tool_use, an
// extra key at the end of its JSON object), takes the bytes on which the two
// renders agree (the rendered prompt up to the end of the block, whatever
// the template writes around it), tokenizes them and counts how many of the
// real prompt's tokens they share. A boundary token that merges across the
// end of the block is left out, so a prefix never claims more than the
// block. A block the template does not render has no prefix (-1).
// The handler passes each prefix on as KvHint{kRetain, tokens, ttl}.
//
// AccountCacheUsage splits the prompt the way Anthropic's usage does:
//   cache_read_input_tokens     = prompt tokens served from any KV tier
//   cache_creation_input_tokens = tokens up to the last breakpoint that were
//                                 not read from cache (written now), split by TTL
//   input_tokens                = the rest (prompt - read - creation)
// so the three sum to the prompt's length, as in Anthropic's API.
//
// Pure functions (Render is thread-safe); thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "server/anthropic/anthropic_request.h"
#include "server/core/chat_prompt.h"
#include "server/core/request.h"
#include "tokenizer/tokenizer.h"

namespace pg {

struct BreakpointPrefix {
  int64_t tokens = -1;  // prompt tokens up to the end of the block; -1 = the block is not rendered
  double ttl_s = 300;
};

// `rendered` is the prompt text and `prompt` its tokens (EncodeChatText).
std::vector<BreakpointPrefix> BreakpointPrefixes(const ChatPrompt& chat, const Tokenizer& tok, const ApiRequest& api,
                                                 const std::vector<CacheBreakpoint>& breakpoints,
                                                 const std::string& rendered, const std::vector<int32_t>& prompt);

// The KV hints for the prefixes that were found.
std::vector<KvHint> CacheHints(const std::vector<BreakpointPrefix>& prefixes);

struct AnthropicCacheUsage {
  int64_t input_tokens = 0;
  int64_t cache_read_input_tokens = 0;
  int64_t cache_creation_input_tokens = 0;
  int64_t ephemeral_5m_input_tokens = 0;  // cache_creation split by the breakpoints' TTL
  int64_t ephemeral_1h_input_tokens = 0;
};

AnthropicCacheUsage AccountCacheUsage(int64_t prompt_tokens, int64_t cached_tokens,
                                      const std::vector<BreakpointPrefix>& prefixes);

}  // namespace pg
