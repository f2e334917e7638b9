#!/usr/bin/env python3
"""deploy/kubernetes is a kustomize base plus overlays (issue 17, item 3). Each of base,
overlays/monitoring and overlays/daemon-only renders to its committed deploy/kubernetes/rendered/
file: with `kubectl kustomize` when kubectl is installed (it is not in Debian 12's archive, so
without it that comparison is skipped, saying so), and always with the small renderer below
(resources + JSON6902 patches, the only kustomize features used here), compared as objects. The
rendered DaemonSet has what node-agent operators expect: readiness and liveness probes on both
containers, resource requests, prometheus.io scrape annotations naming a container port,
bpffs mounted HostToContainer, a rolling update with maxUnavailable and maxSurge 0, and a grace
period covering the drain; the monitoring overlay adds a PodMonitor on that port.
usage: deploy_kustomize_test.py SOURCE_DIR"""
import copy
import json
import os
import shutil
import subprocess
import sys

import yaml

SRC = sys.argv[1]
K8S = os.path.join(SRC, "deploy", "kubernetes")
TARGETS = {"base": "base", "monitoring": "overlays/monitoring", "daemon-only": "overlays/daemon-only"}
failures = 0


def check(ok, what):
    global failures
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures += 1
    return ok


def key(o):
    return (o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"])


def json_patch(obj, ops):
    for op in ops:
        parts = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].lstrip("/").split("/")]
        node = obj
        for p in parts[:-1]:
            node = node[int(p)] if isinstance(node, list) else node[p]
        last = parts[-1]
        if op["op"] == "remove":
            del node[int(last) if isinstance(node, list) else last]
        elif op["op"] in ("add", "replace"):
            if isinstance(node, list):
                i = len(node) if last == "-" else int(last)
                node.insert(i, op["value"]) if op["op"] == "add" else node.__setitem__(i, op["value"])
            else:
                node[last] = op["value"]
        else:
            raise ValueError(f"unsupported patch op {op['op']}")


def render(directory):
    with open(os.path.join(directory, "kustomization.yaml")) as f:
        k = yaml.safe_load(f)
    unknown = set(k) - {"apiVersion", "kind", "resources", "patches"}
    if unknown:
        raise ValueError(f"{directory}: kustomization fields this renderer does not know: {sorted(unknown)}")
    objs = []
    for r in k.get("resources", []):
        p = os.path.normpath(os.path.join(directory, r))
        if os.path.isdir(p):
            objs += render(p)
        else:
            with open(p) as f:
                objs += [d for d in yaml.safe_load_all(f) if d]
    for patch in k.get("patches", []):
        t = patch["target"]
        hits = [o for o in objs if o["kind"] == t["kind"] and o["metadata"]["name"] == t["name"]]
        if len(hits) != 1:
            raise ValueError(f"{directory}: patch target {t} matches {len(hits)} objects")
        json_patch(hits[0], yaml.safe_load(patch["patch"]))
    return copy.deepcopy(objs)


def as_map(objs):
    return {key(o): json.dumps(o, sort_keys=True) for o in objs}


def built_kubectl():
    """The kubectl tools/k8s-apiserver/build.sh built (Debian 12's archive has none), if it did."""
    d = subprocess.run([os.path.join(SRC, "tools", "k8s-apiserver", "build.sh"), "--print-dir"],
                       capture_output=True, text=True).stdout.strip()
    return os.path.join(d, "kubectl") if d and os.path.exists(os.path.join(d, ".done")) else None


kubectl = shutil.which("kubectl") or built_kubectl()
if not kubectl:
    print("note: kubectl is not installed (Debian 12's archive has no kubectl) nor built "
          "(tools/k8s-apiserver/build.sh): the kubectl render comparison is skipped; the Python "
          "renderer still checks every committed render")
rendered = {}
for name, rel in TARGETS.items():
    path = os.path.join(K8S, "rendered", f"{name}.yaml")
    with open(path) as f:
        text = f.read()
    rendered[name] = [d for d in yaml.safe_load_all(text) if d]
    if kubectl:
        out = subprocess.run([kubectl, "kustomize", os.path.join(K8S, rel)], capture_output=True, text=True)
        check(out.returncode == 0 and out.stdout == text,
              f"kubectl kustomize {rel} equals rendered/{name}.yaml" +
              ("" if out.returncode == 0 else f": {out.stderr.strip()}"))
    mine = as_map(render(os.path.join(K8S, rel)))
    theirs = as_map(rendered[name])
    check(mine == theirs, f"the Python render of {rel} equals rendered/{name}.yaml as objects "
                          f"(differ: {sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))})")

for name, objs in rendered.items():
    ds = [o for o in objs if o["kind"] == "DaemonSet"]
    if not check(len(ds) == 1, f"{name}: one DaemonSet"):
        continue
    spec = ds[0]["spec"]
    ru = spec.get("updateStrategy", {}).get("rollingUpdate", {})
    check(spec["updateStrategy"].get("type") == "RollingUpdate" and ru.get("maxUnavailable") and ru.get("maxSurge") == 0,
          f"{name}: RollingUpdate with maxUnavailable and maxSurge 0 (never two daemons on one pin root)")
    pod = spec["template"]["spec"]
    check(pod.get("terminationGracePeriodSeconds", 30) >= 30, f"{name}: the grace period covers the 30 s drain")
    ann = spec["template"]["metadata"].get("annotations", {})
    ports = {p["containerPort"]: p.get("name") for c in pod["containers"] for p in c.get("ports", [])}
    check(ann.get("prometheus.io/scrape") == "true" and int(ann.get("prometheus.io/port", 0)) in ports,
          f"{name}: prometheus.io/scrape and a prometheus.io/port that a container exposes ({ann})")
    for c in pod["containers"]:
        for probe in ("readinessProbe", "livenessProbe"):
            check(probe in c, f"{name}: container {c['name']} has a {probe}")
        check(bool(c.get("resources", {}).get("requests")), f"{name}: container {c['name']} has resource requests")
        for m in c.get("volumeMounts", []):
            if m["mountPath"] == "/sys/fs/bpf":
                check(m.get("mountPropagation") in ("HostToContainer", "Bidirectional"),
                      f"{name}: {c['name']} mounts bpffs with mount propagation ({m.get('mountPropagation')})")
names = [c["name"] for c in [o for o in rendered["daemon-only"] if o["kind"] == "DaemonSet"][0]["spec"]["template"]["spec"]["containers"]]
check(names == ["claim2cored"], f"daemon-only: the DaemonSet runs only claim2cored ({names})")
pm = [o for o in rendered["monitoring"] if o["kind"] == "PodMonitor"]
if check(len(pm) == 1, "monitoring: one PodMonitor"):
    ds = [o for o in rendered["monitoring"] if o["kind"] == "DaemonSet"][0]
    port_names = {p.get("name") for c in ds["spec"]["template"]["spec"]["containers"] for p in c.get("ports", [])}
    check(all(e["port"] in port_names for e in pm[0]["spec"]["podMetricsEndpoints"]),
          "monitoring: the PodMonitor scrapes a named port of the DaemonSet")
    check(pm[0]["spec"]["selector"]["matchLabels"].items() <= ds["spec"]["template"]["metadata"]["labels"].items(),
          "monitoring: the PodMonitor selects the DaemonSet's pods")
print(f"{failures} failure(s)")
sys.exit(1 if failures else 0)
