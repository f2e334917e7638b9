#!/usr/bin/python3
"""Every manifest kustomize renders (deploy/kubernetes/rendered) validates against the Kubernetes
OpenAPI schemas (npm kubernetes-models, locked in tools/k8s-validate/package-lock.json and
installed there by scripts/setup, offline afterwards): types, required fields, formats; the
policy examples (and tests/fixtures/status: policies with the status the feeds write) pass their
CRD's openAPIV3Schema and the wrong ones that OpenAPI can express fail it. The validator is first shown to catch seeded bugs in copies of the DaemonSet.

usage: deploy_schema_test.py SOURCE_DIR WORK_DIR
"""
import copy
import glob
import os
import shutil
import subprocess
import sys

import yaml

SRC, WORK = sys.argv[1:3]
TOOL = os.path.join(SRC, "tools", "k8s-validate")
NODE = shutil.which("node")
if NODE is None or not os.path.isdir(os.path.join(TOOL, "node_modules", "kubernetes-models")):
    print(f"SKIP: node or {TOOL}/node_modules missing (scripts/setup runs npm ci there)")
    sys.exit(77)
os.makedirs(WORK, exist_ok=True)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_lines import check, finish  # noqa: E402


def validate(*args):
    r = subprocess.run([NODE, os.path.join(TOOL, "validate.js"), *args], capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout + r.stderr


rendered = sorted(glob.glob(os.path.join(SRC, "deploy", "kubernetes", "rendered", "*.yaml")))
check(len(rendered) >= 3, f"{len(rendered)} rendered manifests")
examples = sorted(glob.glob(os.path.join(SRC, "examples", "policies", "*.yaml")))
# bad-regex.yaml is RE2 syntax, which OpenAPI cannot express: the daemon and the CLI refuse it
# (cli.deploy_files), the CRD schema cannot.
invalid = sorted(p for p in glob.glob(os.path.join(SRC, "examples", "policies", "invalid", "*.yaml"))
                 if not p.endswith("bad-regex.yaml"))
# Policies with status as the feeds write it (issue 14, item 4), and statuses the CRDs refuse.
examples += sorted(glob.glob(os.path.join(SRC, "tests", "fixtures", "status", "*.yaml")))
invalid += sorted(glob.glob(os.path.join(SRC, "tests", "fixtures", "status", "invalid", "*.yaml")))

# Seeded bugs first: each copy of base.yaml's DaemonSet breaks one rule the schemas state.
with open(os.path.join(SRC, "deploy", "kubernetes", "rendered", "base.yaml"), encoding="utf-8") as f:
    docs = [d for d in yaml.safe_load_all(f) if d]
ds = next(d for d in docs if d["kind"] == "DaemonSet")


SEEDED = {}  # file -> (name, what its FAIL line must name)


def seeded(name, mutate, expect):
    bad = copy.deepcopy(ds)
    mutate(bad)
    path = os.path.join(WORK, f"seeded-{name}.yaml")
    with open(path, "w", encoding="utf-8") as f:
        yaml.safe_dump(bad, f)
    SEEDED[os.path.basename(path)] = (name, expect)


pod = lambda d: d["spec"]["template"]["spec"]  # noqa: E731
seeded("port-as-string", lambda d: pod(d)["containers"][0]["ports"][0].__setitem__("containerPort", "9464"),
       "containerPort")
seeded("no-containers", lambda d: pod(d).pop("containers"), "containers")
seeded("mount-without-path", lambda d: pod(d)["containers"][0]["volumeMounts"][0].pop("mountPath"), "mountPath")
seeded("surge-as-list", lambda d: d["spec"]["updateStrategy"]["rollingUpdate"].__setitem__("maxSurge", [0]),
       "maxSurge")
seeded("unknown-kind", lambda d: d.__setitem__("kind", "DaemonSett"), "no Kubernetes schema")
# One validator run for all of them (node's start-up is most of the time): each file's line.
rc, out = validate(*[os.path.join(WORK, f) for f in SEEDED])
check(rc == 1, "the validator fails on the seeded copies")
for f, (name, expect) in SEEDED.items():
    lines = [l for l in out.splitlines() if l.startswith(f"FAIL {f} ")]
    # "FAIL <file> <Kind>/<name> (<apiVersion>): <problems>": the problems must name the field.
    problems = lines[0].split("): ", 1)[-1] if len(lines) == 1 else ""
    check(expect in problems, f"seeded {name}: refused, naming {expect!r}" + (f" ({problems[:120]})" if problems else ""))

rc, out = validate(*rendered, "--examples", *examples, "--invalid", *invalid)
print(out)
check(rc == 0, "every rendered manifest, example and wrong example as expected")
n_docs = 0
for p in rendered + examples + invalid:
    with open(p, encoding="utf-8") as f:
        n_docs += sum(1 for d in yaml.safe_load_all(f) if d)
n_ok = sum(1 for line in out.splitlines() if line.startswith("ok   "))
check(n_ok == n_docs, f"the validator passed each of the {n_docs} documents ({n_ok})")
finish()
