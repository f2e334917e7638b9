#!/usr/bin/python3
"""Kubernetes-native status (issue 14, item 4) end to end: the fake API server
(k8s_fake_apiserver.py, serving the CRDs' status subresource with resourceVersion preconditions
and the CRDs' printer columns from deploy/kubernetes/base), a real claim2cored on a private
socket, state directory and pin root, and claim2core-observer --write-status as the DaemonSet's
feed container runs it. Everything is read back with kubectl (`get -o json` and the
table) through a kubeconfig pointing at the fake server; the daemon's side with `claim2core get
intents -o json`.

Scenarios (one per ctest entry):
  status  this node's entry equals the daemon's intent and follows a policy change
          (observedGeneration); another node's entry is never rewritten; a competing write makes
          the feed's patches 409, the feed re-reads and retries, and both entries survive; a node
          that joined while the feed's Node cache lagged keeps its entry; a Node that leaves loses
          its entry; `kubectl get nodeschedulingpolicies` shows APPLIED and REASON
  ack     a requirePreview DRAExecutionPolicy waits (its status entry says so); `claim2core preview
          --acknowledge --kubernetes` annotates the object with its generation, the feed passes it
          to the daemon and the entry stops waiting; a manifest that differs from the cluster's
          is refused; a spec change in the cluster waits again until that generation is acknowledged
Exit 77 (ctest skip) without root or bpffs.

usage: k8s_status_test.py SCENARIO SOURCE_DIR OBSERVER CLAIM2CORED CLAIM2CORE
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

from c2c_it import checker, cli_runner, require_bpf, stop_processes, wait_for
from k8s_real_apiserver import binaries

SCENARIO, SRC, OBSERVER, DAEMON, CLI = sys.argv[1:6]
FAKE = os.path.join(SRC, "tests", "integration", "k8s_fake_apiserver.py")
NODE, OTHER, NEW = "kind-worker", "kind-worker2", "kind-worker3"
# kubectl: the one on PATH, else the one tools/k8s-apiserver/build.sh built (Debian 12 has none).
KUBECTL = shutil.which("kubectl") or (lambda d: d and os.path.join(d, "kubectl"))(binaries(SRC))
require_bpf("BPF maps, bpffs pins")
if KUBECTL is None:
    print("SKIP: no kubectl: none on PATH, and tools/k8s-apiserver/build.sh has not built one")
    sys.exit(77)

work = tempfile.mkdtemp(prefix=f"c2c-k8s-status-{SCENARIO}-")
sock = os.path.join(work, "claim2cored.sock")
pin_root = f"/sys/fs/bpf/c2c-k8s-status-{os.getpid()}"
failures = []
procs = {}
T0 = time.time()
GROUP = "scheduling.gthulhu.io/v1alpha1"


check = checker(failures)



# ---- processes -------------------------------------------------------------------------------------

def start():
    """The fake API server (with a kubeconfig for kubectl), claim2cored, and two Node objects."""
    p = subprocess.Popen(["/usr/bin/python3", FAKE, "--crds", os.path.join(SRC, "deploy", "kubernetes", "base")],
                         stdout=subprocess.PIPE, text=True)
    procs["apiserver"] = p
    url = f"http://127.0.0.1:{int(p.stdout.readline())}"
    with open(os.path.join(work, "kubeconfig"), "w") as f:
        f.write(f"""apiVersion: v1
