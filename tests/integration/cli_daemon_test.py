#!/usr/bin/python3
"""The claim2core CLI against a real claim2cored on a real Unix socket (private socket, state
directory and pin root, so a running daemon is never touched), with a process whose threads are
named like vLLM's. Checks: preview is read-only (state digest unchanged); apply -> intent Applied
and exactly the EngineCore TIDs in the pinned map; explain; -o json|yaml|table each parse and
hold the expected fields; invalid manifests (a bad RE2 regex in doc 2, the yaml-cpp hang input)
exit 2 naming file, document and field with nothing sent (digest unchanged, doc 1 not applied);
every get -o json|yaml is one List; -o name and -o wide; get -w shows the applied intent's row and
the deleted policy as they happen;
the daemon's INVALID_ARGUMENT exits 2 naming the field; delete removes the entries; no daemon ->
exit 1. Exit 77 (ctest skip) without root or bpffs.

usage: cli_daemon_test.py SOURCE_DIR CLAIM2CORE CLAIM2CORED FAKE_VLLM
"""
import json
import re
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import yaml

from c2c_it import checker, cli_runner, require_bpf, stop_processes

SRC, CLI, DAEMON, FAKE = sys.argv[1:5]
require_bpf("BPF maps, bpffs pins")

work = tempfile.mkdtemp(prefix="c2c-cli-it-")
sock = os.path.join(work, "claim2cored.sock")
pin_root = f"/sys/fs/bpf/c2c-cli-it-{os.getpid()}"
policy = os.path.join(SRC, "examples", "policies", "vllm-enginecore.yaml")
failures = []
procs = []

check = checker(failures)
cli, cli_json = cli_runner(CLI, sock)


class Watch:
    """`claim2core get ... -w` in the background; its lines are read as they come."""

    def __init__(self, *args, command="get"):
        argv = [CLI, "get", *args, "-w"] if command == "get" else [CLI, command, *args]
        self.p = subprocess.Popen(argv + ["--socket", sock], stdout=subprocess.PIPE, text=True)
        procs.append(self.p)
        self.lines = queue.Queue()
        threading.Thread(target=lambda: [self.lines.put(l.rstrip("\n")) for l in self.p.stdout], daemon=True).start()

    def until(self, pred, seconds=10):
        """The first line for which pred holds (None after `seconds`); the lines before it are skipped."""
        deadline = time.time() + seconds
        while time.time() < deadline:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.time()))
            except queue.Empty:
                return None
            if pred(line):
                return line
        return None

    def stop(self):
        self.p.terminate()
        self.p.wait(timeout=10)


def digest():
    return cli_json("status")["stateDigest"]


def cleanup():
    stop_processes(procs, pin_root, work)


