#include <cstdio>
#include <cstring>
int main(int argc, char** argv) {
  std::fprintf(stderr, "usage: prosgrow <command> [options]\n");
  return 2;
}
