#include "kv/media/disk_tier.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "kv/kv_test_util.h"

namespace pg {
namespace {

using kvtest::SmallLayout;
using kvtest::TempDir;

struct Fixture {
  TempDir dir;
  KvLayout layout = SmallLayout();
  std::unique_ptr<DiskTier> disk;
  Fixture() {
    auto d = DiskTier::Open(dir.path(), layout, "model-x");
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    disk = std::move(*d);
  }
  DiskTier::BlockInfo Block(int32_t seed, int32_t depth = 0) {
    DiskTier::BlockInfo b;
    b.parent = RootHash("model-x", "");
    b.depth = depth;
    b.tokens = {seed, seed + 1, seed + 2, seed + 3};
    b.hash = ChainHash(b.parent, b.tokens);
    return b;
  }
  std::vector<uint8_t> Data(const DiskTier::BlockInfo& b) {
    std::vector<uint8_t> d(layout.block_bytes());
    kvtest::FillPattern(b.hash, d.data(), d.size());
    return d;
  }
};

TEST(DiskTierTest, WriteReadRoundTrip) {
  Fixture f;
  auto b = f.Block(10);
  auto data = f.Data(b);
  ASSERT_TRUE(f.disk->Write(b, data.data()).ok());
  EXPECT_EQ(std::filesystem::file_size(f.disk->PathFor(b.hash)), f.disk->file_bytes());
  std::vector<uint8_t> got(f.layout.block_bytes());
  ASSERT_TRUE(f.disk->Read(b.hash, b.tokens, got.data()).ok());
  EXPECT_EQ(got, data);
  // Asking with other tokens is a corrupt read, not a silent hit.
  std::vector<int32_t> other = {0, 0, 0, 0};
  EXPECT_EQ(f.disk->Read(b.hash, other, got.data()).code(), StatusCode::kCorrupt);
  EXPECT_EQ(f.disk->Read(f.Block(99).hash, f.Block(99).tokens, got.data()).code(), StatusCode::kNotFound);
  // No temporaries left behind.
  EXPECT_TRUE(std::filesystem::is_empty(f.dir.path() + "/tmp"));
}

// Block files hold prompt tokens: with umask 000 the tier still makes its
// directories 0700 and its files 0600 (nested missing directories too).
TEST(DiskTierTest, DirectoriesAndFilesAreOwnerOnlyWhateverTheUmask) {
  TempDir root;
  const mode_t old_umask = ::umask(0);
  const std::string dir = root.path() + "/a/b/kv";
  auto disk = DiskTier::Open(dir, SmallLayout(), "model-x");
  ASSERT_TRUE(disk.ok()) << disk.status().ToString();
  Fixture f;
  auto b = f.Block(7);
  ASSERT_TRUE((*disk)->Write(b, f.Data(b).data()).ok());
  ::umask(old_umask);
  auto mode = [](const std::string& p) {
    struct stat st {};
    EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
    return st.st_mode & 07777;
  };
  for (const std::string& d : {root.path() + "/a", root.path() + "/a/b", dir, dir + "/tmp"})
    EXPECT_EQ(mode(d), 0700u) << d;
  const std::string file = (*disk)->PathFor(b.hash);
  EXPECT_EQ(mode(file.substr(0, file.rfind('/'))), 0700u);
  EXPECT_EQ(mode(file), 0600u);
}

TEST(DiskTierTest, DetectsCorruptionAndTruncation) {
  Fixture f;
  auto b1 = f.Block(1), b2 = f.Block(2), b3 = f.Block(3);
  for (auto* b : {&b1, &b2, &b3}) ASSERT_TRUE(f.disk->Write(*b, f.Data(*b).data()).ok());
  {  // flip one payload byte
    std::fstream io(f.disk->PathFor(b1.hash), std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(std::streamoff(f.disk->file_bytes() - 7));
    io.put('\x5a');
  }
  std::filesystem::resize_file(f.disk->PathFor(b2.hash), f.disk->file_bytes() / 2);
  {  // flip a header byte (depth)
    std::fstream io(f.disk->PathFor(b3.hash), std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(113);
    io.put('\x7f');
  }
  std::vector<uint8_t> got(f.layout.block_bytes());
  EXPECT_EQ(f.disk->Read(b1.hash, b1.tokens, got.data()).code(), StatusCode::kCorrupt);
  EXPECT_EQ(f.disk->Read(b2.hash, b2.tokens, got.data()).code(), StatusCode::kCorrupt);
  EXPECT_EQ(f.disk->Read(b3.hash, b3.tokens, got.data()).code(), StatusCode::kCorrupt);
}

TEST(DiskTierTest, ScanRebuildsAndCleans) {
  Fixture f;
  std::vector<DiskTier::BlockInfo> blocks;
  for (int i = 0; i < 5; ++i) {
    blocks.push_back(f.Block(100 * i, i));
    ASSERT_TRUE(f.disk->Write(blocks.back(), f.Data(blocks.back()).data()).ok());
  }
  std::filesystem::resize_file(f.disk->PathFor(blocks[4].hash), 10);    // truncated header
  std::ofstream(f.dir.path() + "/tmp/crashed.part") << "half a block";  // crash leftover
  std::ofstream(f.dir.path() + "/notes.txt") << "not a block";          // ignored
  // A block of another model: left alone, not indexed.
  auto other = DiskTier::Open(f.dir.path(), f.layout, "model-y");
  ASSERT_TRUE(other.ok());
  auto ob = f.Block(7);
  ASSERT_TRUE((*other)->Write(ob, f.Data(ob).data()).ok());

  auto scan = f.disk->Scan();
  ASSERT_TRUE(scan.ok()) << scan.status().ToString();
  EXPECT_EQ(scan->blocks.size(), 4u);
  EXPECT_EQ(scan->removed_bad, 1);
  EXPECT_EQ(scan->removed_tmp, 1);
  EXPECT_EQ(scan->foreign, 1);
  EXPECT_FALSE(std::filesystem::exists(f.disk->PathFor(blocks[4].hash)));
  for (const auto& b : scan->blocks) {
    bool found = false;
    for (int i = 0; i < 4; ++i)
      found |= b.hash == blocks[size_t(i)].hash && b.tokens == blocks[size_t(i)].tokens && b.depth == i;
    EXPECT_TRUE(found);
  }
}

TEST(DiskTierTest, UnwritableDirectoryGivesAnError) {
  Fixture f;
  // Root ignores permission bits, so make the temporary area unusable instead.
  std::filesystem::remove_all(f.dir.path() + "/tmp");
  std::ofstream(f.dir.path() + "/tmp") << "a file where the tmp dir should be";
  auto b = f.Block(1);
  Status st = f.disk->Write(b, f.Data(b).data());
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kIoError) << st.ToString();
}

TEST(DiskTierTest, OpenRejectsAFile) {
  TempDir dir;
  std::ofstream(dir.path() + "/f") << "x";
  auto d = DiskTier::Open(dir.path() + "/f", SmallLayout(), "m");
  EXPECT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("not a directory"), std::string::npos);
}

}  // namespace
}  // namespace pg
