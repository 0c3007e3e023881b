#include "base/file_image.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace pg {
namespace {

namespace fs = std::filesystem;

TEST(FileImage, MapsAFileAndCopiesABuffer) {
  const fs::path p = fs::temp_directory_path() / ("pg_file_image_" + std::to_string(::getpid()));
  std::ofstream(p) << "GGUF bytes";
  auto m = FileImage::Map(p.string());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->mapped());
  ASSERT_EQ(m->size(), 10u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(m->data()), 10), "GGUF bytes");
  FileImage moved = std::move(*m);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(moved.data()), 4), "GGUF");
  fs::remove(p);

  const uint8_t buf[3] = {1, 2, 3};
  FileImage c = FileImage::Copy(buf, 3);
  EXPECT_FALSE(c.mapped());
  FileImage c2 = std::move(c);
  ASSERT_EQ(c2.size(), 3u);
  EXPECT_NE(c2.data(), buf);
  EXPECT_EQ(c2.data()[2], 3);
}

TEST(FileImage, EmptyMissingAndDirectoryFiles) {
  const fs::path p = fs::temp_directory_path() / ("pg_file_image_empty_" + std::to_string(::getpid()));
  std::ofstream(p).close();
  auto e = FileImage::Map(p.string());
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->size(), 0u);
  fs::remove(p);
  auto missing = FileImage::Map(p.string());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kIoError);
  EXPECT_EQ(missing.status().message().rfind(p.string() + ": cannot open", 0), 0u) << missing.status().message();
  auto dir = FileImage::Map(fs::temp_directory_path().string());
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(dir.status().message().find("not a regular file"), std::string::npos);
}

}  // namespace
}  // namespace pg
