#!/usr/bin/env bash
# Installs the Debian packages prosgrow needs to build, test and benchmark.
# Idempotent: packages already present are left alone.
set -euo pipefail
PKGS=(
  build-essential cmake ninja-build git pkg-config clang ccache
  clang-format  # scripts/check_format.sh (the house style, .clang-format)
  universal-ctags  # scripts/code_shape.py (function lengths)
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libcpp-httplib-dev libcli11-dev libfmt-dev
  libxxhash-dev libzstd-dev liblz4-dev libssl-dev
  libpcre2-dev libutf8proc-dev  # tokenizer.json: split regexes (PCRE2) and Unicode normalizers
  libclang-rt-14-dev curl python3 gnuplot-nox prometheus
  python3-numpy  # ../shared/tools/fidelity.py, the float64 reference (docs/performance.md)
  libhiredis-dev redis-server  # the Redis check of `prosgrow doctor` and its test
  libzmq3-dev cppzmq-dev libmsgpack-cxx-dev  # KV events (vLLM's ZMQ + msgpack format)
  python3-zmq python3-msgpack  # the independent KV-event subscriber in the tests
)
# Node.js (for the OpenAI SDK test): some images ship a nodejs that bundles npm
# and conflicts with Debian's npm package, so only ask for them when absent.
command -v node >/dev/null 2>&1 || PKGS+=(nodejs)
command -v npm >/dev/null 2>&1 || PKGS+=(npm)
missing=()
for p in "${PKGS[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
