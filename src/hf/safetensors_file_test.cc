#include "hf/safetensors_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "hf/safetensors_writer.h"

namespace pg {
namespace {

std::vector<SafeTensorOut> Sample() {
  SafeTensorOut a{"w", SafeDtype::kBF16, {3, 4}, std::vector<uint8_t>(24)};
  for (size_t i = 0; i < a.bytes.size(); ++i) a.bytes[i] = static_cast<uint8_t>(i);
  SafeTensorOut b{"norm", SafeDtype::kF32, {4}, std::vector<uint8_t>(16, 7)};
  SafeTensorOut c{"fp8", SafeDtype::kF8_E4M3, {2, 2}, {1, 2, 3, 4}};
  return {a, b, c};
}

std::vector<uint8_t> Image() {
  auto img = SafetensorsImage(Sample(), {{"format", "pt"}});
  EXPECT_TRUE(img.ok());
  return *img;
}

// The header's text as written (after the 8-byte length).
std::string HeaderText(const std::vector<uint8_t>& img) {
  uint64_t n = 0;
  std::memcpy(&n, img.data(), 8);
  return std::string(img.begin() + 8, img.begin() + 8 + static_cast<std::ptrdiff_t>(n));
}

// The image with its header replaced by `header` (padded to 8 bytes).
std::vector<uint8_t> WithHeader(const std::vector<uint8_t>& img, std::string header) {
  const std::string old = HeaderText(img);
  header.append((8 - header.size() % 8) % 8, ' ');
  std::vector<uint8_t> out(8);
  const uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), img.begin() + 8 + static_cast<std::ptrdiff_t>(old.size()), img.end());
  return out;
}

std::string ErrorOf(const std::vector<uint8_t>& img) {
  auto f = SafetensorsFile::FromBuffer(img.data(), img.size(), "x.safetensors");
  return f.ok() ? "" : f.status().message();
}

TEST(SafetensorsFile, WrittenFileReadsBack) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("pg_st_" + std::to_string(::getpid()) + ".safetensors")).string();
  ASSERT_TRUE(WriteSafetensors(path, Sample(), {{"format", "pt"}}).ok());
  auto f = SafetensorsFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ((*f)->tensors().size(), 3u);
  EXPECT_EQ((*f)->metadata().at("format"), "pt");
  const SafeTensor* w = (*f)->Find("w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->dtype, SafeDtype::kBF16);
  EXPECT_EQ(w->shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(w->n_bytes, 24u);
  EXPECT_EQ(w->data[5], 5);
  EXPECT_EQ(w->offset % 8, 0u);  // header padded to 8 bytes
  const SafeTensor* fp8 = (*f)->Find("fp8");
  ASSERT_NE(fp8, nullptr);
  EXPECT_EQ(fp8->dtype, SafeDtype::kF8_E4M3);
  EXPECT_EQ(fp8->data[3], 4);
  EXPECT_EQ((*f)->Find("absent"), nullptr);
  std::filesystem::remove(path);
}

// DropPages gives a copied tensor's pages back; reading it again reads the
// file's bytes (a tensor spanning several pages, and one inside a page).
TEST(SafetensorsFile, DroppedPagesReadBackFromTheFile) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("pg_st_drop_" + std::to_string(::getpid()) + ".safetensors")).string();
  std::vector<SafeTensorOut> ts = Sample();
  std::vector<uint8_t> big(3 * 4096 + 100);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>(i * 31 + 7);
  ts.push_back({"big", SafeDtype::kF8_E4M3, {static_cast<int64_t>(big.size())}, big});
  ASSERT_TRUE(WriteSafetensors(path, ts).ok());
  auto f = SafetensorsFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().message();
  const SafeTensor* b = (*f)->Find("big");
  const SafeTensor* w = (*f)->Find("w");
  ASSERT_TRUE(b && w);
  const std::vector<uint8_t> w_before(w->data, w->data + w->n_bytes);
  EXPECT_EQ(std::vector<uint8_t>(b->data, b->data + b->n_bytes), big);
  (*f)->DropPages(*b);
  (*f)->DropPages(*w);
  EXPECT_EQ(std::vector<uint8_t>(b->data, b->data + b->n_bytes), big);
  EXPECT_EQ(std::vector<uint8_t>(w->data, w->data + w->n_bytes), w_before);
  std::filesystem::remove(path);
}

TEST(SafetensorsFile, TruncatedFilesNameTheHeader) {
  std::vector<uint8_t> img = Image();
  EXPECT_NE(ErrorOf({img.begin(), img.begin() + 5}).find("x.safetensors: header: file of 5 bytes"), std::string::npos);
  const std::string header = HeaderText(img);
  // Cut inside the header: its length runs past the end.
  EXPECT_NE(ErrorOf({img.begin(), img.begin() + 20}).find("runs past the end"), std::string::npos);
  // Cut inside the data: the last tensor's offsets leave the data section.
  const std::string e = ErrorOf({img.begin(), img.end() - 2});
  EXPECT_NE(e.find("x.safetensors: header: tensor 'fp8': data_offsets"), std::string::npos) << e;
  EXPECT_NE(e.find("truncated"), std::string::npos) << e;
}

TEST(SafetensorsFile, CorruptHeadersAreOneLineErrorsNamingTheField) {
  const std::vector<uint8_t> img = Image();
  struct Case {
    std::string header, want;
  } cases[] = {
      {"{not json", "not valid JSON"},
      {"[1, 2]", "not a JSON object"},
      {R"({"w": 3})", "tensor 'w': not an object"},
      {R"({"w": {"shape": [3, 4], "data_offsets": [0, 24]}})", "tensor 'w': dtype missing"},
      {R"({"w": {"dtype": "I64", "shape": [3], "data_offsets": [0, 24]}})", "tensor 'w': dtype 'I64' is not supported"},
      {R"({"w": {"dtype": "BF16", "shape": [3, -4], "data_offsets": [0, 24]}})", "tensor 'w': shape has a bad"},
      {R"({"w": {"dtype": "BF16", "shape": [3, 4], "data_offsets": [0]}})", "tensor 'w': data_offsets missing"},
      {R"({"w": {"dtype": "BF16", "shape": [3, 4], "data_offsets": [8, 4]}})", "outside the"},
      {R"({"w": {"dtype": "BF16", "shape": [3, 5], "data_offsets": [0, 24]}})", "dtype and shape make 30"},
      {R"({"w": {"dtype": "BF16", "shape": [1099511627776, 1099511627776], "data_offsets": [0, 24]}})",
       "dtype and shape make"},
      {R"({"__metadata__": {"a": 1}})", "__metadata__ 'a' is not a string"},
      {R"({"a\nb": 1})", "tensor 'a\\x0ab': not an object"},
      {"[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]", "not valid JSON"},
  };
  for (const Case& c : cases) {
    const std::string e = ErrorOf(WithHeader(img, c.header));
    EXPECT_NE(e.find(c.want), std::string::npos) << c.header << " -> " << e;
    EXPECT_EQ(e.rfind("x.safetensors: header: ", 0), 0u) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
  // A header length beyond any file.
  std::vector<uint8_t> huge = img;
  const uint64_t n = ~0ull;
  std::memcpy(huge.data(), &n, 8);
  EXPECT_NE(ErrorOf(huge).find("runs past the end"), std::string::npos);
}

TEST(SafetensorsFile, MissingFileIsAnIoError) {
  auto f = SafetensorsFile::Open("/nonexistent/model.safetensors");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().message().rfind("/nonexistent/model.safetensors: ", 0), 0u);
}

}  // namespace
}  // namespace pg
