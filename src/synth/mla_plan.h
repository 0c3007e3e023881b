// The multi-head latent attention shapes of make-model (glm5-mini,
// deepseek-v3-mini): GLM-5.2's and DeepSeek-V3's proportions scaled to run
// on two cores, written as llama.cpp's glm-dsa and deepseek2 GGUFs (the keys
// and tensors of ../shared/fixtures/README.md's MLA files), each with one
// NextN (multi-token prediction) block after the trunk.
//
// Thread-safety: pure functions.
#pragma once

#include "synth/model_plan.h"

namespace pg {

ModelShape Glm5MiniShape();
ModelShape DeepseekV3MiniShape();

// Every tensor of an MLA plan (p->shape.is_mla()), in file order.
void AddMlaTensors(ModelPlan* p);
// The {arch}.* keys of an MLA plan (after the general.* ones).
void AddMlaMetadata(const ModelPlan& p, GgufWriter* w);

}  // namespace pg
