#!/usr/bin/env python3
"""The front ends' layer rules (issue 44 item 3), checked on the sources:

  1. A front end does not include another: nothing under src/rest or src/k8s includes "cli/...",
     nothing under src/cli or src/k8s includes "rest/...", and no front end (src/cli, src/rest,
     src/k8s) includes the fuzz harness ("fuzz/...") directly. What they share is the client
     library (src/client) and the wire layer (src/api).
  2. No CMakeLists.txt (or a .cmake fragment it includes) edits a target another folder defines:
     target_link_libraries / target_compile_definitions / target_sources / target_include_directories
     / target_compile_options name only targets of their own folder.
  3. Protobuf stays at the API edge: no header under src/ outside src/api and the service edge
     (src/daemon/service) includes a protobuf header, directly ("claim2core.pb.h",
     <google/protobuf/...>) or through a project header that does (e.g. "api/convert.hpp"). The
     front ends speak the client library's plain types (src/client/node_client.hpp,
     src/api/replies.hpp). PROTOBUF_NOT_YET lists the headers still to move (issue 44 item 3); an
     entry that no longer breaks the rule fails the check too, so the list only shrinks.

Usage: frontend_layering_check.py <source root>            exit 0 when the rules hold
       frontend_layering_check.py --seeded <source root>   copies the sources, seeds one violation
                                                           of each rule, and exits 0 only if the
                                                           check catches every one
"""
import os
import re
import shutil
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
# Which include prefixes each front end must not use.
FORBIDDEN = {
    "src/rest": ("cli/", "fuzz/"),
    "src/k8s": ("cli/", "rest/", "fuzz/"),
    "src/cli": ("rest/", "fuzz/"),
}
# Rule 3: where a header may carry protobuf, and the headers that still do (to be emptied).
PROTOBUF_EDGE = ("src/api/", "src/daemon/service/")
PROTOBUF_NOT_YET = {
    "src/k8s/feed.hpp",
    "src/k8s/feed_claims.hpp",
    "src/k8s/feed_sender.hpp",
    "src/k8s/status_writer.hpp",
}
PROTOBUF_DIRECT = re.compile(r'^\s*#\s*include\s*["<]([^">]*(?:\.pb\.h|google/protobuf/[^">]*))[">]', re.M)
DEFINE = re.compile(r'^\s*add_(?:library|executable)\(\s*([A-Za-z0-9_.+-]+)', re.M)
EDIT = re.compile(r'^\s*target_(?:link_libraries|compile_definitions|sources|include_directories|compile_options)'
                  r'\(\s*([A-Za-z0-9_.+-]+)', re.M)


def strip_comments(text):
    text = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
    return re.sub(r'//[^\n]*', '', text)


def include_violations(root):
    out = []
    for part, prefixes in FORBIDDEN.items():
        for d, _, files in os.walk(os.path.join(root, part)):
            for f in files:
                if not f.endswith((".cpp", ".hpp", ".ipp")):
                    continue
                path = os.path.join(d, f)
                rel = os.path.relpath(path, root)
                for inc in INCLUDE.findall(strip_comments(open(path, encoding="utf-8", errors="replace").read())):
                    if inc.startswith(prefixes):
                        out.append(f"{rel} includes \"{inc}\" (rule 1: a front end includes no other front end)")
    return out


def headers(root):
    """Every header under src/, by the name it is included as ("api/convert.hpp")."""
    out = {}
    for d, _, files in os.walk(os.path.join(root, "src")):
        for f in files:
            if f.endswith((".hpp", ".h", ".ipp")):
                path = os.path.join(d, f)
                out[os.path.relpath(path, os.path.join(root, "src"))] = strip_comments(
                    open(path, encoding="utf-8", errors="replace").read())
    return out


def protobuf_violations(root):
    hdrs = headers(root)
    # why[h]: how header h reaches protobuf (its include chain), for every header that does.
    why = {h: [m.group(1)] for h, text in hdrs.items() for m in [PROTOBUF_DIRECT.search(text)] if m}
    changed = True
    while changed:
        changed = False
        for h, text in hdrs.items():
            if h in why:
                continue
            for inc in INCLUDE.findall(text):
                if inc in why:
                    why[h] = [inc] + why[inc]
                    changed = True
                    break
    out = []
    for h in sorted(hdrs):
        rel = "src/" + h
        if rel.startswith(PROTOBUF_EDGE):
            continue
        if h in why and rel not in PROTOBUF_NOT_YET:
            out.append(f"{rel} includes protobuf ({' -> '.join(why[h])}) (rule 3: protobuf stays in src/api "
                       f"and the service edge)")
        elif h not in why and rel in PROTOBUF_NOT_YET:
            out.append(f"{rel} no longer includes protobuf: take it off PROTOBUF_NOT_YET (rule 3)")
    return out


def cmake_files(root):
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith(("build", ".")) and x != "node_modules"]
        for f in files:
            if f == "CMakeLists.txt" or (f.endswith(".cmake") and os.path.basename(d) != "cmake"):
                yield os.path.join(d, f)


def cmake_code(path):
    return "\n".join(line.split("#", 1)[0] for line in open(path, encoding="utf-8", errors="replace"))


def cmake_violations(root):
    owner = {}  # target -> the folder whose CMake files define it
    files = list(cmake_files(root))
    for path in files:
        for t in DEFINE.findall(cmake_code(path)):
            owner.setdefault(t, os.path.dirname(path))
    out = []
    for path in files:
        here = os.path.dirname(path)
        for t in EDIT.findall(cmake_code(path)):
            if t in owner and owner[t] != here:
                out.append(f"{os.path.relpath(path, root)} edits {t}, defined in "
                           f"{os.path.relpath(owner[t], root)} (rule 2)")
    return out


def check(root):
    return include_violations(root) + cmake_violations(root) + protobuf_violations(root)


def seeded(root):
    seeds = [
        ("src/rest/gateway.cpp", '#include "cli/tables.hpp"\n', "rule 1"),
        ("src/report/CMakeLists.txt", "target_link_libraries(claim2core PRIVATE c2c_report)\n", "rule 2"),
        ("src/cli/tables.hpp", '#include "api/convert.hpp"\n', "rule 3"),
    ]
    caught = 0
    for rel, line, rule in seeds:
        tmp = tempfile.mkdtemp(prefix="c2c-frontends-")
        try:
            for part in ("src", "tests", "fuzz", "CMakeLists.txt"):
                src = os.path.join(root, part)
                dst = os.path.join(tmp, part)
                if os.path.isdir(src):
                    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("corpus", "*.jsonl", "fixtures"))
                elif os.path.exists(src):
                    shutil.copy(src, dst)
            with open(os.path.join(tmp, rel), "a") as f:
                f.write(line)
            found = [v for v in check(tmp) if rule in v]
            print("seeded %s (%s): %s" % (rel, rule, "caught: " + found[0] if found else "NOT caught"))
            caught += bool(found)
        finally:
            shutil.rmtree(tmp)
    return caught == len(seeds)


def main():
    args = sys.argv[1:]
    if args and args[0] == "--seeded":
        sys.exit(0 if seeded(args[1]) else 1)
    found = check(args[0])
    for v in found:
        print("FAIL " + v)
    if not found:
        print("ok   front ends include no other front end; no CMake file edits another folder's target; no "
              "header outside src/api and src/daemon/service carries protobuf (still to move: %d)" % len(PROTOBUF_NOT_YET))
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