try:
    # The workload first, so the daemon's first snapshot holds it.
    vllm = subprocess.Popen([FAKE, "--seconds", "300"], stdout=subprocess.PIPE, text=True)
    procs.append(vllm)
    threads = {}
    for line in vllm.stdout:
        if line.strip() == "ready":
            break
        tid, comm = line.split()
        threads[comm] = int(tid)
    engines = sorted(threads[c] for c in ("EngineCore_DP0", "EngineCore_DP1"))
    print(f"fake vLLM: {threads}")

    log = open(os.path.join(work, "daemon.log"), "w")
    daemon = subprocess.Popen([DAEMON, "--node-name", "dgx-spark-gb10", "--socket", sock, "--state-dir",
                               os.path.join(work, "state"), "--pin-root", pin_root, "--task-discovery", "scan",
                               "--config", "/dev/null"], stdout=log, stderr=subprocess.STDOUT)
    procs.append(daemon)
    deadline = time.time() + 20
    while time.time() < deadline and cli("status")[0] != 0:
        time.sleep(0.2)
    if not check(cli("status")[0] == 0, "claim2cored answers status on its socket"):
        raise SystemExit(1)

    # status: every format.
    st = cli_json("status")
    check(st["node"] == "dgx-spark-gb10" and "schedulerEnforcing" in st and st["stateDigest"],
          "status -o json: node, schedulerEnforcing, stateDigest")
    code, out, _ = cli("status", "-o", "yaml")
    check(code == 0 and yaml.safe_load(out)["node"] == "dgx-spark-gb10", "status -o yaml parses")
    code, out, _ = cli("status")
    check(code == 0 and "scheduler:" in out and "state digest:" in out, "status table")
    d0 = digest()

    # Invalid input: exit 2 naming file, document and field; nothing sent.
    bad = os.path.join(SRC, "examples", "policies", "invalid", "bad-regex.yaml")
    code, out, err = cli("apply", "-f", bad)
    check(code == 2 and "bad-regex.yaml doc 2: spec.commandRegex: invalid RE2 regex" in err
          and "nothing was sent" in err, f"invalid manifest: exit {code}, {err.strip()!r}")
    hang = os.path.join(SRC, "fuzz", "findings", "yaml-cpp-loadall-hang.yaml")
    t0 = time.time()
    code, out, err = cli("apply", "-f", hang)
    # The child's guard that trips first depends on the machine: on a busy one the deadline, on an
    # idle one the memory cap (the hang allocates as it loops). Either refusal is the guard working.
    check(code == 2 and ("no result within" in err or "out of memory" in err) and "nothing was sent" in err
          and time.time() - t0 < 20,
          f"the yaml-cpp hang input is refused in {time.time() - t0:.1f} s (exit {code})")
    check(digest() == d0, "state digest unchanged after the refused manifests")
    check(cli_json("get", "policies")["items"] == [], "doc 1 of the refused file was not applied")

    # Preview: read-only, lists exactly the EngineCore threads.
    # Other EngineCore-named threads on the host would match too; ours must be exactly the engines.
    pv = cli_json("preview", "-f", policy)
    matched = pv[0]["result"]["matched"]
    ours = sorted(m["tid"] for m in matched if m["tgid"] == threads["python3.12"])
    check(ours == engines, f"preview matches our EngineCore TIDs {engines} and no other thread of ours: {ours}")
    check(all(re.fullmatch(r"EngineCore(_DP[0-9]+)?", m["comm"]) for m in matched),
          f"every matched thread is an EngineCore: {sorted(m['comm'] for m in matched)}")
    check(all(m["actual"] is None for m in pv[0]["result"]["matched"]), "preview: nothing in the map yet")
    code, out, _ = cli("preview", "-f", policy)
    check(code == 0 and "read-only" in out and "EngineCore_DP0" in out, "preview table")
    code, out, _ = cli("preview", "-f", policy, "-o", "yaml")
    check(code == 0 and yaml.safe_load(out)[0]["result"]["policyGeneration"] >= 1, "preview -o yaml parses")
    check(digest() == d0, "state digest unchanged after three previews (read-only)")

    # Apply while `get intents -w` runs: its header says the watch is open (the daemon subscribed it
    # before the listing), then the new intent's row comes as the daemon changes.
    w = Watch("intents")
    header = w.until(lambda l: l.startswith("EVENT"))
    check(header is not None and "REASON" in header, f"get intents -w prints the header at once: {header!r}")

    # `claim2core watch` beside it: the intent transitions as they happen.
    tw = Watch(command="watch")
    time.sleep(0.5)  # (subscribed before the apply)

    # Apply: intent Sent (written), then Applied (read back), the two entries in the pinned map.
    code, out, err = cli("apply", "-f", policy)
    check(code == 0 and "NodeSchedulingPolicy/vllm-enginecore applied" in out, f"apply: exit {code} {out.strip()}")
    check("intent Sent" in out and "not yet read back" in out, f"apply: the reply's intent is Sent: {out.strip()}")
    sent = w.until(lambda l: "vllm-enginecore" in l and " Sent " in l)
    check(sent is not None and re.match(r"(ADDED|MODIFIED) +NodeSchedulingPolicy +vllm-enginecore ", sent),
          f"get intents -w: the Sent row as it happens: {sent!r}")
    line = w.until(lambda l: "vllm-enginecore" in l and "Applied" in l)
    check(line is not None and re.match(r"MODIFIED +NodeSchedulingPolicy +vllm-enginecore ", line),
          f"get intents -w: then the Applied row: {line!r}")
    w.stop()
    first = tw.until(lambda l: "intent NodeSchedulingPolicy/vllm-enginecore@" in l and "New -> Sent" in l)
    then = tw.until(lambda l: "intent NodeSchedulingPolicy/vllm-enginecore@" in l and "Sent -> Applied" in l)
    check(first is not None and then is not None and "read back" in then,
          f"claim2core watch: New -> Sent, then Sent -> Applied: {first!r}, {then!r}")
    tw.stop()
    state = None
    deadline = time.time() + 20
    while time.time() < deadline:
        intents = [i for i in cli_json("get", "intents")["items"] if i["policy"] == "vllm-enginecore"]
        state = intents[0] if intents else None
        if state and state["state"] == "APPLIED" and state["appliedEntries"] >= 2:
            break
        time.sleep(0.2)
    check(state is not None and state["state"] == "APPLIED" and state["appliedEntries"] >= 2
          and state["appliedEntries"] == state["matchedTasks"],
          f"get intents -o json: vllm-enginecore Applied, an entry per matched task (>= our 2): {state}")
    code, out, _ = cli("get", "intents")
    check(code == 0 and "Applied" in out and "vllm-enginecore" in out, "get intents table shows Applied")
    code, out, _ = cli("get", "intents", "-o", "yaml")
    check(code == 0 and any(i["state"] == "APPLIED" for i in yaml.safe_load(out)["items"]), "get intents -o yaml")
    check(digest() != d0, "apply changed the state digest")
    if shutil.which("bpftool"):
        dump = json.loads(subprocess.run(["bpftool", "-j", "map", "dump", "pinned", f"{pin_root}/c2c_policy"],
                                         capture_output=True, text=True).stdout or "[]")
        tids = sorted(e["key"]["tid"] if isinstance(e["key"], dict) else e["formatted"]["key"]["tid"] for e in dump)
        others = sorted(t for c, t in threads.items() if c not in ("EngineCore_DP0", "EngineCore_DP1"))
        check(set(engines) <= set(tids) and not set(others) & set(tids),
              f"bpftool: the pinned map holds our EngineCore TIDs {engines} and none of {others}: {tids}")
    else:
        print("skip bpftool dump: bpftool not installed")

    # Policies round-trip: get policies -o yaml is a manifest that apply accepts (unchanged).
    code, out, _ = cli("get", "policies", "-o", "yaml")
    docs = yaml.safe_load(out)["items"]
    check(code == 0 and docs[0]["spec"]["commandRegex"] == "^EngineCore(_DP[0-9]+)?$"
          and docs[0]["spec"]["executionTime"] == 2000000, "get policies -o yaml prints a List of the manifests")
    again = os.path.join(work, "again.yaml")
    with open(again, "w") as f:
        f.write(out)
    code, out, _ = cli("apply", "-f", again)
    check(code == 0 and "unchanged" in out, f"re-applying it changes nothing: {out.strip()}")
    code, out, _ = cli("get", "policies")
    check(code == 0 and "priority 1, slice 2ms" in out, "get policies table")

    # Explain.
    ex = cli_json("explain", str(threads["EngineCore_DP0"]))
    lin = ex["lineage"]
    check(ex["found"] and lin["comm"] == "EngineCore_DP0" and lin["policy"] == "vllm-enginecore"
          and lin["strategy"] == "exact-tid" and lin["entry"]["sliceNs"] == 2000000,
          f"explain -o json: lineage of EngineCore_DP0 ({lin.get('strategy')}, slice {lin.get('entry', {}).get('sliceNs')})")
    code, out, _ = cli("explain", str(threads["EngineCore_DP0"]), "-o", "yaml")
    check(code == 0 and yaml.safe_load(out)["lineage"]["tgid"] == threads["python3.12"], "explain -o yaml")
    code, out, _ = cli("explain", str(threads["EngineCore_DP0"]))
    check(code == 0 and "NodeSchedulingPolicy/vllm-enginecore@" in out, "explain table shows the lineage")
    code, out, _ = cli("explain", str(threads["api_server"]))
    check(code == 1 and "no policy entry" in out, f"explain of an unmatched thread: exit {code}")

    # Tasks and bindings in every format.
    tasks = cli_json("get", "tasks", "--comm", "^EngineCore")["items"]
    check(sorted(t["tid"] for t in tasks if t["tgid"] == threads["python3.12"]) == engines
          and all(t["comm"].startswith("EngineCore") for t in tasks), "get tasks --comm -o json")
    code, out, _ = cli("get", "tasks", "--comm", "python3", "-o", "yaml")
    check(code == 0 and threads["python3.12"] in [t["tid"] for t in yaml.safe_load(out)["items"]], "get tasks -o yaml")
    for what in ("policies", "intents", "tasks", "bindings"):
        j = cli_json("get", what)
        check(j.get("apiVersion") == "v1" and j.get("kind") == "List" and isinstance(j.get("items"), list),
              f"get {what} -o json is a List (apiVersion, kind, items)")
        code, out, _ = cli("get", what, "-o", "yaml")
        check(code == 0 and yaml.safe_load(out) == j, f"get {what} -o yaml is the same List")

    # -o name and -o wide.
    code, out, _ = cli("get", "tasks", "--comm", "^EngineCore", "-o", "name")
    check(code == 0 and all(f"task/{t}" in out.split() for t in engines), f"get tasks -o name: {out.split()}")
    code, out, _ = cli("get", "tasks", "--comm", "^EngineCore", "-o", "wide")
    check(code == 0 and "POD NAME" in out.splitlines()[0] and str(engines[0]) in out, "get tasks -o wide")
    code, out, _ = cli("get", "intents", "-o", "name")
    check(code == 0 and "intent/NodeSchedulingPolicy/vllm-enginecore" in out.split(), f"get intents -o name: {out.split()}")
    code, out, _ = cli("get", "intents", "-o", "wide")
    check(code == 0 and "UPDATED" in out.splitlines()[0] and re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", out),
          "get intents -o wide shows when the state last changed")
    code, out, _ = cli("get", "policies", "-o", "name")
    check(code == 0 and out.split() == ["NodeSchedulingPolicy/vllm-enginecore"], f"get policies -o name: {out.split()}")
    code, out, _ = cli("get", "policies", "-o", "wide")
    check(code == 0 and "OPTIONS" in out.splitlines()[0], "get policies -o wide")
    code, out, _ = cli("get", "bindings", "-o", "wide")
    check(code == 0 and out.strip() == "No claim bindings.", f"get bindings -o wide without bindings: {out.strip()}")
    code, _, err = cli("get", "intents", "-o", "xml")
    check(code == 2 and "xml" in err, "get -o xml: exit 2 naming the value")

    # The daemon refuses bad input naming the field: exit 2.
    code, out, err = cli("get", "tasks", "--comm", "(")
    check(code == 2 and "INVALID_ARGUMENT" in err and "comm_regex" in err, f"daemon INVALID_ARGUMENT: {err.strip()}")

    # Delete while `get policies -w -o json` runs: the initial ADDED, then DELETED, one JSON a line.
    w = Watch("policies", "-o", "json", "--max-events", "1")
    first = w.until(lambda l: True)
    check(first is not None and json.loads(first)["type"] == "ADDED"
          and json.loads(first)["object"]["metadata"]["name"] == "vllm-enginecore", f"get policies -w -o json: {first!r}")

    # Delete: the entries leave the map.
    code, out, _ = cli("delete", "NodeSchedulingPolicy", "vllm-enginecore")
    check(code == 0 and "deleted" in out, f"delete: exit {code}")
    deadline = time.time() + 20
    while time.time() < deadline and cli_json("status")["actualEntries"] != 0:
        time.sleep(0.2)
    check(cli_json("status")["actualEntries"] == 0, "after delete the pinned map is empty (INV-1/INV-5)")
    gone = w.until(lambda l: json.loads(l)["type"] == "DELETED")
    check(gone is not None and json.loads(gone)["object"]["metadata"]["name"] == "vllm-enginecore",
          f"get policies -w -o json: the deleted policy: {gone!r}")
    check(w.p.wait(timeout=10) == 0, "get -w --max-events 1 ends by itself with exit 0")
    code, out, _ = cli("delete", "node", "vllm-enginecore")
    check(code == 1 and "not deleted" in out, f"deleting it again: exit {code}")

    # apply prints the warnings preview gives (the daemon's Preview, not a copy): a policy for
    # another node gets no intent here, and both say why.
    elsewhere = os.path.join(work, "elsewhere.yaml")
    with open(elsewhere, "w") as f:
        f.write("apiVersion: scheduling.gthulhu.io/v1alpha1\nkind: NodeSchedulingPolicy\nmetadata:\n"
                "  name: elsewhere\nspec:\n  nodeNames: [another-node]\n  commandRegex: ^EngineCore\n")
    code, out, err = cli("apply", "-f", elsewhere)
    pv_warnings = cli_json("preview", "-f", elsewhere)[0]["result"]["warnings"]
    check(code == 0 and pv_warnings and all("warning: " + w_ in out for w_ in pv_warnings)
          and "node not selected: " in out,
          f"apply prints preview's warnings {pv_warnings}: {out.strip()}")
    check(not [i for i in cli_json("get", "intents")["items"] if i["policy"] == "elsewhere"],
          "no intent for a policy that does not select this node")
    code, out, _ = cli("apply", "-f", elsewhere, "-o", "json")
    check(code == 0 and json.loads(out)[0]["previewWarnings"] == [w_ for w_ in pv_warnings],
          "apply -o json: previewWarnings")
    cli("delete", "-f", elsewhere)

    # requirePreview: apply leaves it Pending and says how to go on; preview --acknowledge of the
    # same file lets it go live.
    dra = os.path.join(SRC, "examples", "policies", "llm-decode.yaml")
    code, out, err = cli("apply", "-f", dra)
    pending = [i for i in cli_json("get", "intents", "llm-decode")["items"] if i["policy"] == "llm-decode"]
    check(code == 0 and pending and pending[0]["state"] == "PENDING" and "preview -f" in err and "--acknowledge" in err,
          f"requirePreview: apply -> Pending with the preview hint ({pending[0]['state'] if pending else None})")
    code, out, _ = cli("preview", "-f", dra, "--acknowledge")
    check(code == 0 and "Acknowledged" in out, "preview --acknowledge")
    deadline = time.time() + 10
    intent = None
    while time.time() < deadline:
        intent = [i for i in cli_json("get", "intents", "llm-decode")["items"] if i["policy"] == "llm-decode"][0]
        if "requirePreview" not in intent["reason"]:
            break
        time.sleep(0.2)
    # Live now, but no pod of it runs here: nothing to write, and the intent says so (not Applied).
    check(intent["state"] == "PENDING" and intent["reason"] == "matches no task on this node",
          f"after the acknowledged preview the intent no longer waits: {intent['state']} ({intent['reason']})")
    check(cli("delete", "-f", dra)[0] == 0, "delete -f")

    # No daemon: exit 1 with the gRPC status.
    r = subprocess.run([CLI, "status", "--socket", os.path.join(work, "nobody.sock")], capture_output=True, text=True)
    check(r.returncode == 1 and "UNAVAILABLE" in r.stderr, f"no daemon: exit {r.returncode}")
finally:
    cleanup()

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
