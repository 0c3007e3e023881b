// Entry points of the prosgrow subcommands defined in apps/. Each receives
// argv with argv[0] = the subcommand name.
#pragma once

namespace pg {

int GenerateMain(int argc, char** argv);
int TokenizeMain(int argc, char** argv);
int BenchModelMain(int argc, char** argv);
int ServeMain(int argc, char** argv);
int DoctorMain(int argc, char** argv);
int RouteMain(int argc, char** argv);

}  // namespace pg
