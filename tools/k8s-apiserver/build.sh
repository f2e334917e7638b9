#!/usr/bin/env bash
# Builds (or reuses) the real kube-apiserver, kubectl and etcd the `realk8s` tests run against.
#
# Sources: the Go module proxy only, at the versions pinned by kube/go.mod and etcd/go.mod and
# verified against their committed go.sum (GOFLAGS=-mod=readonly: a module whose hash differs
# stops the build). The binaries land OUTSIDE the repository, in
#   ${C2C_K8S_CACHE:-/var/cache/claim2core/k8s}/<hash of both wrapper modules + recipe>/bin
# with the Go module and build caches beside them, so a second run finds bin/.done and returns in
# well under a second, and deleting that directory makes the next build truly cold.
# Prints the bin directory on its last stdout line. Exit codes: 0 ok, 1 failure.
# --print-dir prints the bin directory without building.
#
# Go: the `go` on PATH (Debian 12: golang-1.2x-go from bookworm-backports, /usr/lib/go-1.2x/bin).
# When it is older than a wrapper's `go` line, GOTOOLCHAIN=auto has it fetch the toolchain that
# line names from the same module proxy, checked against the checksum database like any module.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache_root=${C2C_K8S_CACHE:-/var/cache/claim2core/k8s}
# Bump when the recipe changes the artefacts (flags, tags, the set of binaries).
recipe=1
key=$( (cat "$here/kube/go.mod" "$here/kube/go.sum" "$here/etcd/go.mod" "$here/etcd/go.sum"
        echo "recipe=$recipe") | sha256sum | cut -c1-12)
kube_version=$(awk '$1 == "k8s.io/kubernetes" {print $2}' "$here/kube/go.mod")
etcd_version=$(awk '$1 == "go.etcd.io/etcd/server/v3" {print $2}' "$here/etcd/go.mod")
dir=$cache_root/kube-$kube_version-etcd-$etcd_version-$key
bin=$dir/bin
if [ "${1:-}" = "--print-dir" ]; then
  echo "$bin"
  exit 0
fi

log() { echo "[k8s-apiserver build $(date -u +%H:%M:%S)] $*" >&2; }

if ! command -v go >/dev/null; then
  for d in /usr/lib/go-1.2*/bin; do if [ -x "$d/go" ]; then PATH=$d:$PATH; fi; done
fi
command -v go >/dev/null || {
  log "no Go toolchain: apt-get install -t bookworm-backports golang-1.23-go (scripts/setup)"; exit 1; }

mkdir -p "$bin"
# One builder at a time (scripts/test and ctest may both ask); the others wait for its result.
exec 9>"$dir/.lock"
if ! flock -n 9; then
  log "another build holds $dir/.lock; waiting"
  flock 9
fi
if [ -f "$bin/.done" ] && [ -x "$bin/kube-apiserver" ] && [ -x "$bin/kubectl" ] && [ -x "$bin/etcd" ]; then
  log "cached: $bin"
  echo "$bin"
  exit 0
fi
rm -f "$bin/.done"

export GOMODCACHE=$dir/gomod GOCACHE=$dir/gocache GOPATH=$dir/gopath
export GOFLAGS="-mod=readonly -trimpath -buildvcs=false ${C2C_K8S_GOFLAGS:--p=2}"
export GOTOOLCHAIN=${GOTOOLCHAIN:-auto} CGO_ENABLED=0
export GOWORK=off
logfile=$dir/build.log
: >"$logfile"
log "building kube-apiserver+kubectl $kube_version and etcd $etcd_version into $bin (log: $logfile)"
start=$(date +%s)
# kube-apiserver and kubectl report the version they were built from (the release scripts stamp it
# the same way); the API's own compatibility version is compiled in and does not depend on this.
v=k8s.io/component-base/version
minor=${kube_version#v1.}; minor=${minor%%.*}
kube_ldflags="-s -X $v.gitVersion=$kube_version -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean"
build() {  # <wrapper dir> <package> <output> <ldflags>
  (cd "$here/$1" && nice -n 10 go build -ldflags="$4" -o "$bin/$3.tmp" "$2") >>"$logfile" 2>&1 || {
    log "FAILED building $2 (last lines of $logfile):"; tail -20 "$logfile" >&2; exit 1; }
  mv "$bin/$3.tmp" "$bin/$3"
  log "$3 built ($(( $(date +%s) - start )) s so far)"
}
build etcd go.etcd.io/etcd/server/v3 etcd -s
build kube k8s.io/kubernetes/cmd/kube-apiserver kube-apiserver "$kube_ldflags"
build kube k8s.io/kubernetes/cmd/kubectl kubectl "$kube_ldflags"

"$bin/kube-apiserver" --version >>"$logfile" 2>&1
"$bin/etcd" --version >>"$logfile" 2>&1
echo "cold build: $(( $(date +%s) - start )) s, go $(go env GOVERSION), GOFLAGS=$GOFLAGS" >>"$logfile"
log "done in $(( $(date +%s) - start )) s"
touch "$bin/.done"
# The build cache (~2.5 GB) serves no later run (a new version is a new directory); the module
# cache (~0.7 GB) stays, so a recipe bump rebuilds without downloading again.
rm -rf "$GOCACHE"
echo "$bin"
