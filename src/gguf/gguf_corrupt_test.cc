// Corrupt-input tests for GgufFile: every case of the corrupt corpus, and
// every truncation of a valid file, must give a non-OK one-line Status, with
// no crash and no large allocation.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <new>

#include "gguf/gguf_corpus.h"
#include "gguf/gguf_file.h"

// Records the largest single operator-new request while g_track is set.
namespace {
std::atomic<bool> g_track{false};
std::atomic<size_t> g_max_alloc{0};
}  // namespace

// GCC flags free() of operator-new memory; both sides are replaced here.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(size_t n) {
  if (g_track.load(std::memory_order_relaxed)) {
    size_t m = g_max_alloc.load(std::memory_order_relaxed);
    while (n > m && !g_max_alloc.compare_exchange_weak(m, n)) {
    }
  }
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace pg {
namespace {

// Parses under allocation tracking; returns the status and the largest
// single allocation.
Status ParseTracked(const std::vector<uint8_t>& b, size_t* max_alloc) {
  g_max_alloc = 0;
  g_track = true;
  Status st;
  {
    auto f = GgufFile::FromBuffer(b.data(), b.size(), "case.gguf");
    st = f.status();
  }
  g_track = false;
  *max_alloc = g_max_alloc;
  return st;
}

TEST(GgufCorrupt, ValidSamplesParse) {
  for (const auto& v : MakeValidGgufSamples()) {
    auto f = GgufFile::FromBuffer(v.bytes.data(), v.bytes.size());
    EXPECT_TRUE(f.ok()) << v.name << ": " << f.status().ToString();
  }
}

TEST(GgufCorrupt, EveryCorruptCaseIsRejectedWithAOneLineMessage) {
  const auto cases = MakeCorruptGgufCases();
  ASSERT_GE(cases.size(), 40u);
  for (const auto& k : cases) {
    size_t max_alloc = 0;
    Status st = ParseTracked(k.bytes, &max_alloc);
    EXPECT_FALSE(st.ok()) << k.name;
    EXPECT_EQ(st.message().find('\n'), std::string::npos) << k.name << ": " << st.message();
    EXPECT_LT(st.message().size(), 300u) << k.name;
    EXPECT_NE(st.message().find(k.expect), std::string::npos)
        << k.name << ": '" << st.message() << "' lacks '" << k.expect << "'";
    EXPECT_EQ(st.message().rfind("case.gguf: ", 0), 0u) << k.name << ": " << st.message();
    // The image is copied once (<= 2 KiB); nothing may grow with a bogus count.
    EXPECT_LT(max_alloc, size_t{64} << 10) << k.name;
  }
}

TEST(GgufCorrupt, EveryTruncationOfAValidFileIsRejected) {
  const auto good = MakeValidGgufSample();
  const size_t data_end = ValidSampleDataEnd();
  ASSERT_LT(data_end, good.size());
  for (size_t n = 0; n < good.size(); ++n) {
    std::vector<uint8_t> b(good.begin(), good.begin() + n);
    size_t max_alloc = 0;
    Status st = ParseTracked(b, &max_alloc);
    if (n < data_end) {
      EXPECT_FALSE(st.ok()) << "truncated at " << n;
      EXPECT_EQ(st.message().find('\n'), std::string::npos) << st.message();
    } else {
      EXPECT_TRUE(st.ok()) << "only padding cut at " << n << ": " << st.message();
    }
    EXPECT_LT(max_alloc, size_t{64} << 10) << n;
    if (n > 0) {
      EXPECT_GE(max_alloc, n) << "the tracker must see the image copy";
    }
  }
}

TEST(GgufCorrupt, EverySingleByteFlipIsHandled) {
  // Not every flip is invalid (a flipped data byte is fine), but none may
  // crash, allocate much, or produce a multi-line message.
  const auto good = MakeValidGgufSample();
  for (size_t i = 0; i < good.size(); ++i) {
    for (uint8_t x : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xFF}}) {
      auto b = good;
      b[i] ^= x;
      size_t max_alloc = 0;
      Status st = ParseTracked(b, &max_alloc);
      EXPECT_EQ(st.message().find('\n'), std::string::npos) << st.message();
      EXPECT_LT(max_alloc, size_t{64} << 10) << i;
    }
  }
}

TEST(GgufCorrupt, CorpusFilesAreRejectedThroughOpen) {
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("pg_corrupt_" + std::to_string(::getpid()))).string();
  ASSERT_TRUE(WriteCorruptCorpus(dir).ok());
  ASSERT_TRUE(WriteValidCorpus(dir).ok());
  size_t n_bad = 0, n_good = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    auto f = GgufFile::Open(e.path().string());
    if (name.rfind("valid_", 0) == 0) {
      EXPECT_TRUE(f.ok()) << name << ": " << f.status().ToString();
      ++n_good;
    } else {
      EXPECT_FALSE(f.ok()) << name;
      EXPECT_EQ(f.status().message().find('\n'), std::string::npos) << name;
      EXPECT_EQ(f.status().message().rfind(e.path().string() + ": ", 0), 0u) << f.status().message();
      ++n_bad;
    }
  }
  EXPECT_EQ(n_bad, MakeCorruptGgufCases().size());
  EXPECT_EQ(n_good, MakeValidGgufSamples().size());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pg
