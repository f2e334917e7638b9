#!/usr/bin/env bash
# The pure parts of tools/scx-peers/build.sh, with a fake `cargo` on PATH and no network:
# argument parsing, the cache hit (cargo not called again), the rebuild of a changed binary, and the
# refusals (another version installed, a .crate whose sha256 is not the pin), 77 when cargo cannot
# reach the registry or is missing. Default suite (ctest scx_peers.build_script, ~1 s).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
script=$here/build.sh
t=$(mktemp -d /tmp/c2c-scx-peers-test.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$t"' EXIT
fails=0
check() {  # check <description> <command...>: the command must succeed
  local what=$1; shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what" >&2; fails=$((fails + 1)); fi
}

# The fake cargo: `install --locked --version =V --root R NAME` writes R/bin/NAME and the .crate
# cargo would have downloaded (content "crate NAME V"); `install --list --root R` lists what it
# installed. FAKE_VERSION installs another version, FAKE_FAIL=network|build fails like cargo does.
mkdir -p "$t/fakebin"
cat >"$t/fakebin/cargo" <<'EOF'
#!/usr/bin/env bash
echo "$*" >>"$FAKE_LOG"
root="" ver="" name="" list=0
while [ $# -gt 0 ]; do
  case $1 in
    install|--locked) shift ;;
    --list) list=1; shift ;;
    --root) root=$2; shift 2 ;;
    --version) ver=${2#=}; shift 2 ;;
    *) name=$1; shift ;;
  esac
done
if [ $list = 1 ]; then cat "$root/.fake-installed" 2>/dev/null; exit 0; fi
case ${FAKE_FAIL:-} in
  network) echo "error: failed to download from \`https://static.crates.io/...\`" >&2; exit 101 ;;
  build) echo "error: could not compile \`libbpf-sys\`" >&2; exit 101 ;;
esac
ver=${FAKE_VERSION:-$ver}
mkdir -p "$root/bin" "$CARGO_HOME/registry/cache/fake-index"
printf 'crate %s %s\n' "$name" "$ver" >"$CARGO_HOME/registry/cache/fake-index/$name-$ver.crate"
printf '#!/bin/sh\necho %s %s %s\n' "$name" "$ver" "${FAKE_SALT:-}" >"$root/bin/$name"
chmod +x "$root/bin/$name"
echo "$name v$ver:" >"$root/.fake-installed"
echo "    $name" >>"$root/.fake-installed"
EOF
chmod +x "$t/fakebin/cargo"
sha() { printf 'crate %s %s\n' "$1" "$2" | sha256sum | cut -d' ' -f1; }
cat >"$t/pins" <<EOF
# test pins
scx_lavd 1.0.19 $(sha scx_lavd 1.0.19)
scx_bpfland 1.1.4 $(sha scx_bpfland 1.1.4)
EOF
export C2C_SCX_PINS=$t/pins C2C_SCX_CACHE=$t/cache C2C_SCX_PROGRESS_S=0.05 FAKE_LOG=$t/cargo.log
export BPF_CLANG=/bin/true PATH=$t/fakebin:$PATH
: >"$FAKE_LOG"
run() { "$script" "$@" >"$t/out" 2>"$t/err"; echo $? >"$t/rc"; }
rc() { [ "$(cat "$t/rc")" = "$1" ]; }
err_has() { grep -q -- "$1" "$t/err"; }
calls() { wc -l <"$FAKE_LOG" | tr -d ' '; }

# Arguments.
run --print-dir scx_lavd
check "--print-dir prints <cache>/<name>-<pinned version>" [ "$(cat "$t/out")" = "$t/cache/scx_lavd-1.0.19" ]
check "--print-dir builds nothing" [ "$(calls)" = 0 ]
run --print-dir
check "--print-dir without a name: usage (2)" rc 2
run --print-dir scx_lavd scx_bpfland
check "--print-dir with two names: usage (2)" rc 2
run --frobnicate
check "an unknown option: usage (2)" rc 2
check "  ... named" err_has 'unknown option --frobnicate'
run scx_rusty
check "an unpinned peer: usage (2)" rc 2
check "  ... named with the pinned ones" err_has "'scx_rusty' is not pinned in $t/pins (pinned: scx_lavd scx_bpfland)"
printf 'scx_lavd 1.0 abc\n' >"$t/badpins"
C2C_SCX_PINS=$t/badpins run scx_lavd
check "a malformed pin: usage (2)" rc 2
check "  ... the expected form named" err_has "the line of 'scx_lavd' must be '<crate> <x.y.z> <sha256 of the .crate>'"

# A cold build, then the cache.
run scx_lavd
check "cold build: rc 0" rc 0
check "cold build: prints the cache dir" [ "$(tail -n 1 "$t/out")" = "$t/cache/scx_lavd-1.0.19" ]
check "cold build: cargo install --locked at the pinned version into the cache dir" \
  grep -qx -- "install --locked --version =1.0.19 --root $t/cache/scx_lavd-1.0.19 scx_lavd" "$FAKE_LOG"
check "cold build: build-info records version, crate and binary sha256" bash -c "
  grep -qx 'version 1.0.19' '$t/cache/scx_lavd-1.0.19/build-info' &&
  grep -qx 'crate_sha256 $(sha scx_lavd 1.0.19)' '$t/cache/scx_lavd-1.0.19/build-info' &&
  grep -qx \"binary_sha256 \$(sha256sum <'$t/cache/scx_lavd-1.0.19/bin/scx_lavd' | cut -d' ' -f1)\" '$t/cache/scx_lavd-1.0.19/build-info'"
n=$(calls)
run scx_lavd
check "second run: rc 0" rc 0
check "  ... logged as cached" err_has "cached: $t/cache/scx_lavd-1.0.19"
check "second run: cargo not called" [ "$(calls)" = "$n" ]
echo "#!/bin/sh" >>"$t/cache/scx_lavd-1.0.19/bin/scx_lavd"
run scx_lavd
check "a binary that changed since its build is rebuilt" [ "$(calls)" -gt "$n" ]
check "  ... and the rebuild passes" rc 0

# Refusals: nothing is marked done.
FAKE_VERSION=1.0.20 run scx_bpfland
check "another version installed: refused (1)" rc 1
check "  ... named" err_has "REFUSED: cargo installed scx_bpfland '1.0.20', the pin is 1.1.4"
check "  ... not marked done" [ ! -e "$t/cache/scx_bpfland-1.1.4/.done" ]
sed -i "s/^scx_bpfland 1.1.4 .*/scx_bpfland 1.1.4 $(sha scx_bpfland 9.9.9)/" "$t/pins"
run scx_bpfland
check "a .crate whose sha256 is not the pin: refused (1)" rc 1
check "  ... named" err_has "REFUSED: scx_bpfland-1.1.4.crate has sha256 $(sha scx_bpfland 1.1.4), the pin is $(sha scx_bpfland 9.9.9)"
check "  ... not marked done" [ ! -e "$t/cache/scx_bpfland-1.1.4/.done" ]

# Failures of cargo.
FAKE_FAIL=network run scx_bpfland
check "crates.io unreachable: 77" rc 77
FAKE_FAIL=build run scx_bpfland
check "a compile error: 1" rc 1
PATH=/usr/bin:/bin HOME=$t/nohome run scx_bpfland
check "no cargo: 77" rc 77

[ $fails -eq 0 ] && echo "build_test: all passed" || { echo "build_test: $fails failed" >&2; exit 1; }
