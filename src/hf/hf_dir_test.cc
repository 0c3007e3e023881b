#include "hf/hf_dir.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "hf/safetensors_writer.h"

namespace pg {
namespace {

namespace fs = std::filesystem;

class HfDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() / ("pg_hf_dir_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    fs::create_directories(dir_);
    Write("config.json", R"({"model_type": "qwen2"})");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text) { std::ofstream(dir_ + "/" + name) << text; }
  void Shard(const std::string& name, const std::vector<std::string>& tensors) {
    std::vector<SafeTensorOut> ts;
    for (const std::string& t : tensors) ts.push_back({t, SafeDtype::kF32, {2}, std::vector<uint8_t>(8, 1)});
    ASSERT_TRUE(WriteSafetensors(dir_ + "/" + name, ts).ok());
  }
  std::string ErrorOf() {
    auto d = HfDir::Open(dir_);
    return d.ok() ? "" : d.status().message();
  }

  std::string dir_;
};

TEST_F(HfDirTest, OneFileWithSideFiles) {
  Shard("model.safetensors", {"a", "b"});
  Write("generation_config.json", R"({"eos_token_id": [7, 9], "bos_token_id": 1, "temperature": 0.6, "top_k": 20})");
  Write("tokenizer_config.json", R"({"chat_template": "{{ x }}", "eos_token": {"content": "<|end|>"}})");
  auto d = HfDir::Open(dir_ + "/");
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ((*d)->path(), dir_);
  EXPECT_EQ((*d)->tensors().size(), 2u);
  EXPECT_NE((*d)->Find("a"), nullptr);
  EXPECT_EQ((*d)->ShardOf("b"), dir_ + "/model.safetensors");
  EXPECT_EQ((*d)->generation().eos_token_ids, (std::vector<int64_t>{7, 9}));
  EXPECT_EQ((*d)->generation().bos_token_id, 1);
  EXPECT_EQ((*d)->generation().temperature, 0.6);
  EXPECT_EQ((*d)->generation().top_k, 20);
  EXPECT_FALSE((*d)->generation().top_p.has_value());
  EXPECT_FALSE((*d)->generation().min_p.has_value());
  Write("generation_config.json", R"({"top_p": 0.95, "min_p": 0.05, "repetition_penalty": 1.1, "do_sample": true})");
  d = HfDir::Open(dir_);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ((*d)->generation().top_p, 0.95);
  EXPECT_EQ((*d)->generation().min_p, 0.05);
  EXPECT_EQ((*d)->generation().repetition_penalty, 1.1);
  EXPECT_EQ((*d)->chat_template(), "{{ x }}");
  EXPECT_EQ((*d)->eos_token(), "<|end|>");
  // chat_template.jinja wins over tokenizer_config.json's.
  Write("chat_template.jinja", "{{ y }}");
  d = HfDir::Open(dir_);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ((*d)->chat_template(), "{{ y }}");
}

TEST_F(HfDirTest, ShardedByIndex) {
  Shard("model-00001-of-00002.safetensors", {"a"});
  Shard("model-00002-of-00002.safetensors", {"b"});
  Write("model.safetensors.index.json",
        R"({"weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}})");
  auto d = HfDir::Open(dir_);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ((*d)->ShardOf("b"), dir_ + "/model-00002-of-00002.safetensors");
}

TEST_F(HfDirTest, BadDirectoriesNameTheFileAndField) {
  EXPECT_NE(ErrorOf().find(dir_ + "/model.safetensors: missing"), std::string::npos) << ErrorOf();
  Shard("model-00001-of-00002.safetensors", {"a"});
  Write("model.safetensors.index.json",
        R"({"weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}})");
  EXPECT_NE(ErrorOf().find(dir_ + "/model-00002-of-00002.safetensors: missing shard"), std::string::npos) << ErrorOf();
  Write("model.safetensors.index.json",
        R"({"weight_map": {"a": "model-00001-of-00002.safetensors", "c": "model-00001-of-00002.safetensors"}})");
  EXPECT_NE(ErrorOf().find(
                "model.safetensors.index.json: weight_map 'c' names model-00001-of-00002.safetensors, which lacks it"),
            std::string::npos)
      << ErrorOf();
  Write("model.safetensors.index.json", R"({"weight_map": {"a": "../elsewhere.safetensors"}})");
  EXPECT_NE(ErrorOf().find("weight_map 'a' is not a file name in the directory"), std::string::npos) << ErrorOf();
  Write("model.safetensors.index.json", R"({"weights": {}})");
  EXPECT_NE(ErrorOf().find("model.safetensors.index.json: weight_map missing"), std::string::npos) << ErrorOf();
  fs::remove(dir_ + "/model.safetensors.index.json");
  Shard("model.safetensors", {"a"});
  Write("generation_config.json", R"({"eos_token_id": "x"})");
  EXPECT_NE(ErrorOf().find("generation_config.json: eos_token_id is not"), std::string::npos) << ErrorOf();
  Write("generation_config.json", R"({"top_p": 1.5})");
  EXPECT_EQ(ErrorOf(), dir_ + "/generation_config.json: top_p 1.5 is outside (0, 1]");
  Write("generation_config.json", R"({"repetition_penalty": 0})");
  EXPECT_EQ(ErrorOf(), dir_ + "/generation_config.json: repetition_penalty 0 is outside (0, 1e6]");
  Write("generation_config.json", R"({"top_k": -2})");
  EXPECT_EQ(ErrorOf(), dir_ + "/generation_config.json: top_k is not -1, 0 (off) or positive");
  Write("generation_config.json", R"({"min_p": "0.1"})");
  EXPECT_EQ(ErrorOf(), dir_ + "/generation_config.json: min_p is not a number");
  Write("generation_config.json", R"({})");
  Write("tokenizer_config.json", R"({"chat_template": 5})");
  EXPECT_NE(ErrorOf().find("tokenizer_config.json: chat_template is not"), std::string::npos) << ErrorOf();
  Write("tokenizer_config.json", R"({"chat_template": [{"name": 5, "template": "t"}]})");
  EXPECT_NE(ErrorOf().find("chat_template has no \"default\""), std::string::npos) << ErrorOf();
  Write("config.json", "{\"model_type\": ");
  EXPECT_NE(ErrorOf().find(dir_ + "/config.json: not valid JSON"), std::string::npos) << ErrorOf();
  fs::remove(dir_ + "/config.json");
  EXPECT_NE(ErrorOf().find("config.json: missing"), std::string::npos) << ErrorOf();
}

}  // namespace
}  // namespace pg
