#!/usr/bin/env bash
# Builds (or reuses) the sched_ext peers the guest runs compare claim2core with (issue 43 item 5):
# scx_lavd and scx_bpfland, from their published crates on crates.io, at the versions in ./pins.
#
#   build.sh [NAME...]          build (or find cached) the named peers (default: every pin);
#                               prints one line per peer: its cache directory (binary in bin/NAME)
#   build.sh --print-dir NAME   prints NAME's cache directory without building
#
# Sources: `cargo install --locked --version <pin>` from crates.io: cargo checks every crate against
# the index's sha256 and builds with the dependency versions of the crate's own Cargo.lock; this
# script also checks the peer's .crate against the sha256 in ./pins and refuses a build whose
# installed version is not the pinned one. Nothing of the peers' code enters the repository.
# The result lands OUTSIDE the repository, like the guest kernel (tests/vm/build-kernel.sh), in
#   ${C2C_SCX_CACHE:-/var/cache/claim2core/scx}/<name>-<version>/
# (bin/<name>, build-info with versions and the binary's sha256, build.log); .done marks a finished
# build and a second run returns at once; deleting the directory makes the next build cold (the
# downloaded crates stay in the shared cargo-home beside it).
# Exit codes: 0 ok, 1 failure, 2 usage, 77 crates.io unreachable or no cargo (callers: "skip").
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
pins=${C2C_SCX_PINS:-$here/pins}
cache_root=${C2C_SCX_CACHE:-/var/cache/claim2core/scx}
jobs=${C2C_SCX_JOBS:-2}
# Bump when the recipe changes the artefacts (flags, features, toolchain choice).
recipe=1

log() { echo "[scx-peers build $(date -u +%H:%M:%S)] $*" >&2; }
usage() { echo "usage: $0 [--print-dir NAME | NAME...]  (NAMEs from $pins)" >&2; exit 2; }

[ -r "$pins" ] || { log "pins file $pins missing"; exit 2; }
# pin_of NAME -> "version sha256", or nothing for a name that is not pinned.
pin_of() { awk -v n="$1" '!/^#/ && $1 == n {print $2, $3}' "$pins"; }
all_names=$(awk '!/^#/ && NF {print $1}' "$pins")

print_dir=0
names=()
while [ $# -gt 0 ]; do
  case $1 in
    --print-dir) print_dir=1; [ $# -ge 2 ] || usage; names+=("$2"); shift 2 ;;
    -h|--help) usage ;;
    -*) log "unknown option $1"; usage ;;
    *) names+=("$1"); shift ;;
  esac
