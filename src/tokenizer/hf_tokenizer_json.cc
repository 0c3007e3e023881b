// tokenizer.json -> Tokenizer: the BPE model, the added tokens and the ids
// around them; the pipeline steps come from hf_components.cc.
#include <fstream>
#include <limits>
#include <sstream>

#include "tokenizer/hf_components.h"
#include "tokenizer/hf_tokenizer.h"
#include "tokenizer/tokenizer_impl.h"

namespace pg {
namespace {

using json = nlohmann::json;

// Token ids beyond this are refused rather than allocated (the largest real
// vocabularies are a few hundred thousand).
constexpr int64_t kMaxTokenId = int64_t{1} << 24;

struct HfModel {
  std::vector<std::string> tokens;  // by id; "" where the vocab has no entry
  std::vector<uint8_t> defined;     // by id
  std::vector<std::pair<std::string, std::string>> merges;
  bool ignore_merges = false, byte_fallback = false, fuse_unk = false;
  std::optional<std::string> unk_token;
};

bool NonEmptyString(const json& m, const char* key) {
  return m.contains(key) && m[key].is_string() && !m[key].get<std::string>().empty();
}

Status ParseMerges(const json& merges, HfModel* out) {
  if (merges.is_null()) return Status::Ok();
  if (!merges.is_array()) return InvalidArgument("model.merges is not an array");
  out->merges.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const json& m = merges[i];
    if (m.is_string()) {
      const std::string s = m.get<std::string>();
      const size_t sp = s.find(' ');
      if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos) {
        return InvalidArgument("model.merges[" + std::to_string(i) + "] is not of the form 'left right'");
      }
      out->merges.emplace_back(s.substr(0, sp), s.substr(sp + 1));
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      out->merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
    } else {
      return InvalidArgument("model.merges[" + std::to_string(i) + "] is neither 'left right' nor [left, right]");
    }
  }
  return Status::Ok();
}

Status ParseModel(const json& m, HfModel* out) {
  if (!m.is_object()) return InvalidArgument("model is missing");
  const std::string type = m.value("type", std::string("BPE"));  // old files leave BPE's type out
  if (type != "BPE") return Unimplemented("model.type '" + type + "' is not supported (only BPE)");
  if (m.contains("dropout") && !m["dropout"].is_null() && m["dropout"].get<double>() != 0.0) {
    return Unimplemented("model.dropout is not supported");
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (NonEmptyString(m, key)) return Unimplemented(std::string("model.") + key + " is not supported");
  }
  if (!m.contains("vocab") || !m["vocab"].is_object()) return InvalidArgument("model.vocab is not an object");
  for (const auto& [text, id_json] : m["vocab"].items()) {
    if (!id_json.is_number_integer() || id_json.get<int64_t>() < 0 || id_json.get<int64_t>() >= kMaxTokenId) {
      return InvalidArgument("model.vocab['" + text + "'] is not an id in [0, 2^24)");
    }
    const auto id = static_cast<size_t>(id_json.get<int64_t>());
    if (id >= out->tokens.size()) {
      out->tokens.resize(id + 1);
      out->defined.resize(id + 1, 0);
    }
    if (out->defined[id]) return InvalidArgument("model.vocab: id " + std::to_string(id) + " is given twice");
    out->tokens[id] = text;
    out->defined[id] = 1;
  }
  if (out->tokens.empty()) return InvalidArgument("model.vocab is empty");
  PG_RETURN_IF_ERROR(ParseMerges(Field(m, "merges"), out));
  out->ignore_merges = m.value("ignore_merges", false);
  out->byte_fallback = m.value("byte_fallback", false);
  out->fuse_unk = m.value("fuse_unk", false);
  if (NonEmptyString(m, "unk_token")) out->unk_token = m["unk_token"].get<std::string>();
  return Status::Ok();
}

