#!/usr/bin/env bash
# deploy/monitoring/claim2core-alerts.yaml passes `promtool check rules`, and every claim2core_
# metric it names is one the daemon defines (src/daemon/process/metrics.cpp), so a renamed metric cannot
# leave an alert that never fires. promtool is first shown to reject a seeded broken rule.
#   metrics_rules.sh <source dir>
set -euo pipefail
SRC=$1
RULES=$SRC/deploy/monitoring/claim2core-alerts.yaml
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v promtool >/dev/null || { echo "SKIP: promtool missing (scripts/setup installs prometheus)"; exit 0; }
WORK=$(mktemp -d /tmp/c2c-rules.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
sed 's/increase(claim2core_invariant_violations_total\[10m\])/increase(claim2core_invariant_violations_total[10m]/' \
  "$RULES" >"$WORK/seeded.yaml"
cmp -s "$RULES" "$WORK/seeded.yaml" && fail "the seeded bug was not applied"
promtool check rules "$WORK/seeded.yaml" >/dev/null 2>&1 && fail "promtool accepted an unbalanced expression"
promtool check rules "$RULES" || fail "promtool check rules $RULES"
for m in $(grep -o 'claim2core_[a-z_]*' "$RULES" | sort -u); do
  grep -q "\"$m\"" "$SRC/src/daemon/process/metrics.cpp" || fail "$RULES names $m, which src/daemon/process/metrics.cpp does not define"
done
echo "ok: $(grep -c '^      - alert:' "$RULES") alert rules"
