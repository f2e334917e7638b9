#!/usr/bin/env bash
# systemd-analyze verify on deploy/systemd/claim2cored.service. verify also checks that
# ExecStart's binary exists, so a copy points at the built claim2cored (or /bin/true when it is
# not built); any complaint about the unit fails the test. Exit 77 (skip) without systemd-analyze.
set -u
SRC=$1
DAEMON=${2:-}
UNIT=$SRC/deploy/systemd/claim2cored.service
if ! command -v systemd-analyze >/dev/null; then
  echo "SKIP: systemd-analyze is not installed"
  exit 77
fi
[ -x "$DAEMON" ] || DAEMON=/bin/true
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sed "s#^ExecStart=/usr/local/bin/claim2cored#ExecStart=$DAEMON#" "$UNIT" >"$dir/claim2cored.service"
out=$(systemd-analyze verify "$dir/claim2cored.service" 2>&1)
rc=$?
# Complaints about other units on this host are not ours.
mine=$(grep -F "claim2cored.service" <<<"$out")
echo "systemd-analyze verify: exit $rc"
[ -n "$out" ] && echo "$out"
if [ "$rc" -ne 0 ] || [ -n "$mine" ]; then
  echo "FAIL: the unit has problems"
  exit 1
fi
# Directives the brief requires (a verify pass alone would accept a unit without them).
for want in '^ExecReload=/bin/kill -HUP \$MAINPID$' '^KillSignal=SIGTERM$' '^RuntimeDirectory=claim2core$' \
  '^StateDirectory=claim2core$' '^ProtectSystem=strict$' '^ReadWritePaths=/sys/fs/bpf$' \
  '^CapabilityBoundingSet=CAP_BPF CAP_PERFMON CAP_SYS_ADMIN CAP_SYS_RESOURCE CAP_SYS_NICE$'; do
  if ! grep -Eq "$want" "$UNIT"; then
    echo "FAIL: $UNIT lacks $want"
    exit 1
  fi
done
echo "ok: claim2cored.service verifies"
