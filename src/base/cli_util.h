// Shared CLI plumbing for the prosgrow subcommands: CLI11 parsing with the
// project's exit codes (0 help, 2 bad arguments with a one-line message).
// The app's name is the command as the user types it, e.g. "prosgrow bench".
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

namespace pg {

// Returns -1 when parsing succeeded (continue), else the exit code to return.
inline int ParseCli(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);  // prints the (sub)command's help to stdout, returns 0
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string msg = e.what();
    for (char& c : msg)
      if (c == '\n') c = ' ';
    std::fprintf(stderr, "%s: %s (see --help)\n", app.get_name().c_str(), msg.c_str());
    return 2;
  }
  return -1;
}

// One-line error and exit code 2 (bad input) for subcommands.
inline int Fail(const std::string& cmd, const std::string& message) {
  std::string m = message;
  for (char& c : m)
    if (c == '\n') c = ' ';
  std::fprintf(stderr, "prosgrow %s: %s\n", cmd.c_str(), m.c_str());
  return 2;
}

}  // namespace pg
