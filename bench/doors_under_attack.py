#!/usr/bin/python3
"""Benchmark (not a test): does claim2cored keep serving gRPC while a local user attacks its two
other doors, the role socket and the REST gateway? (issue 42)

One run, against a private claim2cored + claim2core-rest (bench/bench_node.py) whose role
socket sits in a directory every uid may reach, windows alternating quiet / attacked:

  * the probe: gRPC Status, one client, one call every --period ms, timed from call to reply;
  * writes that must not be lost: gRPC UpsertPolicy of a new policy every 50 ms (each acked name
    is checked in ListPolicies at the end), and role registrations of the attacker's own threads
    (once every line of a thread is answered, re-registering its last acked role must answer
    "changed 0": the daemon still has it);
  * the attack, all at once:
      - a role-socket flood from an unprivileged uid (setpriv to 65534): --flood-threads threads,
        each registering its own thread on its own connection with pipelined lines that switch its
        role every line, --flood-lines lines in all or the window's end, whichever comes first;
      - idle role-socket connections held by the same uid (--idle-connections);
      - a slow-client attack on REST: --slow-clients connections that send a request head one
        byte a second and never finish it;
    while root registers a role of its own (it must still be served) and a REST client asks
    GET /health every 100 ms.

Printed: Status p50/p99/max quiet vs attacked and their ratio (goal: attacked p99 <= 2x quiet p99),
the REST probe's answers, writes acked and lost (goal: none lost), refusals the attacker got, the
load average before and after. Exit 1 when a goal is missed (--no-judge: only print).

usage: bench/doors_under_attack.py BUILD_DIR [--windows 2] [--window-seconds 8] ...   (root, bpffs)
ctest bench_doors_smoke runs it small and without the judge (no figure is checked).
"""
import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_node import NODE, BenchNode, loadavg, pct, proto_messages, require_root_and_bpffs  # noqa: E402

import grpc  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("build")
ap.add_argument("--windows", type=int, default=2, help="quiet/attacked window pairs")
ap.add_argument("--window-seconds", type=float, default=8.0)
ap.add_argument("--period", type=float, default=5.0, help="ms between two Status probes")
ap.add_argument("--flood-threads", type=int, default=4)
ap.add_argument("--flood-lines", type=int, default=200_000, help="role lines a window, all threads together")
ap.add_argument("--idle-connections", type=int, default=300)
ap.add_argument("--slow-clients", type=int, default=32)
ap.add_argument("--no-judge", action="store_true", help="print only; exit 0 whatever the figures")
args = ap.parse_args()
require_root_and_bpffs("a private claim2cored (BPF maps, bpffs pins)")

pb = proto_messages("c2c-doors-pb-")

SERVICE = "/claim2core.v1.Claim2Core/"
NOBODY = 65534

