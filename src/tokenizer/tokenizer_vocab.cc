// Tokenizer <-> VocabData: reading the tokenizer.ggml.* metadata
// (ReadVocab, FromGguf), building and checking a Tokenizer from it
// (FromVocab and its steps), and writing it back (WriteVocab, ToVocabData).
#include <algorithm>
#include <cctype>
#include <limits>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "tokenizer/tokenizer_impl.h"

namespace pg {
namespace {

bool OneOf(const std::string& s, std::initializer_list<const char*> list) {
  for (const char* x : list) {
    if (s == x) return true;
  }
  return false;
}

// Texts llama.cpp recognises as end-of-turn / fill-in-the-middle / end of
// generation tokens when the metadata does not name them.
const std::initializer_list<const char*> kEotTexts = {"<|eot_id|>",
                                                      "<|im_end|>",
                                                      "<|end|>",
                                                      "<end_of_turn>",
                                                      "<|endoftext|>",
                                                      "<|end_of_text|>",
                                                      "<EOT>",
                                                      "_<EOT>",
                                                      "<\xEF\xBD\x9C"
                                                      "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>",
                                                      "<end_of_utterance>"};
const std::initializer_list<const char*> kFimEogTexts = {  // fim pad / repo / file separator
    "<|fim_pad|>",   "<fim-pad>",  "<fim_pad>", "<PAD>",      "<|fim_repo|>",
    "<|repo_name|>", "<fim-repo>", "<REPO>",    "<reponame>", "<|file_sep|>"};
const std::initializer_list<const char*> kFimOtherTexts = {
    "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<PRE>", "\xE2\x96\x81<PRE>",
    "<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<SUF>", "\xE2\x96\x81<SUF>",
    "<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<MID>", "\xE2\x96\x81<MID>"};
const std::initializer_list<const char*> kEogTexts = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>",        "<end_of_turn>",      "<|endoftext|>",
    "</s>",       "<|eom_id|>", "<EOT>",   "_<EOT>",     "<|end_of_text|>", "<end_of_utterance>", "<eos>"};

// st, its message after the file's path.
Status InFile(const GgufFile& file, const Status& st) { return Status(st.code(), file.path() + ": " + st.message()); }

// The value at `key` by the getter `get` (&GgufFile::GetInt, ...): nullopt
// when the key is absent, an error naming the file when it cannot be read.
template <class T>
Result<std::optional<T>> IfPresent(const GgufFile& file, const char* key,
                                   Result<T> (GgufFile::*get)(const std::string&) const) {
  if (file.Find(key) == nullptr) return std::optional<T>();
  Result<T> r = (file.*get)(key);
  if (!r.ok()) return InFile(file, r.status());
  return std::optional<T>(std::move(r).value());
}

}  // namespace

Result<VocabData> Tokenizer::ReadVocab(const GgufFile& file) {
  VocabData v;
  if (file.Find("tokenizer.ggml.model") == nullptr) {
    return NotFound(file.path() + ": no tokenizer metadata (tokenizer.ggml.model is missing)");
  }
  auto model = file.GetString("tokenizer.ggml.model");
  if (!model.ok()) return InFile(file, model.status());
  v.model = *model;
  v.pre = file.GetStringOr("tokenizer.ggml.pre", "");
  v.name = file.GetStringOr("general.name", "");
  auto tokens = file.GetStringArray("tokenizer.ggml.tokens");
  if (!tokens.ok()) return InFile(file, tokens.status());
  v.tokens = std::move(tokens).value();
  PG_ASSIGN_OR_RETURN(auto scores, IfPresent(file, "tokenizer.ggml.scores", &GgufFile::GetFloatArray));
  if (scores) v.scores.assign(scores->begin(), scores->end());
  PG_ASSIGN_OR_RETURN(auto types, IfPresent(file, "tokenizer.ggml.token_type", &GgufFile::GetIntArray));
  if (types) {
    v.token_types.reserve(types->size());
    for (int64_t t : *types) {
      v.token_types.push_back(t >= 0 && t <= 6 ? static_cast<int32_t>(t) : 0);
    }
  }
  PG_ASSIGN_OR_RETURN(auto merges, IfPresent(file, "tokenizer.ggml.merges", &GgufFile::GetStringArray));
  if (merges) v.merges = std::move(*merges);
  struct IdKey {
    const char* key;
    std::optional<int32_t>* dst;
  } ids[] = {{"tokenizer.ggml.bos_token_id", &v.bos_id},
             {"tokenizer.ggml.eos_token_id", &v.eos_id},
             {"tokenizer.ggml.unknown_token_id", &v.unk_id},
             {"tokenizer.ggml.padding_token_id", &v.pad_id},
             {"tokenizer.ggml.eot_token_id", &v.eot_id}};
  for (const IdKey& k : ids) {
    PG_ASSIGN_OR_RETURN(std::optional<int64_t> id, IfPresent(file, k.key, &GgufFile::GetInt));
    if (!id) continue;
    if (*id < 0 || *id >= static_cast<int64_t>(v.tokens.size())) {
      return OutOfRange(file.path() + ": " + k.key + " = " + std::to_string(*id) + " is outside the vocabulary of " +
                        std::to_string(v.tokens.size()) + " tokens");
    }
    *k.dst = static_cast<int32_t>(*id);
  }
  struct BoolKey {
    const char* key;
    std::optional<bool>* dst;
  } flags[] = {{"tokenizer.ggml.add_bos_token", &v.add_bos},
               {"tokenizer.ggml.add_eos_token", &v.add_eos},
               {"tokenizer.ggml.add_space_prefix", &v.add_space_prefix}};
  for (const BoolKey& k : flags) {
    PG_ASSIGN_OR_RETURN(*k.dst, IfPresent(file, k.key, &GgufFile::GetBool));
  }
  return v;
}

