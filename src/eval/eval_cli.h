// EvalMain: the `prosgrow eval` command line.
//
//   prosgrow eval --url URL --dataset FILE.jsonl [options]   run and grade
//   prosgrow eval compare BASE.json OPT.json [--fail-on-flip]
//
// argv[0] is the word "eval" itself (apps/main.cc calls EvalMain(argc - 1,
// argv + 1)); the options follow. Exit codes:
//   0  done (compare: no gate, or the gate passed)
//   1  compare --fail-on-flip: a baseline-correct answer became wrong or its
//      request failed in OPT
//   2  bad arguments, unreadable/malformed dataset or results file, or the
//      output directory cannot be written (one-line message on stderr)
//   3  run finished but some requests failed (they are in results.json with
//      verdict "failed"; accuracy counts only answered questions)
//
// Thread-safety: call from one thread (it owns its worker threads).
#pragma once

namespace pg {

int EvalMain(int argc, char** argv);

}  // namespace pg