# The attacker: runs as an unprivileged uid, registers its own threads' roles as fast as the socket
# takes them and holds idle connections. It prints one JSON line when the flood is over (its
# threads' last acked roles and its counts) and keeps its threads alive until its stdin closes, so
# the bench can check those roles in the daemon.
ATTACKER = r'''
import json, os, socket, sys, threading, time
path, lines, threads_n, idle_n, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
results = {}
def one_connection(tid, out, deadline, budget):
    """Pipelined SETs of this thread's role on one connection until the deadline or the budget;
    a reader thread takes every reply as it comes. Returns (lines sent, lines left unanswered)."""
    s = socket.socket(socket.AF_UNIX); s.connect(path)
    lock = threading.Condition()
    state = {"pending": 0, "done": False}
    def reader():
        buf = b""
        s.settimeout(1.0)
        while True:
            try:
                data = s.recv(65536)
            except socket.timeout:
                with lock:
                    if state["done"] and (state["pending"] == 0 or time.monotonic() > deadline + 5):
                        return
                continue
            except OSError as e:
                out["errors"].append("recv: " + str(e)); return
            if not data:
                out["errors"].append("closed by the daemon"); return
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                w = line.decode(errors="replace").split()
                with lock:
                    state["pending"] -= 1
                    lock.notify()
                if w and w[0] == "OK":
                    out["ok"] += 1
                    out["last_ok"] = w[4]
                elif len(w) >= 2:
                    out["refused"][w[1]] = out["refused"].get(w[1], 0) + 1
            with lock:
                if state["done"] and state["pending"] == 0:
                    return
    rt = threading.Thread(target=reader)
    rt.start()
    sent = 0
    try:
        while time.monotonic() < deadline and sent < budget and rt.is_alive():
            with lock:  # up to 1,024 lines in flight
                while state["pending"] >= 1024 and rt.is_alive() and time.monotonic() < deadline:
                    lock.wait(0.2)
            batch = []
            for _ in range(min(128, budget - sent)):
                batch.append(f"C2C-ROLE/1 SET {tid} 0 {'flood-a' if (out['sent'] + sent) % 2 == 0 else 'flood-b'}\n")
                sent += 1
            with lock:
                state["pending"] += len(batch)
            s.sendall("".join(batch).encode())
    except OSError as e:
        out["errors"].append("send: " + str(e))
    with lock:
        state["done"] = True
    rt.join()
    s.close()
    return sent, state["pending"]
def flood(k):
    tid = threading.get_native_id()
    out = {"tid": tid, "sent": 0, "ok": 0, "refused": {}, "last_ok": None, "unanswered": 0, "connections": 0,
           "errors": []}
    results[k] = out
    deadline = time.monotonic() + seconds
    per = lines // threads_n
    while time.monotonic() < deadline and out["sent"] < per:  # a cut connection: the attacker comes back
        out["connections"] += 1
        try:
            sent, left = one_connection(tid, out, deadline, per - out["sent"])
        except OSError as e:
            out["errors"].append("connect: " + str(e)); time.sleep(0.05); continue
        out["sent"] += sent
        out["unanswered"] += left
    # Nothing acked is lost: when every line was answered on one connection, re-registering the last
    # acked role must find it already there (changed 0).
    if out["last_ok"] and out["connections"] == 1 and out["unanswered"] == 0:
        for _ in range(40):  # the flood used up this uid's rate: wait for a token
            try:
                c = socket.socket(socket.AF_UNIX); c.settimeout(10); c.connect(path)
                c.sendall(f"C2C-ROLE/1 SET {tid} 0 {out['last_ok']}\n".encode())
                out["recheck"] = c.makefile().readline().strip()
                c.close()
            except OSError as e:
                out["recheck"] = "error: " + str(e)
            if out["recheck"].startswith("OK "):
                break
            time.sleep(0.5)
    out["errors"] = sorted(set(out["errors"]))
ts = [threading.Thread(target=flood, args=(k,)) for k in range(threads_n)]
for t in ts: t.start()
time.sleep(0.3)  # the flood's connections first, then the idle ones
idle = []
idle_refused = 0
for _ in range(idle_n):
    try:
        s = socket.socket(socket.AF_UNIX); s.settimeout(2); s.connect(path); idle.append(s)
    except OSError:
        idle_refused += 1
for t in ts: t.join()
print(json.dumps({"threads": list(results.values()), "idle_held": len(idle), "idle_refused": idle_refused}), flush=True)
sys.stdin.read()
'''


class SlowClients:
    """Connections to the gateway that send a request head one byte a second and never end it."""

    def __init__(self, port, n):
        self.port, self.n, self.stop = port, n, threading.Event()
        self.opened = self.refused = 0
        self.t = threading.Thread(target=self.run)

    def run(self):
        socks = []
        for _ in range(self.n):
            try:
                s = socket.create_connection(("127.0.0.1", self.port), timeout=2)
                s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nX-Drip: ")
                socks.append(s)
                self.opened += 1
            except OSError:
                self.refused += 1
        while not self.stop.wait(1.0):
            for s in list(socks):
                try:
                    s.sendall(b"a")
                except OSError:
                    socks.remove(s)
        for s in socks:
            s.close()


