#include "model/hf_model_source.h"

#include <fmt/format.h>

#include <cstring>
#include <filesystem>

#include "backend/cpu/fp8_weights.h"
#include "hf/error_text.h"
#include "model/hf_fp8_tensor.h"
#include "model/hf_model_config.h"
#include "model/hf_tensor_names.h"
#include "tokenizer/hf_tokenizer.h"
#include "tokenizer/tokenizer.h"

namespace pg {
namespace {

GgmlType GgmlOf(SafeDtype t) {
  switch (t) {
    case SafeDtype::kBF16: return GgmlType::BF16;
    case SafeDtype::kF16: return GgmlType::F16;
    default: return GgmlType::F32;
  }
}

// config.json's dtype name of a safetensors dtype.
const char* HfDtypeName(SafeDtype t) {
  switch (t) {
    case SafeDtype::kBF16: return "bfloat16";
    case SafeDtype::kF16: return "float16";
    case SafeDtype::kF32: return "float32";
    default: return "float8_e4m3fn";
  }
}

}  // namespace

Result<std::unique_ptr<HfModelSource>> HfModelSource::Open(const std::string& dir) {
  std::unique_ptr<HfModelSource> s(new HfModelSource());
  PG_ASSIGN_OR_RETURN(s->dir_, HfDir::Open(dir));
  PG_RETURN_IF_ERROR(s->ReadConfig());
  const std::string file = s->dir_->path() + "/config.json";
  PG_ASSIGN_OR_RETURN(std::string dtype, HfModelDtype(s->dir_->config(), file));
  for (const HfTensorName& t : HfTensorNames(s->config_)) PG_RETURN_IF_ERROR(s->AddTensor(t, dtype));
  return s;
}

Status HfModelSource::ReadConfig() {
  const HfDir& d = *dir_;
  const std::string file = d.path() + "/config.json";
  PG_ASSIGN_OR_RETURN(std::string quant, HfQuantMethod(d.config(), file));
  if (quant == "fp8") {
    PG_ASSIGN_OR_RETURN(fp8_, HfFp8ConfigOf(d.config(), file));
  }
  const std::string name = std::filesystem::path(d.path()).filename().string();
  PG_ASSIGN_OR_RETURN(config_, ModelConfigFromHf(d.config(), file, name));
  config_.tied_embeddings = d.Find("lm_head.weight") == nullptr;
  const nlohmann::json& j = d.config();
  const bool tie = j.contains("tie_word_embeddings") && j["tie_word_embeddings"].is_boolean() &&
                   j["tie_word_embeddings"].get<bool>();
  if (config_.tied_embeddings && !tie)
    return InvalidArgument(d.path() +
                           ": tensor lm_head.weight is missing and config.json tie_word_embeddings is not true");
  return Status::Ok();
}

Status HfModelSource::AddTensor(const HfTensorName& t, const std::string& dtype) {
  const HfDir& d = *dir_;
  std::vector<const SafeTensor*> parts;
  for (const std::string& n : t.hf) {
    const SafeTensor* p = d.Find(n);
    if (p == nullptr) {
      if (t.optional && parts.empty() && n == t.hf[0]) return Status::Ok();
      return NotFound(d.path() + ": tensor " + n + " is missing (config.json " + config_.arch + " needs it)");
    }
    const std::string where = d.ShardOf(n) + ": tensor " + n;
    if (p->shape != t.shape)
      return InvalidArgument(where + " has shape " + ShapeText(p->shape) + ", config.json makes " + ShapeText(t.shape));
    const bool fp8 = p->dtype == SafeDtype::kF8_E4M3;
    if (fp8 && !fp8_) return Unimplemented(where + " is F8_E4M3 and config.json has no fp8 quantization_config");
    if (t.at_model_dtype && !fp8 && !dtype.empty() && dtype != HfDtypeName(p->dtype))
      return InvalidArgument(where + " is " + SafeDtypeName(p->dtype) + ", config.json dtype is " + dtype);
    if (!parts.empty() && p->dtype != parts[0]->dtype)
      return InvalidArgument(where + " is " + SafeDtypeName(p->dtype) + ", expert 0 is " +
                             SafeDtypeName(parts[0]->dtype));
    parts.push_back(p);
  }
  TensorInfo info;
  info.name = t.gguf;
  info.type = GgmlOf(parts[0]->dtype);
  info.dims.assign(parts[0]->shape.rbegin(), parts[0]->shape.rend());  // GGUF ne order
  info.offset = parts[0]->offset;
  info.data = parts[0]->data;
  info.n_bytes = parts[0]->n_bytes * parts.size();
  if (parts.size() > 1) info.dims.push_back(static_cast<int64_t>(parts.size()));
  if (parts[0]->dtype == SafeDtype::kF8_E4M3) {
    PG_RETURN_IF_ERROR(PackFp8(parts, &info));
  } else if (parts.size() > 1) {
    bool adjacent = true;  // experts back to back in one mapping: read in place
    for (size_t e = 1; e < parts.size(); ++e)
      adjacent = adjacent && parts[e]->data == parts[0]->data + e * parts[0]->n_bytes;
    if (!adjacent) {
      std::vector<uint8_t>& buf = owned_.emplace_back(info.n_bytes);
      for (size_t e = 0; e < parts.size(); ++e)
        std::memcpy(buf.data() + e * parts[0]->n_bytes, parts[e]->data, parts[0]->n_bytes);
      info.data = buf.data();
    }
  }
  if (t.rope_heads > 0) {
    const int64_t rows = t.shape[0];
    std::vector<uint8_t>& buf = owned_.emplace_back(info.n_bytes);
    HfRopeRows(info.data, buf.data(), t.rope_heads, rows / t.rope_heads,
               static_cast<size_t>(info.n_bytes / static_cast<uint64_t>(rows)), /*to_gguf=*/true);
    info.data = buf.data();
  }
  index_[info.name] = tensors_.size();
  tensors_.push_back(std::move(info));
  return Status::Ok();
}

Status HfModelSource::PackFp8(const std::vector<const SafeTensor*>& parts, TensorInfo* info) {
  const SafeTensor& w = *parts[0];
  if (w.shape.size() != 2)
    return InvalidArgument(dir_->ShardOf(w.name) + ": tensor " + w.name + " is F8_E4M3 but not a matrix");
  const size_t one = Fp8PackedBytes(w.shape[0], w.shape[1]);
  std::vector<uint8_t>& buf = owned_.emplace_back(one * parts.size());
  for (size_t e = 0; e < parts.size(); ++e) {
    PG_RETURN_IF_ERROR(PackHfFp8Tensor(*dir_, *parts[e], *fp8_, buf.data() + e * one));
    dir_->DropPages(parts[e]->name);  // the packed copy is what the model reads: ~1.06 bytes per weight resident
  }
  info->type = GgmlType::FP8_E4M3;
  info->data = buf.data();
  info->n_bytes = buf.size();
  return Status::Ok();
}

bool HfModelSource::Owns(const void* p) const {
  const auto* b = static_cast<const uint8_t*>(p);
  for (const std::vector<uint8_t>& o : owned_)
    if (!o.empty() && b >= o.data() && b < o.data() + o.size()) return true;
  return false;
}

const TensorInfo* HfModelSource::FindTensor(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

SamplingDefaults HfModelSource::sampling_defaults() const {
  const HfGenerationConfig& g = dir_->generation();
  return {g.temperature, g.top_p, g.top_k, g.min_p, g.repetition_penalty};
}

// tokenizer.json with tokenizer_config.json's bos / eos texts, and
// generation_config.json's eos_token_id as further end-of-generation tokens.
Result<std::unique_ptr<Tokenizer>> HfModelSource::LoadTokenizer() const {
  HfSpecialTokens specials;
  if (!dir_->bos_token().empty()) specials.bos_token = dir_->bos_token();
  if (!dir_->eos_token().empty()) specials.eos_token = dir_->eos_token();
  specials.eog_ids = dir_->generation().eos_token_ids;
  return LoadTokenizerJson(dir_->tokenizer_json_path(), specials);
}

}  // namespace pg
