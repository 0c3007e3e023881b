#!/usr/bin/env bash
# Builds prosgrow and runs the whole test suite:
#   0. the formatting check (scripts/check_format.sh, .clang-format);
#   1. release build, every test (unit, integration, end-to-end) via CTest;
#   2. the GPU backend (docs/gpu.md): -DPROSGROW_GPU=cuda compiled and linked
#      (sm_90, warnings as errors; its op tests report Skipped without a GPU),
#      and -DPROSGROW_GPU=emulated, whose op tests run the kernels on the CPU;
#   3. ASan+UBSan build, the unit tests again under the sanitizers;
#   4. the short fuzzing pass (scripts/fuzz_smoke.sh).
# Ends with how many tests ran, passed, failed and were skipped, and why
# (scripts/test_summary.py, from CTest's JUnit files).
# Works on a fresh Debian 12 machine (installs what it needs first).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The tree matches .clang-format (fails fast, before any build).
bash scripts/check_format.sh
JOBS=$(nproc)
# ccache (from setup.sh) with the checkout as base directory: compile commands
# are then the same in any clone, so a machine that built prosgrow before
# reuses its objects. A cold cache only costs a lookup per file.
export CCACHE_BASEDIR="$PWD"
LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPROSGROW_WERROR=ON "${LAUNCHER[@]}" >/dev/null
ninja -C build -j"$JOBS"
if [ -f tests/node/package-lock.json ]; then
  (cd tests/node && npm ci --no-audit --no-fund --loglevel=error)
fi
# Every test, the what-if trace check (label "benchmark", ~1 min and 1.6 GiB) included.
summary=(release build/ctest-junit.xml)
report() { python3 scripts/test_summary.py "${summary[@]}" || true; }
rc=0
ctest --test-dir build --output-on-failure -j"$JOBS" --timeout 900 --output-junit ctest-junit.xml || rc=$?
if [ "$rc" -ne 0 ]; then report; exit "$rc"; fi

# The GPU trees build the GPU targets, the device executor and the CLI on it
# (the rest is the same code as build/, from ccache when it is there).
if [ -x /usr/local/cuda/bin/nvcc ] || command -v nvcc >/dev/null; then
  cmake -S . -B build-cuda -G Ninja -DCMAKE_BUILD_TYPE=Release -DPROSGROW_WERROR=ON -DPROSGROW_GPU=cuda \
    "${LAUNCHER[@]}" >/dev/null
  ninja -C build-cuda -j"$JOBS" gpu_tests gpu_copy_bench device_executor_tests prosgrow
  summary+=(cuda build-cuda/ctest-junit.xml)
  ctest --test-dir build-cuda -R '^(gpu_tests|device_executor_tests)$' --output-on-failure \
    --output-junit ctest-junit.xml || rc=$?
  if [ "$rc" -ne 0 ]; then report; exit "$rc"; fi
else
  echo "test.sh: no CUDA toolkit (nvcc): the -DPROSGROW_GPU=cuda build is NOT checked here" >&2
fi
cmake -S . -B build-emu -G Ninja -DCMAKE_BUILD_TYPE=Release -DPROSGROW_WERROR=ON -DPROSGROW_GPU=emulated \
  "${LAUNCHER[@]}" >/dev/null
ninja -C build-emu -j"$JOBS" gpu_tests gpu_copy_bench prosgrow device_executor_tests
# The op tests; the device executor against the CPU forward pass and the tiered
# multi-turn run on it; `serve --device cuda` against `--device cpu` (fixture models);
# `bench-model --device cuda` on the device executor.
summary+=(emulated build-emu/ctest-junit.xml)
ctest --test-dir build-emu -R '^(gpu_tests|device_executor_tests|device_serve_emulated(_moe|_bf16|_mla|_fp8)?|device_bench_model_emulated|doctor_device_emulated)$' \
  --output-on-failure --timeout 1500 --output-junit ctest-junit.xml || rc=$?
if [ "$rc" -ne 0 ]; then report; exit "$rc"; fi

# The sanitizer build compiles only what the unit tests (and the CLI's corrupt-
# file test) need, at -O1 (quick to build, still fast enough to run).
# The GPU kernels' op tests under the sanitizers run from a tree of their own
# (build-asan-emu, below): -DPROSGROW_GPU=emulated there builds only gpu_tests.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="-O1" -DPROSGROW_SANITIZE=ON "${LAUNCHER[@]}" \
  >/dev/null
unit_targets=$(ninja -C build-asan -t targets all | sed -n 's/^\([a-z0-9_]*_tests\): .*/\1/p' | grep -v -e '^e2e_tests$' -e '^cmake_' | sort -u)
# prosgrow itself too: the CLI's corrupt-GGUF test (label unit) runs on it.
ninja -C build-asan -j"$JOBS" $unit_targets prosgrow
summary+=(asan build-asan/ctest-junit.xml)
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan -L unit --output-on-failure -j"$JOBS" --timeout 1800 --output-junit ctest-junit.xml ||
  rc=$?
if [ "$rc" -ne 0 ]; then report; exit "$rc"; fi
# The emulated GPU op tests under ASan+UBSan (only gpu_tests: the device
# executor's tests take minutes emulated, many more sanitized).
cmake -S . -B build-asan-emu -G Ninja -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="-O1" -DPROSGROW_SANITIZE=ON \
  -DPROSGROW_GPU=emulated "${LAUNCHER[@]}" >/dev/null
ninja -C build-asan-emu -j"$JOBS" gpu_tests
summary+=(asan-gpu build-asan-emu/ctest-junit.xml)
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan-emu -R '^gpu_tests$' --output-on-failure --timeout 1800 --output-junit ctest-junit.xml ||
  rc=$?
if [ "$rc" -ne 0 ]; then report; exit "$rc"; fi
bash scripts/fuzz_smoke.sh || rc=$?  # libFuzzer targets (clang, ASan+UBSan): replay both corpora, fuzz the request path 60 s
report
[ "$rc" -eq 0 ] && echo "fuzz smoke: passed" || echo "fuzz smoke: FAILED"
exit "$rc"
