#!/usr/bin/env bash
# The Debian package (issue 17, item 2) on this machine: cpack builds claim2core_<version>_amd64.deb,
# its Depends name libbpf1 and the shared libraries, dpkg -i installs it, the state directory
# exists and nothing is enabled, claim2cored --version answers, the binary the unit's ExecStart
# names serves the installed CLI on a private socket/state/pin root, and dpkg --purge leaves no
# file of the package behind. Refuses to touch a claim2core that is already installed.
#   package_test.sh <build dir>
set -euo pipefail
BUILD=$(realpath "$1")
fail() { echo "FAIL: $*" >&2; exit 1; }
if [ "$(id -u)" -ne 0 ] || ! command -v dpkg >/dev/null || ! mountpoint -q /sys/fs/bpf; then
  echo "SKIP: needs root, dpkg and bpffs"; exit 0
fi
if dpkg-query -W -f='${Status}' claim2core 2>/dev/null | grep -q installed; then
  echo "SKIP: a claim2core package is already installed here; not replacing it"; exit 0
fi
WORK=$(mktemp -d /tmp/c2c-package-test.XXXXXX)
PIN_ROOT=/sys/fs/bpf/c2c-package-test-$$
DAEMON_PID="" INSTALLED=""
cleanup() {
  if [ -n "$DAEMON_PID" ]; then kill -TERM "$DAEMON_PID" 2>/dev/null; wait "$DAEMON_PID" 2>/dev/null; fi
  [ -n "$INSTALLED" ] && dpkg --purge claim2core >/dev/null 2>&1
  rm -rf "$WORK" "$PIN_ROOT"
}
trap cleanup EXIT

VERSION=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$BUILD/CMakeCache.txt")
ARCH=$(dpkg --print-architecture)
cpack --config "$BUILD/CPackConfig.cmake" -B "$WORK/out" >"$WORK/cpack.log" 2>&1 || { cat "$WORK/cpack.log"; fail cpack; }
DEB=$WORK/out/claim2core_${VERSION}_${ARCH}.deb
[ -f "$DEB" ] || fail "cpack did not write $DEB: $(ls "$WORK/out")"
DEPENDS=$(dpkg-deb -f "$DEB" Depends)
for dep in "libbpf1 (>= 1:1.4)" libgrpc++ libyaml-cpp libprometheus-cpp-pull libc6; do
  [[ $DEPENDS == *"$dep"* ]] || fail "Depends lacks $dep: $DEPENDS"
done

dpkg -i "$DEB" >"$WORK/dpkg.log" 2>&1 || { cat "$WORK/dpkg.log"; fail "dpkg -i"; }
INSTALLED=1
[ "$(stat -c %a /var/lib/claim2core)" = 700 ] || fail "postinst did not create /var/lib/claim2core mode 0700"
if ls /etc/systemd/system/*.wants/claim2cored.service >/dev/null 2>&1; then fail "the package enabled claim2cored"; fi
[[ $(claim2cored --version) == "claim2cored $VERSION"* ]] || fail "claim2cored --version: $(claim2cored --version)"
EXEC=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' /usr/lib/systemd/system/claim2cored.service)
[ "$EXEC" = /usr/bin/claim2cored ] || fail "the unit's ExecStart names '$EXEC'"
"$EXEC" --config /dev/null --socket "$WORK/sock" --state-dir "$WORK/state" --pin-root "$PIN_ROOT" \
  --task-discovery off >"$WORK/daemon.log" 2>&1 &
DAEMON_PID=$!
export CLAIM2CORE_SOCKET=$WORK/sock
for _ in $(seq 100); do claim2core status >/dev/null 2>&1 && break; sleep 0.2; done
claim2core status >"$WORK/status.out" 2>&1 || { cat "$WORK/daemon.log" "$WORK/status.out"; fail "claim2core status against the packaged daemon"; }
[ -e "$PIN_ROOT/c2c_policy" ] || fail "the packaged daemon did not pin $PIN_ROOT/c2c_policy"
kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID" || fail "claim2cored did not stop cleanly on SIGTERM"; DAEMON_PID=""

FILES=$(dpkg -L claim2core | sort -r)
dpkg --purge claim2core >"$WORK/purge.log" 2>&1 || { cat "$WORK/purge.log"; fail "dpkg --purge"; }
INSTALLED=""
dpkg-query -W claim2core >/dev/null 2>&1 && dpkg-query -W -f='${Status}' claim2core | grep -q installed && fail "still installed"
left=""
while read -r f; do
  case "$f" in /. | /usr | /usr/bin | /usr/lib | /usr/share | /usr/share/man | /usr/share/man/man1 | /usr/lib/systemd | \
               /usr/lib/systemd/system | /usr/share/bash-completion* | /usr/share/zsh*) continue ;; esac
  [ -e "$f" ] && left+=" $f"
done <<<"$FILES"
for d in /var/lib/claim2core /etc/claim2core; do [ -e "$d" ] && left+=" $d"; done
[ -z "$left" ] || fail "left after purge:$left"
echo "ok: $(basename "$DEB") installed, served status, purged without a trace"
