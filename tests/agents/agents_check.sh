#!/usr/bin/env bash
# The coding agents people use, against a real `prosgrow serve` on a fixture
# model (issue 24), each configured with nothing but a base URL, a key, the
# model's name and its documented output cap:
#
#   Claude Code (@anthropic-ai/claude-code)  `claude -p`, then `claude -p --continue`;
#       the second run must read its context from the KV cache (cached_tokens > 0
#       in its request's log line).
#   Codex CLI (@openai/codex)                 `codex exec` with a custom provider
#                                             (directly, and through `prosgrow route`),
#       wire_api = "responses", in a temporary CODEX_HOME, with nothing but the
#       provider's base URL and key: no web_search setting, so Codex declares its
#       hosted web_search tool and the server must skip it (the request's log line
#       says skipped_tools=web_search). Then again with the key from an auth
#       command, which makes Codex read its model catalogue from /v1/models: it
#       must find the model there (no "Model metadata ... not found" warning).
#   opencode (opencode-ai)                    `opencode run` with an OpenAI-compatible provider.
#
# "Complete" means the client exits 0 after a whole request/response cycle
# (random weights: the text is gibberish) and the server's log shows its
# requests answered 200. The clients are the versions pinned in
# tests/agents/package.json (exact versions) and package-lock.json, installed
# here with `npm install --no-save` when missing (not `npm ci`: npm 11 refuses a
# lock whose optional platform packages the registry here does not list, e.g.
# opencode-darwin-arm64, though the lock is what `npm install` writes); the check exits 77 (CTest: Skipped) with the reason when npm,
# node or the fixture model is not there. Every client runs with a temporary
# HOME and its telemetry, update checks and catalogue downloads switched off
# by environment, so it reaches no network but the server (and npm, for
# opencode's provider package).
#
# usage: agents_check.sh PROSGROW_BIN [SHARED_DIR]
set -uo pipefail
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
shared=${2:-$here/../../../shared}
# shellcheck source=SCRIPTDIR/../serve_lib.sh
source "$here/../serve_lib.sh" || exit 2

