#!/usr/bin/env bash
# Runs one SPIN verification of a Promela model and judges the result.
#
#   run-spin.sh --model node.pml --mode safety|liveness --expect ok|violation
#               [--tag INV3] [--workdir DIR] [-- -DBUG_X -DEVENTS=5 ...]
#
# safety:   spin -a; cc -DNOCLAIM -DSAFETY; ./pan          (assertions, invalid end states)
# liveness: spin -a; cc -DNFAIR=3;         ./pan -a -f     (acceptance cycles, weak fairness)
#
# --expect ok:        passes only if pan reports "errors: 0" and the search was complete.
# --expect violation: passes only if pan finds an error (and, with --tag, the violated assertion
#                     names that invariant, e.g. INV3; in liveness mode: an acceptance cycle).
# Prints one summary line: "spin: <model> <mode> <defines> errors=N states=N depth=N time=Ns".
set -euo pipefail

model="" mode="" expect="" tag="" workdir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --model) model="$2"; shift 2 ;;
    --mode) mode="$2"; shift 2 ;;
    --expect) expect="$2"; shift 2 ;;
    --tag) tag="$2"; shift 2 ;;
    --workdir) workdir="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "run-spin: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
defines=("$@")
[ -f "$model" ] || { echo "run-spin: --model '$model' not found" >&2; exit 2; }
case "$mode" in safety|liveness) ;; *) echo "run-spin: --mode must be safety or liveness" >&2; exit 2 ;; esac
case "$expect" in ok|violation) ;; *) echo "run-spin: --expect must be ok or violation" >&2; exit 2 ;; esac
command -v spin >/dev/null || { echo "run-spin: spin not installed (scripts/setup)" >&2; exit 2; }

if [ -z "$workdir" ]; then
  workdir=$(mktemp -d /tmp/c2c-spin.XXXXXX)
  trap 'rm -rf "$workdir"' EXIT
fi
mkdir -p "$workdir"
cp "$model" "$workdir/model.pml"
cd "$workdir"

start=$(date +%s.%N)
spin "${defines[@]}" -a model.pml >spin.out 2>&1 || { cat spin.out; echo "run-spin: spin -a failed" >&2; exit 1; }
if [ "$mode" = safety ]; then
  ccflags=(-DNOCLAIM -DSAFETY -DCOLLAPSE)
  panflags=(-m2000000)
else
  ccflags=(-DNFAIR=3 -DCOLLAPSE)
  panflags=(-a -f -m2000000)
fi
# pan.c is generated code: its warnings are not ours (-w). -O0: on 2 busy cores compiling pan.c
# at -O2 costs more than it saves for searches of this size (C2C_SPIN_OPT overrides).
cc "${C2C_SPIN_OPT:--O0}" -w "${ccflags[@]}" -o pan pan.c
./pan "${panflags[@]}" >pan.out 2>&1 || true
end=$(date +%s.%N)

errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' pan.out | head -1)
states=$(sed -n 's/^ *\([0-9][0-9.e+]*\) states, stored.*/\1/p' pan.out | head -1)
depth=$(sed -n 's/.*depth reached \([0-9][0-9]*\).*/\1/p' pan.out | head -1)
elapsed=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
echo "spin: $(basename "$model") $mode ${defines[*]:-(no defines)} errors=${errors:-?} states=${states:-?} depth=${depth:-?} time=${elapsed}s"

if [ -z "$errors" ] || [ -z "$states" ]; then
  cat pan.out
  echo "run-spin: could not parse pan's output (run incomplete?)" >&2
  exit 1
fi

if [ "$expect" = ok ]; then
  if [ "$errors" != 0 ]; then
    cat pan.out
    [ -f model.pml.trail ] && spin "${defines[@]}" -t -p -g model.pml | tail -60
    echo "run-spin: $errors error(s) found" >&2
    exit 1
  fi
  # An incomplete search proves nothing: a depth cut-off or a bitstate/hash-compact run.
  if grep -qE "max search depth too small|Search not completed|out of memory|hash-compact|bit-state" pan.out; then
    cat pan.out
    echo "run-spin: search incomplete" >&2
    exit 1
  fi
  exit 0
fi

# expect violation
if [ "$errors" = 0 ]; then
  cat pan.out
  echo "run-spin: expected a counterexample, none found" >&2
  exit 1
fi
violation=$(grep -E "assertion violated|acceptance cycle|invalid end state" pan.out | head -1 || true)
echo "spin: counterexample: ${violation}"
if [ -n "$tag" ] && ! grep -q -- "$tag" <<<"$violation"; then
  echo "run-spin: the counterexample is not the expected one (wanted '$tag')" >&2
  exit 1
fi
# Replaying the trail shows the interleaving (kept short: the last steps matter).
spin "${defines[@]}" -t -p model.pml 2>&1 | grep -E "proc .*\[|assertion|cycle" | tail -25 || true
exit 0
