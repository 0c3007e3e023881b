// libFuzzer target for tokenizer.json (tokenizer/hf_tokenizer.h): arbitrary
// bytes as the file's text through TokenizerFromJsonText. A refusal must be
// one line; a tokenizer it builds must encode a fixed set of strings (ASCII,
// code, CJK, emoji, invalid UTF-8, special-token texts) to ids inside its
// vocabulary and decode them, whole and token by token, without a sanitizer
// report.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tokenizer/hf_tokenizer.h"
#include "tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto t = pg::TokenizerFromJsonText(text, {}, "tokenizer.json");
  if (!t.ok()) {
    if (t.status().message().find('\n') != std::string::npos) __builtin_trap();  // errors are one line
    return 0;
  }
  static const char* const kSamples[] = {"Hello, world! It's 3.14",
                                         "def f(x):\n\treturn x  # ok\r\n",
                                         "\xe4\xbd\xa0\xe5\xa5\xbd\xe4\xb8\x96\xe7\x95\x8c",
                                         "\xf0\x9f\x98\x80 \xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd",
                                         "bad \xff\xfe utf8 \xc3",
                                         "<|end|><s></s> a  b   ",
                                         ""};
  const pg::Tokenizer& tok = **t;
  for (const char* s : kSamples) {
    for (bool special : {false, true}) {
      const std::vector<int32_t> ids = tok.Encode(s, special, special);
      for (int32_t id : ids)
        if (!tok.IsValid(id)) __builtin_trap();
      (void)tok.Decode(ids, special);
      pg::IncrementalDecoder dec(tok);
      for (int32_t id : ids) (void)dec.Push(id);
      (void)dec.Flush();
    }
  }
  return 0;
}