Result<std::unique_ptr<Tokenizer>> Tokenizer::FromGguf(const GgufFile& file) {
  PG_ASSIGN_OR_RETURN(VocabData v, ReadVocab(file));
  auto tok = FromVocab(v);
  if (!tok.ok()) return Status(tok.status().code(), file.path() + ": " + tok.status().message());
  return tok;
}

namespace {

// The checks on VocabData that need no tokenizer: model name, array lengths.
Status ValidateVocab(const VocabData& v, bool spm) {
  if (!spm && v.model != "gpt2") {
    return InvalidArgument("unsupported tokenizer model '" + v.model + "' (expected gpt2 or llama)");
  }
  const size_t n = v.tokens.size();
  if (n == 0) return InvalidArgument("tokenizer.ggml.tokens is empty");
  if (n > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return InvalidArgument("tokenizer.ggml.tokens has too many tokens");
  }
  if (!v.scores.empty() && v.scores.size() != n) {
    return InvalidArgument("tokenizer.ggml.scores has " + std::to_string(v.scores.size()) +
                           " entries but tokenizer.ggml.tokens has " + std::to_string(n));
  }
  if (!v.token_types.empty() && v.token_types.size() != n) {
    return InvalidArgument("tokenizer.ggml.token_type has " + std::to_string(v.token_types.size()) +
                           " entries but tokenizer.ggml.tokens has " + std::to_string(n));
  }
  if (!spm && v.merges.empty()) return InvalidArgument("gpt2 tokenizer without tokenizer.ggml.merges");
  return Status::Ok();
}

// An explicit special id must be in [0, n); an absent one takes def when def
// is in range, else -1.
Status ResolveSpecialId(const std::optional<int32_t>& given, int32_t def, const char* what, size_t n, int32_t* out) {
  if (given.has_value()) {
    if (*given < 0 || *given >= static_cast<int32_t>(n)) {
      return OutOfRange(std::string(what) + " = " + std::to_string(*given) + " is outside the vocabulary of " +
                        std::to_string(n) + " tokens");
    }
    *out = *given;
  } else {
    *out = def >= 0 && def < static_cast<int32_t>(n) ? def : -1;
  }
  return Status::Ok();
}

}  // namespace

