#include "server/openai/openai_response.h"

#include "base/utf8.h"
#include "server/core/cache_usage_json.h"
#include "server/core/json_text.h"

namespace pg {
namespace {

using json = nlohmann::json;

json BytesOf(const std::string& s) {
  json b = json::array();
  for (unsigned char c : s) b.push_back(static_cast<int>(c));
  return b;
}

// A token's piece as valid UTF-8: bytes of a partial character become
// U+FFFD (the exact bytes are in "bytes").
std::string PieceText(const Tokenizer& tok, int32_t id) {
  std::string piece = tok.TokenToPiece(id);
  if (IsValidUtf8(piece)) return piece;
  return json::parse(DumpJson(json(piece))).get<std::string>();
}

}  // namespace

json UsageJson(const GenerationResult& r) {
  json u = {{"prompt_tokens", r.prompt_tokens},
            {"completion_tokens", r.completion_tokens},
            {"total_tokens", r.prompt_tokens + r.completion_tokens},
            {"prompt_tokens_details",
             {{"cached_tokens", r.cache.cached_tokens}, {"cached_tokens_by_tier", CachedByTierJson(r.cache)}}}};
  AddSpecUsage(&u, r.spec);
  u["prompt_tokens_details"]["miss_reasons"] = MissReasonsJson(r.cache.miss);
  return u;
}

json ChatLogprobsJson(const std::vector<TokenEvent>& tokens, const Tokenizer& tok) {
  json content = json::array();
  for (const TokenEvent& t : tokens) {
    json top = json::array();
    for (const auto& [id, lp] : t.top) {
      top.push_back({{"token", PieceText(tok, id)}, {"logprob", lp}, {"bytes", BytesOf(tok.TokenToPiece(id))}});
    }
    content.push_back({{"token", PieceText(tok, t.token)},
                       {"logprob", t.logprob},
                       {"bytes", BytesOf(tok.TokenToPiece(t.token))},
                       {"top_logprobs", top}});
  }
  return {{"content", content}};
}

json CompletionLogprobsJson(const std::vector<TokenEvent>& tokens, const Tokenizer& tok, int64_t* offset) {
  json toks = json::array(), lps = json::array(), tops = json::array(), offs = json::array();
  for (const TokenEvent& t : tokens) {
    std::string piece = PieceText(tok, t.token);
    toks.push_back(piece);
    lps.push_back(t.logprob);
    json top = json::object();
    for (const auto& [id, lp] : t.top) top[PieceText(tok, id)] = lp;
    tops.push_back(top);
    offs.push_back(*offset);
    *offset += static_cast<int64_t>(tok.TokenToPiece(t.token).size());
  }
  return {{"tokens", toks}, {"token_logprobs", lps}, {"top_logprobs", tops}, {"text_offset", offs}};
}

json ToolCallsJson(const std::vector<ToolCall>& calls, bool with_index) {
  json out = json::array();
  for (size_t i = 0; i < calls.size(); ++i) {
    json c = {{"id", calls[i].id},
              {"type", "function"},
              {"function", {{"name", calls[i].name}, {"arguments", calls[i].arguments_json}}}};
    if (with_index) c["index"] = i;
    out.push_back(std::move(c));
  }
  return out;
}

json FullResponseJson(const ResponseHeader& h, const std::string& text, const std::vector<ToolCall>& tool_calls,
                      const std::string& finish_reason, const json& logprobs, const GenerationResult& result) {
  json choice = {{"index", 0}, {"finish_reason", finish_reason}, {"logprobs", logprobs}};
  if (h.chat) {
    json message = {{"role", "assistant"}};
    message["content"] = text.empty() && !tool_calls.empty() ? json(nullptr) : json(text);
    if (!tool_calls.empty()) message["tool_calls"] = ToolCallsJson(tool_calls, false);
    choice["message"] = std::move(message);
  } else {
    choice["text"] = text;
  }
  return {{"id", h.id},
          {"object", h.chat ? "chat.completion" : "text_completion"},
          {"created", h.created},
          {"model", h.model},
          {"system_fingerprint", "prosgrow"},
          {"choices", json::array({std::move(choice)})},
          {"usage", UsageJson(result)}};
}

json ChunkJson(const ResponseHeader& h, const json& delta, const std::string& finish_reason, const json& logprobs,
               bool with_usage_null) {
  json choice = {{"index", 0}, {"logprobs", logprobs}};
  choice["finish_reason"] = finish_reason.empty() ? json(nullptr) : json(finish_reason);
  if (h.chat) {
    choice["delta"] = delta;
  } else {
    choice["text"] =
        delta.is_object() && delta.contains("content") && delta["content"].is_string() ? delta["content"] : json("");
  }
  json chunk = {{"id", h.id},
                {"object", h.chat ? "chat.completion.chunk" : "text_completion"},
                {"created", h.created},
                {"model", h.model},
                {"system_fingerprint", "prosgrow"},
                {"choices", json::array({std::move(choice)})}};
  if (with_usage_null) chunk["usage"] = nullptr;
  return chunk;
}

json UsageChunkJson(const ResponseHeader& h, const GenerationResult& result) {
  return {{"id", h.id},
          {"object", h.chat ? "chat.completion.chunk" : "text_completion"},
          {"created", h.created},
          {"model", h.model},
          {"system_fingerprint", "prosgrow"},
          {"choices", json::array()},
          {"usage", UsageJson(result)}};
}

json SpecUsageJson(const SpecUsage& spec) {
  const double rate = spec.drafted ? static_cast<double>(spec.accepted) / static_cast<double>(spec.drafted) : 0.0;
  const double length = spec.steps ? 1.0 + static_cast<double>(spec.accepted) / static_cast<double>(spec.steps) : 0.0;
  return {{"steps", spec.steps},     {"drafted_tokens", spec.drafted}, {"accepted_tokens", spec.accepted},
          {"acceptance_rate", rate}, {"mean_accepted_length", length}, {"synthetic_acceptance", spec.synthetic}};
}

void AddSpecUsage(json* usage, const SpecUsage& spec) {
  if (spec.steps > 0 || spec.synthetic) (*usage)["speculative"] = SpecUsageJson(spec);
}

json SpeculativeModelJson(const ServiceInfo& info) {
  json j = {{"speculative", info.speculative.empty() ? json(nullptr) : json(info.speculative)},
            {"synthetic_acceptance", info.synthetic_acceptance_length > 0}};
  if (info.synthetic_acceptance_length > 0) j["synthetic_acceptance_length"] = info.synthetic_acceptance_length;
  return j;
}

std::string SyntheticAcceptanceHeaderValue(const ServiceInfo& info) {
  if (info.synthetic_acceptance_length <= 0) return "";
  return "benchmark-only; mean accepted length " + json(info.synthetic_acceptance_length).dump() +
         "; outputs are not the model's own";
}

}  // namespace pg
