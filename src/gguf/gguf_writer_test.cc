#include "gguf/gguf_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "base/thread_pool.h"
#include "gguf/gguf_file.h"

namespace pg {
namespace {

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("pg_writer_" + std::to_string(::getpid()) + "_" + name)).string();
}

TEST(GgufWriter, RoundTripsEveryValueType) {
  GgufWriter w;
  w.SetU8("t.u8", 200);
  w.SetI8("t.i8", -100);
  w.SetU16("t.u16", 60000);
  w.SetI16("t.i16", -30000);
  w.SetU32("t.u32", 4000000000u);
  w.SetI32("t.i32", -2000000000);
  w.SetU64("t.u64", 1ull << 60);
  w.SetI64("t.i64", -(int64_t{1} << 60));
  w.SetF32("t.f32", 1.5f);
  w.SetF64("t.f64", -2.25e100);
  w.SetBool("t.bool", true);
  w.SetString("t.str", std::string("he\0llo", 6));
  w.SetStringArray("t.strs", {"a", "", "ccc"});
  w.SetI32Array("t.i32s", {1, -2, 3});
  w.SetI64Array("t.i64s", {int64_t{1} << 40});
  w.SetU32Array("t.u32s", {7, 8});
  w.SetF32Array("t.f32s", {0.5f, -0.25f});
  w.SetBoolArray("t.bools", {true, false, true});
  w.SetString("t.str", std::string("he\0llo", 6));  // replace keeps one entry
  w.SetU64("general.alignment", 64);                // ignored: the layout needs 32
  auto buf = w.WriteToBuffer();
  ASSERT_TRUE(buf.ok()) << buf.status().ToString();
  auto f = GgufFile::FromBuffer(buf->data(), buf->size());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  const GgufFile& g = **f;
  EXPECT_EQ(g.version(), 3u);
  EXPECT_EQ(g.alignment(), 32u);
  EXPECT_EQ(g.Find("general.alignment")->type, GgufValueType::UINT32);
  EXPECT_EQ(g.metadata().size(), 19u);  // 18 + general.alignment
  EXPECT_EQ(*g.GetInt("t.u8"), 200);
  EXPECT_EQ(*g.GetInt("t.i8"), -100);
  EXPECT_EQ(*g.GetInt("t.u16"), 60000);
  EXPECT_EQ(*g.GetInt("t.i16"), -30000);
  EXPECT_EQ(*g.GetInt("t.u32"), 4000000000LL);
  EXPECT_EQ(*g.GetInt("t.i32"), -2000000000LL);
  EXPECT_EQ(*g.GetInt("t.u64"), int64_t{1} << 60);
  EXPECT_EQ(*g.GetInt("t.i64"), -(int64_t{1} << 60));
  EXPECT_EQ(*g.GetFloat("t.f32"), 1.5);
  EXPECT_EQ(*g.GetFloat("t.f64"), -2.25e100);
  EXPECT_EQ(g.Find("t.f32")->type, GgufValueType::FLOAT32);
  EXPECT_EQ(g.Find("t.u16")->type, GgufValueType::UINT16);
  EXPECT_TRUE(*g.GetBool("t.bool"));
  EXPECT_EQ(*g.GetString("t.str"), std::string("he\0llo", 6));
  EXPECT_EQ(*g.GetStringArray("t.strs"), (std::vector<std::string>{"a", "", "ccc"}));
  EXPECT_EQ(*g.GetIntArray("t.i32s"), (std::vector<int64_t>{1, -2, 3}));
  EXPECT_EQ(g.Find("t.i32s")->array_type, GgufValueType::INT32);
  EXPECT_EQ(*g.GetIntArray("t.i64s"), (std::vector<int64_t>{int64_t{1} << 40}));
  EXPECT_EQ(*g.GetIntArray("t.u32s"), (std::vector<int64_t>{7, 8}));
  EXPECT_EQ(*g.GetFloatArray("t.f32s"), (std::vector<double>{0.5, -0.25}));
  EXPECT_EQ(std::get<std::vector<bool>>(g.Find("t.bools")->v), (std::vector<bool>{true, false, true}));
}

TEST(GgufWriter, SetValueCopiesFromAReaderKeepingTypes) {
  GgufWriter a;
  a.SetStringArray("tokenizer.ggml.tokens", {"x", "y"});
  a.SetI32Array("tokenizer.ggml.token_type", {1, 3});
  a.SetU32("tokenizer.ggml.eos_token_id", 1);
  auto buf = a.WriteToBuffer();
  ASSERT_TRUE(buf.ok());
  auto fa = GgufFile::FromBuffer(buf->data(), buf->size());
  ASSERT_TRUE(fa.ok());
  GgufWriter b;
  for (const auto& [k, v] : (*fa)->metadata()) ASSERT_TRUE(b.SetValue(k, v).ok()) << k;
  auto buf2 = b.WriteToBuffer();
  ASSERT_TRUE(buf2.ok());
  EXPECT_EQ(buf2->size(), buf->size());
  auto fb = GgufFile::FromBuffer(buf2->data(), buf2->size());
  ASSERT_TRUE(fb.ok());
  EXPECT_EQ((*fb)->Find("tokenizer.ggml.token_type")->array_type, GgufValueType::INT32);
  EXPECT_EQ((*fb)->Find("tokenizer.ggml.eos_token_id")->type, GgufValueType::UINT32);

  GgufValue bad;
  bad.type = GgufValueType::STRING;
  bad.v = int64_t{3};
  EXPECT_FALSE(b.SetValue("bad", bad).ok());
}