// Token texts, types, the text -> id index and scores.
Status Tokenizer::Impl::LoadTokens(const VocabData& v, Tokenizer& t) {
  Impl& impl = *t.impl_;
  const size_t n = v.tokens.size();
  t.model_ = v.model;
  t.pre_ = v.pre;
  t.tokens_ = v.tokens;
  t.types_.resize(n, TokenType::kNormal);
  impl.index.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (t.tokens_[i].empty()) t.tokens_[i] = "[EMPTY_" + std::to_string(i) + "]";  // as llama.cpp
    if (!impl.index.emplace(t.tokens_[i], static_cast<int32_t>(i)).second) {
      return InvalidArgument("duplicate token in vocabulary: id " + std::to_string(i) + " repeats id " +
                             std::to_string(impl.index[t.tokens_[i]]));
    }
    if (!v.token_types.empty()) {
      const int32_t ty = v.token_types[i];
      t.types_[i] = ty >= 0 && ty <= 6 ? static_cast<TokenType>(ty) : TokenType::kUndefined;
    }
  }
  impl.scores = v.scores;
  impl.scores.resize(n, 0.0f);
  return Status::Ok();
}

// Special ids: explicit ones must be valid; absent ones take llama.cpp's
// per-model default when that default is in range. Then the add_bos/eos flags.
Status Tokenizer::Impl::ResolveSpecials(const VocabData& v, bool spm, const PreTokenizerRecipe& pre_spec,
                                        Tokenizer& t) {
  const size_t n = v.tokens.size();
  const int32_t default_bos = spm ? 1 : (pre_spec.no_default_bos ? -1 : 11);
  PG_RETURN_IF_ERROR(ResolveSpecialId(v.bos_id, default_bos, "bos_token_id", n, &t.bos_id_));
  PG_RETURN_IF_ERROR(ResolveSpecialId(v.eos_id, spm ? 2 : 11, "eos_token_id", n, &t.eos_id_));
  PG_RETURN_IF_ERROR(ResolveSpecialId(v.unk_id, spm ? 0 : -1, "unknown_token_id", n, &t.unk_id_));
  PG_RETURN_IF_ERROR(ResolveSpecialId(v.pad_id, -1, "padding_token_id", n, &t.pad_id_));
  PG_RETURN_IF_ERROR(ResolveSpecialId(v.eot_id, -1, "eot_token_id", n, &t.eot_id_));

  t.add_bos_ = v.add_bos.value_or(spm || pre_spec.add_bos);
  t.add_eos_ = v.add_eos.value_or(false);
  t.add_space_prefix_ = spm && v.add_space_prefix.value_or(true);
  if (t.add_bos_ && t.bos_id_ < 0) return InvalidArgument("add_bos_token is true but there is no BOS token");
  if (t.add_eos_ && t.eos_id_ < 0) return InvalidArgument("add_eos_token is true but there is no EOS token");
  return Status::Ok();
}

// End-of-generation set and control-looking tokens, as llama.cpp derives
// them from token text when the metadata does not say.
void Tokenizer::Impl::DeriveEogAndControl(Tokenizer& t) {
  const size_t n = t.tokens_.size();
  t.eog_.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const std::string& text = t.tokens_[i];
    bool force_control = false;
    if (OneOf(text, kEotTexts)) {
      if (t.eot_id_ < 0) t.eot_id_ = static_cast<int32_t>(i);
      force_control = true;
    }
    if (OneOf(text, kFimEogTexts)) {
      t.eog_[i] = 1;
      force_control = true;
    }
    if (OneOf(text, kFimOtherTexts) || text == "<|eom_id|>") force_control = true;
    if (OneOf(text, kEogTexts)) {
      t.eog_[i] = 1;
      force_control = true;
    }
    if (force_control && t.types_[i] != TokenType::kControl) t.types_[i] = TokenType::kControl;
  }
  if (t.eos_id_ >= 0) t.eog_[t.eos_id_] = 1;
  if (t.eot_id_ >= 0) t.eog_[t.eot_id_] = 1;
}

// Control, user-defined and unknown tokens, longest text first.
void Tokenizer::Impl::CollectSpecialIds(Tokenizer& t) {
  Impl& impl = *t.impl_;
  for (size_t i = 0; i < t.tokens_.size(); ++i) {
    const TokenType ty = t.types_[i];
    if (ty == TokenType::kControl || ty == TokenType::kUserDefined || ty == TokenType::kUnknown) {
      impl.special_ids.push_back(static_cast<int32_t>(i));
    }
  }
  std::stable_sort(impl.special_ids.begin(), impl.special_ids.end(),
                   [&](int32_t a, int32_t b) { return t.tokens_[a].size() > t.tokens_[b].size(); });
}

