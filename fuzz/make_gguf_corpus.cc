// make_gguf_corpus DIR: writes the GGUF seed corpus (valid samples made by
// GgufWriter and the corrupt variants of gguf/gguf_corpus.h) into DIR.
#include <cstdio>

#include "gguf/gguf_corpus.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_gguf_corpus DIR\n");
    return 2;
  }
  pg::Status st = pg::WriteValidCorpus(argv[1]);
  if (st.ok()) st = pg::WriteCorruptCorpus(argv[1]);
  if (!st.ok()) {
    std::fprintf(stderr, "make_gguf_corpus: %s\n", st.ToString().c_str());
    return 1;
  }
  return 0;
}
