// Executor: the engine's one forward seam. It runs a whole step, the batch
// in and the logits rows out, over the KV blocks of the device tier. The CPU
// executor (cpu_executor.h: Model::Forward on the thread pool) is the first
// implementation; a device executor is one more.
//
// The contract, written for a device executor as much as for the CPU one:
//   Prepare(pages)  once, after the KV cache exists: binds the device tier's
//                   block arena (block b at pages.base + b * block_bytes).
//                   A device executor would also upload or map its weights
//                   here and allocate its scratch and streams.
//   Forward(batch)  one step. The batch's token and block-table arrays are
//                   host memory the caller keeps valid until Forward returns.
//                   A device executor copies them in asynchronously, runs the
//                   step on its stream, copies the logits rows back and waits
//                   on the step's completion event before returning, so that
//                   when Forward returns the K/V of every batch position are
//                   written and the rows are readable on the host.
//   arithmetic()    names the arithmetic K/V and logits come out of. It is
//                   part of the model identity that keys blocks on disk and
//                   in Redis (KvModelIdentity), so K/V computed one way are
//                   never read back by an executor computing another way.
//
// Thread-safety: one caller at a time (the engine thread).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "base/status.h"
#include "model/kv_pages.h"
#include "model/model.h"

namespace pg {

// The logits rows of one step: each batch entry's logit_rows() rows of
// n_vocab floats, in batch order. Valid until the next Forward.
struct LogitsRows {
  const float* data = nullptr;
  int64_t rows = 0;
  int64_t n_vocab = 0;
  // The trunk's final hidden state (before the output norm) of every batch
  // token, batch order, n_embd floats each (--spec mtp's input); null where
  // an executor does not return it.
  const float* hidden = nullptr;
  const float* row(int64_t i) const { return data + i * n_vocab; }
};

class Executor {
 public:
  virtual ~Executor() = default;
  // The arithmetic's name: lower-case letters, digits and '-' (e.g. "cpu").
  virtual std::string arithmetic() const = 0;
  virtual Status Prepare(const KvPages& pages) = 0;
  virtual Result<LogitsRows> Forward(std::span<const BatchSeq> batch) = 0;
};

// The identity that keys a model's KV blocks on disk and in Redis: the
// weights' identity (Model::identity(), which already names the CPU kernels'
// variants: -repacked, -precise, -attn-f32tiled) and the executor's
// arithmetic, as "<model identity>@<arithmetic>".
std::string KvModelIdentity(const std::string& model_identity, const Executor& executor);

}  // namespace pg
