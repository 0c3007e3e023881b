#include "engine/request_admission.h"

#include <fmt/format.h>

#include <algorithm>

namespace pg {

Status CheckAdmissible(const GenerationRequest& request, const ServiceInfo& info) {
  const int64_t n = static_cast<int64_t>(request.prompt.size());
  if (n == 0) return InvalidArgument("the prompt is empty");
  if (n >= info.n_ctx)
    return InvalidArgument(fmt::format(
        "the prompt has {} tokens but the context size is {} (leave room for at least one new token)", n, info.n_ctx));
  for (int32_t id : request.prompt)
    if (id < 0 || id >= info.n_vocab)
      return InvalidArgument(fmt::format("token id {} is outside the vocabulary (0..{})", id, info.n_vocab - 1));
  if (request.sampling.max_tokens < 1) return InvalidArgument("max_tokens must be >= 1");
  // The sequence stops at max_tokens or at the context, whichever comes first.
  const int64_t need = std::min<int64_t>(n + request.sampling.max_tokens, info.n_ctx);
  if (need > info.max_seq_tokens)
    return InvalidArgument(
        fmt::format("the request needs {} tokens of KV ({} prompt + {} max_tokens) but the device "
                    "tier holds at most {} tokens for one sequence (--kv-device-mem)",
                    need, n, need - n, info.max_seq_tokens));
  return Status::Ok();
}

}  // namespace pg
