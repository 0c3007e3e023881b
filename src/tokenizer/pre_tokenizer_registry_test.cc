// The tokenizer.ggml.pre names: every name llama.cpp's llama-vocab.cpp
// recognises for BPE vocabularies is either implemented or refused with an
// error that names it; llama.cpp's per-name defaults come with the kind.
#include <gtest/gtest.h>

#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace pg {
namespace {

using K = PreTokenizerKind;

// The names llama.cpp's llama_vocab::impl::load accepts for BPE vocabularies.
const char* const kLlamaCppNames[] = {
    "default",
    "minicpm5",
    "llama3",
    "llama-v3",
    "llama-bpe",
    "falcon3",
    "falcon-h1",
    "pixtral",
    "midm-2.0",
    "lfm2",
    "jina-v5-nano",
    "deepseek-llm",
    "deepseek-coder",
    "deepseek-v3",
    "spark2_5",
    "youtu",
    "falcon",
    "mpt",
    "starcoder",
    "gpt-2",
    "phi-2",
    "jina-es",
    "jina-de",
    "gigachat",
    "jina-v2-es",
    "jina-v2-de",
    "a.x-4.0",
    "mellum",
    "modern-bert",
    "jais-2",
    "gemma4",
    "granite-embed-multi-311m",
    "sarvam-moe",
    "jina-v1-en",
    "jina-v2-code",
    "roberta-bpe",
    "whitespace",
    "refact",
    "command-r",
    "qwen2",
    "deepseek-r1-qwen",
    "kormo",
    "f2llmv2",
    "qwen35",
    "stablelm2",
    "olmo",
    "dbrx",
    "smaug-bpe",
    "poro-chat",
    "glm4",
    "chatglm-bpe",
    "viking",
    "jais",
    "tekken",
    "smollm",
    "codeshell",
    "bloom",
    "gpt3-finnish",
    "exaone",
    "exaone4",
    "exaone-moe",
    "chameleon",
    "minerva-7b",
    "megrez",
    "gpt-4o",
    "llama4",
    "kanana2",
    "talkie",
    "granite-embed-multi-97m",
    "tiny_aya",
    "cohere2moe",
    "superbpe",
    "trillion",
    "granite-docling",
    "bailingmoe",
    "bailingmoe2",
    "llada-moe",
    "seed-coder",
    "hunyuan",
    "hunyuan-dense",
    "hy_v4",
    "joyai-llm",
    "kimi-k2",
    "ufakzeka",
    "grok-2",
    "afmoe",
    "laguna",
    "minimax-m2",
    "solar-open",
    "mellum2",
};

TEST(PreTokenizerRegistry, EveryLlamaCppNameIsImplementedOrRefusedByName) {
  int implemented = 0;
  for (const char* name : kLlamaCppNames) {
    auto spec = PreTokenizerFromName(name);
    if (spec.ok()) {
      ++implemented;
      continue;
    }
    EXPECT_EQ(spec.status().code(), StatusCode::kUnimplemented) << name;
    EXPECT_NE(spec.status().message().find(std::string("'") + name + "'"), std::string::npos)
        << spec.status().message();
    EXPECT_EQ(spec.status().message().find('\n'), std::string::npos) << name;  // one line
  }
  EXPECT_EQ(implemented, static_cast<int>(std::size(kLlamaCppNames)) - 7);
}

TEST(PreTokenizerRegistry, NamesMapToTheirRegexFamilies) {
  const std::pair<const char*, K> cases[] = {
      {"starcoder", K::kStarcoder},
      {"refact", K::kStarcoder},
      {"command-r", K::kStarcoder},
      {"smollm", K::kStarcoder},
      {"mellum2", K::kStarcoder},
      {"glm4", K::kLlama3},
      {"dbrx", K::kLlama3},
      {"deepseek-v3", K::kDeepseekV3},
      {"hunyuan-dense", K::kDeepseekV3},
      {"gpt-4o", K::kGpt4o},
      {"llama4", K::kGpt4o},
      {"minimax-m2", K::kGpt4o},
      {"kimi-k2", K::kKimiK2},
      {"tekken", K::kTekken},
      {"seed-coder", K::kSeedCoder},
      {"grok-2", K::kQwen2},
      {"bailingmoe2", K::kQwen2},
      {"olmo", K::kGpt2},
      {"exaone4", K::kGpt2},
      {"exaone", K::kStarcoder},
      {"bloom", K::kPoro},
      {"", K::kDefault},
  };
  for (const auto& [name, kind] : cases) {
    auto spec = PreTokenizerFromName(name);
    ASSERT_TRUE(spec.ok()) << name << ": " << spec.status().ToString();
    EXPECT_EQ(spec->kind, kind) << name;
  }
}

TEST(PreTokenizerRegistry, PerNameDefaultsFollowLlamaCpp) {
  auto llama = PreTokenizerFromName("llama-bpe");
  ASSERT_TRUE(llama.ok());
  EXPECT_TRUE(llama->ignore_merges);
  EXPECT_TRUE(llama->add_bos);
  auto dbrx = PreTokenizerFromName("dbrx");  // same regex, none of the defaults
  ASSERT_TRUE(dbrx.ok());
  EXPECT_FALSE(dbrx->ignore_merges);
  EXPECT_FALSE(dbrx->add_bos);
  auto tekken = PreTokenizerFromName("tekken");
  ASSERT_TRUE(tekken.ok());
  EXPECT_TRUE(tekken->ignore_merges && tekken->add_bos);
  auto glm = PreTokenizerFromName("glm4");
  ASSERT_TRUE(glm.ok());
  EXPECT_TRUE(glm->no_default_bos);
  EXPECT_FALSE(glm->ignore_merges);
  for (const char* name : {"minicpm5", "youtu", "granite-embed-multi-97m"}) {
    auto s = PreTokenizerFromName(name);
    ASSERT_TRUE(s.ok()) << name;
    EXPECT_TRUE(s->ignore_merges) << name;
    EXPECT_FALSE(s->add_bos) << name;
  }
}

TEST(PreTokenizerRegistry, UnknownNamesAreInvalidArguments) {
  auto r = PreTokenizerFromName("gpt-5-turbo-pre");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("'gpt-5-turbo-pre'"), std::string::npos);
  auto refused = PreTokenizerFromName("gemma4");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("byte encoding"), std::string::npos);
}

