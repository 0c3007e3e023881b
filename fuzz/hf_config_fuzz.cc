// libFuzzer target for config.json (model/hf_model_config.h): arbitrary bytes
// through the bounded JSON parser and the config reader; a config it accepts
// must satisfy the invariants the model relies on, and its tensor list
// (model/hf_tensor_names.h) must have the shapes those imply.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/bounded_json.h"
#include "model/hf_model_config.h"
#include "model/hf_tensor_names.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nlohmann::json j;
  const pg::JsonParseError e =
      pg::ParseBoundedJson(std::string_view(reinterpret_cast<const char*>(data), size), 16, &j);
  if (e.kind != pg::JsonParseError::Kind::kNone || !j.is_object()) return 0;
  (void)pg::HfQuantMethod(j, "config.json");
  (void)pg::HfModelDtype(j, "config.json");
  if (auto q = pg::HfFp8ConfigOf(j, "config.json"); !q.ok() && q.status().message().find('\n') != std::string::npos)
    __builtin_trap();
  auto c = pg::ModelConfigFromHf(j, "config.json", "fuzz");
  if (!c.ok()) {
    if (c.status().message().find('\n') != std::string::npos) __builtin_trap();  // errors are one line
    return 0;
  }
  if (c->n_head % c->n_head_kv != 0 || c->n_rot > c->head_dim || c->n_rot <= 0 || c->n_embd <= 0) __builtin_trap();
  if (c->is_moe() && (c->moe.n_expert_used > c->moe.n_expert || c->moe.n_dense_lead > c->n_layer)) __builtin_trap();
  // The tensor list grows with layers x experts; keep each run small.
  if (c->n_layer * (1 + c->moe.n_expert) > 4096) return 0;
  for (const pg::HfTensorName& t : pg::HfTensorNames(*c)) {
    if (t.hf.empty() || t.shape.empty()) __builtin_trap();
    for (int64_t d : t.shape)
      if (d <= 0) __builtin_trap();
  }
  return 0;
}
