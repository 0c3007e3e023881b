// prosgrow: one binary, many subcommands.
#include <cstdio>
#include <cstring>
#include <string>

#include "bench/bench_cli.h"
#include "build_info.h"
#include "eval/eval_cli.h"
#include "subcommands.h"
#include "synth/make_model_cli.h"

namespace {

struct Command {
  const char* name;
  int (*main)(int, char**);
  const char* help;
};

const Command kCommands[] = {
    {"generate", pg::GenerateMain, "generate text from a prompt"},
    {"tokenize", pg::TokenizeMain, "print the token ids of a text"},
    {"make-model", pg::MakeModelMain, "write a synthetic GGUF model in a real model's shape"},
    {"bench-model", pg::BenchModelMain, "prefill / decode throughput of a model (like llama-bench)"},
    {"serve", pg::ServeMain, "OpenAI-compatible HTTP server"},
    {"route", pg::RouteMain, "cache-aware router in front of serve replicas (follows their KV events)"},
    {"doctor", pg::DoctorMain, "deployment checklist: CPU, memory, disk tier, Redis, endpoints, model"},
    {"bench", pg::BenchMain, "agentic benchmark against an OpenAI-compatible server"},
    {"eval", pg::EvalMain, "math quality check against an OpenAI-compatible server"},
};

void Usage(FILE* out) {
  std::fprintf(out, "usage: prosgrow <command> [options]\n\ncommands:\n");
  for (const Command& c : kCommands) std::fprintf(out, "  %-12s %s\n", c.name, c.help);
  std::fprintf(out,
               "\nRun 'prosgrow <command> --help' for the options of a command;\n"
               "'prosgrow --version' for the version, commit, build type and kernel ISA.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    Usage(stderr);
    return 2;
  }
  std::string cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    Usage(stdout);
    return 0;
  }
  if (cmd == "--version" || cmd == "version") {
    std::printf("%s\n", pg::BuildInfoLine(pg::ThisBuild()).c_str());
    return 0;
  }
  for (const Command& c : kCommands)
    if (cmd == c.name) return c.main(argc - 1, argv + 1);
  std::fprintf(stderr, "prosgrow: unknown command '%s' (see prosgrow --help)\n", cmd.c_str());
  return 2;
}