// A byte-level vocab: 256 byte tokens, one merge, an end token.
VocabData TinyBpe(const std::string& pre) {
  VocabData v;
  v.model = "gpt2";
  v.pre = pre;
  for (int b = 0; b < 256; ++b) v.tokens.push_back(ByteToUnicode(static_cast<uint8_t>(b)));
  v.tokens.push_back("ab");
  v.merges.push_back("a b");
  v.token_types.assign(v.tokens.size(), 1);
  return v;
}

TEST(PreTokenizerRegistry, TokenizerTakesTheDefaults) {
  // gpt2 vocabs default BOS to id 11; glm4 has none unless the file says.
  auto gpt2 = Tokenizer::FromVocab(TinyBpe("gpt-2"));
  ASSERT_TRUE(gpt2.ok()) << gpt2.status().ToString();
  EXPECT_EQ((*gpt2)->bos_id(), 11);
  EXPECT_FALSE((*gpt2)->add_bos());
  auto glm = Tokenizer::FromVocab(TinyBpe("glm4"));
  ASSERT_TRUE(glm.ok()) << glm.status().ToString();
  EXPECT_EQ((*glm)->bos_id(), -1);
  VocabData with_bos = TinyBpe("glm4");
  with_bos.bos_id = 5;
  glm = Tokenizer::FromVocab(with_bos);
  ASSERT_TRUE(glm.ok());
  EXPECT_EQ((*glm)->bos_id(), 5);
  auto tekken = Tokenizer::FromVocab(TinyBpe("tekken"));
  ASSERT_TRUE(tekken.ok()) << tekken.status().ToString();
  EXPECT_TRUE((*tekken)->add_bos());
  // The new kinds run end to end: "ab" merges, digits split.
  EXPECT_EQ((*tekken)->Encode("ab 12", false, false), (std::vector<int32_t>{256, ' ', '1', '2'}));
  auto refused = Tokenizer::FromVocab(TinyBpe("roberta-bpe"));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("'roberta-bpe'"), std::string::npos);
}

}  // namespace
}  // namespace pg
