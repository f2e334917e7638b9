#!/bin/sh
# A bounded libFuzzer campaign for the default test run (ctest fuzz.short.<harness>).
# usage: run_short.sh FUZZER_BINARY COMMITTED_CORPUS SCRATCH_DIR SECONDS
# New inputs go to SCRATCH_DIR/new (the committed corpus is only read); a crash is saved under
# SCRATCH_DIR/artifacts/ and fails the test: `claim2core report <crash file>` explains it.
set -eu
bin=$1 corpus=$2 scratch=$3 seconds=$4
if [ ! -x "$bin" ]; then
  echo "fuzz.short: $bin was not built (the c2c_fuzz_clang ExternalProject builds it with clang++-19)" >&2
  exit 1
fi
rm -rf "$scratch"
mkdir -p "$scratch/new" "$scratch/artifacts"
# The known yaml-cpp hang must not fail the default run at random (see fuzz_policy_parser.cpp).
C2C_FUZZ_SKIP_YAML=1
export C2C_FUZZ_SKIP_YAML
# libFuzzer exits 77 on a finding by default, which ctest would read as a skip: a finding is a
# failure (exit 1), like a timeout.
exec "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -error_exitcode=1 -timeout_exitcode=1 \
  -artifact_prefix="$scratch/artifacts/" "$scratch/new" "$corpus"
