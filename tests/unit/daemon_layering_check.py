#!/usr/bin/env python3
"""The daemon's layer rules (issue #13 item 5, spec/daemon.md "Layers"), checked on the sources:

  1. src/daemon/loop/engine.* includes no protobuf or gRPC header, directly or through any project
     header it includes (the transitive closure over "dir/file.hpp" includes under src/ and bpf/).
  2. src/daemon/service/service.cpp includes no core internals (core/core_impl.hpp, any src/core header
     other than the public core.hpp/model.hpp/events.hpp/runtime_entry.hpp) and does not use the
     durable state, the intents table or the core object (DurableState, IntentTable, .core(),
     .durable(), .intents()): it calls the engine's typed node API.
  3. One kernel layer (issue 44 item 2): no file under src/ outside src/kernel includes libbpf's
     <bpf/bpf.h>, opens, loads or closes a BPF object (bpf_object__open*, bpf_object__load,
     bpf_object__close), destroys a link, opens or makes a pin (bpf_obj_get, bpf_obj_pin) or reads
     a map's info or BTF to check it (bpf_map_get_info_by_fd, bpf_obj_get_info_by_fd,
     btf__load_from_kernel_by_id): the daemon, the mirror, the host plane and the loader reach
     them through src/kernel.

Usage: daemon_layering_check.py <source root>            exit 0 when the rules hold
       daemon_layering_check.py --seeded <source root>   copies the sources, seeds one violation
                                                         of each rule, and exits 0 only if the
                                                         check catches every one
"""
import os
import re
import shutil
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
FORBIDDEN_ENGINE = re.compile(r'(^|/)(grpc|grpcpp|google/protobuf)/|\.pb\.h$')
CORE_PUBLIC = {"core/core.hpp", "core/model.hpp", "core/events.hpp", "core/runtime_entry.hpp", "core/cpuset.hpp"}
KERNEL_ONLY_INCLUDE = re.compile(r'^bpf/bpf\.h$')
KERNEL_ONLY_CALL = re.compile(r'\b(bpf_obj_get|bpf_obj_pin|bpf_object__open\w*|bpf_object__load|bpf_object__close|'
                              r'bpf_link__destroy|bpf_map_get_info_by_fd|bpf_obj_get_info_by_fd|'
                              r'btf__load_from_kernel_by_id)\s*\(')
SOURCE_SUFFIXES = (".cpp", ".hpp", ".h", ".ipp", ".c")
SERVICE_USES = re.compile(r'\b(DurableState|IntentTable)\b|\.(core|durable|intents)\(\)|->(core|durable|intents)\(\)')


def strip_comments(text):
    text = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
    return re.sub(r'//[^\n]*', '', text)


def includes(path):
    with open(path, encoding="utf-8") as f:
        return INCLUDE.findall(strip_comments(f.read()))


def engine_violations(root):
    out = []
    todo = [os.path.join(root, "src/daemon/loop", n) for n in ("engine.hpp", "engine.cpp")]
    seen = set()
    while todo:
        path = todo.pop()
        if path in seen or not os.path.exists(path):
            continue
        seen.add(path)
        for inc in includes(path):
            if FORBIDDEN_ENGINE.search(inc):
                out.append("%s includes <%s> (the engine speaks the typed node API, not protobuf/gRPC)" %
                           (os.path.relpath(path, root), inc))
            for base in ("src", "bpf"):
                cand = os.path.join(root, base, inc)
                if os.path.exists(cand):
                    todo.append(cand)
    return out


def service_violations(root):
    path = os.path.join(root, "src/daemon/service/service.cpp")
    out = []
    for inc in includes(path):
        if inc.startswith("core/") and inc not in CORE_PUBLIC:
            out.append("src/daemon/service/service.cpp includes %s (core internals)" % inc)
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(strip_comments(f.read()).splitlines(), 1):
            if SERVICE_USES.search(line):
                out.append("src/daemon/service/service.cpp:%d uses the core, durable state or intents directly: %s" %
                           (n, line.strip()))
    return out


def kernel_layer_violations(root):
    out = []
    src = os.path.join(root, "src")
    for d, dirs, files in os.walk(src):
        dirs.sort()
        if os.path.relpath(d, src).split(os.sep)[0] == "kernel":
            dirs[:] = []
            continue
        for f in sorted(files):
            if not f.endswith(SOURCE_SUFFIXES):
                continue
            path = os.path.join(d, f)
            rel = os.path.relpath(path, root)
            with open(path, encoding="utf-8", errors="replace") as fh:
                code = strip_comments(fh.read())
            for inc in INCLUDE.findall(code):
                if KERNEL_ONLY_INCLUDE.search(inc):
                    out.append("%s includes <%s> (rule 3: only src/kernel includes libbpf's bpf.h)" % (rel, inc))
            for n, line in enumerate(code.splitlines(), 1):
                for call in KERNEL_ONLY_CALL.findall(line):
                    out.append("%s:%d calls %s (rule 3: only src/kernel opens, pins, checks and closes BPF objects "
                               "and maps)" % (rel, n, call))
    return out


def check(root):
    return engine_violations(root) + service_violations(root) + kernel_layer_violations(root)


def seeded(root):
    ok = True
    seeds = [
        ("src/daemon/loop/engine.hpp", "#pragma once\n", "#pragma once\n#include \"claim2core.pb.h\"\n"),
        ("src/daemon/node_state/policy_facts.hpp", "#pragma once\n", "#pragma once\n#include <grpcpp/grpcpp.h>\n"),
        ("src/daemon/service/service.cpp", "#include \"daemon/service/service.hpp\"\n",
         "#include \"daemon/service/service.hpp\"\n#include \"core/core_impl.hpp\"\n"),
        ("src/daemon/service/service.cpp", "namespace c2c::daemon {\n",
         "namespace c2c::daemon {\nvoid seeded(Engine& e) { (void)e.durable(); }\n"),
        ("src/daemon/durable/generation_guard.cpp", "#include <spdlog/spdlog.h>\n",
         "#include <bpf/bpf.h>\n#include <spdlog/spdlog.h>\n"),
        ("src/host/task_iter.cpp", "namespace c2c::host {\n",
         "namespace c2c::host {\nint seeded(const char* pin) { return bpf_obj_get(pin); }\n"),
    ]
    for rel, anchor, replacement in seeds:
        tmp = tempfile.mkdtemp(prefix="c2c-layering-")
        try:
            for d in ("src", "bpf"):
                shutil.copytree(os.path.join(root, d), os.path.join(tmp, d))
            p = os.path.join(tmp, rel)
            with open(p, encoding="utf-8") as f:
                text = f.read()
            if anchor not in text:
                print("seed anchor %r not found in %s" % (anchor, rel))
                ok = False
                continue
            with open(p, "w", encoding="utf-8") as f:
                f.write(text.replace(anchor, replacement, 1))
            found = check(tmp)
            print("seeded %s: %s" % (rel, "caught: " + found[0] if found else "NOT caught"))
            ok &= bool(found)
        finally:
            shutil.rmtree(tmp)
    return ok


def main():
    args = sys.argv[1:]
    if args and args[0] == "--seeded":
        return 0 if seeded(args[1]) else 1
    problems = check(args[0])
    for p in problems:
        print(p)
    print("layer rules hold" if not problems else "%d layer rule violations" % len(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
