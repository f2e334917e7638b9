#!/usr/bin/env bash
# Builds the claim2core OCI image without a registry or a base image (none can be pulled here):
# buildah from scratch, filled with the package's files and the shared libraries they link.
#
#   build-image.sh BUILD_DIR [--print-ref]
#
# The files: `cmake --install --strip` of BUILD_DIR into /usr, the install rules, prefix and
# stripping the .deb is made with (cmake/package.cmake; cpack would first rebuild every target).
# Then every shared library the binaries load, copied from this Debian host (ldd), with the
# dynamic loader. No shell, no package manager.
#
# The image reference is the one deploy/kubernetes/base/daemonset.yaml names (both containers;
# the one source of truth), and its tag must be the project version. --print-ref prints it.
# Prints the reference on its last stdout line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
BUILD=${1:?usage: build-image.sh BUILD_DIR [--print-ref]}
BUILD=$(realpath "$BUILD")
shift
PRINT_REF=""
while [ $# -gt 0 ]; do
  case "$1" in
    --print-ref) PRINT_REF=1; shift ;;
    *) echo "build-image.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
fail() { echo "build-image.sh: $*" >&2; exit 1; }

# The reference from the DaemonSet, and the version it must carry.
REF=$(/usr/bin/python3 "$here/image_ref.py" "$src/deploy/kubernetes/base/daemonset.yaml") || exit 1
VERSION=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$BUILD/CMakeCache.txt")
[ -n "$VERSION" ] || fail "$BUILD/CMakeCache.txt has no CMAKE_PROJECT_VERSION (not a configured build dir)"
[ "${REF##*:}" = "$VERSION" ] || fail "the DaemonSet names $REF but the package version is $VERSION: update deploy/kubernetes/base/daemonset.yaml"
if [ -n "$PRINT_REF" ]; then echo "$REF"; exit 0; fi
command -v buildah >/dev/null || fail "buildah missing (scripts/setup installs it)"

ctr=$(buildah from scratch)
cleanup() { buildah umount "$ctr" >/dev/null 2>&1 || true; buildah rm "$ctr" >/dev/null 2>&1 || true; }
trap cleanup EXIT
root=$(buildah mount "$ctr")

DESTDIR="$root" cmake --install "$BUILD" --prefix /usr --strip >/dev/null || fail "cmake --install $BUILD"
for bin in claim2cored claim2core claim2core-observer; do
  [ -x "$root/usr/bin/$bin" ] || fail "the package's files have no /usr/bin/$bin"
done

# Shared libraries, by the path the loader resolved them to on this host (the symlink path kept:
# the loader looks names up by that path).
libs=$(for f in "$root"/usr/bin/*; do ldd "$f" 2>/dev/null; done |
  awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' | sort -u)
for lib in $libs; do
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
done
# Names the binaries open at run time that ldd does not list: none besides NSS, which they do not
# use (uids are numbers). The directories the DaemonSet mounts over, and a writable /tmp.
mkdir -p "$root"/{etc/claim2core,run/claim2core,var/lib/claim2core,sys/fs/bpf,sys/fs/cgroup,proc,tmp}
chmod 1777 "$root/tmp"
printf 'root:x:0:0:root:/:/usr/sbin/nologin\n' >"$root/etc/passwd"
printf 'root:x:0:\n' >"$root/etc/group"

buildah config \
  --cmd '["/usr/bin/claim2cored","--config","/etc/claim2core/claim2cored.yaml"]' \
  --label org.opencontainers.image.title=claim2core \
  --label org.opencontainers.image.version="$VERSION" \
  --label org.opencontainers.image.description="claim2cored, the claim2core CLI and claim2core-observer with their BPF objects" \
  --label org.opencontainers.image.source=deploy/kubernetes/base/daemonset.yaml \
  --os linux --arch "$(dpkg --print-architecture)" "$ctr"
buildah umount "$ctr" >/dev/null
previous=$(buildah images -q "$REF" 2>/dev/null || true)
buildah commit -q --rm "$ctr" "$REF" >/dev/null || fail "buildah commit $REF"
trap - EXIT
# The image this one replaced under the same reference, now untagged.
if [ -n "$previous" ] && [ "$previous" != "$(buildah images -q "$REF")" ]; then buildah rmi "$previous" >/dev/null 2>&1 || true; fi
echo "$REF"
