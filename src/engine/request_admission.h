// Whether the engine can serve a request at all, checked when it is
// submitted (before it is queued): a non-empty prompt of in-vocabulary ids
// that leaves room for one new token in the context, max_tokens >= 1, and a
// prompt + max_tokens (capped at the context) that one sequence may hold in
// the device tier.
#pragma once

#include "base/status.h"
#include "engine/inference_service.h"

namespace pg {

// Ok, or InvalidArgument naming what does not fit (a client's mistake: the
// server answers 400). info supplies n_ctx, n_vocab and max_seq_tokens
// (the engine sets it from its device tier, FillInfo).
Status CheckAdmissible(const GenerationRequest& request, const ServiceInfo& info);

}  // namespace pg
