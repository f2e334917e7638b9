#!/usr/bin/python3
"""deploy/ files: every YAML parses; the CRDs are structural and their OpenAPI v3 schemas accept
the example policies (examples/policies) and refuse deliberately wrong ones; the CLI's own
decoder (the core's validation) refuses the same wrong ones, so CRD and core agree; the
DaemonSet keeps least privilege; the example configs pass `claim2cored --check-config` when the
daemon is built. Debian's python3-yaml and python3-jsonschema (run with /usr/bin/python3).

usage: cli_deploy_test.py SOURCE_DIR CLAIM2CORE [CLAIM2CORED]
"""
import copy
import glob
import os
import subprocess
import sys
import tempfile

import jsonschema
import yaml

SRC, CLI = sys.argv[1], sys.argv[2]
DAEMON = sys.argv[3] if len(sys.argv) > 3 and os.path.exists(sys.argv[3]) else None
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def docs_of(path):
    with open(path, encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


# 1. Every YAML file in deploy/ parses; Kubernetes objects have apiVersion, kind, metadata.name.
deploy_yaml = sorted(glob.glob(os.path.join(SRC, "deploy", "**", "*.yaml"), recursive=True))
check(len(deploy_yaml) >= 6, f"deploy/ has {len(deploy_yaml)} YAML files")
objects = {}
for path in deploy_yaml:
    rel = os.path.relpath(path, SRC)
    try:
        ds = docs_of(path)
    except yaml.YAMLError as e:
        check(False, f"{rel} parses: {e}")
        continue
    check(len(ds) >= 1, f"{rel} parses ({len(ds)} documents)")
    # The objects are the base's (overlays patch them and rendered/ repeats them; both are
    # checked by deploy_kustomize_test.py); kustomization.yaml is not a Kubernetes object.
    if "/kubernetes/base/" in path and not path.endswith("/kustomization.yaml"):
        for i, d in enumerate(ds, 1):
            good = isinstance(d, dict) and "apiVersion" in d and "kind" in d and "name" in d.get("metadata", {})
            check(good, f"{rel} doc {i} is a Kubernetes object")
            if good:
                objects[(d["kind"], d["metadata"]["name"])] = d


# 2. The CRDs: structural, and their schemas as JSON Schema.
def structural_problems(node, path, in_junction=False):
    """The parts of Kubernetes' structural-schema rules that matter here: every property,
    item and additionalProperties schema has a type; anyOf/allOf/oneOf/not branches set no
    type, default, description or additionalProperties."""
    out = []
    if not isinstance(node, dict):
        return out
    if in_junction:
        for k in ("type", "default", "description", "additionalProperties", "nullable"):
            if k in node:
                out.append(f"{path}: '{k}' inside anyOf/allOf/oneOf/not")
    elif "type" not in node and not node.get("x-kubernetes-int-or-string"):
        out.append(f"{path}: no type")
    for name, sub in node.get("properties", {}).items():
        out += structural_problems(sub, f"{path}.{name}", in_junction)
    if isinstance(node.get("items"), dict):
        out += structural_problems(node["items"], f"{path}[]", in_junction)
    if isinstance(node.get("additionalProperties"), dict):
        out += structural_problems(node["additionalProperties"], f"{path}{{}}", in_junction)
    for j in ("anyOf", "allOf", "oneOf"):
        for i, sub in enumerate(node.get(j, [])):
            out += structural_problems(sub, f"{path}.{j}[{i}]", True)
    return out


def json_schema(openapi):
    """OpenAPI v3 structural schema -> JSON Schema (draft 7): drop the Kubernetes extensions."""
    s = copy.deepcopy(openapi)

    def strip(n):
        if isinstance(n, dict):
            for k in [k for k in n if k.startswith("x-kubernetes-")]:
                del n[k]
            for v in n.values():
                strip(v)
        elif isinstance(n, list):
            for v in n:
                strip(v)

    strip(s)
    return s


schemas = {}
for kind, plural in (("NodeSchedulingPolicy", "nodeschedulingpolicies"), ("DRAExecutionPolicy", "draexecutionpolicies")):
    crd = objects.get(("CustomResourceDefinition", f"{plural}.scheduling.gthulhu.io"))
    check(crd is not None, f"CRD for {kind}")
    if crd is None:
        continue
    check(crd["spec"]["group"] == "scheduling.gthulhu.io" and crd["spec"]["names"]["kind"] == kind, f"{kind}: group and kind")
    versions = crd["spec"]["versions"]
    check([v["name"] for v in versions] == ["v1alpha1"] and versions[0]["storage"], f"{kind}: v1alpha1 served and stored")
    openapi = versions[0]["schema"]["openAPIV3Schema"]
    problems = structural_problems(openapi, kind)
    check(not problems, f"{kind}: structural schema {problems}")
    js = json_schema(openapi)
    jsonschema.Draft7Validator.check_schema(js)
    schemas[kind] = jsonschema.Draft7Validator(js)


def schema_errors(doc):
    v = schemas.get(doc.get("kind"))
    if v is None:
        return [f"no schema for kind {doc.get('kind')!r}"]
    return ["/".join(str(p) for p in e.absolute_path) + ": " + e.message for e in v.iter_errors(doc)]


def cli_exit(doc):
    """claim2core apply of one document against no daemon: 2 = refused locally (invalid),
    1 = valid (it got as far as trying to connect)."""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        yaml.safe_dump(doc, f)
        name = f.name
    try:
        r = subprocess.run([CLI, "apply", "-f", name, "--socket", "/nonexistent/claim2cored.sock", "--timeout", "2"],
                           capture_output=True, text=True, timeout=60)
        return r.returncode, r.stderr.strip().splitlines()[0] if r.stderr.strip() else ""
    finally:
        os.unlink(name)


# 3. Every example policy validates against its CRD, and the CLI accepts it too.
examples = sorted(glob.glob(os.path.join(SRC, "examples", "policies", "*.yaml")))
check(len(examples) >= 3, f"{len(examples)} example policy files")
valid_docs = []
for path in examples:
    for i, d in enumerate(docs_of(path), 1):
        rel = f"{os.path.relpath(path, SRC)} doc {i}"
        errs = schema_errors(d)
        check(not errs, f"{rel} ({d['kind']}/{d['metadata']['name']}) validates against the CRD {errs}")
        code, msg = cli_exit(d)
        check(code == 1, f"{rel}: the CLI validates it too (exit {code}: {msg})")
        valid_docs.append(d)

# 4. Deliberately wrong manifests: the CRD refuses each (naming the field) and so does the core.
node = next(d for d in valid_docs if d["metadata"]["name"] == "vllm-enginecore")
dra = next(d for d in valid_docs if d["kind"] == "DRAExecutionPolicy")


def mutate(base, path, value):
    d = copy.deepcopy(base)
    *parents, last = path
    cur = d
    for p in parents:
        cur = cur[p]
    if value is KeyError:
        del cur[last]
    else:
        cur[last] = value
    return d


wrong = [
    ("priority above 1000", mutate(node, ["spec", "priority"], 5000), "spec/priority"),
    ("negative priority", mutate(node, ["spec", "priority"], -1), "spec/priority"),
    ("slice of 5 ns", mutate(node, ["spec", "executionTime"], 5), "spec/executionTime"),
    ("slice of 2 s", mutate(node, ["spec", "executionTime"], 2_000_000_000), "spec/executionTime"),
    ("slice as a string", mutate(node, ["spec", "executionTime"], "2ms"), "spec/executionTime"),
    # (commandRegex or processRegex: the schema's allOf/anyOf names `spec`)
    ("neither commandRegex nor processRegex", mutate(node, ["spec", "commandRegex"], KeyError), "spec"),
    ("no node selection", mutate(node, ["spec", "nodeNames"], KeyError), "spec"),
    ("empty node name", mutate(node, ["spec", "nodeNames"], [""]), "spec/nodeNames/0"),
    ("draSelector without driver", mutate(node, ["spec", "draSelectors"], [{"pool": "p"}]), "spec/draSelectors/0"),
    ("upper-case name", mutate(node, ["metadata", "name"], "vLLM"), "metadata/name"),
    ("unknown execution class", mutate(dra, ["spec", "taskRoles", 0, "executionClass"], "urgent"),
     "spec/taskRoles/0/executionClass"),
    ("role selector empty", mutate(dra, ["spec", "taskRoles", 0, "selector"], {}), "spec/taskRoles/0/selector"),
    ("no resource claims", mutate(dra, ["spec", "resourceClaims"], []), "spec/resourceClaims"),
    ("no task roles", mutate(dra, ["spec", "taskRoles"], KeyError), "taskRoles"),
    ("maxBoostDuration in words", mutate(dra, ["spec", "safety", "maxBoostDuration"], "30 seconds"),
     "spec/safety/maxBoostDuration"),
    ("other fallback", mutate(dra, ["spec", "safety", "fallback"], "cfs"), "spec/safety/fallback"),
]
for what, doc, field in wrong:
    errs = schema_errors(doc)
    check(bool(errs) and any(field in e for e in errs), f"CRD refuses {what}: {errs[:1]}")
    code, msg = cli_exit(doc)
    check(code == 2, f"the CLI refuses {what} too (exit {code}: {msg})")

# 4b. The status subresource (issue 14, item 4): both CRDs have it, their printer columns read
# fields the status schema defines, a status as the feed writes it validates and wrong ones do not.
for kind, plural in (("NodeSchedulingPolicy", "nodeschedulingpolicies"), ("DRAExecutionPolicy", "draexecutionpolicies")):
    crd = objects.get(("CustomResourceDefinition", f"{plural}.scheduling.gthulhu.io"))
    if crd is None or kind not in schemas:
        continue
    version = crd["spec"]["versions"][0]
    check(version.get("subresources", {}).get("status") == {}, f"{kind}: status subresource")
    props = version["schema"]["openAPIV3Schema"]["properties"].get("status", {}).get("properties", {})
    columns = {c["name"]: c["jsonPath"] for c in version.get("additionalPrinterColumns", [])}
    check(columns.get("Applied") == ".status.applied" and columns.get("Reason") == ".status.reason"
          and {"applied", "reason", "nodes"} <= set(props), f"{kind}: Applied and Reason columns on status fields {columns}")
    nodes = props.get("nodes", {})
    check(nodes.get("x-kubernetes-list-type") == "map" and nodes.get("x-kubernetes-list-map-keys") == ["node"],
          f"{kind}: status.nodes is a list-map keyed by node (one entry per node)")
    base = next((d for d in valid_docs if d["kind"] == kind), None)
    entry = {"node": "kind-worker", "state": "Applied", "observedGeneration": 3, "matchedTasks": 2, "entries": 2,
             "reason": "", "lastTransitionTime": "2026-12-01T15:52:16Z"}
    good = dict(base, status={"applied": "1/1 nodes", "reason": "", "nodes": [entry]})
    check(not schema_errors(good), f"{kind}: a status as the feed writes it validates {schema_errors(good)}")
    for what, bad, field in (
            ("an unknown state", dict(entry, state="Done"), "status/nodes/0/state"),
            ("an entry without node", {k: v for k, v in entry.items() if k != "node"}, "status/nodes/0"),
            ("negative entries", dict(entry, entries=-1), "status/nodes/0/entries"),
            ("a reason over 1024 bytes", dict(entry, reason="x" * 1025), "status/nodes/0/reason")):
        errs = schema_errors(dict(base, status={"nodes": [bad]}))
        check(any(field in e for e in errs), f"{kind}: the status schema refuses {what}: {errs[:1]}")

# 5. The DaemonSet: least privilege that works.
ds = objects.get(("DaemonSet", "claim2cored"))
check(ds is not None, "DaemonSet claim2cored")
if ds:
    pod = ds["spec"]["template"]["spec"]
    c = pod["containers"][0]
    sc = c["securityContext"]
    check(pod.get("hostPID") is True, "hostPID (host threads, global TIDs)")
    check(not pod.get("hostNetwork"), "no hostNetwork")
    check(sc.get("privileged") is False and sc.get("allowPrivilegeEscalation") is False, "not privileged")
    check(sc["capabilities"]["drop"] == ["ALL"], "drops every capability")
    check(sorted(sc["capabilities"]["add"]) == ["BPF", "PERFMON", "SYS_ADMIN", "SYS_NICE", "SYS_RESOURCE"],
          f"adds exactly BPF, PERFMON, SYS_ADMIN, SYS_NICE, SYS_RESOURCE: {sc['capabilities']['add']}")
    mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
    vols = {v["name"]: v for v in pod["volumes"]}
    for mp, host in (("/sys/fs/bpf", "/sys/fs/bpf"), ("/sys/fs/cgroup", "/sys/fs/cgroup"),
                     ("/run/claim2core", "/run/claim2core"), ("/var/lib/claim2core", "/var/lib/claim2core")):
        m = mounts.get(mp)
        check(m is not None and vols[m["name"]].get("hostPath", {}).get("path") == host, f"{mp} from hostPath {host}")
    check(mounts["/sys/fs/cgroup"].get("readOnly") is True, "cgroupfs read-only")
    check(pod["serviceAccountName"] == "claim2cored", "runs as the claim2cored service account")

# 6. RBAC: read-only access to exactly what the daemon reads.
role = objects.get(("ClusterRole", "claim2cored"))
check(role is not None, "ClusterRole claim2cored")
if role:
    granted = {(g, r): set(rule["verbs"]) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"]}
    want = {("resource.k8s.io", "resourceclaims"), ("resource.k8s.io", "resourceslices"), ("", "pods"), ("", "nodes"),
            ("scheduling.gthulhu.io", "draexecutionpolicies"), ("scheduling.gthulhu.io", "nodeschedulingpolicies")}
    # The feed's only write: its node's status entry (PATCH on the status subresource).
    status_sub = {("scheduling.gthulhu.io", "draexecutionpolicies/status"),
                  ("scheduling.gthulhu.io", "nodeschedulingpolicies/status")}
    check(set(granted) == want | status_sub, f"ClusterRole covers exactly {sorted(want | status_sub)}")
    check(all(granted[r] == {"get", "list", "watch"} for r in want), "ClusterRole reads with get/list/watch only")
    check(all(granted.get(r) == {"patch"} for r in status_sub), "and writes nothing but patch on */status")
binding = objects.get(("ClusterRoleBinding", "claim2cored"))
check(binding is not None and binding["subjects"][0]["name"] == "claim2cored", "ClusterRoleBinding to the service account")

# 7. The example configs pass the daemon's own validation.
if DAEMON:
    cm = objects[("ConfigMap", "claim2cored-config")]
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(cm["data"]["claim2cored.yaml"])
        cm_path = f.name
    for what, path in (("deploy/claim2cored.yaml", os.path.join(SRC, "deploy", "claim2cored.yaml")),
                       ("the ConfigMap's claim2cored.yaml", cm_path)):
        r = subprocess.run([DAEMON, "--check-config", "-c", path, "--node-name", "test-node"],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, f"claim2cored --check-config accepts {what} ({(r.stdout + r.stderr).strip()[:200]})")
    os.unlink(cm_path)
else:
    print("skip claim2cored --check-config: claim2cored is not built in this tree")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