def rest_probe(port, stop, out):
    """GET /health every 100 ms: (latency or None for no answer within 5 s)."""
    while not stop.wait(0.1):
        t = time.perf_counter()
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.request("GET", "/health")
            ok = c.getresponse().status in (200, 503)
            c.close()
            out.append(time.perf_counter() - t if ok else None)
        except OSError:
            out.append(None)


def main():
    work = tempfile.mkdtemp(prefix="c2c-doors-")
    os.chmod(work, 0o755)  # the attacker (another uid) must reach the role socket
    role_sock = os.path.join(work, "roles.sock")
    env = BenchNode(args.build, tag="doors", daemon_args=["--role-socket", role_sock])
    failures = []
    try:
        env.start()
        ch = grpc.insecure_channel("unix://" + env.sock)
        rpc = {m: ch.unary_unary(SERVICE + m, request_serializer=lambda r: r.SerializeToString(),
                                 response_deserializer=d.FromString)
               for m, d in [("Status", pb.StatusResponse), ("UpsertPolicy", pb.UpsertPolicyResponse),
                            ("ListPolicies", pb.ListPoliciesResponse)]}
        rpc["Status"](pb.StatusRequest(), timeout=10)
        acked, write_errors = [], []
        lat = {"quiet": [], "attacked": []}
        timeouts = {"quiet": 0, "attacked": 0}
        attack_reports, rest_lat, root_role = [], [], []
        load0 = loadavg()
        serial = [0]

        def writer(stop):
            while not stop.wait(0.05):
                serial[0] += 1
                name = f"doors-{serial[0]}"
                try:
                    rpc["UpsertPolicy"](pb.UpsertPolicyRequest(policy=pb.Policy(node=pb.NodeSchedulingPolicy(
                        name=name, node_names=[NODE], command_regex="^c2c-doors-none$", priority=1,
                        execution_time_ns=2000000))), timeout=30)
                    acked.append(name)
                except grpc.RpcError as e:
                    write_errors.append(f"{name}: {e.code().name}")

        for w in range(args.windows):
            for phase in ("quiet", "attacked"):
                stop = threading.Event()
                wt = threading.Thread(target=writer, args=(stop,))
                wt.start()
                attacker = slow = probe = None
                if phase == "attacked":
                    attacker = subprocess.Popen(
                        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", sys.executable, "-c",
                         ATTACKER, role_sock, str(args.flood_lines), str(args.flood_threads),
                         str(args.idle_connections), str(args.window_seconds)],
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                    slow = SlowClients(env.port, args.slow_clients)
                    slow.t.start()
                    probe = threading.Thread(target=rest_probe, args=(env.port, stop, rest_lat))
                    probe.start()
                    time.sleep(0.5)  # the attack is under way before root registers
                    root_role.append(register_as_root(role_sock, f"root-{w}"))
                end = time.monotonic() + args.window_seconds
                while time.monotonic() < end:
                    t = time.perf_counter()
                    try:
                        rpc["Status"](pb.StatusRequest(), timeout=30)
                        lat[phase].append(time.perf_counter() - t)
                    except grpc.RpcError:
                        timeouts[phase] += 1
                    time.sleep(args.period / 1e3)
                stop.set()
                wt.join()
                if attacker:
                    report = json.loads(attacker.stdout.readline() or "{}")
                    for th in report.get("threads", []):
                        rc = th.get("recheck")
                        if rc is not None and rc.startswith("OK ") and not rc.endswith(" 0"):
                            failures.append(f"tid {th['tid']}: last acked role {th['last_ok']}, re-registering "
                                            f"it answered {rc!r} (the acked role was lost)")
                    attack_reports.append(report)
                    attacker.stdin.close()
                    attacker.wait(timeout=30)
                    slow.stop.set()
                    slow.t.join()
                    probe.join()
        load1 = loadavg()
        names = {p.node.name for p in rpc["ListPolicies"](pb.ListPoliciesRequest(), timeout=30).policies}
        lost = [n for n in acked if n not in names]

        q99, a99 = pct(lat["quiet"], 0.99), pct(lat["attacked"], 0.99)
        print(f"claim2cored's gRPC Status while the role socket and the REST gateway are attacked "
              f"({args.windows} quiet + {args.windows} attacked windows of {args.window_seconds:g} s)")
        print(f"cpus {os.cpu_count()}, load average before {load0}, after {load1}")
        for phase in ("quiet", "attacked"):
            xs = lat[phase]
            print(f"  Status {phase:8s}: {len(xs):5d} calls  p50 {pct(xs, 0.5) * 1e3:8.3f} ms  "
                  f"p99 {pct(xs, 0.99) * 1e3:8.3f} ms  max {max(xs, default=0) * 1e3:8.3f} ms  "
                  f"timeouts {timeouts[phase]}")
        ratio = a99 / q99 if q99 > 0 else float("inf")
        print(f"  p99 attacked / quiet: {ratio:.2f} (goal <= 2)")
        answered = [x for x in rest_lat if x is not None]
        print(f"  REST GET /health under attack: {len(answered)} of {len(rest_lat)} answered, "
              f"p99 {pct(answered, 0.99) * 1e3:.1f} ms")
        print(f"  root's role registration under attack: {root_role}")
        for i, r in enumerate(attack_reports):
            ths = r.get("threads", [])
            refused = {}
            for th in ths:
                for k, v in th.get("refused", {}).items():
                    refused[k] = refused.get(k, 0) + v
            print(f"  attack {i + 1}: role lines sent {sum(t.get('sent', 0) for t in ths)}, acked "
                  f"{sum(t.get('ok', 0) for t in ths)}, refused {refused or 0}, idle connected {r.get('idle_held')}, "
                  f"idle connect failed {r.get('idle_refused')}, unanswered {sum(t.get('unanswered', 0) for t in ths)}, "
                  f"acked roles re-checked {sum(1 for t in ths if t.get('recheck', '').startswith('OK '))}, connections {sum(t.get('connections', 0) for t in ths)}, "
                  f"errors {sorted({e for t in ths for e in t.get('errors', [])})}")
        print(f"  UpsertPolicy acked {len(acked)}, lost {len(lost)}, failed {len(write_errors)} {write_errors[:3]}")
        if ratio > 2:
            failures.append(f"Status p99 attacked {a99 * 1e3:.2f} ms > 2x quiet {q99 * 1e3:.2f} ms")
        if lost:
            failures.append(f"acked policies lost: {lost[:5]}")
        if any(not r.startswith("OK ") for r in root_role):
            failures.append(f"root could not register a role under attack: {root_role}")
        if rest_lat and len(answered) < len(rest_lat):
            failures.append(f"REST answered {len(answered)} of {len(rest_lat)} health probes under attack")
        if env.daemon.poll() is not None:
            failures.append(f"claim2cored exited ({env.daemon.returncode}) during the run")
        for f in failures:
            print("MISS " + f)
        if not failures:
            print("every goal met")
        return 1 if failures and not args.no_judge else 0
    finally:
        env.stop()
        subprocess.run(["rm", "-rf", work])


def register_as_root(path, role):
    """One SET of this thread's role by root over a fresh connection: the reply line."""
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(10)
            s.connect(path)
            s.sendall(f"C2C-ROLE/1 SET {threading.get_native_id()} 0 {role}\n".encode())
            return s.makefile().readline().strip()
    except OSError as e:
        return f"error: {e}"


sys.exit(main())
