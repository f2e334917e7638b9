#!/usr/bin/python3
"""The Kubernetes-facing parts against a REAL kube-apiserver and etcd (k8s_real_apiserver.py; the
binaries from tools/k8s-apiserver/build.sh). ctest label `realk8s`.

Scenarios (one per ctest entry):
  parity  the API behaviours src/k8s and the fake rely on, probed on the real server and on the fake
          (k8s_parity_probes.py); the real server's answers are asserted, and the fake must give the
          same ones (every difference is printed as `DIFF <fact>: real=... fake=...`)
  crds    `kubectl apply -k deploy/kubernetes/base` for real, `--dry-run=server` of every overlay;
          the CRDs are established, accept every example policy and refuse the invalid ones with the
          field named; the printer columns in `kubectl get`
  rbac    the daemon's service account (token from the TokenRequest API, authorized by exactly
          deploy/kubernetes/base/rbac.yaml): every read the feed makes is allowed, its one write
          (patch of the two CRDs' status) too, and nothing else; the refusals name the verb
  status  two nodes' feeds (claim2core-observer --write-status, each with its own claim2cored) as
          the service account: both entries in status.nodes[] follow policy changes, also with a
          third writer racing them (409s, no entry lost); a claim allocated through /status reaches
          node-a's daemon at the observer's revision and leaves when deallocated; a deleted Node's
          entry is pruned, the preview
          acknowledgement by an operator reaches the feed, the same acknowledgement with the
          service account's rights fails naming the missing verb, and a feed whose role lacks
          `patch` on status says so in its log instead of skipping silently. Root and bpffs.

usage: k8s_realserver_test.py SCENARIO SOURCE_DIR [OBSERVER CLAIM2CORED CLAIM2CORE]
Exit 77 (skip) when the binaries are not built; scripts/test builds them first and fails loudly if
that fails.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from c2c_it import checker, wait_for  # noqa: E402
from k8s_api_backends import FakeBackend, RealBackend, object_path  # noqa: E402
from k8s_real_apiserver import RealCluster, binaries  # noqa: E402
import k8s_parity_probes as probes  # noqa: E402

SCENARIO, SRC = sys.argv[1], sys.argv[2]
TOOLS = sys.argv[3:6]
GROUP = "scheduling.gthulhu.io/v1alpha1"
BASE = os.path.join(SRC, "deploy", "kubernetes", "base")
failures = []
check = checker(failures)
T0 = time.time()
if binaries(SRC) is None:
    print("SKIP: kube-apiserver/etcd not built (tools/k8s-apiserver/build.sh; scripts/test builds them)")
    sys.exit(77)
work = tempfile.mkdtemp(prefix=f"c2c-realk8s-{SCENARIO}-")


def kubectl_ok(c, *args, **kw):
    code, out, err = c.kubectl(*args, **kw)
    check(code == 0, f"kubectl {' '.join(args)}: exit {code} {err.strip()[:300]}")
    return out


def install_crds(c):
    for f in ("crd-draexecutionpolicies.yaml", "crd-nodeschedulingpolicies.yaml"):
        kubectl_ok(c, "apply", "-f", os.path.join(BASE, f))
    kubectl_ok(c, "wait", "--for", "condition=Established", "--timeout", "30s",
               "crd/draexecutionpolicies.scheduling.gthulhu.io", "crd/nodeschedulingpolicies.scheduling.gthulhu.io")


# ---- parity ------------------------------------------------------------------------------------------

def probe_all(b, expire):
    f = {}
    for p in (probes.probe_lists, probes.probe_watch, probes.probe_custom_resource_writes, probes.probe_kubectl_table):
        f.update(p(b))
    f.update(probes.probe_expired(b, expire))
    return json.loads(json.dumps(f))  # tuples as lists: the same whether measured now or read back


def scenario_parity():
    # tests/mutants/mutate.py realk8s measures the real server once ($C2C_PARITY_REAL_FACTS, written when
    # missing) and then judges each seeded bug of the fake ($C2C_K8S_FAKE_APISERVER) against it.
    facts_file = os.environ.get("C2C_PARITY_REAL_FACTS")
    facts = {}
    if facts_file and os.path.exists(facts_file):
        with open(facts_file) as f:
            facts["real"] = json.load(f)
        kubectl = os.path.join(binaries(SRC), "kubectl")
    else:
        with RealCluster(SRC) as c:
            install_crds(c)
            facts["real"] = probe_all(RealBackend(SRC, work, c), c.restart_apiserver)
        kubectl = c.kubectl_bin
        if facts_file:
            with open(facts_file, "w") as f:
                json.dump(facts["real"], f)
    fake = FakeBackend(SRC, work, kubectl=kubectl, path=os.environ.get("C2C_K8S_FAKE_APISERVER"))
    try:
        facts["fake"] = probe_all(fake, lambda: fake.request("POST", "/_control/expire", {}))
    finally:
        fake.stop()
    r, k = facts["real"], facts["fake"]
    for name in r:
        print(f"{'same' if r[name] == k.get(name) else 'DIFF'} {name}: real={r[name]!r}"
              + ("" if r[name] == k.get(name) else f" fake={k.get(name)!r}"))
    # What src/k8s relies on, as the real server answers it.
    check(r["claims list: resourceVersion is a number >= every item's"],
          "real: a list's resourceVersion is numeric and covers its items (the feed's revisions)")
    events = r["watch from the list's resourceVersion: events"]
    check(events == [["ADDED", "w1"], ["DELETED", "w1"]],
          f"real: a watch from the list's resourceVersion gives exactly the later events: {events}")
    check(r["quiet watch, nothing written: bookmarks"] == 0,
          "real: no bookmark while nothing moves past the watch's resourceVersion")
    check(r["quiet 4 s watch, a write elsewhere: at least one bookmark"] and r["bookmark resourceVersion >= the write elsewhere"],
          "real: a bookmark carries a resourceVersion past a write elsewhere once the cache caught up")
    check(r["no bookmarks unless asked"], "real: no bookmark without allowWatchBookmarks")
    check(r["expired watch: Status code/reason"] == [410, "Expired"], f"real: an expired watch is 410 Expired: "
          f"{r['expired watch: Status code/reason']} (HTTP {r['expired watch: HTTP status']})")
    check(r["PATCH /status with a stale resourceVersion: HTTP, reason"] == [409, "Conflict"],
          "real: a stale resourceVersion precondition is 409 Conflict")
    check(r["PATCH spec: HTTP, generation"] == [200, 2] and r["PATCH annotation: HTTP, generation"] == [200, 1],
          "real: a custom resource's generation moves with its spec only")
    check(r["PATCH object with status: HTTP, status written"] == [200, False],
          "real: status written to the object itself is ignored (status subresource)")
    check(r["kubectl get: header"] == ["NAME", "REGEX", "PRIORITY", "SLICE-NS", "APPLIED", "REASON", "AGE"],
          f"real: the printer columns: {r['kubectl get: header']}")
    diffs = [n for n in r if r[n] != k.get(n)]
    check(not diffs, f"the fake answers as the real server does ({len(diffs)} differences: {diffs})")


# ---- crds ----------------------------------------------------------------------------------------------

def docs(path):
    import yaml
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def scenario_crds():
    with RealCluster(SRC) as c:
        # The base for real (kubectl apply -k, as deploy/README.md says), then every overlay as a
        # server-side dry run (admission, schema and RBAC objects checked by the server).
        code, out, err = c.kubectl("apply", "-k", BASE, timeout=120)
        check(code == 0, f"kubectl apply -k deploy/kubernetes/base: {out.strip()} {err.strip()}")
        kubectl_ok(c, "wait", "--for", "condition=Established", "--timeout", "30s",
                   "crd/draexecutionpolicies.scheduling.gthulhu.io", "crd/nodeschedulingpolicies.scheduling.gthulhu.io")
        # The Prometheus Operator's PodMonitor kind is not part of a bare API server: a stand-in CRD
        # of that name (schema-less) lets the monitoring overlay's dry run reach admission.
        stand_in = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                    "metadata": {"name": "podmonitors.monitoring.coreos.com"},
                    "spec": {"group": "monitoring.coreos.com", "scope": "Namespaced",
                             "names": {"plural": "podmonitors", "singular": "podmonitor", "kind": "PodMonitor",
                                       "listKind": "PodMonitorList"},
                             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                                 "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}
        code, out, err = c.kubectl("apply", "-f", "-", input=json.dumps(stand_in))
        kubectl_ok(c, "wait", "--for", "condition=Established", "--timeout", "30s", "crd/podmonitors.monitoring.coreos.com")
        overlays = sorted(os.listdir(os.path.join(SRC, "deploy", "kubernetes", "overlays")))
        check(len(overlays) >= 2, f"overlays found: {overlays}")
        for name in ["../base"] + overlays:
            d = os.path.normpath(os.path.join(SRC, "deploy", "kubernetes", "overlays", name))
            code, out, err = c.kubectl("apply", "-k", d, "--dry-run=server", timeout=120)
            check(code == 0 and "(server dry run)" in out, f"kubectl apply -k {os.path.relpath(d, SRC)} --dry-run=server: "
                                                           f"{err.strip() or out.strip().splitlines()[:2]}")
        code, out, _ = c.kubectl("get", "daemonset", "-n", "claim2core", "claim2cored", "-o", "name")
        check(out.strip() == "daemonset.apps/claim2cored", f"the DaemonSet was created: {out.strip()}")

        # Every example policy is accepted (server-side, strict field validation as kubectl sends it).
        examples = os.path.join(SRC, "examples", "policies")
        for f in sorted(os.listdir(examples)):
            if f.endswith(".yaml"):
                code, out, err = c.kubectl("apply", "--dry-run=server", "-f", os.path.join(examples, f))
                check(code == 0, f"example {f} accepted by the CRDs: {err.strip()[:300]}")
        # The invalid ones: refused with the field named; what OpenAPI cannot say (RE2) is accepted.
        inv = os.path.join(examples, "invalid")
        want = {
            "slice-too-long.yaml": ["spec.executionTime", "should be less than or equal to 100000000"],
            "selector-without-values.yaml": ["spec.nodeSelectors.matchExpressions[0].values"],
            "unknown-field.yaml": ['unknown field "spec.taskRole"'],
        }
        for f, needles in want.items():
            code, out, err = c.kubectl("apply", "--dry-run=server", "-f", os.path.join(inv, f))
            check(code != 0 and all(n in err for n in needles),
                  f"invalid/{f} refused by the server, naming {needles}: exit {code}: {err.strip()[:400]}")
            print(f"  server says for invalid/{f}: {err.strip()[:400]}")
        code, out, err = c.kubectl("apply", "--dry-run=server", "-f", os.path.join(inv, "bad-regex.yaml"))
        check(code == 0, f"invalid/bad-regex.yaml passes the schema (RE2 is checked by the daemon and CLI, "
                         f"deploy/README.md): exit {code} {err.strip()[:200]}")
        # Without strict field validation (a client that does not ask for it), an unknown field is
        # dropped, not refused: then the policy lacks its taskRoles, which the schema requires.
        obj = docs(os.path.join(inv, "unknown-field.yaml"))[0]
        code, body = c.request("POST", object_path("draexecutionpolicies", None) + "?dryRun=All", obj)
        msg = body.get("message", "") if isinstance(body, dict) else str(body)
        print(f"  POST of invalid/unknown-field.yaml without fieldValidation: {code} {msg[:300]}")
        check(code == 422 and "spec.taskRoles" in msg,
              f"without strict validation the misspelt field is pruned and the missing taskRoles refused: {code} {msg[:300]}")

        # processRegex (the process title, issue 15) is part of both kinds: kept by the server as
        # written, alone or beside commandRegex; a node policy with neither regex is refused.
        title_only = {"apiVersion": GROUP, "kind": "NodeSchedulingPolicy", "metadata": {"name": "by-title"},
                      "spec": {"nodeNames": ["node-a"], "processRegex": "^VLLM::EngineCore_DP1$"}}
        code, o = c.request("POST", object_path("nodeschedulingpolicies", None) + "?fieldValidation=Strict", title_only)
        check(code == 201 and o["spec"].get("processRegex") == "^VLLM::EngineCore_DP1$",
              f"a node policy by process title alone is stored with its processRegex: {code} {o.get('message', '')}")
        neither = {"apiVersion": GROUP, "kind": "NodeSchedulingPolicy", "metadata": {"name": "no-regex"},
                   "spec": {"nodeNames": ["node-a"], "priority": 1}}
        code, o = c.request("POST", object_path("nodeschedulingpolicies", None), neither)
        check(code == 422 and "spec.commandRegex: Required value" in o.get("message", "")
              and '"spec" must validate at least one schema (anyOf)' in o.get("message", ""),
              f"a node policy without either regex is refused: {code} {o.get('message', '')[:300]}")
        role = {"apiVersion": GROUP, "kind": "DRAExecutionPolicy", "metadata": {"name": "by-title"},
                "spec": {"resourceClaims": ["gpu"], "taskRoles": [{"name": "engine", "executionClass": "latency-critical",
                                                                  "selector": {"processRegex": "^VLLM::EngineCore"}}]}}
        code, o = c.request("POST", object_path("draexecutionpolicies", None) + "?fieldValidation=Strict", role)
        check(code == 201 and o["spec"]["taskRoles"][0]["selector"].get("processRegex") == "^VLLM::EngineCore",
              f"a task role selected by process title is stored with its processRegex: {code} {o.get('message', '')}")

        # Printer columns, with a status entry written through the status subresource.
        kubectl_ok(c, "apply", "-f", os.path.join(examples, "vllm-enginecore.yaml"))
        name = docs(os.path.join(examples, "vllm-enginecore.yaml"))[0]["metadata"]["name"]
        code, o = c.request("PATCH", object_path("nodeschedulingpolicies", None, name) + "/status",
                            {"status": {"applied": "0/1 nodes", "reason": "node-a: map full",
                                        "nodes": [{"node": "node-a", "state": "Failed", "reason": "map full"}]}},
                            ctype="application/merge-patch+json")
        check(code == 200, f"status written through /status: {code} {o if code != 200 else ''}")
        out = kubectl_ok(c, "get", "nodeschedulingpolicies")
        print(out)
        lines = out.splitlines()
        check(lines and lines[0].split() == ["NAME", "REGEX", "PRIORITY", "SLICE-NS", "APPLIED", "REASON", "AGE"],
              f"kubectl get nodeschedulingpolicies shows the documented columns: {lines[:1]}")
        row = next((l for l in lines if l.startswith(name + " ")), "")
        check("0/1 nodes" in row and "node-a: map full" in row, f"APPLIED and REASON show the status: {row!r}")
        kubectl_ok(c, "apply", "-f", os.path.join(examples, "llm-decode.yaml"))
        out = kubectl_ok(c, "get", "draexecutionpolicies")
        print(out)
        check("ACKNOWLEDGED" in (out.splitlines() or [""])[0], f"kubectl get draexecutionpolicies has ACKNOWLEDGED: {out[:200]}")
        code, o = c.request("PATCH", object_path("nodeschedulingpolicies", None, name) + "/status",
                            {"status": {"nodes": [{"node": "node-a", "state": "Done"}]}},
                            ctype="application/merge-patch+json")
        check(code == 422 and "Unsupported value" in o.get("message", ""),
              f"a status entry with an unknown state is refused by the schema: {code} {o.get('message', '')[:200]}")


# ---- rbac ---------------------------------------------------------------------------------------------

def scenario_rbac():
    with RealCluster(SRC) as c:
        install_crds(c)
        sa = "system:serviceaccount:claim2core:claim2cored"
        allowed = [(v, r) for r in ("resourceclaims.resource.k8s.io", "resourceslices.resource.k8s.io", "pods", "nodes",
                                    "draexecutionpolicies.scheduling.gthulhu.io",
                                    "nodeschedulingpolicies.scheduling.gthulhu.io") for v in ("get", "list", "watch")]
        allowed += [("patch", "nodeschedulingpolicies.scheduling.gthulhu.io/status"),
                    ("patch", "draexecutionpolicies.scheduling.gthulhu.io/status")]
        denied = [("patch", "nodeschedulingpolicies.scheduling.gthulhu.io"),
                  ("update", "nodeschedulingpolicies.scheduling.gthulhu.io/status"),
                  ("create", "nodeschedulingpolicies.scheduling.gthulhu.io"),
                  ("delete", "draexecutionpolicies.scheduling.gthulhu.io"),
                  ("patch", "resourceclaims.resource.k8s.io"), ("update", "resourceclaims.resource.k8s.io/status"),
                  ("get", "secrets"), ("list", "configmaps"), ("patch", "nodes"), ("create", "pods")]
        for verb, res in allowed + denied:
            res, _, sub = res.partition("/")
            code, out, err = c.kubectl("auth", "can-i", verb, res, "--all-namespaces",
                                       *(["--subresource", sub] if sub else []), kubeconfig=c.daemon_kubeconfig)
            res += "/" + sub if sub else ""
            want = (verb, res) in allowed
            check((out.strip() == "yes") == want, f"{sa} {'may' if want else 'may not'} {verb} {res}: {out.strip()}")
        # The same through real requests with the token.
        t = c.daemon_token
        for path in ("/apis/resource.k8s.io/v1/resourceclaims", "/apis/resource.k8s.io/v1/resourceslices",
                     "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-a", "/api/v1/nodes?fieldSelector=metadata.name%3Dnode-a",
                     f"/apis/{GROUP}/draexecutionpolicies", f"/apis/{GROUP}/nodeschedulingpolicies"):
            # Right after a CRD is established (or the API server restarts) its watch cache may
            # still be filling: the server answers 429 "storage is (re)initializing" for a while.
            answers = []
            wait_for(lambda: answers.append(c.request("GET", path, token=t)) or answers[-1][0] == 200, timeout=15)
            early = [f"{a[0]} {a[1].get('message', '') if isinstance(a[1], dict) else ''}" for a in answers if a[0] != 200]
            check(answers[-1][0] == 200, f"the service account lists {path}: {answers[-1][0]}"
                                         + (f" (first {early[0]!r} x{len(early)})" if early else ""))
        c.request("POST", object_path("nodeschedulingpolicies", None),
                  {"apiVersion": GROUP, "kind": "NodeSchedulingPolicy", "metadata": {"name": "engine"},
                   "spec": {"nodeNames": ["node-a"], "commandRegex": "^engine$"}})
        merge = "application/merge-patch+json"
        code, body = c.request("PATCH", object_path("nodeschedulingpolicies", None, "engine") + "/status",
                               {"status": {"nodes": [{"node": "node-a", "state": "Pending"}]}}, ctype=merge, token=t)
        check(code == 200, f"the service account patches status: {code}")
        code, body = c.request("PATCH", object_path("nodeschedulingpolicies", None, "engine"),
                               {"metadata": {"annotations": {"claim2core.io/acknowledged-generation": "1"}}},
                               ctype=merge, token=t)
        msg = body.get("message", "") if isinstance(body, dict) else ""
        check(code == 403 and f'User "{sa}" cannot patch resource "nodeschedulingpolicies"' in msg,
              f"the service account may not patch the object (the acknowledgement is an operator's): {code} {msg}")
        code, body = c.request("GET", "/api/v1/namespaces/claim2core/secrets", token=t)
        check(code == 403, f"the service account may not read secrets: {code}")


# ---- status: two nodes' feeds as the service account ----------------------------------------------------

def scenario_status():
    from c2c_it import cli_runner, require_bpf, stop_processes
    require_bpf("BPF maps, bpffs pins")
    OBSERVER, DAEMON, CLI = TOOLS
    nodes = ["node-a", "node-b"]
    procs, pins = {}, []
    c = RealCluster(SRC).__enter__()
    try:
        install_crds(c)
        merge = "application/merge-patch+json"
        for n in nodes:
            c.request("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": n}})

        def start_node(n, kubeconfig, tag=""):
            sock = os.path.join(work, f"{n}.sock")
            if n not in procs:
                pin = f"/sys/fs/bpf/c2c-realk8s-{os.getpid()}-{n}"
                pins.append(pin)
                log = open(os.path.join(work, f"daemon-{n}.log"), "a")
                procs[n] = subprocess.Popen([DAEMON, "--node-name", n, "--socket", sock, "--state-dir",
                                             os.path.join(work, f"state-{n}"), "--pin-root", pin,
                                             "--task-discovery", "scan", "--config", "/dev/null"],
                                            stdout=log, stderr=subprocess.STDOUT)
                cli = cli_runner(CLI, sock)[0]
                if not wait_for(lambda: cli("status")[0] == 0, timeout=20):
                    raise SystemExit(f"claim2cored {n} did not answer")
            log = open(os.path.join(work, f"observer-{n}{tag}.log"), "a")
            procs["obs-" + n] = subprocess.Popen(
                [OBSERVER, "--node", n, "--kubeconfig", kubeconfig, "--daemon-socket", sock, "--write-status",
                 "--status-interval-ms", "200", "--status-resync-s", "30", "--watch-timeout", "10",
                 "--retry-backoff-ms", "100", "--max-backoff-ms", "1000"], stdout=subprocess.DEVNULL, stderr=log)

        def observer_log(n, tag=""):
            with open(os.path.join(work, f"observer-{n}{tag}.log")) as f:
                return f.read()

        for n in nodes:
            start_node(n, c.daemon_kubeconfig)
        NSP = "nodeschedulingpolicies"

        def apply_nsp(regex):
            obj = {"apiVersion": GROUP, "kind": "NodeSchedulingPolicy", "metadata": {"name": "engine"},
                   "spec": {"nodeNames": nodes, "commandRegex": regex, "priority": 1, "executionTime": 2000000}}
            code, out, err = c.kubectl("apply", "-f", "-", input=json.dumps(obj))
            check(code == 0, f"kubectl apply engine ({regex}): {err.strip()}")

        def entries():
            code, o = c.request("GET", object_path(NSP, None, "engine"))
            return {e["node"]: e for e in (o.get("status", {}).get("nodes", []) if code == 200 else [])}

        for gen, regex in ((1, "^c2c-none$"), (2, "^c2c-none-v2$"), (3, "^c2c-none-v3$")):
            apply_nsp(regex)
            ok = wait_for(lambda: all(entries().get(n, {}).get("observedGeneration") == gen for n in nodes), timeout=20)
            check(bool(ok), f"both nodes' entries reach observedGeneration {gen} (no write lost): {entries()}")
        conflicts = sum(observer_log(n).count("409 Conflict") for n in nodes)
        print(f"  409 Conflicts answered by the real server to the two writers: {conflicts}")

        # A third writer (a node of its own) races the two feeds: it re-reads and rewrites its own
        # entry, with the resourceVersion it read, as fast as it can while a policy change makes
        # both feeds write. The real server's 409s must cost no one's entry.
        c.request("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "racer"}})
        path = object_path(NSP, None, "engine")
        stop, racer = threading.Event(), {"writes": 0, "conflicts": 0, "last": None}

        def race():
            i = 0
            while not stop.is_set():
                code, o = c.request("GET", path)
                mine = {"node": "racer", "state": "Pending", "reason": f"write {i}"}
                rest = [e for e in o.get("status", {}).get("nodes", []) if e["node"] != "racer"]
                code, _ = c.request("PATCH", path + "/status", {"metadata": {"resourceVersion": o["metadata"]["resourceVersion"]},
                                                                "status": {"nodes": rest + [mine]}}, ctype=merge)
                if code == 200:
                    racer["writes"] += 1
                    racer["last"] = mine
                racer["conflicts"] += code == 409
                i += 1
        t = threading.Thread(target=race)
        t.start()
        time.sleep(0.5)
        apply_nsp("^c2c-none-v4$")
        ok = wait_for(lambda: all(entries().get(n, {}).get("observedGeneration") == 4 for n in nodes), timeout=20)
        time.sleep(1)
        stop.set()
        t.join()
        feed_conflicts = sum(observer_log(n).count("409 Conflict") for n in nodes) - conflicts
        print(f"  racing writer: {racer['writes']} writes, {racer['conflicts']} 409s; the feeds: {feed_conflicts} 409s")
        check(bool(ok) and entries().get("racer") == racer["last"],
              f"with a third writer racing, both feeds reach generation 4 and the racer's last write stands: {entries()}")
        check(racer["conflicts"] + feed_conflicts >= 1, "the real server answered 409 to someone in the race "
                                                        f"(racer {racer['conflicts']}, feeds {feed_conflicts})")
        # (Right after the CRDs are established their watch caches may still be filling: a 429
        # "storage is (re)initializing" then, logged and retried at the next pass, is the real
        # server's, not a failure.)
        errors = [l for n in nodes for l in observer_log(n).splitlines()
                  if '"error"' in l and "HTTP 429: storage is (re)initializing" not in l]
        check(not errors, f"no errors in the feeds' logs: {errors[:3]}")

        # The bindings feed: a claim allocated to node-a through /status (the scheduler's way) and
        # reserved for a pod there reaches node-a's daemon, at a generation that is the observer's
        # revision (the highest resourceVersion seen: etcd's revision on a real server), and goes
        # when the claim is deallocated.
        ns = "ml"
        c.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        c.request("POST", f"/api/v1/namespaces/{ns}/serviceaccounts",
                  {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}})
        code, p = c.request("POST", f"/api/v1/namespaces/{ns}/pods", {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pod-a", "labels": {"app": "vllm"}},
            "spec": {"nodeName": "node-a", "containers": [{"name": "c", "image": "example.invalid/c:1"}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimName": "claim-a"}]}})
        check(code == 201, f"pod created: {code} {p if code != 201 else ''}")
        code, cl = c.request("POST", f"/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims", {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "claim-a"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}})
        cl["status"] = {"allocation": {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com",
                                                                "pool": "node-a", "device": "gpu-0"}]},
                                       "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                           {"key": "metadata.name", "operator": "In", "values": ["node-a"]}]}]}},
                        "reservedFor": [{"resource": "pods", "name": "pod-a", "uid": p["metadata"]["uid"]}]}
        claim_path = f"/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims/claim-a"
        code, cl = c.request("PUT", claim_path + "/status", cl)
        check(code == 200, f"allocation written through /status: {code}")
        cli_a = cli_runner(CLI, os.path.join(work, "node-a.sock"))[0]

        def bindings_a():
            code, out, _ = cli_a("get", "bindings", "-o", "json")
            return json.loads(out)["items"] if code == 0 else None
        got = wait_for(lambda: [b for b in bindings_a() or [] if b.get("claimUid") == cl["metadata"]["uid"]], timeout=20)
        check(bool(got) and got[0].get("device") == "gpu-0" and got[0].get("podUid") == p["metadata"]["uid"],
              f"node-a's daemon holds the claim's binding to pod-a: {got}")
        gen = int((got or [{}])[0].get("claimGeneration", 0))
        check(gen >= int(cl["metadata"]["resourceVersion"]),
              f"its generation ({gen}) is the observer's revision, at least the claim's resourceVersion "
              f"({cl['metadata']['resourceVersion']})")
        cl["status"] = {}
        code, cl = c.request("PUT", claim_path + "/status", cl)
        check(code == 200 and bool(wait_for(lambda: bindings_a() == [], timeout=20)),
              f"deallocated: the binding leaves the daemon: {bindings_a()}")

        # A departed node: the Node object is deleted; its entry goes.
        c.request("DELETE", "/api/v1/nodes/node-b")
        c.request("DELETE", "/api/v1/nodes/racer")
        ok = wait_for(lambda: set(entries()) == {"node-a"}, timeout=20)
        check(bool(ok), f"node-b's and the racer's entries are pruned once their Nodes are gone: {sorted(entries())}")

        # The preview acknowledgement: refused with the service account's rights (the missing verb
        # named), done with an operator's; the feed passes it to its daemon.
        DXP = "draexecutionpolicies"
        dxp = {"apiVersion": GROUP, "kind": "DRAExecutionPolicy", "metadata": {"name": "serving"},
               "spec": {"workloadSelector": {"matchLabels": {"app": "vllm"}}, "resourceClaims": ["gpu"],
                        "taskRoles": [{"name": "engine", "selector": {"commandRegex": "^EngineCore"},
                                       "executionClass": "latency-critical"}], "safety": {"requirePreview": True}}}
        manifest = os.path.join(work, "serving.json")
        with open(manifest, "w") as f:
            json.dump(dxp, f)
        c.kubectl("apply", "-f", manifest)
        waiting = "waiting for an acknowledged preview of generation 1"
        reason = lambda: (entries_of(c, DXP, "serving").get("node-a") or {}).get("reason", "")  # noqa: E731
        check(bool(wait_for(lambda: waiting in reason(), timeout=20)), f"requirePreview waits: {reason()!r}")
        sock_a = os.path.join(work, "node-a.sock")

        def acknowledge(kubeconfig):
            r = subprocess.run([CLI, "preview", "-f", manifest, "--acknowledge", "--kubernetes", "--kubeconfig",
                                kubeconfig], capture_output=True, text=True, timeout=60)
            return r.returncode, r.stdout + r.stderr

        code, out = acknowledge(c.daemon_kubeconfig)
        check(code != 0 and "403" in out and "cannot patch resource" in out,
              f"with the service account's rights the acknowledgement fails, naming the verb: exit {code}: {out.strip()}")
        code, out = acknowledge(c.admin_kubeconfig)
        check(code == 0 and "generation 1 acknowledged in the cluster" in out, f"an operator acknowledges: {out.strip()}")
        check(bool(wait_for(lambda: reason() and waiting not in reason(), timeout=20)),
              f"the feed passed the acknowledgement on: {reason()!r}")

        # A feed whose role lacks `patch` on status: a clear error in its log, not a silent skip.
        role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "c2c-no-status"},
                "rules": [r for r in docs(os.path.join(BASE, "rbac.yaml"))[1]["rules"] if "patch" not in r["verbs"]]}
        sa = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "c2c-no-status", "namespace": "claim2core"}}
        bind = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "c2c-no-status"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "c2c-no-status"},
                "subjects": [{"kind": "ServiceAccount", "name": "c2c-no-status", "namespace": "claim2core"}]}
        for o in (role, sa, bind):
            c.kubectl("apply", "-f", "-", input=json.dumps(o))
        kc = c._kubeconfig("no-status", c.token_for("claim2core", "c2c-no-status"))
        p = procs.pop("obs-node-a")
        p.terminate()
        p.wait()
        start_node("node-a", kc, tag="-no-status")
        apply_nsp("^c2c-none-v5$")
        needle = ("patch: HTTP 403", "c2c-no-status", 'cannot patch resource \\"nodeschedulingpolicies/status\\"')
        seen = wait_for(lambda: all(n in observer_log("node-a", "-no-status") for n in needle), timeout=20)
        check(bool(seen), "a feed without `patch` on status logs the refusal naming the verb: "
                          + observer_log("node-a", "-no-status")[-600:])
        if failures:
            for n in nodes:
                print(f"---- observer-{n}.log (tail)\n" + observer_log(n)[-2000:])
    finally:
        stop_processes([procs.get(k) for k in list(procs) if k.startswith("obs-")] +
                       [procs.get(n) for n in nodes], *pins)
        c.stop()


def entries_of(c, resource, name):
    code, o = c.request("GET", object_path(resource, None, name))
    return {e["node"]: e for e in (o.get("status", {}).get("nodes", []) if code == 200 else [])}


try:
    {"parity": scenario_parity, "crds": scenario_crds, "rbac": scenario_rbac, "status": scenario_status}[SCENARIO]()
except (SystemExit, RuntimeError) as e:
    if isinstance(e, SystemExit) and e.code == 77:
        raise
    check(False, f"{type(e).__name__}: {e}")
finally:
    shutil.rmtree(work, ignore_errors=True)
print(f"{SCENARIO}: {len(failures)} failure(s) in {time.time() - T0:.1f} s")
sys.exit(1 if failures else 0)
