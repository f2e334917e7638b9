#!/usr/bin/env bash
# vm.build_targets: has_target (build-targets.sh) finds a target of this build dir under
# `set -euo pipefail`, as run-scenarios.sh runs it, and does not find a missing one.
#   build_targets_test.sh <build dir>
set -euo pipefail
. "$(dirname "$0")/build-targets.sh"
rc=0
if has_target "$1" "^c2c-vllm-standin:"; then echo "ok   c2c-vllm-standin found"; else echo "FAIL c2c-vllm-standin not found"; rc=1; fi
if has_target "$1" "^no-such-target-here:"; then echo "FAIL a missing target found"; rc=1; else echo "ok   a missing target not found"; fi
exit $rc
