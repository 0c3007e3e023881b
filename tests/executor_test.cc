// Issue 21: the forward seam. CpuExecutor runs a whole step (batch in,
// logits rows out) exactly as Model::Forward does, and the KV identity names
// the executor's arithmetic.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "engine/cpu_executor.h"
#include "testing/tiny_model.h"

namespace pg {
namespace {

struct Arena {
  explicit Arena(const ModelConfig& c, int64_t blocks) {
    pages.layout = KvLayout{static_cast<int>(c.n_layer), static_cast<int>(c.n_head_kv), static_cast<int>(c.head_dim),
                            16, KvDtype::kF16};
    pages.block_bytes = pages.layout.block_bytes();
    mem.assign(pages.block_bytes * static_cast<size_t>(blocks), 0);
    pages.base = mem.data();
    table.resize(static_cast<size_t>(blocks));
    std::iota(table.begin(), table.end(), 0);
  }
  KvPages pages;
  std::vector<uint8_t> mem;
  std::vector<int32_t> table;
};

TEST(CpuExecutor, StepMatchesModelForwardRowForRow) {
  const std::string path = test::TinyQwen2Model(7);
  ASSERT_FALSE(path.empty());
  auto model = Model::Load(path);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const Model& m = **model;
  ThreadPool pool(2);
  const int64_t V = m.config().n_vocab;
  // Two sequences: a prefill with logits of its last token, and a
  // verification-style entry with logits at every row.
  std::vector<int32_t> a = {1, 5, 9, 13, 17, 21}, b = {2, 4, 6, 8};
  Arena direct(m.config(), 2), seam(m.config(), 2);
  auto batch_of = [&](Arena& arena) {
    std::vector<BatchSeq> batch(2);
    batch[0] = BatchSeq{a.data(), static_cast<int64_t>(a.size()), 0, arena.table.data(), 1, true};
    batch[1] = BatchSeq{b.data(), static_cast<int64_t>(b.size()), 0, arena.table.data() + 1, 1, true};
    batch[1].all_logits = true;
    return batch;
  };
  const std::vector<BatchSeq> db = batch_of(direct), sb = batch_of(seam);
  std::vector<float> want(static_cast<size_t>((1 + b.size()) * V));
  ForwardScratch scratch;
  ASSERT_TRUE(m.Forward(db, direct.pages, pool, scratch, want.data()).ok());

  CpuExecutor exec(m, pool);
  ASSERT_TRUE(exec.Prepare(seam.pages).ok());
  Result<LogitsRows> rows = exec.Forward(sb);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(rows->rows, 1 + static_cast<int64_t>(b.size()));
  EXPECT_EQ(rows->n_vocab, V);
  EXPECT_EQ(std::memcmp(rows->data, want.data(), want.size() * sizeof(float)), 0);
  // The K/V the step wrote are the same bytes.
  EXPECT_EQ(seam.mem, direct.mem);

  // A bad batch is an error, not a crash: a token outside the vocabulary.
  std::vector<int32_t> bad = {static_cast<int32_t>(V)};
  BatchSeq e{bad.data(), 1, 0, seam.table.data(), 1, true};
  EXPECT_FALSE(exec.Forward({&e, 1}).ok());
}

TEST(CpuExecutor, KvIdentityNamesTheArithmetic) {
  const std::string path = test::TinyQwen2Model(7);
  ASSERT_FALSE(path.empty());
  auto model = Model::Load(path);
  ASSERT_TRUE(model.ok());
  ThreadPool pool(1);
  CpuExecutor exec(**model, pool);
  EXPECT_EQ(exec.arithmetic(), "cpu");
  EXPECT_EQ(KvModelIdentity((*model)->identity(), exec), (*model)->identity() + "@cpu");
}

}  // namespace
}  // namespace pg