kind: Config
clusters: [{{name: fake, cluster: {{server: "{url}"}}}}]
users: [{{name: operator, user: {{}}}}]
contexts: [{{name: fake, context: {{cluster: fake, user: operator}}}}]
current-context: fake
""")
    log = open(os.path.join(work, "daemon.log"), "a")
    procs["daemon"] = subprocess.Popen(
        [DAEMON, "--node-name", NODE, "--socket", sock, "--state-dir", os.path.join(work, "state"),
         "--pin-root", pin_root, "--task-discovery", "scan", "--config", "/dev/null"],
        stdout=log, stderr=subprocess.STDOUT)
    if not wait_for(lambda: cli("status")[0] == 0, timeout=20):
        raise SystemExit("claim2cored did not answer on its socket: " + read(os.path.join(work, "daemon.log")))
    for n in (NODE, OTHER):
        apply(url, "nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": n}})
    return url


def start_observer(url):
    log = open(os.path.join(work, "observer.log"), "a")
    procs["observer"] = subprocess.Popen(
        [OBSERVER, "--node", NODE, "--server", url, "--daemon-socket", sock, "--write-status",
         "--status-interval-ms", "200", "--status-resync-s", "30", "--watch-timeout", "5",
         "--retry-backoff-ms", "100", "--max-backoff-ms", "1000"],
        stdout=subprocess.DEVNULL, stderr=log)


def read(path):
    with open(path) as f:
        return f.read()


def observer_log():
    return read(os.path.join(work, "observer.log"))


# ---- the API server: control API, and kubectl as users read it ----------------------------------

def request(url, path, body=None, method="POST", ctype="application/json"):
    req = urllib.request.Request(url + path, data=json.dumps(body).encode() if body is not None else None,
                                 method=method, headers={"Content-Type": ctype})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def apply(url, resource, obj):
    request(url, "/_control/apply", {"resource": resource, "object": obj})


def kubectl(*args):
    r = subprocess.run([KUBECTL, "--kubeconfig", os.path.join(work, "kubeconfig"), "--cache-dir",
                        os.path.join(work, "kube-cache"), *args], capture_output=True, text=True, timeout=30)
    return r.returncode, r.stdout, r.stderr


def kget(resource, name):
    code, out, err = kubectl("get", resource, name, "-o", "json")
    return json.loads(out) if code == 0 else None


def entries(resource, name):
    """node -> status entry, as kubectl reads them."""
    obj = kget(resource, name) or {}
    return {e["node"]: e for e in obj.get("status", {}).get("nodes", [])}


cli, _ = cli_runner(CLI, sock)


def daemon_intent(kind, name):
    code, out, _ = cli("get", "intents", "-o", "json")
    if code != 0:
        return None
    for i in json.loads(out).get("items", []):
        if i.get("policy") == name and i.get("kind") == kind:
            return i
    return None


STATE = {"PENDING": "Pending", "SENT": "Sent", "APPLIED": "Applied", "FAILED": "Failed"}


def entry_matches_intent(entry, intent):
    """The status entry says what the daemon's intent says (ListIntents as JSON)."""
    if not entry or not intent:
        return False
    return (entry["state"] == STATE.get(intent.get("state"), "Unknown")
            and entry["observedGeneration"] == int(intent.get("policyGeneration", 0))
            and entry["matchedTasks"] == int(intent.get("matchedTasks", 0))
            and entry["entries"] == int(intent.get("appliedEntries", 0))
            and entry["reason"] == intent.get("reason", ""))


def node_policy(name, regex, priority=1):
    return {"apiVersion": GROUP, "kind": "NodeSchedulingPolicy",
            "metadata": {"name": name, "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"nodeNames": [NODE, OTHER], "commandRegex": regex, "priority": priority,
                     "executionTime": 2000000}}


# ---- scenarios ---------------------------------------------------------------------------------------

