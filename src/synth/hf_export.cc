#include "synth/hf_export.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gguf/gguf_file.h"
#include "hf/safetensors_writer.h"
#include "model/hf_tensor_names.h"
#include "model/model_config.h"
#include "synth/hf_fp8_export.h"

namespace pg {
namespace {

using nlohmann::ordered_json;

Result<SafeDtype> DtypeOf(const GgufTensorInfo& t) {
  switch (t.type) {
    case GgmlType::BF16: return SafeDtype::kBF16;
    case GgmlType::F16: return SafeDtype::kF16;
    case GgmlType::F32: return SafeDtype::kF32;
    default:
      return InvalidArgument("hf export: tensor " + t.name + " is " + TypeName(t.type) +
                             "; a safetensors checkpoint holds F32, F16 or BF16");
  }
}

const char* HfDtype(GgmlType t) {
  return t == GgmlType::BF16 ? "bfloat16" : t == GgmlType::F16 ? "float16" : "float32";
}

ordered_json ConfigJson(const GgufFile& f, const ModelConfig& c) {
  static const std::map<std::string, std::pair<const char*, const char*>> kTypes = {
      {"llama", {"llama", "LlamaForCausalLM"}},
      {"qwen2", {"qwen2", "Qwen2ForCausalLM"}},
      {"qwen3", {"qwen3", "Qwen3ForCausalLM"}},
      {"qwen3moe", {"qwen3_moe", "Qwen3MoeForCausalLM"}},
      {"glm4moe", {"glm4_moe", "Glm4MoeForCausalLM"}}};
  const auto& [type, cls] = kTypes.at(c.arch);
  ordered_json j;
  j["architectures"] = {cls};
  j["model_type"] = type;
  j["vocab_size"] = c.n_vocab;
  j["hidden_size"] = c.n_embd;
  j["num_hidden_layers"] = c.n_layer;
  j["num_attention_heads"] = c.n_head;
  j["num_key_value_heads"] = c.n_head_kv;
  j["head_dim"] = c.head_dim;
  if (c.n_ff > 0) j["intermediate_size"] = c.n_ff;
  j["max_position_embeddings"] = c.n_ctx_train;
  j["rms_norm_eps"] = static_cast<double>(c.rms_eps);
  j["rope_theta"] = static_cast<double>(c.rope_base);
  j["tie_word_embeddings"] = c.tied_embeddings;
  j["torch_dtype"] = HfDtype(f.FindTensor("token_embd.weight")->type);
  if (c.rope_scale_factor > 0)
    j["rope_scaling"] = {{"rope_type", "llama3"},
                         {"factor", static_cast<double>(c.rope_scale_factor)},
                         {"low_freq_factor", static_cast<double>(c.rope_low_freq_factor)},
                         {"high_freq_factor", static_cast<double>(c.rope_high_freq_factor)},
                         {"original_max_position_embeddings", c.rope_orig_ctx}};
  const MoeConfig& m = c.moe;
  if (c.arch == "qwen3moe" || c.arch == "glm4moe") {  // the routed experts, under each model type's count key
    j[c.arch == "qwen3moe" ? "num_experts" : "n_routed_experts"] = m.n_expert;
    j["num_experts_per_tok"] = m.n_expert_used;
    j["moe_intermediate_size"] = m.n_ff_exp;
  }
  if (c.arch == "qwen3moe") {
    j["norm_topk_prob"] = true;
    j["decoder_sparse_step"] = 1;
    j["mlp_only_layers"] = ordered_json::array();
  } else if (c.arch == "glm4moe") {
    j["n_shared_experts"] = m.n_shared;
    j["first_k_dense_replace"] = m.n_dense_lead;
    j["norm_topk_prob"] = m.norm_weights;
    j["routed_scaling_factor"] = m.weights_scale > 0 ? static_cast<double>(m.weights_scale) : 1.0;
    j["n_group"] = 1;
    j["topk_group"] = 1;
    j["num_nextn_predict_layers"] = 0;
    j["partial_rotary_factor"] = static_cast<double>(c.n_rot) / static_cast<double>(c.head_dim);
    j["attention_bias"] = f.FindTensor("blk.0.attn_q.bias") != nullptr;
    j["use_qk_norm"] = f.FindTensor("blk.0.attn_q_norm.weight") != nullptr;
  }
  return j;
}

// The FP8 checkpoint tensors of one model tensor: per part the E4M3 weight
// and its weight_scale_inv.
Status SplitFp8(const GgufTensorInfo& t, const HfTensorName& n, std::vector<SafeTensorOut>* out) {
  for (size_t e = 0; e < n.hf.size(); ++e) {
    PG_ASSIGN_OR_RETURN(Fp8Part p, QuantizeHfPart(t, n, e));
    out->push_back({n.hf[e], SafeDtype::kF8_E4M3, n.shape, std::move(p.fp8)});
    const std::vector<int64_t> sshape = {(n.shape[0] + 127) / 128, (n.shape[1] + 127) / 128};
    const auto* sb = reinterpret_cast<const uint8_t*>(p.scales.data());
    out->push_back({n.hf[e] + "_scale_inv", SafeDtype::kF32, sshape, {sb, sb + p.scales.size() * 4}});
  }
  return Status::Ok();
}

// The checkpoint tensors of one model tensor (one per expert for a stack).
Status Split(const GgufFile& f, const HfTensorName& n, bool fp8, std::vector<SafeTensorOut>* out) {
  const GgufTensorInfo* t = f.FindTensor(n.gguf);
  if (t == nullptr) {
    if (n.optional) return Status::Ok();
    return InvalidArgument(f.path() + ": hf export: missing tensor " + n.gguf);
  }
  PG_ASSIGN_OR_RETURN(SafeDtype dtype, DtypeOf(*t));
  if (fp8 && HfExportsAsFp8(n)) return SplitFp8(*t, n, out);
  const uint64_t part = t->n_bytes / n.hf.size();
  for (size_t e = 0; e < n.hf.size(); ++e) {
    SafeTensorOut o{n.hf[e], dtype, n.shape, {}};
    const uint8_t* src = t->data + e * part;
    o.bytes.resize(part);
    if (n.rope_heads > 0) {
      const int64_t rows = n.shape[0];
      HfRopeRows(src, o.bytes.data(), n.rope_heads, rows / n.rope_heads, part / static_cast<uint64_t>(rows),
                 /*to_gguf=*/false);
    } else {
      std::copy(src, src + part, o.bytes.begin());
    }
    out->push_back(std::move(o));
  }
  return Status::Ok();
}

Status WriteJson(const std::string& path, const ordered_json& j) {
  std::ofstream o(path);
  o << j.dump(2) << "\n";
  return o ? Status::Ok() : IoError(path + ": write failed");
}

// tokenizer.json of a byte-level BPE GGUF vocabulary with Qwen2's
// pre-tokenizer (the builtin vocabulary's): GGUF keeps the tokens in the same
// byte-to-unicode spelling as Hugging Face's vocab, and the merges as "a b".
// Other vocabularies get none (false).
Result<bool> WriteTokenizerJson(const GgufFile& f, const std::string& path) {
  if (f.GetStringOr("tokenizer.ggml.model", "") != "gpt2" || f.GetStringOr("tokenizer.ggml.pre", "") != "qwen2")
    return false;
  PG_ASSIGN_OR_RETURN(std::vector<std::string> tokens, f.GetStringArray("tokenizer.ggml.tokens"));
  PG_ASSIGN_OR_RETURN(std::vector<std::string> merges, f.GetStringArray("tokenizer.ggml.merges"));
  auto type_ids = f.GetIntArray("tokenizer.ggml.token_type");
  const std::vector<int64_t> types = type_ids.ok() ? *type_ids : std::vector<int64_t>{};
  ordered_json added = ordered_json::array(), vocab = ordered_json::object();
  for (size_t i = 0; i < tokens.size(); ++i) {
    vocab[tokens[i]] = i;
    if (i < types.size() && types[i] == 3)  // control
      added.push_back({{"id", i},
                       {"content", tokens[i]},
                       {"single_word", false},
                       {"lstrip", false},
                       {"rstrip", false},
                       {"normalized", false},
                       {"special", true}});
  }
  const ordered_json byte_level = {
      {"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}};
  // Qwen2's split regex (its tokenizer.json's Split pattern).
  const char* regex =
      "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
      "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  ordered_json j;
  j["version"] = "1.0";
  j["truncation"] = nullptr;
  j["padding"] = nullptr;
  j["added_tokens"] = added;
  j["normalizer"] = {{"type", "NFC"}};
  j["pre_tokenizer"] = {
      {"type", "Sequence"},
      {"pretokenizers",
       {{{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", "Isolated"}, {"invert", false}},
        byte_level}}};
  j["post_processor"] = byte_level;
  j["decoder"] = byte_level;
  j["model"] = {{"type", "BPE"},
                {"dropout", nullptr},
                {"unk_token", nullptr},
                {"continuing_subword_prefix", ""},
                {"end_of_word_suffix", ""},
                {"fuse_unk", false},
                {"byte_fallback", false},
                {"ignore_merges", false},
                {"vocab", vocab},
                {"merges", merges}};
  PG_RETURN_IF_ERROR(WriteJson(path, j));
  return true;
}

Status WriteSideFiles(const GgufFile& f, const std::string& dir) {
  ordered_json gen = {{"_from", "prosgrow make-model"}};
  if (f.Find("tokenizer.ggml.bos_token_id")) gen["bos_token_id"] = f.GetIntOr("tokenizer.ggml.bos_token_id", 0);
  if (f.Find("tokenizer.ggml.eos_token_id")) gen["eos_token_id"] = f.GetIntOr("tokenizer.ggml.eos_token_id", 0);
  PG_RETURN_IF_ERROR(WriteJson(dir + "/generation_config.json", gen));
  ordered_json tc = ordered_json::object();
  const std::string tmpl = f.GetStringOr("tokenizer.chat_template", "");
  if (!tmpl.empty()) tc["chat_template"] = tmpl;
  auto tokens = f.GetStringArray("tokenizer.ggml.tokens");
  for (const auto& [key, field] :
       {std::pair{"tokenizer.ggml.bos_token_id", "bos_token"}, std::pair{"tokenizer.ggml.eos_token_id", "eos_token"}}) {
    const int64_t id = f.GetIntOr(key, -1);
    if (tokens.ok() && id >= 0 && id < static_cast<int64_t>(tokens->size()))
      tc[field] = (*tokens)[static_cast<size_t>(id)];
  }
  PG_RETURN_IF_ERROR(WriteJson(dir + "/tokenizer_config.json", tc));
  return WriteTokenizerJson(f, dir + "/tokenizer.json").status();
}

}  // namespace

Status ExportHfDir(const GgufFile& f, const std::string& dir, const HfExportOptions& options) {
  PG_ASSIGN_OR_RETURN(ModelConfig c, ModelConfig::FromGguf(f));
  if (options.shards < 1 || options.shards > 99) return InvalidArgument("hf export: shards must be in [1, 99]");
  if (c.mla.enabled) return InvalidArgument("hf export: " + c.arch + " (MLA) files are not exported");
  std::vector<SafeTensorOut> all;
  for (const HfTensorName& n : HfTensorNames(c)) PG_RETURN_IF_ERROR(Split(f, n, options.fp8, &all));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return IoError(dir + ": cannot create: " + ec.message());
  ordered_json config = ConfigJson(f, c);
  if (options.fp8)
    config["quantization_config"] = {
        {"quant_method", "fp8"}, {"fmt", "e4m3"}, {"activation_scheme", "dynamic"}, {"weight_block_size", {128, 128}}};
  PG_RETURN_IF_ERROR(WriteJson(dir + "/config.json", config));
  PG_RETURN_IF_ERROR(WriteSideFiles(f, dir));
  if (options.shards == 1) return WriteSafetensors(dir + "/model.safetensors", all, {{"format", "pt"}});
  // Tensors dealt round-robin: a stack's experts land in different shards.
  const int n = options.shards;
  std::vector<std::vector<SafeTensorOut>> shards(static_cast<size_t>(n));
  ordered_json map = ordered_json::object();
  uint64_t total = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    const std::string file = fmt::format("model-{:05d}-of-{:05d}.safetensors", i % n + 1, n);
    map[all[i].name] = file;
    total += all[i].bytes.size();
    shards[i % n].push_back(std::move(all[i]));
  }
  for (int s = 0; s < n; ++s)
    PG_RETURN_IF_ERROR(WriteSafetensors(fmt::format("{}/model-{:05d}-of-{:05d}.safetensors", dir, s + 1, n),
                                        shards[static_cast<size_t>(s)], {{"format", "pt"}}));
  return WriteJson(dir + "/model.safetensors.index.json", {{"metadata", {{"total_size", total}}}, {"weight_map", map}});
}

}  // namespace pg