done
if [ "$print_dir" = 1 ] && [ "${#names[@]}" -ne 1 ]; then usage; fi
[ "${#names[@]}" -gt 0 ] || read -r -d '' -a names <<<"$all_names" || true
for n in "${names[@]}"; do
  pin=$(pin_of "$n")
  [ -n "$pin" ] || { log "'$n' is not pinned in $pins (pinned: $(echo $all_names))"; exit 2; }
  set -- $pin
  if [ $# -ne 2 ] || ! [[ $1 =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || ! [[ $2 =~ ^[0-9a-f]{64}$ ]]; then
    log "$pins: the line of '$n' must be '<crate> <x.y.z> <sha256 of the .crate>'"; exit 2
  fi
done

dir_of() { echo "$cache_root/$1-$(pin_of "$1" | cut -d' ' -f1)"; }
if [ "$print_dir" = 1 ]; then dir_of "${names[0]}"; exit 0; fi

# A finished build: .done names this recipe and the binary still has the recorded sha256.
cached() {  # <name> <dir>
  [ -f "$2/.done" ] && [ "$(cat "$2/.done")" = "recipe=$recipe" ] && [ -x "$2/bin/$1" ] &&
    [ "$(sha256sum <"$2/bin/$1" | cut -d' ' -f1)" = "$(awk '$1 == "binary_sha256" {print $2}' "$2/build-info")" ]
}

cargo_home=$cache_root/cargo-home
# cargo's messages when it cannot reach the registry (DNS, TLS, proxy, HTTP errors).
network_error='failed to (get|download|query|load source)|[Cc]ouldn.t resolve|[Uu]nable to update registry|spurious network error|failed to connect|Connection (refused|timed out)|SSL connect error'

build_one() {  # <name>
  local name=$1 version sha dir logfile start installed got_sha bin_sha clang crate pid
  read -r version sha <<<"$(pin_of "$name")"
  dir=$(dir_of "$name")
  mkdir -p "$dir"
  # One builder at a time (a developer and the runner may both ask); the others wait for its result.
  exec 9>"$dir/.lock"
  if ! flock -n 9; then log "another build holds $dir/.lock; waiting"; flock 9; fi
  if cached "$name" "$dir"; then
    log "cached: $dir"
    exec 9>&-
    echo "$dir"
    return 0
  fi
  rm -f "$dir/.done"
  if ! command -v cargo >/dev/null && [ -x "$HOME/.cargo/bin/cargo" ]; then PATH=$PATH:$HOME/.cargo/bin; fi
  command -v cargo >/dev/null || { log "no cargo on PATH (rustup: https://rustup.rs; scripts/setup)"; exit 77; }
  # The BPF half is compiled by clang (scx_utils' BpfBuilder reads BPF_CLANG); Debian names it clang-19.
  clang=${BPF_CLANG:-$(command -v clang || command -v clang-19 || true)}
  [ -n "$clang" ] || { log "no clang for the BPF programs (apt-get install clang-19: scripts/setup)"; exit 1; }
  logfile=$dir/build.log
  : >"$logfile"
  log "building $name $version from crates.io into $dir (-j$jobs; log: $logfile)"
  start=$(date +%s)
  rm -rf "$dir/bin" "$dir/.crates.toml" "$dir/.crates2.json"
  CARGO_HOME=$cargo_home CARGO_TARGET_DIR=$dir/target CARGO_BUILD_JOBS=$jobs BPF_CLANG=$clang \
    nice -n 10 cargo install --locked --version "=$version" --root "$dir" "$name" >>"$logfile" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep "${C2C_SCX_PROGRESS_S:-30}"
    kill -0 "$pid" 2>/dev/null &&
      log "... $(( $(date +%s) - start ))s, $(grep -c '^ *Compiling' "$logfile" || true) crates compiled"
  done
  if ! wait "$pid"; then
    if grep -Eq "$network_error" "$logfile"; then
      log "crates.io unreachable (last lines of $logfile):"; tail -5 "$logfile" >&2; exit 77
    fi
    log "FAILED building $name $version (last lines of $logfile):"; tail -25 "$logfile" >&2; exit 1
  fi
  # The version cargo installed must be the pin, whatever a resolver or a registry did.
  installed=$(CARGO_HOME=$cargo_home cargo install --list --root "$dir" |
              awk -v n="$name" '$1 == n {sub(/^v/, "", $2); sub(/:$/, "", $2); print $2}')
  if [ "$installed" != "$version" ]; then
    log "REFUSED: cargo installed $name '${installed:-nothing}', the pin is $version"; exit 1
  fi
  crate=$(ls "$cargo_home"/registry/cache/*/"$name-$version.crate" 2>/dev/null | head -1)
  got_sha=$([ -n "$crate" ] && sha256sum <"$crate" | cut -d' ' -f1)
  if [ "$got_sha" != "$sha" ]; then
    log "REFUSED: $name-$version.crate has sha256 ${got_sha:-(no .crate file found)}, the pin is $sha"; exit 1
  fi
  [ -x "$dir/bin/$name" ] || { log "FAILED: no $dir/bin/$name after the install"; exit 1; }
  bin_sha=$(sha256sum <"$dir/bin/$name" | cut -d' ' -f1)
  {
    echo "name $name"
    echo "version $version"
    echo "crate_sha256 $got_sha"
    echo "binary_sha256 $bin_sha"
    echo "rustc $(rustc --version 2>/dev/null || echo unknown)"
    echo "clang $("$clang" --version 2>/dev/null | head -1)"
    echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) in $(( $(date +%s) - start )) s"
  } >"$dir/build-info"
  # The target directory (hundreds of MB) serves no later run: a new pin is a new directory.
  rm -rf "$dir/target"
  echo "recipe=$recipe" >"$dir/.done"
  log "$name $version built in $(( $(date +%s) - start )) s, sha256 $bin_sha"
  exec 9>&-
  echo "$dir"
}

for n in "${names[@]}"; do build_one "$n"; done
