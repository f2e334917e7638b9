#!/usr/bin/python3
"""Copies WP's proved goals between two cache directories (tests/proof/run-wp.sh --cache-dir).

  wp_cache_sync.py FROM TO

scripts/test keeps the proofs of earlier runs on this machine in /var/cache/claim2core/wp-cache
(beside the guest kernel and the k8s binaries) and copies them into a fresh build's cache before
ctest, and the build's proofs back after it, so that a clean clone's proof.guards_wp and
mutants.kernel send only goals never proved on this machine to the provers. A cache entry is named
by the hash of the goal's text, the prover and its version (WP's own key), so an entry of another
tree's header is never a hit for a changed goal. Only proofs are copied (`"verdict": "valid"`, the
rule run-wp.sh keeps for its own cache); an entry is written under a temporary name and renamed, so
a run reading TO at the same time never sees half of one. Prints how many were copied.
"""
import json
import os
import sys
import tempfile


def proved(path):
    try:
        with open(path) as f:
            return json.load(f).get("verdict") == "valid"
    except (OSError, ValueError, AttributeError):
        return False


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: wp_cache_sync.py FROM TO")
    src, dst = sys.argv[1:]
    if not os.path.isdir(src):
        print(f"wp_cache_sync: {src}: no cache yet, nothing copied")
        return 0
    os.makedirs(dst, exist_ok=True)
    copied = 0
    for name in sorted(os.listdir(src)):
        if not name.endswith(".json") or os.path.exists(os.path.join(dst, name)):
            continue
        path = os.path.join(src, name)
        if not proved(path):
            continue
        with open(path, "rb") as f:
            data = f.read()
        fd, tmp = tempfile.mkstemp(dir=dst, prefix=".sync-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, os.path.join(dst, name))
        copied += 1
    print(f"wp_cache_sync: {copied} proved goals copied from {src} to {dst}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
