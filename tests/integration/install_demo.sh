#!/usr/bin/env bash
# The installed tree works on its own (issue 17, item 1): `cmake --install` into a staging root,
# the root moved elsewhere (the binaries find their BPF objects relative to themselves, not in a
# build tree), every binary answers --version, the man pages and completions are there, no
# binary's .rodata names the build directory, and the installed claim2cored + claim2core run a
# mini demo: a node policy selects the EngineCore threads of a helper process and their entries
# appear in the pinned map under a private pin root. A staged tree without policy_maps.bpf.o
# must refuse to start naming the staged path (so the build tree is never a silent fallback).
#   install_demo.sh <build dir> <source dir> <helper: c2c-fake-vllm>
set -euo pipefail
BUILD=$(realpath "$1"); SRC=$(realpath "$2"); FAKE=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
STAGE=$(mktemp -d /tmp/c2c-install-test.XXXXXX)
PIN_ROOT=/sys/fs/bpf/c2c-install-test-$$
DAEMON_PID="" FAKE_PID=""
cleanup() {
  [ -n "$FAKE_PID" ] && kill "$FAKE_PID" 2>/dev/null && wait "$FAKE_PID" 2>/dev/null
  if [ -n "$DAEMON_PID" ]; then kill -TERM "$DAEMON_PID" 2>/dev/null; wait "$DAEMON_PID" 2>/dev/null; fi
  rm -rf "$STAGE" "$PIN_ROOT"
}
trap cleanup EXIT
unset C2C_BPF_DIR C2C_POLICY_MAPS_OBJ

cmake --install "$BUILD" --prefix "$STAGE/first/usr" >"$STAGE/install.log" || { cat "$STAGE/install.log"; fail "cmake --install"; }
mv "$STAGE/first" "$STAGE/moved"   # relocated: nothing may depend on the install prefix either
ROOT=$STAGE/moved/usr
VERSION=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$BUILD/CMakeCache.txt")

for bin in claim2cored claim2core claim2core-observer c2c-sched; do
  [ -x "$ROOT/bin/$bin" ] || fail "$bin not installed in bin/"
  out=$("$ROOT/bin/$bin" --version) || fail "$bin --version exited non-zero"
  [[ $out == "$bin $VERSION"* ]] || fail "$bin --version printed '$out', expected '$bin $VERSION...'"
  [ -s "$ROOT/share/man/man1/$bin.1" ] || fail "no man page $bin.1"
  grep -qF -- '\-\-version' "$ROOT/share/man/man1/$bin.1" || fail "$bin.1 does not document --version"
  objcopy -O binary --only-section=.rodata "$ROOT/bin/$bin" "$STAGE/rodata"
  if grep -aqF "$BUILD" "$STAGE/rodata"; then fail "$bin's .rodata names the build directory $BUILD"; fi
done
for obj in task_iter task_events policy_maps; do
  [ -s "$ROOT/lib/claim2core/$obj.bpf.o" ] || fail "$obj.bpf.o not in lib/claim2core"
done
for f in lib/systemd/system/claim2cored.service share/claim2core/claim2cored.yaml.example \
         share/claim2core/kubernetes share/bash-completion/completions/claim2core share/zsh/vendor-completions/_claim2core; do
  [ -e "$ROOT/$f" ] || fail "$f not installed"
done
grep -q "^ExecStart=$STAGE/first/usr/bin/claim2cored " "$ROOT/lib/systemd/system/claim2cored.service" ||
  fail "the unit's ExecStart does not name the install prefix's claim2cored"
# Bash completion of the installed script: `claim2core ge<TAB>` and `claim2core k8s <TAB>`.
comp() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _claim2core; echo "${COMPREPLY[*]}"' \
    _ "$ROOT/share/bash-completion/completions/claim2core" "$@"
}
[ "$(comp claim2core ge)" = get ] || fail "bash completion of 'claim2core ge' gave '$(comp claim2core ge)'"
[ "$(comp claim2core k8s '')" = "bindings --help -h" ] || fail "bash completion of 'claim2core k8s ' gave '$(comp claim2core k8s '')'"

if [ "$(id -u)" -ne 0 ] || ! mountpoint -q /sys/fs/bpf; then
  echo "SKIP: the demo part needs root and bpffs"; exit 0
fi
start_daemon() {  # start_daemon <log>
  "$ROOT/bin/claim2cored" --config /dev/null --node-name dgx-spark-gb10 --socket "$STAGE/sock" \
    --state-dir "$STAGE/state" --pin-root "$PIN_ROOT" --task-discovery scan >"$1" 2>&1 &
  DAEMON_PID=$!
}
export CLAIM2CORE_SOCKET=$STAGE/sock
CLI=("$ROOT/bin/claim2core")

# Without its policy_maps object the staged daemon must fail, and say where it looked.
mv "$ROOT/lib/claim2core/policy_maps.bpf.o" "$STAGE/policy_maps.bpf.o"
start_daemon "$STAGE/missing.log"
for _ in $(seq 100); do kill -0 "$DAEMON_PID" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$DAEMON_PID" 2>/dev/null; then fail "claim2cored started without lib/claim2core/policy_maps.bpf.o"; fi
wait "$DAEMON_PID" || true; DAEMON_PID=""
grep -q "policy_maps" "$STAGE/missing.log" || { cat "$STAGE/missing.log"; fail "the startup error does not name policy_maps"; }
mv "$STAGE/policy_maps.bpf.o" "$ROOT/lib/claim2core/policy_maps.bpf.o"
rm -rf "$PIN_ROOT" "$STAGE/state"

"$FAKE" >"$STAGE/fake.out" &
FAKE_PID=$!
for _ in $(seq 100); do grep -qx ready "$STAGE/fake.out" && break; sleep 0.1; done
ENGINE0=$(awk '$2 == "EngineCore_DP0" {print $1}' "$STAGE/fake.out")
[ -n "$ENGINE0" ] || fail "the helper printed no EngineCore_DP0 thread"
start_daemon "$STAGE/daemon.log"
for _ in $(seq 100); do "${CLI[@]}" status >/dev/null 2>&1 && break; sleep 0.2; done
"${CLI[@]}" status >/dev/null || { cat "$STAGE/daemon.log"; fail "the installed claim2cored does not answer status"; }
"${CLI[@]}" apply -f "$ROOT/share/claim2core/examples/policies/vllm-enginecore.yaml" >/dev/null || fail "apply"
has_entry() {
  bpftool -j map dump pinned "$PIN_ROOT/c2c_policy" 2>/dev/null |
    jq -e --argjson t "$ENGINE0" '[.[] | (.formatted.key.tid? // .key.tid?)] | index($t) != null' >/dev/null
}
for _ in $(seq 100); do has_entry && break; sleep 0.2; done
has_entry || { "${CLI[@]}" get intents; cat "$STAGE/daemon.log"; fail "EngineCore_DP0 ($ENGINE0) has no entry in $PIN_ROOT/c2c_policy"; }
"${CLI[@]}" explain "$ENGINE0" >/dev/null || fail "explain $ENGINE0"
echo "ok: installed tree at $ROOT (moved after install) ran the demo; EngineCore_DP0 $ENGINE0 is in $PIN_ROOT/c2c_policy"
