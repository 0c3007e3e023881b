// SynthCorpusText: an English training text written for this project, used
// to train the builtin byte-level BPE vocabulary of make-model.
//
// It is a handful of hand-written paragraphs (software, inference servers,
// agents) followed by template expansions driven by a fixed-seed generator:
// agent tool-calling dialogues, arithmetic word problems with their worked
// answers, code snippets in several languages, JSON objects, and sentences
// and program identifiers drawn from a general English lexicon, and
// sentences about invented (syllable-built) names of people and places. The result
// is deterministic (same bytes on every run and platform), about 600 KB (built at run time; this source is small).
//
// Thread-safety: built once on first use (function-local static).
#pragma once

#include <string>

namespace pg {

const std::string& SynthCorpusText();

}  // namespace pg
