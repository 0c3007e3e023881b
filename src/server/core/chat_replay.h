// How a conversation is replayed through a chat template that cannot take
// it as sent (issue 24): parallel tool calls serialised into successive
// turns, and the turn a template refuses found and named.
//
//   SerializeParallelToolCalls: an assistant turn with N > 1 tool_calls and
//   the N tool results after it become N (assistant with one call, its
//   result) pairs, in call order; the turn's text stays on the first. This
//   is what `serve --serialize-parallel-tool-calls` does before rendering,
//   for templates such as Llama 3.1's that raise on parallel calls.
//
//   ExplainTemplateError: when rendering fails, the shortest prefix of the
//   conversation that fails is found (binary search over prefixes, so about
//   log2(N) renders, on the error path only) and the message names that
//   turn, its role and tool-call count, the template's own words, and the
//   way out where there is one.
//
// Pure functions; thread-safe.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"

namespace pg {

nlohmann::ordered_json SerializeParallelToolCalls(const nlohmann::ordered_json& messages);

// `render` renders a message list (the same tools and options as the failed
// call); `error` is what the whole conversation gave.
std::string ExplainTemplateError(const nlohmann::ordered_json& messages, const Status& error,
                                 const std::function<Status(const nlohmann::ordered_json&)>& render);

}  // namespace pg
