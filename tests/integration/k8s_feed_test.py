#!/usr/bin/python3
"""claim2core-observer --daemon-socket against the fake API server (k8s_fake_apiserver.py) and a
real claim2cored on a private socket, state directory and pin root (a daemon running on the host
is never touched). The daemon's state is read back with the claim2core CLI (get bindings/policies
-o json, i.e. ListBindings/ListPolicies).

Scenarios (one per ctest entry):
  bindings  a claim allocated to a pod on this node reaches the daemon with the pod's labels and
            claim names; its deallocation removes it (INV-1 end to end); a claim for another node
            never arrives
  policies  a NodeSchedulingPolicy appears at its metadata.generation, a modified one updates, a
            deleted one disappears; a malformed one is refused naming its field and never sent,
            while a good one still arrives
  restart   kill -9 the daemon, change the cluster while it is down, restart it: the feed retries
            and the state is whole; SIGTERM and a restart on an empty state directory: the feed
            sees the new connection and resends everything; a claim deallocated while the feed
            itself was down is pruned when it comes back
  nodelabels  the observer watches its own Node (fieldSelector=metadata.name=<node>) and feeds its
            labels (SetNodeLabels): a policy selected by a label (matchExpressions In) applies,
            a label change on the Node re-derives (the entry leaves, preview says which
            requirement failed), changing it back brings the entry back; another Node's labels
            change nothing (issue #14)
Exit 77 (ctest skip) without root or bpffs.

usage: k8s_feed_test.py SCENARIO FAKE_APISERVER OBSERVER CLAIM2CORED CLAIM2CORE
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

from c2c_it import require_bpf, wait_for

SCENARIO, FAKE, OBSERVER, DAEMON, CLI = sys.argv[1:6]
NODE = "kind-worker"
require_bpf("BPF maps, bpffs pins")

work = tempfile.mkdtemp(prefix=f"c2c-k8s-feed-{SCENARIO}-")
sock = os.path.join(work, "claim2cored.sock")
pin_root = f"/sys/fs/bpf/c2c-k8s-feed-{os.getpid()}"
failures = []
procs = {}


T0 = time.time()


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + f"[{time.time() - T0:5.1f}s] " + what, flush=True)
    if not ok:
        failures.append(what)
    return ok




# ---- processes -------------------------------------------------------------------------------------

def start_apiserver():
    p = subprocess.Popen(["/usr/bin/python3", FAKE], stdout=subprocess.PIPE, text=True)
    procs["apiserver"] = p
    return f"http://127.0.0.1:{int(p.stdout.readline())}"


def start_daemon(state="state"):
    log = open(os.path.join(work, "daemon.log"), "a")
    p = subprocess.Popen([DAEMON, "--node-name", NODE, "--socket", sock, "--state-dir", os.path.join(work, state),
                          "--pin-root", pin_root, "--task-discovery", "scan", "--config", "/dev/null"],
                         stdout=log, stderr=subprocess.STDOUT)
    procs["daemon"] = p
    if not wait_for(lambda: cli("status")[0] == 0, timeout=20):
        raise SystemExit("claim2cored did not answer on its socket: " + open(os.path.join(work, "daemon.log")).read())
    return p


def start_observer(url):
    log = open(os.path.join(work, "observer.log"), "a")
    p = subprocess.Popen([OBSERVER, "--node", NODE, "--server", url, "--daemon-socket", sock, "--watch-timeout", "5",
                          "--retry-backoff-ms", "100", "--max-backoff-ms", "1000"],
                         stdout=subprocess.DEVNULL, stderr=log)
    procs["observer"] = p
    return p


def stop(name, sig=signal.SIGTERM):
    p = procs.pop(name, None)
    if p and p.poll() is None:
        p.send_signal(sig)
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def observer_log():
    with open(os.path.join(work, "observer.log")) as f:
        return f.read()


# ---- the fake API server's control API -------------------------------------------------------------

def control(url, op, body):
    req = urllib.request.Request(f"{url}/_control/{op}", data=json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def apply(url, resource, obj):
    control(url, "apply", {"resource": resource, "object": obj})


def delete(url, resource, name, namespace=""):
    control(url, "delete", {"resource": resource, "namespace": namespace, "name": name})


def claim(name, uid, device, pod_uid, node=NODE):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "ml", "uid": uid},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
            "status": {"allocation": {
                "devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": node, "device": device}]},
                "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [node]}]}]}},
                "reservedFor": [{"resource": "pods", "name": pod_uid, "uid": pod_uid}]}}


def deallocated(c):
    c = json.loads(json.dumps(c))
    c["status"] = {}
    return c


def pod(uid, claim_name, node=NODE, labels=None):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": uid, "namespace": "ml", "uid": uid, "labels": labels or {"app": "vllm"}},
            "spec": {"nodeName": node, "containers": [{"name": "c"}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimName": claim_name}]}}


def node_policy(name, regex, priority=1):
    return {"apiVersion": "scheduling.gthulhu.io/v1alpha1", "kind": "NodeSchedulingPolicy",
            "metadata": {"name": name},
            "spec": {"nodeNames": [NODE], "commandRegex": regex, "priority": priority, "executionTime": 2000000}}


def dra_policy(name):
    return {"apiVersion": "scheduling.gthulhu.io/v1alpha1", "kind": "DRAExecutionPolicy",
            "metadata": {"name": name},
            "spec": {"workloadSelector": {"matchLabels": {"app": "vllm"}}, "resourceClaims": ["gpu"],
                     "taskRoles": [{"name": "engine", "selector": {"commandRegex": "^EngineCore"},
                                    "executionClass": "latency-critical"}]}}


# ---- the daemon's state ------------------------------------------------------------------------------

def cli(*args):
    r = subprocess.run([CLI, *args, "--socket", sock, "--timeout", "5"], capture_output=True, text=True, timeout=30)
    return r.returncode, r.stdout, r.stderr


def daemon_json(*args):
    code, out, err = cli(*args, "-o", "json")
    if code != 0:
        return None
    return json.loads(out)


def bindings():
    """claim UID -> (generation, sorted devices, {pod uid: pod info}) as ListBindings has it."""
    j = daemon_json("get", "bindings")
    if j is None:
        return None
    out = {}
    for b in j["items"]:  # a List; each binding carries its pod
        gen, devs, ps = out.setdefault(b["claimUid"], (int(b.get("claimGeneration", 0)), set(), {}))
        devs.add(b.get("device", ""))
        if "pod" in b:
            ps[b["podUid"]] = b["pod"]
    return {k: (g, sorted(d), p) for k, (g, d, p) in out.items()}


def policies():
    """(kind, name) -> manifest as ListPolicies has it."""
    j = daemon_json("get", "policies")
    if j is None:
        return None
    return {(m["kind"], m["metadata"]["name"]): m for m in j["items"]}


def claim_devices():
    b = bindings()
    return None if b is None else {uid: devs for uid, (_, devs, _) in b.items()}


def policy_view():
    p = policies()
    return None if p is None else {f"{k[0]}/{k[1]}@{m['metadata'].get('generation')}" for k, m in p.items()}


# ---- scenarios ---------------------------------------------------------------------------------------

def scenario_bindings():
    url = start_apiserver()
    apply(url, "pods", pod("pod-a", "claim-a", labels={"app": "vllm", "tier": "gold"}))
    apply(url, "pods", pod("pod-far", "claim-far", node="other-node"))
    apply(url, "resourceclaims", claim("claim-a", "uid-a", "gpu-0", "pod-a"))
    apply(url, "resourceclaims", claim("claim-far", "uid-far", "gpu-9", "pod-far", node="other-node"))
    start_daemon()
    start_observer(url)

    check(wait_for(lambda: claim_devices() == {"uid-a": ["gpu-0"]}, timeout=20) is not None and claim_devices() == {"uid-a": ["gpu-0"]},
          f"the claim allocated to a pod on {NODE} reaches the daemon, the other node's does not: {claim_devices()}")
    b = bindings() or {}
    gen, _, pods = b.get("uid-a", (0, [], {}))
    info = pods.get("pod-a", {})
    check(info.get("labels") == {"app": "vllm", "tier": "gold"} and info.get("claims") == {"gpu": "uid-a"}
          and info.get("namespace") == "ml" and info.get("name") == "pod-a",
          f"PodInfo carries labels and pod claim name -> claim UID: {info}")
    check(gen > 0, f"claim generation {gen} > 0")

    # A second claim, then a device change of the first: both arrive (the generation grows).
    apply(url, "pods", pod("pod-b", "claim-b"))
    apply(url, "resourceclaims", claim("claim-b", "uid-b", "gpu-1", "pod-b"))
    apply(url, "resourceclaims", claim("claim-a", "uid-a", "gpu-2", "pod-a"))
    want = {"uid-a": ["gpu-2"], "uid-b": ["gpu-1"]}
    check(wait_for(lambda: claim_devices() == want, timeout=20) and True, f"a new claim and a changed one arrive: {claim_devices()}")
    check((bindings() or {}).get("uid-a", (0,))[0] > gen, "the changed claim has a newer generation")

    # Deallocation (INV-1 end to end): the claim leaves the daemon.
    apply(url, "resourceclaims", deallocated(claim("claim-a", "uid-a", "gpu-2", "pod-a")))
    check(wait_for(lambda: claim_devices() == {"uid-b": ["gpu-1"]}, timeout=20) and True,
          f"a deallocated claim is deleted from the daemon (INV-1): {claim_devices()}")
    # Deleting the claim object does the same.
    delete(url, "resourceclaims", "claim-b", "ml")
    check(wait_for(lambda: claim_devices() == {}, timeout=20) == {} or claim_devices() == {},
          f"a deleted claim is deleted from the daemon: {claim_devices()}")
    st = daemon_json("status")
    check(st is not None and not st.get("violations"), f"no invariant violations in the daemon: {st and st.get('violations')}")


def scenario_policies():
    url = start_apiserver()
    apply(url, "nodeschedulingpolicies", node_policy("vllm-enginecore", "^EngineCore(_DP[0-9]+)?$"))
    apply(url, "draexecutionpolicies", dra_policy("llm-serving"))
    start_daemon()
    start_observer(url)
    want = {"NodeSchedulingPolicy/vllm-enginecore@1", "DRAExecutionPolicy/llm-serving@1"}
    check(wait_for(lambda: policy_view() == want, timeout=20) and True, f"both CRD kinds arrive at generation 1: {policy_view()}")

    apply(url, "nodeschedulingpolicies", node_policy("vllm-enginecore", "^EngineCore_DP[0-9]+$", priority=5))
    want = {"NodeSchedulingPolicy/vllm-enginecore@2", "DRAExecutionPolicy/llm-serving@1"}
    check(wait_for(lambda: policy_view() == want, timeout=20) and True, f"a modified policy updates to generation 2: {policy_view()}")
    m = (policies() or {}).get(("NodeSchedulingPolicy", "vllm-enginecore"), {})
    check(m.get("spec", {}).get("commandRegex") == "^EngineCore_DP[0-9]+$" and m.get("spec", {}).get("priority") == 5,
          f"the daemon holds the new spec: {m.get('spec')}")

    # Malformed (RE2 refuses it): named with its field in the log, never sent; a good one still arrives.
    apply(url, "nodeschedulingpolicies", node_policy("broken", "(unclosed"))
    apply(url, "nodeschedulingpolicies", node_policy("comm-helpers", "^helper-[0-9]+$"))
    want = {"NodeSchedulingPolicy/vllm-enginecore@2", "DRAExecutionPolicy/llm-serving@1",
            "NodeSchedulingPolicy/comm-helpers@1"}
    check(wait_for(lambda: policy_view() == want, timeout=20) and True, f"a good policy after a malformed one arrives: {policy_view()}")
    check("NodeSchedulingPolicy broken: spec.commandRegex: invalid RE2 regex" in observer_log(),
          "the malformed object is logged with kind, name and field")
    check(("NodeSchedulingPolicy", "broken") not in (policies() or {}), "the malformed object is not in the daemon")
    check("daemon refused" not in observer_log(), "nothing the feed sent was refused by the daemon")

    delete(url, "nodeschedulingpolicies", "vllm-enginecore")
    delete(url, "draexecutionpolicies", "llm-serving")
    want = {"NodeSchedulingPolicy/comm-helpers@1"}
    check(wait_for(lambda: policy_view() == want, timeout=20) and True, f"deleted policies disappear: {policy_view()}")


def scenario_restart():
    url = start_apiserver()
    apply(url, "pods", pod("pod-a", "claim-a"))
    apply(url, "pods", pod("pod-b", "claim-b"))
    apply(url, "resourceclaims", claim("claim-a", "uid-a", "gpu-0", "pod-a"))
    apply(url, "nodeschedulingpolicies", node_policy("p1", "^one$"))
    start_daemon()
    start_observer(url)
    check(wait_for(lambda: claim_devices() == {"uid-a": ["gpu-0"]} and policy_view() == {"NodeSchedulingPolicy/p1@1"}, timeout=20)
          and True, f"initial state delivered: {claim_devices()} {policy_view()}")

    # 1. kill -9, change the cluster while the daemon is down, restart on the same state directory.
    stop("daemon", signal.SIGKILL)
    apply(url, "resourceclaims", claim("claim-b", "uid-b", "gpu-1", "pod-b"))
    apply(url, "resourceclaims", deallocated(claim("claim-a", "uid-a", "gpu-0", "pod-a")))
    apply(url, "nodeschedulingpolicies", node_policy("p1", "^one-v2$"))
    apply(url, "nodeschedulingpolicies", node_policy("p2", "^two$"))
    time.sleep(1.5)  # the feed's calls fail and back off meanwhile
    start_daemon()
    want_b, want_p = {"uid-b": ["gpu-1"]}, {"NodeSchedulingPolicy/p1@2", "NodeSchedulingPolicy/p2@1"}
    check(wait_for(lambda: claim_devices() == want_b and policy_view() == want_p, timeout=20) and True,
          f"after kill -9 and restart the daemon has what changed while it was down: {claim_devices()} {policy_view()}")

    # 2. A clean stop and a restart that lost its state (empty state directory): nothing failed, so
    # only the new connection tells the feed to resend.
    resends = observer_log().count("connected to claim2cored: sending the whole current state")
    stop("daemon")
    print(f"[{time.time() - T0:5.1f}s] stopped", flush=True)
    start_daemon(state="state-fresh")
    print(f"[{time.time() - T0:5.1f}s] started", flush=True)
    check(wait_for(lambda: claim_devices() == want_b and policy_view() == want_p, timeout=20) and True,
          f"a daemon restarted on an empty state gets the whole state again: {claim_devices()} {policy_view()}")
    check(observer_log().count("connected to claim2cored: sending the whole current state") > resends,
          "the feed logged the resend on the new connection")

    # 3. The feed itself is down while a claim is deallocated: on its return it prunes the claim.
    stop("observer")
    apply(url, "resourceclaims", deallocated(claim("claim-b", "uid-b", "gpu-1", "pod-b")))
    start_observer(url)
    check(wait_for(lambda: claim_devices() == {}, timeout=20) == {} or claim_devices() == {},
          f"a claim deallocated while the feed was down is pruned (INV-1): {claim_devices()}")
    check(policy_view() == want_p, f"policies unchanged: {policy_view()}")


def node_object(name, labels):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}


def scenario_nodelabels():
    url = start_apiserver()
    apply(url, "nodes", node_object(NODE, {"claim2core.io/pool": "inference", "kubernetes.io/hostname": NODE}))
    apply(url, "nodes", node_object("other-node", {"claim2core.io/pool": "batch"}))
    pol = {"apiVersion": "scheduling.gthulhu.io/v1alpha1", "kind": "NodeSchedulingPolicy",
           "metadata": {"name": "by-pool"},
           "spec": {"nodeSelectors": {"matchExpressions": [
               {"key": "claim2core.io/pool", "operator": "In", "values": ["inference"]}]},
               "commandRegex": "^c2c-lbl-engine$", "priority": 1}}
    apply(url, "nodeschedulingpolicies", pol)
    manifest = os.path.join(work, "by-pool.json")
    with open(manifest, "w") as f:
        json.dump(pol, f)
    # A thread with a comm of its own, there before the daemon starts (its first scan finds it).
    exe = os.path.join(work, "c2c-lbl-engine")
    shutil.copy("/bin/sleep", exe)
    helper = subprocess.Popen([exe, "300"])
    procs["helper"] = helper
    start_daemon()
    start_observer(url)
    tid = str(helper.pid)

    def has_entry():
        code, out, _ = cli("explain", tid)
        return code == 0 and "by-pool" in out

    check(wait_for(has_entry, timeout=20), "a policy selected by the Node's label (matchExpressions In) applies")
    apply(url, "nodes", node_object("other-node", {"claim2core.io/pool": "inference"}))
    apply(url, "nodes", node_object(NODE, {"claim2core.io/pool": "batch", "kubernetes.io/hostname": NODE}))
    check(wait_for(lambda: not has_entry(), timeout=20), "a label change on this node's Node re-derives: the entry leaves")
    code, out, err = cli("preview", "-f", manifest)
    want = ("node not selected: nodeSelectors.matchExpressions[0]: claim2core.io/pool In [inference], "
            "but the node has claim2core.io/pool=batch")
    check(want in out + err, f"preview names the failed requirement: {out + err!r}")
    apply(url, "nodes", node_object(NODE, {"claim2core.io/pool": "inference", "kubernetes.io/hostname": NODE}))
    check(wait_for(has_entry, timeout=20), "the label back: the entry is back")
    st = daemon_json("status")
    check(st is not None and not st.get("violations"), f"no invariant violations in the daemon: {st and st.get('violations')}")


try:
    {"bindings": scenario_bindings, "policies": scenario_policies, "restart": scenario_restart,
     "nodelabels": scenario_nodelabels}[SCENARIO]()
except SystemExit as e:
    failures.append(str(e))
    print("FAIL", e)
finally:
    for name in ("observer", "daemon", "apiserver", "helper"):
        stop(name)
    if failures:
        for name in ("observer.log", "daemon.log"):
            path = os.path.join(work, name)
            if os.path.exists(path):
                print(f"---- {name} (tail)")
                print("".join(open(path).readlines()[-40:]))
    shutil.rmtree(pin_root, ignore_errors=True)
    shutil.rmtree(work, ignore_errors=True)

print(f"{SCENARIO}: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