def scenario_status():
    url = start()
    NSP = "nodeschedulingpolicies"
    apply(url, NSP, node_policy("engine", "^c2c-status-none$"))
    start_observer(url)

    def mine_follows(gen):
        e = entries(NSP, "engine").get(NODE)
        return e if e and e["observedGeneration"] == gen and entry_matches_intent(
            e, daemon_intent("NODE_SCHEDULING_POLICY", "engine")) else None

    e = wait_for(lambda: mine_follows(1), timeout=15)
    check(bool(e), f"{NODE}'s entry (kubectl get -o json) equals the daemon's intent at generation 1: {e} "
                   f"vs {daemon_intent('NODE_SCHEDULING_POLICY', 'engine')}")
    check(bool(e) and e.get("lastTransitionTime", "").endswith("Z"), f"lastTransitionTime is RFC 3339: {e}")

    # Another node's feed writes its own entry (with the resourceVersion it read, as the feed does).
    obj = kget(NSP, "engine")
    theirs = {"node": OTHER, "state": "Failed", "observedGeneration": 1, "matchedTasks": 2, "entries": 0,
              "reason": "map full", "lastTransitionTime": "2026-01-01T00:00:00Z"}
    code, _ = request(url, f"/apis/{GROUP}/{NSP}/engine/status",
                      {"metadata": {"resourceVersion": obj["metadata"]["resourceVersion"]},
                       "status": {"nodes": obj["status"]["nodes"] + [theirs]}},
                      method="PATCH", ctype="application/merge-patch+json")
    check(code == 200, f"the other node's status patch is accepted ({code})")
    code, _ = request(url, f"/apis/{GROUP}/{NSP}/engine/status",
                      {"metadata": {"resourceVersion": obj["metadata"]["resourceVersion"]}, "status": {"nodes": []}},
                      method="PATCH", ctype="application/merge-patch+json")
    check(code == 409, f"the fake API server refuses a stale resourceVersion with 409 ({code})")

    # A policy change: generation 2; this node's entry follows, the other node's is kept as it was.
    apply(url, NSP, node_policy("engine", "^c2c-status-none-v2$"))
    e = wait_for(lambda: mine_follows(2), timeout=15)
    check(bool(e), f"after the spec change {NODE}'s entry is at observedGeneration 2: {entries(NSP, 'engine').get(NODE)}")
    check(entries(NSP, "engine").get(OTHER) == theirs, f"{OTHER}'s entry is untouched: {entries(NSP, 'engine').get(OTHER)}")

    # 409: another writer gets in before each of the feed's next two patches (it rewrites its own
    # entry). The feed must re-read, retry with the new resourceVersion and keep that write.
    obj = kget(NSP, "engine")
    raced = dict(theirs, reason="map full (written by a racing writer)")
    nodes = [n for n in obj["status"]["nodes"] if n["node"] != OTHER] + [raced]
    request(url, "/_control/race", {"resource": NSP, "name": "engine", "status": {"nodes": nodes}, "count": 2})
    conflicts_before = request(url, "/_control/stats", method="GET")[1]["conflicts"]
    apply(url, NSP, node_policy("engine", "^c2c-status-none-v3$"))
    e = wait_for(lambda: mine_follows(3), timeout=15)
    check(bool(e), f"despite two 409s {NODE}'s entry reaches observedGeneration 3: {entries(NSP, 'engine').get(NODE)}")
    check(entries(NSP, "engine").get(OTHER) == raced,
          f"the racing writer's entry survives the retries: {entries(NSP, 'engine').get(OTHER)}")
    conflicts = request(url, "/_control/stats", method="GET")[1]["conflicts"] - conflicts_before
    check(conflicts >= 2, f"the API server answered the feed 409 twice ({conflicts})")
    check(observer_log().count("409 Conflict") >= 2 and "re-reading" in observer_log(),
          "the feed logged each 409 and re-read")

    # What `kubectl get nodeschedulingpolicies` shows: the printer columns from the CRD.
    code, out, err = kubectl("get", "nodeschedulingpolicies")
    print(out, flush=True)
    header = out.splitlines()[0].split() if out else []
    row = next((l for l in out.splitlines() if l.startswith("engine ")), "")
    check(code == 0 and "APPLIED" in header and "REASON" in header, f"kubectl shows APPLIED and REASON: {header} {err}")
    status = kget(NSP, "engine")["status"]
    # The column names the first node (by name) that is not Applied, with its reason: this node's
    # policy matches no task here, which is Pending since issue #14's honest intents, not Applied.
    not_applied = sorted((n for n in status["nodes"] if n["state"] != "Applied"), key=lambda n: n["node"])
    check(bool(not_applied) and f"{not_applied[0]['node']}: {not_applied[0]['reason']}" in row
          and any(n["node"] == OTHER and n["reason"] == "map full (written by a racing writer)" for n in not_applied),
          f"the REASON column names the node not Applied: {row!r} ({not_applied})")
    applied = sum(1 for n in status["nodes"] if n["state"] == "Applied")
    check(status["applied"] == f"{applied}/2 nodes" and status["applied"] in row,
          f"APPLIED counts the Applied entries: {status['applied']!r} in {row!r}")

    # A node joins while this feed's Node cache lags (its watches are frozen): the new node's
    # entry is not in the cache, but its Node exists, so a write of this feed must keep it.
    request(url, "/_control/freeze", {})
    apply(url, "nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": NEW}})
    obj = kget(NSP, "engine")
    joined = dict(theirs, node=NEW, state="Pending", reason="")
    code, _ = request(url, f"/apis/{GROUP}/{NSP}/engine/status",
                      {"metadata": {"resourceVersion": obj["metadata"]["resourceVersion"]},
                       "status": {"nodes": obj["status"]["nodes"] + [joined]}},
                      method="PATCH", ctype="application/merge-patch+json")
    manifest = os.path.join(work, "engine.json")
    with open(manifest, "w") as f:  # the daemon's intent moves without any watch event
        json.dump(node_policy("engine", "^c2c-status-none-v4$"), f)
    code, out, err = cli("apply", "-f", manifest)
    check(code == 0, f"the policy moved on the daemon by hand ({code}: {out.strip()} {err.strip()})")
    check(bool(wait_for(lambda: mine_follows(4), timeout=15)), f"{NODE}'s entry follows: {entries(NSP, 'engine').get(NODE)}")
    check(entries(NSP, "engine").get(NEW) == joined,
          f"{NEW} joined after the cache was filled: its entry is kept (its Node answers): {sorted(entries(NSP, 'engine'))}")
    request(url, "/_control/cut", {})  # watches reconnect and catch up

    # A node leaves: its Node object is deleted; the first node (by name) prunes its entries.
    request(url, "/_control/delete", {"resource": "nodes", "name": OTHER})
    gone = wait_for(lambda: OTHER not in entries(NSP, "engine") and {NODE, NEW} <= set(entries(NSP, "engine")), timeout=15)
    check(bool(gone), f"{OTHER} left: its entry is removed, {NODE}'s and {NEW}'s stay: {sorted(entries(NSP, 'engine'))}")
    check(kget(NSP, "engine")["status"]["applied"].endswith("/2 nodes"),
          f"APPLIED counts the remaining nodes: {kget(NSP, 'engine')['status']['applied']}")
    check("removed the entry of node " + OTHER in observer_log(), "the feed logged the pruning")

    errors = [l for l in observer_log().splitlines() if '"error"' in l and "status" in l]
    check(not errors, f"no status read or write failed: {errors[:3]}")


