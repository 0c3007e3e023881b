// HfDir: a Hugging Face model directory, opened in place:
//
//   config.json                        architecture and hyperparameters (required)
//   model.safetensors                  the tensors, or
//   model.safetensors.index.json       {"weight_map": {tensor: shard file}} + the shards
//   generation_config.json             EOS ids, default sampling (optional)
//   tokenizer_config.json              chat_template, bos/eos tokens (optional)
//   chat_template.jinja                chat template (optional; wins over tokenizer_config's)
//   tokenizer.json                     the tokenizer (read by the tokenizer module)
//
// Open() reads and checks all of it before returning: every shard the index
// names is mapped and every tensor it lists is in its shard, so nothing starts
// half-loaded. The JSON files are parsed with a depth bound (bounded_json.h).
// Errors are one line naming the file and the field.
//
// Thread-safety: immutable after Open(); safe to share across threads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "hf/safetensors_file.h"

namespace pg {

// generation_config.json: the fields prosgrow uses (absent: unset).
// The sampling fields (temperature, top_p, top_k, min_p, repetition_penalty)
// are range-checked as a request's are; do_sample and max_new_tokens are not
// read.
struct HfGenerationConfig {
  std::vector<int64_t> eos_token_ids;  // eos_token_id: an int or a list
  std::optional<int64_t> bos_token_id;
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::optional<int64_t> top_k;
  std::optional<double> min_p;
  std::optional<double> repetition_penalty;
};

class HfDir {
 public:
  static Result<std::unique_ptr<HfDir>> Open(const std::string& dir);

  const std::string& path() const { return dir_; }
  // config.json, parsed (an object).
  const nlohmann::json& config() const { return config_; }
  // Every tensor of every shard by name.
  const SafeTensor* Find(const std::string& name) const;
  const std::map<std::string, const SafeTensor*>& tensors() const { return tensors_; }
  // The shard file that holds `name` (for messages); "" if none.
  std::string ShardOf(const std::string& name) const;
  uint64_t total_bytes() const;  // of all shards
  // SafetensorsFile::DropPages on the tensor `name`'s shard (no-op if none).
  void DropPages(const std::string& name) const;

  const HfGenerationConfig& generation() const { return generation_; }
  const std::string& chat_template() const { return chat_template_; }  // "" if none
  const std::string& bos_token() const { return bos_token_; }          // tokenizer_config.json; "" if none
  const std::string& eos_token() const { return eos_token_; }
  std::string tokenizer_json_path() const { return dir_ + "/tokenizer.json"; }

 private:
  HfDir() = default;
  Status OpenShards();
  Status AddShard(const std::string& file);
  Status ReadGenerationConfig();
  Status ReadTokenizerConfig();

  std::string dir_;
  nlohmann::json config_;
  std::vector<std::unique_ptr<SafetensorsFile>> shards_;
  std::map<std::string, const SafeTensor*> tensors_;
  std::map<std::string, size_t> shard_of_;  // tensor -> index into shards_
  HfGenerationConfig generation_;
  std::string chat_template_, bos_token_, eos_token_;
};

// Reads a small JSON file (at most `max_bytes`) with a depth bound. NotFound
// if it does not exist; Corrupt naming the file if it does not parse.
Result<nlohmann::json> ReadJsonFile(const std::string& path, size_t max_bytes = 64u << 20);

}  // namespace pg