TEST(GgufWriter, TensorsRoundTripAlignedWithCopiesAndFills) {
  GgufWriter w;
  w.SetString("general.architecture", "llama");
  std::vector<uint8_t> a(3 * 4);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>(i + 1);
  ASSERT_TRUE(w.AddTensor("a", GgmlType::F32, {3}, a).ok());
  // Q8_0 tensor, 64 x 5: rows of 2 blocks (68 bytes), filled by callback.
  const uint64_t row = RowBytes(GgmlType::Q8_0, 64);
  ASSERT_EQ(row, 68u);
  ASSERT_TRUE(w.AddTensor("b", GgmlType::Q8_0, {64, 5}, [&](int64_t r0, int64_t nr, uint8_t* dst) {
                 for (int64_t r = 0; r < nr; ++r) std::memset(dst + r * row, static_cast<int>(r0 + r + 100), row);
                 return Status::Ok();
               }).ok());
  ASSERT_TRUE(w.AddTensor("c", GgmlType::F16, {2, 2, 2}, std::vector<uint8_t>(16, 9)).ok());
  EXPECT_EQ(w.tensor_count(), 3u);

  const std::string path = TempPath("tensors.gguf");
  ThreadPool pool(2);
  ASSERT_TRUE(w.Write(path, &pool).ok());
  auto f = GgufFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ((*f)->file_size(), w.FileSize());
  ASSERT_EQ((*f)->tensors().size(), 3u);
  const GgufTensorInfo* ta = (*f)->FindTensor("a");
  const GgufTensorInfo* tb = (*f)->FindTensor("b");
  const GgufTensorInfo* tc = (*f)->FindTensor("c");
  ASSERT_TRUE(ta && tb && tc);
  EXPECT_EQ(0, std::memcmp(ta->data, a.data(), a.size()));
  EXPECT_EQ(tb->type, GgmlType::Q8_0);
  EXPECT_EQ(tb->dims, (std::vector<int64_t>{64, 5}));
  EXPECT_EQ(tb->n_bytes, 5 * row);
  for (int r = 0; r < 5; ++r) EXPECT_EQ(tb->data[r * row + 7], static_cast<uint8_t>(100 + r));
  EXPECT_EQ(tc->dims, (std::vector<int64_t>{2, 2, 2}));
  for (const auto& t : (*f)->tensors()) EXPECT_EQ(t.offset % 32, 0u) << t.name;
  EXPECT_EQ(reinterpret_cast<uintptr_t>(tb->data) % 32, 0u);
  std::filesystem::remove(path);
}

TEST(GgufWriter, LargeStreamedTensorUsesManyChunksInOrder) {
  // 4096-byte F32 rows x 3000 rows = 12 MiB: several 4 MiB chunks.
  GgufWriter w;
  const int64_t cols = 1024, rows = 3000;
  ASSERT_TRUE(w.AddTensor("big", GgmlType::F32, {cols, rows}, [&](int64_t r0, int64_t nr, uint8_t* dst) {
                 auto* f = reinterpret_cast<float*>(dst);
                 for (int64_t r = 0; r < nr; ++r)
                   for (int64_t c = 0; c < cols; ++c) f[r * cols + c] = float(r0 + r) + c * 1e-4f;
                 return Status::Ok();
               }).ok());
  const std::string path = TempPath("big.gguf");
  ThreadPool pool(2);
  ASSERT_TRUE(w.Write(path, &pool).ok());
  auto f = GgufFile::Open(path);
  ASSERT_TRUE(f.ok());
  const auto* t = (*f)->FindTensor("big");
  const auto* v = reinterpret_cast<const float*>(t->data);
  for (int64_t r : {int64_t{0}, int64_t{1023}, int64_t{1024}, int64_t{2999}}) {
    EXPECT_EQ(v[r * cols], float(r));
    EXPECT_EQ(v[r * cols + 5], float(r) + 5 * 1e-4f);
  }
  std::filesystem::remove(path);
}

TEST(GgufWriter, RejectsBadTensorsAndFillErrorsLeaveNoFile) {
  GgufWriter w;
  EXPECT_FALSE(w.AddTensor("x", GgmlType::Q8_0, {31}, std::vector<uint8_t>(34)).ok());  // not a block multiple
  EXPECT_FALSE(w.AddTensor("x", GgmlType::F32, {}, std::vector<uint8_t>()).ok());
  EXPECT_FALSE(w.AddTensor("x", GgmlType::F32, {1, 1, 1, 1, 1}, std::vector<uint8_t>(4)).ok());
  EXPECT_FALSE(w.AddTensor("x", GgmlType::F32, {0}, std::vector<uint8_t>()).ok());
  EXPECT_FALSE(w.AddTensor("x", GgmlType::F32, {4}, std::vector<uint8_t>(15)).ok());
  EXPECT_FALSE(w.AddTensor("x", static_cast<GgmlType>(99), {4}, std::vector<uint8_t>(16)).ok());
  ASSERT_TRUE(w.AddTensor("x", GgmlType::F32, {4}, std::vector<uint8_t>(16)).ok());
  EXPECT_FALSE(w.AddTensor("x", GgmlType::F32, {4}, std::vector<uint8_t>(16)).ok());  // duplicate
  ASSERT_TRUE(w.AddTensor("y", GgmlType::F32, {4}, [](int64_t, int64_t, uint8_t*) {
                 return Internal("fill failed on purpose");
               }).ok());
  const std::string path = TempPath("fail.gguf");
  Status st = w.Write(path);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("on purpose"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(path));
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::temp_directory_path()))
    EXPECT_EQ(e.path().string().find(path + ".tmp"), std::string::npos) << e.path();
  EXPECT_FALSE(w.Write("/nonexistent-dir/x.gguf").ok());
}

}  // namespace
}  // namespace pg
