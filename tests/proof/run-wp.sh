#!/usr/bin/env bash
# Proves the scheduler's guards (bpf/c2c_guards.h) with Frama-C/WP: the ACSL contracts (kernel
# halves of INV-2, INV-6, INV-8) and absence of run-time errors (-wp-rte with unsigned overflow:
# no mask word out of bounds, no wrapping time arithmetic). Prints every goal and its prover, then
# the totals; exits 0 only when every goal is proved (a timeout or an unknown is a failure).
#
#   run-wp.sh [--header-dir DIR (a dir whose c2c_guards.h is proved instead: tests/mutants/mutate.py kernel)]
#             [--timeout S (per goal and prover, default 20: the slowest goal takes ~1 s on an idle
#              core, and the suite runs on 2 loaded ones)] [--jobs N (default 2)]
#             [--functions F1,F2 (only these functions' goals: a mutant is killed by its own)]
#             [--stamp FILE (after a whole-header PASS, FILE holds --print-inputs-hash: the
#              kill matrix's kernel section then takes this run as its baseline, not a second proof)]
#             [--print-inputs-hash (the SHA-256 of everything the proof reads, and exit)]
#             [--cache-dir DIR (WP's cache of prover results: a goal whose text, prover and version
#              are in DIR as proved is not sent to the prover again. Only proofs are kept: every
#              other result (a timeout, an unknown) is removed after the run, so a goal missed under
#              load is proved afresh next time and a goal never counts as proved without a proof.
#              proof.guards_wp and tests/mutants/mutate.py kernel share one, so a mutant's proof
#              sends only the goals its mutation changed to the provers)]
#
# Provers: Z3 and CVC4 through Why3 (Debian bookworm: z3, cvc4, why3, frama-c-base; scripts/setup).
# Debian has no Alt-Ergo and its CVC5 (1.0.3) is newer than Why3 1.5.1 recognizes. The Why3
# configuration is detected afresh into a temporary file, so no ~/.why3.conf is needed or touched.
# Exit codes: 0 all proved, 1 a goal not proved or Frama-C failed, 77 Frama-C or a prover missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
header_dir="" timeout_s=20 jobs=2 functions="" stamp="" print_hash=0 cache_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --header-dir) header_dir=$(cd "$2" && pwd); shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --functions) functions=$2; shift 2 ;;
    --stamp) stamp=$2; shift 2 ;;
    --print-inputs-hash) print_hash=1; shift ;;
    --cache-dir) if mkdir -p "$2" 2>/dev/null && [ -w "$2" ]; then cache_dir=$(cd "$2" && pwd)
                 else echo "run-wp: $2 cannot be written: proving without the cache"; fi; shift 2 ;;
    *) echo "run-wp: unknown argument $1" >&2; exit 2 ;;
  esac
done
# What a whole-header proof depends on: the header, the ABI it includes, the proof's harness and
# stubs, this script (its flags and timeout), and the provers' versions.
inputs_hash() {
  { cat "$src/bpf/c2c_guards.h" "$src/bpf/claim2core_abi.h" "$here/guards_proof.c" "$0"
    find "$here/include" -type f | LC_ALL=C sort | xargs cat
    echo "timeout=$timeout_s"; frama-c -version 2>&1; why3 --version 2>&1; z3 --version 2>&1; cvc4 --version 2>&1 | head -1
  } | sha256sum | cut -d' ' -f1
}
if [ $print_hash -eq 1 ]; then inputs_hash; exit 0; fi
[ -z "$stamp" ] || rm -f "$stamp"
for tool in frama-c why3 z3 cvc4; do
  command -v "$tool" >/dev/null || { echo "run-wp: SKIP: $tool missing (scripts/setup installs it)"; exit 77; }
done
work=$(mktemp -d /tmp/c2c-wp.XXXXXX)
trap 'rm -rf "$work"' EXIT
export WHY3CONFIG=$work/why3.conf
why3 config detect -C "$WHY3CONFIG" >"$work/detect.log" 2>&1 || { cat "$work/detect.log"; exit 1; }

includes="${header_dir:+-I$header_dir }-I$src/bpf -I$here/include"
cache=(-wp-cache none)
[ -z "$cache_dir" ] || cache=(-wp-cache update -wp-cache-dir "$cache_dir")
start=$(date +%s.%N)
set +e
# -c11: the ABI header's _Static_assert. -pp-annot: ACSL sees the header's macros (C2C_MAX_CPUS...).
(cd "$work" && nice frama-c -c11 -pp-annot -cpp-extra-args="$includes" \
  -wp -wp-rte -warn-unsigned-overflow -wp-prover z3,cvc4 -wp-timeout "$timeout_s" -wp-par "$jobs" \
  "${cache[@]}" ${functions:+-wp-fct "$functions"} "$here/guards_proof.c") >"$work/wp.log" 2>&1
rc=$?
# Keep only proofs in the cache (see --cache-dir): WP also records timeouts and unknowns, which
# are facts about this run's load and time limit, not about the goal.
if [ -n "$cache_dir" ]; then
  find "$cache_dir" -maxdepth 1 -name '*.json' -print0 |
    xargs -0 -r grep -L '"verdict": *"valid"' | xargs -r rm -f
fi
set -e
end=$(date +%s.%N)
grep -E "^\[wp\] \[[^]]*\] Goal " "$work/wp.log" || true
summary=$(grep -A4 "Proved goals:" "$work/wp.log" || true)
echo "$summary"
proved=$(echo "$summary" | sed -n 's/.*Proved goals: *\([0-9]*\) *\/ *\([0-9]*\).*/\1/p')
total=$(echo "$summary" | sed -n 's/.*Proved goals: *\([0-9]*\) *\/ *\([0-9]*\).*/\2/p')
printf 'run-wp: %s of %s goals proved in %.1f s wall\n' "${proved:-0}" "${total:-?}" "$(echo "$end - $start" | bc)"
if [ $rc -ne 0 ] || [ -z "$total" ] || [ "$total" -eq 0 ] || [ "$proved" != "$total" ]; then
  grep -E "Failed|Timeout|Unknown|Error|error" "$work/wp.log" | head -40 || true
  echo "run-wp: FAIL (frama-c rc=$rc)"
  exit 1
fi
if [ -n "$stamp" ] && [ -z "$header_dir" ] && [ -z "$functions" ]; then inputs_hash >"$stamp"; fi
echo "run-wp: PASS"