def dra_policy(name, regex, manifest_only=False):
    p = {"apiVersion": GROUP, "kind": "DRAExecutionPolicy",
         "metadata": {"name": name},
         "spec": {"workloadSelector": {"matchLabels": {"app": "vllm"}}, "resourceClaims": ["gpu"],
                  "taskRoles": [{"name": "engine", "selector": {"commandRegex": regex},
                                 "executionClass": "latency-critical"}],
                  "safety": {"requirePreview": True}}}
    if not manifest_only:
        p["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    return p


def scenario_ack():
    url = start()
    DXP = "draexecutionpolicies"
    apply(url, DXP, dra_policy("serving", "^EngineCore"))
    start_observer(url)
    waiting = "waiting for an acknowledged preview of generation"

    def reason():
        return (entries(DXP, "serving").get(NODE) or {}).get("reason", "")

    r = wait_for(lambda: waiting + " 1" in reason() and reason(), timeout=15)
    check(bool(r), f"the requirePreview policy waits, and its status entry says so: {reason()!r}")

    manifest = os.path.join(work, "serving.yaml")

    def write_manifest(regex):
        with open(manifest, "w") as f:
            json.dump(dra_policy("serving", regex, manifest_only=True), f)

    def acknowledge():
        r = subprocess.run([CLI, "preview", "-f", manifest, "--acknowledge", "--kubernetes",
                            "--kubeconfig", os.path.join(work, "kubeconfig")],
                           capture_output=True, text=True, timeout=30)
        return r.returncode, r.stdout + r.stderr

    def annotation():
        return ((kget(DXP, "serving") or {}).get("metadata", {}).get("annotations") or {}).get(
            "claim2core.io/acknowledged-generation")

    # A manifest that is not what the cluster holds acknowledges nothing.
    write_manifest("^SomethingElse")
    code, out = acknowledge()
    check(code == 1 and "differs from the previewed manifest" in out and annotation() is None,
          f"a manifest unlike the cluster's object is refused, nothing written (exit {code}): {out.strip()}")

    write_manifest("^EngineCore")
    code, out = acknowledge()
    check(code == 0 and "generation 1 acknowledged in the cluster" in out, f"acknowledged (exit {code}): {out.strip()}")
    check(annotation() == "1", f"the object carries claim2core.io/acknowledged-generation: {annotation()!r}")
    check(kget(DXP, "serving")["metadata"]["generation"] == 1, "the annotation did not move metadata.generation")
    r = wait_for(lambda: reason() and waiting not in reason() and reason(), timeout=15)
    check(bool(r), f"the feed passed it to its daemon: the entry no longer waits: {reason()!r}")
    check("the cluster's acknowledgement of generation 1 recorded by the daemon" in observer_log(),
          "the feed logged the acknowledgement")
    code, out, _ = kubectl("get", "draexecutionpolicies")
    print(out, flush=True)
    check(code == 0 and "ACKNOWLEDGED" in out.splitlines()[0] and
          out.splitlines()[1].split()[3:4] == ["1"], f"kubectl shows the ACKNOWLEDGED column: {out!r}")

    # The spec changes in the cluster: generation 2 waits again; the old annotation does not count.
    apply(url, DXP, dict(dra_policy("serving", "^EngineCore_DP"),
                         metadata={"name": "serving", "creationTimestamp": "2026-01-01T00:00:00Z",
                                   "annotations": {"claim2core.io/acknowledged-generation": "1"}}))
    r = wait_for(lambda: waiting + " 2" in reason() and reason(), timeout=15)
    check(bool(r), f"generation 2 waits although generation 1 was acknowledged: {reason()!r}")
    write_manifest("^EngineCore_DP")
    code, out = acknowledge()
    check(code == 0 and annotation() == "2", f"generation 2 acknowledged (exit {code}): {out.strip()}")
    r = wait_for(lambda: reason() and waiting not in reason() and reason(), timeout=15)
    check(bool(r), f"and generation 2 goes live on the node: {reason()!r}")


def logs_on_failure():
    """The tails of the feed's and the daemon's logs, for a failed run."""
    for log in ("observer.log", "daemon.log"):
        if os.path.exists(os.path.join(work, log)):
            print(f"---- {log} (tail)\n" + "".join(read(os.path.join(work, log)).splitlines(True)[-40:]))


try:
    {"status": scenario_status, "ack": scenario_ack}[SCENARIO]()
except SystemExit as e:
    check(False, str(e))
if failures:
    logs_on_failure()
# The feed first (it writes to the other two), then the daemon, then the API server.
stop_processes([procs.get("apiserver"), procs.get("daemon"), procs.get("observer")], pin_root, work)
print(f"{SCENARIO}: {len(failures)} failure(s) in {time.time() - T0:.1f} s")
sys.exit(1 if failures else 0)