Status ParseAddedTokens(const json& a, std::vector<HfAddedToken>* out) {
  if (a.is_null()) return Status::Ok();
  if (!a.is_array()) return InvalidArgument("added_tokens is not an array");
  for (size_t i = 0; i < a.size(); ++i) {
    const json& t = a[i];
    if (!t.is_object() || !t.contains("id") || !t["id"].is_number_integer() || t["id"].get<int64_t>() < 0 ||
        t["id"].get<int64_t>() >= kMaxTokenId || !t.contains("content") || !t["content"].is_string() ||
        t["content"].get<std::string>().empty()) {
      return InvalidArgument("added_tokens[" + std::to_string(i) +
                             "] needs an id in [0, 2^24) and a non-empty content");
    }
    HfAddedToken tok;
    tok.id = t["id"].get<int32_t>();
    tok.content = t["content"].get<std::string>();
    tok.special = t.value("special", false);
    tok.lstrip = t.value("lstrip", false);
    tok.rstrip = t.value("rstrip", false);
    tok.normalized = t.value("normalized", !tok.special);
    tok.single_word = t.value("single_word", false);
    out->push_back(std::move(tok));
  }
  return Status::Ok();
}

// The id of a token named by tokenizer_config.json.
Status NamedId(const std::optional<std::string>& text, const char* what, const Tokenizer& t, int32_t* id) {
  if (!text.has_value()) return Status::Ok();
  auto found = t.FindToken(*text);
  if (!found) return InvalidArgument(std::string(what) + " '" + *text + "' is not a token of the vocabulary");
  *id = *found;
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<Tokenizer>> Tokenizer::Impl::FromHfJson(const json& j, const HfSpecialTokens& sp) {
  if (!j.is_object()) return InvalidArgument("not a JSON object");
  HfModel model;
  PG_RETURN_IF_ERROR(ParseModel(Field(j, "model"), &model));
  auto hf = std::make_unique<HfPipeline>();
  PG_RETURN_IF_ERROR(ParseAddedTokens(Field(j, "added_tokens"), &hf->added));
  PG_RETURN_IF_ERROR(ParseNormalizer(Field(j, "normalizer"), &hf->normalizers));
  PG_RETURN_IF_ERROR(ParsePreTokenizer(Field(j, "pre_tokenizer"), &hf->pre_tokenizers));
  PG_RETURN_IF_ERROR(ParseDecoder(Field(j, "decoder"), &hf->decoders));
  HfPostProcess post;
  PG_RETURN_IF_ERROR(ParsePostProcessor(Field(j, "post_processor"), &post));
  hf->byte_level = !hf->pre_tokenizers.empty() && hf->pre_tokenizers.back().kind == HfPreTokenizer::Kind::kByteLevel;
  hf->byte_fallback = model.byte_fallback;
  hf->fuse_unk = model.fuse_unk;

  std::unique_ptr<Tokenizer> t(new Tokenizer());
  Impl& impl = *t->impl_;
  t->model_ = "bpe";
  t->pre_ = "tokenizer.json";
  // Ids: the model's vocab, then the added tokens (which win where both name an id).
  size_t n = model.tokens.size();
  for (const HfAddedToken& a : hf->added) n = std::max(n, static_cast<size_t>(a.id) + 1);
  t->tokens_ = model.tokens;
  t->tokens_.resize(n);
  t->types_.assign(n, TokenType::kUnused);
  impl.model_index.reserve(model.tokens.size());
  for (size_t id = 0; id < model.tokens.size(); ++id) {
    if (!model.defined[id]) continue;
    impl.model_index.emplace(model.tokens[id], static_cast<int32_t>(id));
    const bool byte = model.byte_fallback && model.tokens[id].size() == 6 && model.tokens[id].rfind("<0x", 0) == 0;
    t->types_[id] = byte ? TokenType::kByte : TokenType::kNormal;
  }
  for (HfAddedToken& a : hf->added) {
    t->tokens_[a.id] = a.content;
    t->types_[a.id] = a.special ? TokenType::kControl : TokenType::kUserDefined;
    impl.index[a.content] = a.id;
    a.match = a.normalized ? hf->Normalize(a.content) : a.content;
  }
  impl.index.reserve(n);
  for (const auto& [text, id] : impl.model_index) impl.index.emplace(text, id);
  impl.scores.assign(n, 0.0f);

  if (model.unk_token) PG_RETURN_IF_ERROR(NamedId(model.unk_token, "model.unk_token", *t, &t->unk_id_));
  hf->unk_id = t->unk_id_;
  if (post.bos_id) t->bos_id_ = *post.bos_id;
  if (post.eos_id) t->eos_id_ = *post.eos_id;
  t->add_bos_ = post.bos_id.has_value();
  t->add_eos_ = post.eos_id.has_value();
  PG_RETURN_IF_ERROR(NamedId(sp.bos_token, "bos_token", *t, &t->bos_id_));
  PG_RETURN_IF_ERROR(NamedId(sp.eos_token, "eos_token", *t, &t->eos_id_));
  PG_RETURN_IF_ERROR(NamedId(sp.pad_token, "pad_token", *t, &t->pad_id_));
  if (sp.unk_token) PG_RETURN_IF_ERROR(NamedId(sp.unk_token, "unk_token", *t, &t->unk_id_));
  for (int32_t id : {t->bos_id_, t->eos_id_}) {
    if (id >= static_cast<int32_t>(n))
      return OutOfRange("post_processor names id " + std::to_string(id) + " outside the vocabulary");
  }
  t->add_bos_ = sp.add_bos.value_or(t->add_bos_);
  t->add_eos_ = sp.add_eos.value_or(t->add_eos_);
  if (t->add_bos_ && t->bos_id_ < 0) return InvalidArgument("add_bos_token is true but there is no BOS token");
  if (t->add_eos_ && t->eos_id_ < 0) return InvalidArgument("add_eos_token is true but there is no EOS token");

  // End of generation by token text, as for GGUF; the token types stay as the file says.
  const std::vector<TokenType> types = t->types_;
  DeriveEogAndControl(*t);
  t->types_ = types;
  for (int64_t id : sp.eog_ids) {
    if (id < 0 || id >= static_cast<int64_t>(n))
      return OutOfRange("eos_token_id " + std::to_string(id) + " is outside the vocabulary");
    t->eog_[static_cast<size_t>(id)] = 1;
  }
  t->strip_.assign(n, 0);

  PG_ASSIGN_OR_RETURN(impl.bpe, BpeModel::BuildFromPairs(t->tokens_, impl.model_index, model.merges,
                                                         PreTokenizerKind::kDefault, model.ignore_merges));
  hf->bpe = impl.bpe.get();
  hf->Finish();
  impl.hf = std::move(hf);
  return t;
}

Result<std::unique_ptr<Tokenizer>> TokenizerFromJsonText(const std::string& text, const HfSpecialTokens& specials,
                                                         const std::string& name) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgument(name + ": not valid JSON");
  // The readers check the fields they branch on; a value of the wrong JSON
  // type elsewhere (a string where a number belongs, ...) surfaces as
  // nlohmann's type_error, which becomes the error here.
  Result<std::unique_ptr<Tokenizer>> t = InvalidArgument("");
  try {
    t = Tokenizer::Impl::FromHfJson(j, specials);
  } catch (const json::exception& e) {
    return InvalidArgument(name + ": a field has the wrong JSON type (" + e.what() + ")");
  }
  if (!t.ok()) return Status(t.status().code(), name + ": " + t.status().message());
  return t;
}

Result<std::unique_ptr<Tokenizer>> LoadTokenizerJson(const std::string& path, const HfSpecialTokens& specials) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return NotFound(path + ": cannot open");
  std::stringstream ss;
  ss << f.rdbuf();
  if (f.bad()) return Internal(path + ": read failed");
  return TokenizerFromJsonText(ss.str(), specials, path);
}

}  // namespace pg
