// `prosgrow bench` command line. The prosgrow binary dispatches its "bench"
// subcommand here with argv[0] == "bench" and argv[1..] the arguments after
// it, e.g. `prosgrow bench --url http://127.0.0.1:8080 --workload agentic`
// calls BenchMain(argc - 1, argv + 1).
//
//   prosgrow bench --url URL --workload SPEC [options]   run a benchmark
//   prosgrow bench compare A.json B.json [...]            side-by-side table
//
// Returns the process exit code: 0 on success, 1 when the run failed (server
// unreachable, no request completed, files not writable), 2 on bad arguments
// (one-line message on stderr). Thread-safety: call from one thread.
#pragma once

namespace pg {

int BenchMain(int argc, char** argv);

}  // namespace pg
