#!/bin/sh
# `report` end to end: exit codes, minimization, the regression files it writes.
# usage: report_cli_test.sh C2C_REPORT_BINARY SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$bin" report "$src/examples/llm-node.jsonl" >"$tmp/clean.out"; rc=$?
[ $rc -eq 0 ] || fail "a trace where every invariant holds: exit $rc, want 0"
grep -q "no failure" "$tmp/clean.out" || fail "clean trace: no 'no failure' line"

"$bin" report "$src/examples/invalid/bad-type.jsonl" >/dev/null 2>"$tmp/bad.err"; rc=$?
[ $rc -eq 2 ] || fail "a malformed trace: exit $rc, want 2"
grep -q "line 1" "$tmp/bad.err" || fail "malformed trace: the error does not name the line"

# The violating example: a kernel entry from generation 7 seen by a core at generation 0 (INV-4).
# Its node_info line does not matter, so the minimized trace is the bpf_observed line alone.
"$bin" report "$src/examples/violating/lagging-generation-file.jsonl" >"$tmp/report.out"; rc=$?
[ $rc -eq 1 ] || fail "a violating trace: exit $rc, want 1"
grep -q "INV-4 broken at step 1 (bpf_observed)" "$tmp/report.out" || fail "report does not name INV-4 at step 1"
grep -q "minimized to 1 events" "$tmp/report.out" || fail "report did not minimize 2 events to 1"
[ -z "$(ls "$tmp" | grep -v '\.out$\|\.err$')" ] || fail "report wrote files without --out"

"$bin" report "$src/examples/violating/lagging-generation-file.jsonl" --out "$tmp/reg" >/dev/null 2>&1
set -- "$tmp"/reg/INV-4-*.jsonl
[ -f "$1" ] || fail "--out did not write INV-4-<hash>.jsonl"
[ -f "${1%.jsonl}.expect" ] || fail "--out did not write the .expect file"
[ "$(wc -l <"$1")" -eq 1 ] || fail "the regression trace is not the 1-event minimized trace"
grep -q '"invariant": "INV-4"' "${1%.jsonl}.expect" || fail ".expect does not name INV-4"
# The regression itself reproduces the failure (it would fail in ctest until the cause is gone).
"$bin" report "$1" >/dev/null; rc=$?
[ $rc -eq 1 ] || fail "the written regression does not reproduce the failure (exit $rc)"
echo "report CLI: all checks passed"