skip() { echo "SKIPPED: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

model=$shared/fixtures/models/tiny-qwen3-spm.gguf
[[ -f $model ]] || skip "fixture model $model absent (../shared)"
command -v node >/dev/null && command -v npm >/dev/null || skip "node or npm not installed"

# The pinned clients: installed unless every one is there at its pinned version.
installed() {
  node -e '
    const fs = require("fs"), dir = process.argv[1];
    const want = JSON.parse(fs.readFileSync(dir + "/package.json")).dependencies;
    for (const [name, version] of Object.entries(want)) {
      const p = dir + "/node_modules/" + name + "/package.json";
      if (!fs.existsSync(p) || JSON.parse(fs.readFileSync(p)).version !== version) process.exit(1);
    }' "$here"
}
if ! installed; then
  timeout 60 npm ping --loglevel=error >/dev/null 2>&1 || skip "the npm registry is unreachable (npm ping failed)"
  (cd "$here" && timeout 1200 npm install --no-save --no-audit --no-fund --loglevel=error) ||
    fail "npm install in $here"
fi
claude=$here/node_modules/.bin/claude
codex=$here/node_modules/.bin/codex
opencode=$here/node_modules/.bin/opencode

work=$(mktemp -d) || exit 2
serve_lib_remove_at_exit "$work"
log=$work/serve.log
key=sk-agents-check
name=tiny-qwen3
# Claude Code's system prompt and tools are ~25k tokens.
serve_lib_serve "$log" "$bin" serve -m "$model" --served-model-name "$name" --port 0 --threads 2 \
  --ctx-size 65536 --api-key "$key" --policy optimized --default-max-tokens 32 || exit 1
url=$SERVE_LIB_URL

# Lines "request POST <path> status=..." of the server log (one per request).
requests() { grep -F "request POST $1 " "$log" || true; }
gets() { grep -F "request GET $1" "$log" || true; }
count() { requests "$1" | grep -c "status=$2" || true; }

mkdir -p "$work/home" "$work/project"
cd "$work/project" || exit 2
export HOME=$work/home XDG_CONFIG_HOME=$work/home/.config XDG_DATA_HOME=$work/home/.local/share \
  XDG_CACHE_HOME=$work/home/.cache NO_COLOR=1

# 1. Claude Code, two runs, the second continuing the first. A random-weight
# model rarely ends its turn before the output cap, and Claude Code exits 1
# when a reply stops at max_tokens ("exceeded the N output token maximum"),
# after the whole response arrived: that exit counts as complete, any other
# failure does not.
claude_env=(ANTHROPIC_BASE_URL="$url" ANTHROPIC_API_KEY="$key" ANTHROPIC_MODEL="$name"
  ANTHROPIC_DEFAULT_HAIKU_MODEL="$name" CLAUDE_CODE_MAX_OUTPUT_TOKENS=32
  DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 DISABLE_AUTOUPDATER=1 DISABLE_BUG_COMMAND=1
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1)
run_claude() {  # OUT ARGS...
  local out=$1 rc=0
  shift
  env "${claude_env[@]}" timeout 600 "$claude" "$@" >"$out" 2>&1 || rc=$?
  if [[ $rc -eq 0 ]]; then
    echo "exit 0"
  elif grep -q "exceeded the [0-9]* output token maximum" "$out"; then
    echo "exit $rc: the reply reached the output cap"
  else
    fail "claude $* exited $rc ($(tail -c 600 "$out"))"
  fi
}
how1=$(run_claude "$work/claude1.out" -p "Say hello.") || { echo "$how1"; exit 1; }
first=$(count /v1/messages 200)
[[ $first -ge 1 ]] || fail "claude -p: no /v1/messages answered 200 ($(requests /v1/messages | tail -3))"
how2=$(run_claude "$work/claude2.out" -p --continue "And goodbye.") || { echo "$how2"; exit 1; }
second=$(requests /v1/messages | grep "status=200" | sed -n "$((first + 1))p")
[[ -n $second ]] || fail "claude --continue: no new /v1/messages answered 200"
cached=$(sed -n 's/.* cached_tokens=\([0-9]*\).*/\1/p' <<<"$second")
prompt=$(sed -n 's/.* prompt_tokens=\([0-9]*\).*/\1/p' <<<"$second")
[[ ${cached:-0} -gt 0 ]] || fail "claude --continue read nothing from the cache: $second"
echo "claude code: ok (run 1 $how1; run 2 $how2, its first request read $cached of $prompt prompt tokens from the cache)"

# 2. Codex CLI, the Responses API through a custom provider: the base URL and
# the key (AUTH is the provider's key setting), nothing else.
codex_run() {  # HOME_DIR AUTH
  mkdir -p "$1"
  cat >"$1/config.toml" <<EOF
model = "$name"
model_provider = "prosgrow"
check_for_update_on_startup = false

[model_providers.prosgrow]
name = "prosgrow"
base_url = "$url/v1"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
$2

[analytics]
enabled = false
EOF
  # As Claude Code, Codex exits 1 when the reply stops at the cap (response.incomplete).
  local rc=0 out=$1/codex.out
  CODEX_HOME=$1 PROSGROW_API_KEY=$key timeout 600 "$codex" exec --skip-git-repo-check "Say hello." >"$out" 2>&1 || rc=$?
  if [[ $rc -eq 0 ]]; then
    grep -q "^ERROR" "$out" && fail "codex exec reported an error: $(grep '^ERROR' "$out" | head -3)"
    echo "exit 0"
  elif [[ $(grep "^ERROR" "$out" | sort -u) == "ERROR: Incomplete response returned, reason: max_output_tokens" ]]; then
    echo "exit $rc: the reply reached the output cap"
  else
    fail "codex exec exited $rc ($(tail -c 600 "$out"))"
  fi
}
how=$(codex_run "$work/codex" 'env_key = "PROSGROW_API_KEY"') || { echo "$how"; exit 1; }
[[ $(count /v1/responses 200) -ge 1 ]] || fail "codex: no /v1/responses answered 200 ($(requests /v1/responses | tail -3))"
requests /v1/responses | grep "status=200" | grep -q " skipped_tools=.*web_search" ||
  fail "codex: no request skipped its hosted web_search tool ($(requests /v1/responses | tail -3))"
echo "codex: ok ($how; $(count /v1/responses 200) responses, its hosted web_search skipped)"
# The key from an auth command: Codex then reads its model catalogue from /v1/models.
before=$(count /v1/responses 200)
auth=$(printf '[model_providers.prosgrow.auth]\ncommand = "printf"\nargs = ["%s"]' "$key")
how=$(codex_run "$work/codex-catalogue" "$auth") || { echo "$how"; exit 1; }
[[ $(count /v1/responses 200) -gt $before ]] || fail "codex (auth command): no /v1/responses answered 200"
gets /v1/models | grep -q "status=200" || fail "codex (auth command) never read /v1/models ($(gets /v1/models))"
if grep -qiE "Model metadata for .* not found|failed to decode models response" "$work/codex-catalogue/codex.out"; then
  fail "codex did not take its catalogue from /v1/models: $(grep -iE 'metadata|models response' "$work/codex-catalogue/codex.out")"
fi
echo "codex (key from an auth command): ok ($how; its model metadata read from /v1/models)"

# Codex through `prosgrow route` in front of the same server: the router
# forwards /v1/responses (and /v1/models) as serve answers them.
serve_pid=$SERVE_LIB_PID
rport=$(serve_lib_free_port)
serve_lib_start "$work/route.log" "$bin" route --port "$rport" --replica "$url" || fail "route did not start"
route_pid=$SERVE_LIB_PID
serve_lib_wait_health "$route_pid" "$work/route.log" "http://127.0.0.1:$rport" || fail "the router never became healthy"
before=$(count /v1/responses 200)
serve_url=$url
url=http://127.0.0.1:$rport
how=$(codex_run "$work/codex-route" 'env_key = "PROSGROW_API_KEY"') || { echo "$how"; exit 1; }
url=$serve_url
[[ $(count /v1/responses 200) -gt $before ]] || fail "codex through the router: no /v1/responses reached the server"
serve_lib_stop "$route_pid" || fail "the router died"
SERVE_LIB_PID=$serve_pid
echo "codex through prosgrow route: ok ($how)"

# 3. opencode, an OpenAI-compatible provider (its @ai-sdk package comes from npm).
export OPENCODE_CONFIG_CONTENT
OPENCODE_CONFIG_CONTENT=$(cat <<EOF
{"\$schema": "https://opencode.ai/config.json", "model": "prosgrow/$name", "autoupdate": false, "share": "disabled",
 "provider": {"prosgrow": {"npm": "@ai-sdk/openai-compatible", "name": "prosgrow",
   "options": {"baseURL": "$url/v1", "apiKey": "$key"},
   "models": {"$name": {"name": "$name", "limit": {"context": 65536, "output": 32}}}}}}
EOF
)
before=$(count /v1/chat/completions 200)
OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_LSP_DOWNLOAD=1 \
  OPENCODE_DISABLE_DEFAULT_PLUGINS=1 OPENCODE_DISABLE_SHARE=1 OPENCODE_DISABLE_CLAUDE_CODE=1 \
  OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX=32 timeout 600 "$opencode" run "Say hello." >"$work/opencode.out" 2>&1 ||
  fail "opencode run exited $? ($(tail -c 600 "$work/opencode.out"))"
[[ $(count /v1/chat/completions 200) -gt $before ]] ||
  fail "opencode: no /v1/chat/completions answered 200 ($(requests /v1/chat/completions | tail -3))"
echo "opencode: ok"

# The server counted them under their own routes.
metrics=$(curl -fsS "$url/metrics") || fail "/metrics"
for route in /v1/messages /v1/responses /v1/chat/completions; do
  grep -q "prosgrow_http_requests_total{endpoint=\"$route\",status=\"200\"}" <<<"$metrics" ||
    fail "/metrics has no 200s under endpoint=\"$route\""
done
serve_lib_stop "$SERVE_LIB_PID" || fail "the server died"
echo "agents check: ok"