// llama.cpp's per-model token attributes (GGUF does not carry them).
void Tokenizer::Impl::SetStripAttributes(const std::string& model_name, Tokenizer& t) {
  t.strip_.assign(t.tokens_.size(), 0);
  std::string lname = model_name;
  for (char& ch : lname) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (lname.find("phi-3") != std::string::npos || lname.find("phi3") != std::string::npos) {
    for (int32_t id : t.impl_->special_ids) t.strip_[id] |= kStripRight;
    if (auto id = t.FindToken("</s>")) t.strip_[*id] |= kStripRight;
    for (const char* s : {"<unk>", "<s>", "<|endoftext|>"}) {
      if (auto id = t.FindToken(s)) t.strip_[*id] &= static_cast<uint8_t>(~kStripRight);
    }
  }
}

Result<std::unique_ptr<Tokenizer>> Tokenizer::FromVocab(const VocabData& v) {
  const bool spm = v.model == "llama";
  PG_RETURN_IF_ERROR(ValidateVocab(v, spm));

  // The pre-tokenizer (BPE only; llama.cpp ignores tokenizer.ggml.pre for SPM)
  // also sets llama.cpp's per-name defaults.
  PreTokenizerRecipe pre_spec;
  if (!spm) {
    PG_ASSIGN_OR_RETURN(pre_spec, PreTokenizerFromName(v.pre));
  }

  std::unique_ptr<Tokenizer> t(new Tokenizer());
  PG_RETURN_IF_ERROR(Impl::LoadTokens(v, *t));
  PG_RETURN_IF_ERROR(Impl::ResolveSpecials(v, spm, pre_spec, *t));
  Impl::DeriveEogAndControl(*t);
  Impl::CollectSpecialIds(*t);
  Impl::SetStripAttributes(v.name, *t);

  Impl& impl = *t->impl_;
  if (spm) {
    impl.spm = std::make_unique<SpmModel>(impl.scores, impl.index, t->unk_id_);
  } else {
    PG_ASSIGN_OR_RETURN(impl.bpe,
                        BpeModel::Build(t->tokens_, impl.index, v.merges, pre_spec.kind, pre_spec.ignore_merges));
  }
  return t;
}

void WriteVocab(const VocabData& v, GgufWriter* w) {
  w->SetString("tokenizer.ggml.model", v.model);
  if (!v.pre.empty()) w->SetString("tokenizer.ggml.pre", v.pre);
  w->SetStringArray("tokenizer.ggml.tokens", v.tokens);
  if (!v.scores.empty()) w->SetF32Array("tokenizer.ggml.scores", v.scores);
  if (!v.token_types.empty()) w->SetI32Array("tokenizer.ggml.token_type", v.token_types);
  if (!v.merges.empty()) w->SetStringArray("tokenizer.ggml.merges", v.merges);
  const std::pair<const char*, const std::optional<int32_t>*> ids[] = {{"tokenizer.ggml.bos_token_id", &v.bos_id},
                                                                       {"tokenizer.ggml.eos_token_id", &v.eos_id},
                                                                       {"tokenizer.ggml.unknown_token_id", &v.unk_id},
                                                                       {"tokenizer.ggml.padding_token_id", &v.pad_id},
                                                                       {"tokenizer.ggml.eot_token_id", &v.eot_id}};
  for (const auto& [key, id] : ids) {
    if (id->has_value()) w->SetU32(key, static_cast<uint32_t>(**id));
  }
  if (v.add_bos.has_value()) w->SetBool("tokenizer.ggml.add_bos_token", *v.add_bos);
  if (v.add_eos.has_value()) w->SetBool("tokenizer.ggml.add_eos_token", *v.add_eos);
  if (v.add_space_prefix.has_value()) w->SetBool("tokenizer.ggml.add_space_prefix", *v.add_space_prefix);
}

VocabData ToVocabData(const BpeTrainResult& r) {
  VocabData v;
  v.model = "gpt2";
  v.pre = "qwen2";
  v.tokens = r.tokens;
  v.token_types = r.token_types;
  v.merges = r.merges;
  v.add_bos = false;
  v.add_eos = false;
  for (size_t i = 0; i < r.token_types.size(); ++i) {
    if (r.token_types[i] == static_cast<int32_t>(TokenType::kControl)) {
      v.bos_id = v.eos_id = static_cast<int32_t>(i);
      break;
    }
  }
  return v;
}

}  // namespace pg
