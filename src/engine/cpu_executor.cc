#include "engine/cpu_executor.h"

#include <algorithm>

namespace pg {

Status CpuExecutor::Prepare(const KvPages& pages) {
  pages_ = pages;
  return Status::Ok();
}

Result<LogitsRows> CpuExecutor::Forward(std::span<const BatchSeq> batch) {
  LogitsRows out;
  out.n_vocab = model_.config().n_vocab;
  for (const BatchSeq& b : batch) out.rows += b.logit_rows();
  const size_t need = static_cast<size_t>(std::max<int64_t>(out.rows, 1) * out.n_vocab);
  if (logits_.size() < need) logits_.resize(need);
  PG_RETURN_IF_ERROR(model_.Forward(batch, pages_, pool_, scratch_, logits_.data()));
  out.data = logits_.data();
  out.hidden = scratch_.residual();
  return out;
}

}  // namespace pg
