#!/usr/bin/env bash
# Packs a gzip cpio initramfs for the test-bed guest: busybox-static as the userland, the given
# ELF binaries with every shared library ldd finds (and the dynamic loader), extra files, and
# /init (guest-init.sh).
#
#   make-initramfs.sh OUT.cpio.gz --bin PATH... [--file SRC:DEST...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$1; shift
bins=() files=()
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bins+=("$2"); shift 2 ;;
    --file) files+=("$2"); shift 2 ;;
    *) echo "make-initramfs: unknown argument $1" >&2; exit 2 ;;
  esac
done
busybox=$(command -v busybox || true)
file "$busybox" 2>/dev/null | grep -q "statically linked" || busybox=/bin/busybox
[ -x "$busybox" ] || { echo "make-initramfs: busybox-static missing" >&2; exit 77; }

root=$(mktemp -d /tmp/c2c-initramfs.XXXXXX)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,etc,c2c,usr/bin,usr/sbin}
cp "$busybox" "$root/bin/busybox"

copy_with_libs() {  # copy_with_libs <elf> -> /c2c/bin/<name>, libraries at their host paths
  local elf=$1
  cp -L "$elf" "$root/c2c/$(basename "$elf")"
  # Debug info (RelWithDebInfo) is most of a gRPC binary's size and slows packing and booting.
  strip --strip-debug "$root/c2c/$(basename "$elf")"
  ldd "$elf" 2>/dev/null | awk '/=> \// {print $3} /^\t\// {print $1}' | while read -r lib; do
    mkdir -p "$root$(dirname "$lib")"
    cp -L -n "$lib" "$root$lib"
  done
}
for b in "${bins[@]}"; do
  [ -x "$b" ] || { echo "make-initramfs: $b is not an executable" >&2; exit 2; }
  copy_with_libs "$b"
done
for f in "${files[@]}"; do
  src=${f%%:*} dest=${f#*:}
  mkdir -p "$root$(dirname "$dest")"
  cp -L "$src" "$root$dest"
done
cp "$here/guest-init.sh" "$root/init"
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$out"
echo "make-initramfs: $out ($(du -h "$out" | cut -f1))" >&2
