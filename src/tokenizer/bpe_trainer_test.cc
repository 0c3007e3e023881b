#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "tokenizer/tokenizer.h"

namespace pg {
namespace {

// A made-up word of 1-4 syllables, so the corpus has a long tail of words.
std::string Pseudoword(std::mt19937& rng) {
  static const char* kOnsets[] = {"b", "c", "d", "f", "g",  "h",  "k",  "l",  "m",  "n",  "p", "r",
                                  "s", "t", "v", "w", "st", "tr", "pl", "gr", "sh", "ch", "th"};
  static const char* kNuclei[] = {"a", "e", "i", "o", "u", "ai", "ou", "ee", "io"};
  static const char* kCodas[] = {"", "", "n", "r", "s", "t", "ng", "ck", "l"};
  std::string w;
  const int syl = 1 + rng() % 4;
  for (int i = 0; i < syl; ++i) {
    w += kOnsets[rng() % std::size(kOnsets)];
    w += kNuclei[rng() % std::size(kNuclei)];
    w += kCodas[rng() % std::size(kCodas)];
  }
  return w;
}

// English-like text, deterministic for a seed.
std::string Corpus(size_t bytes, uint32_t seed) {
  static const char* kWords[] = {"the",    "cache",  "token",     "model",      "server",  "request", "batch",
                                 "prefix", "memory", "engine",    "schedule",   "decode",  "prefill", "attention",
                                 "layer",  "weight", "quantized", "throughput", "latency", "session", "agent",
                                 "tool",   "stream", "block",     "page",       "host",    "device",  "kernel",
                                 "thread", "vector", "matrix",    "of",         "and",     "to",      "in",
                                 "is",     "a"};
  std::mt19937 rng(seed);
  std::string out;
  while (out.size() < bytes) {
    const int n = 5 + rng() % 12;
    for (int i = 0; i < n; ++i) {
      std::string w = kWords[rng() % std::size(kWords)];
      if (rng() % 3 == 0) w = Pseudoword(rng);
      if (i == 0) w[0] = static_cast<char>(w[0] - 32);
      out += w;
      if (rng() % 9 == 0) out += ",";
      out += i + 1 < n ? " " : ". ";
    }
    if (rng() % 5 == 0) out += std::to_string(rng() % 10000) + " items.\n";
    if (rng() % 11 == 0) out += "Grüße, naïve café — \xF0\x9F\x9A\x80!\n";
  }
  return out;
}

TEST(BpeTrainer, TrainsAVocabTheTokenizerCanUse) {
  const std::string corpus = Corpus(200 * 1024, 1);
  auto r = TrainByteLevelBpe(corpus, 1024, {"<|im_start|>", "<|im_end|>", "<|endoftext|>"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->tokens.size(), 1024u);
  ASSERT_EQ(r->token_types.size(), r->tokens.size());
  EXPECT_EQ(r->tokens.back(), "<|endoftext|>");
  EXPECT_EQ(r->token_types.back(), static_cast<int32_t>(TokenType::kControl));
  EXPECT_EQ(r->token_types[300], static_cast<int32_t>(TokenType::kNormal));

  auto tok = Tokenizer::FromVocab(ToVocabData(*r));
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  // Held-out text from the same distribution round-trips and compresses.
  const std::string text = Corpus(20 * 1024, 2);
  const auto ids = (*tok)->Encode(text, false, false);
  EXPECT_EQ((*tok)->Decode(ids), text);
  EXPECT_LT(ids.size() * 3, text.size()) << "expected > 3 bytes per token";
  // Specials are parsed as single tokens.
  const auto im = (*tok)->Encode("<|im_start|>user", false, true);
  ASSERT_FALSE(im.empty());
  EXPECT_EQ(im[0], 1021);
  // Unseen bytes still round-trip through the byte tokens.
  const std::string odd = "\x01\x02 zebra \xE6\x9D\xB1 \xC3\xBF";
  EXPECT_EQ((*tok)->Decode((*tok)->Encode(odd, false, false)), odd);
}

TEST(BpeTrainer, VocabSurvivesAGgufRoundTrip) {
  auto r = TrainByteLevelBpe(Corpus(64 * 1024, 5), 700, {"<|endoftext|>", "<|im_end|>"});
  ASSERT_TRUE(r.ok());
  const VocabData v = ToVocabData(*r);
  EXPECT_EQ(v.eos_id, 698);
  GgufWriter w;
  WriteVocab(v, &w);
  auto buf = w.WriteToBuffer();
  ASSERT_TRUE(buf.ok()) << buf.status().ToString();
  auto file = GgufFile::FromBuffer(buf->data(), buf->size(), "trained.gguf");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto back = Tokenizer::ReadVocab(**file);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->tokens, v.tokens);
  EXPECT_EQ(back->merges, v.merges);
  EXPECT_EQ(back->token_types, v.token_types);
  EXPECT_EQ(back->eos_id, v.eos_id);
  EXPECT_EQ(back->add_bos, false);
  auto a = Tokenizer::FromVocab(v);
  auto b = Tokenizer::FromGguf(**file);
  ASSERT_TRUE(a.ok() && b.ok());
  const std::string text = Corpus(4096, 6) + "<|im_end|>";
  EXPECT_EQ((*a)->Encode(text, true, true), (*b)->Encode(text, true, true));
  EXPECT_TRUE((*b)->IsEog(698));
  EXPECT_TRUE((*b)->IsEog(699));  // <|im_end|> by its text
}

TEST(BpeTrainer, IsDeterministic) {
  const std::string corpus = Corpus(50 * 1024, 3);
  auto a = TrainByteLevelBpe(corpus, 600, {"<|e|>"});
  auto b = TrainByteLevelBpe(corpus, 600, {"<|e|>"});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->tokens, b->tokens);
  EXPECT_EQ(a->merges, b->merges);
}

TEST(BpeTrainer, StopsWhenNothingRepeats) {
  auto r = TrainByteLevelBpe("abcabc", 5000, {});
  ASSERT_TRUE(r.ok());
  EXPECT_LT(r->tokens.size(), 5000u);
  EXPECT_GT(r->tokens.size(), 256u);  // "ab" (then "abc") occur twice
}

TEST(BpeTrainer, RejectsBadArguments) {
  EXPECT_FALSE(TrainByteLevelBpe("abc", 100, {}).ok());
  EXPECT_FALSE(TrainByteLevelBpe("abc", 300, {""}).ok());
  EXPECT_FALSE(TrainByteLevelBpe("abc", 300, {"x", "x"}).ok());
  EXPECT_FALSE(TrainByteLevelBpe("abc", 300, {"a"}).ok());  // duplicates a byte token
}

// Thousands of merges on a corpus of a few hundred KB (prints the time; the
// default-model job, 8000 merges on 1 MB, takes about 4 s at -O2).
TEST(BpeTrainer, TrainsThousandsOfMerges) {
  const std::string corpus = Corpus(256 << 10, 4);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = TrainByteLevelBpe(corpus, 3000 + 256 + 1, {"<|endoftext|>"});
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(r.ok());
  printf("trained %zu tokens, %zu merges in %.2f s\n", r->tokens.size(), r->merges.size(), s);
  EXPECT_EQ(r->merges.size(), 3000u);
  auto tok = Tokenizer::FromVocab(ToVocabData(*r));
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  const std::string sample = corpus.substr(0, 4096);
  EXPECT_EQ((*tok)->Decode((*tok)->Encode(sample, false, false)), sample);
}

}  // namespace
}  // namespace pg
