// Helpers for end-to-end tests: running the prosgrow binary, fixture paths.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

namespace pg::test {

struct RunResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `prosgrow <args>` through /bin/sh, capturing stdout and stderr.
inline RunResult RunProsgrow(const std::string& args) {
  namespace fs = std::filesystem;
  static int counter = 0;
  fs::path err_path =
      fs::temp_directory_path() / ("pg_e2e_err_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  std::string cmd = std::string(PROSGROW_BINARY) + " " + args + " 2>" + err_path.string();
  RunResult r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (FILE* e = std::fopen(err_path.c_str(), "r")) {
    while ((n = std::fread(buf.data(), 1, buf.size(), e)) > 0) r.err.append(buf.data(), n);
    std::fclose(e);
  }
  fs::remove(err_path);
  return r;
}

inline std::string Fixture(const std::string& rel) { return std::string(PROSGROW_SHARED_DIR) + "/fixtures/" + rel; }
inline bool HaveFixtures() { return std::filesystem::exists(Fixture("models/tiny-llama-gpt2.gguf")); }

}  // namespace pg::test
