#!/usr/bin/python3
"""Registered task roles end to end (issue #14 item 2) against a live claim2cored on private
paths: the seed's llm-decode DRAExecutionPolicy (examples/policies/llm-decode.yaml: registeredRole
decode), its pod and three claims live, matches a thread labelled with `claim2core role set`, a
thread that labelled itself with the Python helper (clients/python), one that labelled itself
with the header-only C helper (clients/c, c2c-role-example) and a thread of a process
running as uid 65534 that labelled itself (own thread group); each entry reaches the pinned map
and explain says "registered role decode". A non-owner (uid 65534, the CLI and the Python helper)
is refused with PERMISSION_DENIED and the state digest is unchanged. Over gRPC
(RegisterTaskRole): a wrong start is FAILED_PRECONDITION, an empty role unregisters. The role
survives a daemon restart while its task lives, and leaves with the task.
Exit 77 (ctest skip) without root, bpffs or the v1 cpuset hierarchy (the pod cgroup).

usage: task_roles_test.py SOURCE_DIR CLAIM2CORE CLAIM2CORED C_EXAMPLE
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import grpc

from c2c_it import checker, cli_runner, require_bpf, stop_processes, wait_for

SRC, CLI, DAEMON, C_EXAMPLE = sys.argv[1:5]
require_bpf("BPF maps, bpffs pins, a pod cgroup")
CPUSET = "/sys/fs/cgroup/cpuset"
if not os.path.isdir(CPUSET):
    print(f"SKIP: needs the v1 cpuset hierarchy at {CPUSET} to make a pod cgroup")
    sys.exit(77)

work = tempfile.mkdtemp(prefix="c2c-roles-it-")
gen = os.path.join(work, "py")
os.makedirs(gen)
subprocess.run(["protoc", "--proto_path=" + os.path.join(SRC, "spec"), "--python_out=" + gen,
                os.path.join(SRC, "spec", "claim2core.proto")], check=True)
sys.path.insert(0, gen)
sys.path.insert(0, os.path.join(SRC, "clients", "python"))
import claim2core_pb2 as pb  # noqa: E402
import claim2core_role  # noqa: E402

sock = os.path.join(work, "run", "claim2cored.sock")
# Workloads of any uid reach the role socket: its directory is world-readable (the gRPC one is 0700).
role_dir = tempfile.mkdtemp(prefix="c2c-roles-sock-")
os.chmod(role_dir, 0o755)
role_sock = os.path.join(role_dir, "roles.sock")
pin_root = f"/sys/fs/bpf/c2c-roles-it-{os.getpid()}"
state = os.path.join(work, "state")
cg = os.path.join(CPUSET, f"c2c-roles-it-{os.getpid()}")
WORKER = os.path.join(SRC, "tests", "integration", "role_worker.py")
CLIENTS = os.path.join(SRC, "clients", "python")
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
failures, procs = [], []
check = checker(failures)
cli, cli_json = cli_runner(CLI, sock)
daemon = None


def start_daemon():
    log = open(os.path.join(work, "daemon.log"), "a")
    p = subprocess.Popen([DAEMON, "--config", "/dev/null", "--node-name", "c2c-test-node", "--socket", sock, "--role-socket", role_sock,
                          "--state-dir", state, "--pin-root", pin_root, "--log-level", "info"],
                         stdout=log, stderr=log)
    procs.append(p)
    deadline = time.time() + 30
    while time.time() < deadline:
        if p.poll() is not None:
            raise RuntimeError("claim2cored exited: " + open(os.path.join(work, "daemon.log")).read())
        if os.path.exists(role_sock) and cli("status")[0] == 0:
            return p
        time.sleep(0.1)
    raise RuntimeError("claim2cored did not become ready")


def call(method, req, resp):
    with grpc.insecure_channel("unix://" + sock) as ch:
        fn = ch.unary_unary("/claim2core.v1.Claim2Core/" + method, request_serializer=lambda r: r.SerializeToString(),
                            response_deserializer=resp.FromString)
        return fn(req, timeout=10)


def map_tids():
    out = subprocess.run(["bpftool", "-j", "map", "dump", "pinned", pin_root + "/c2c_policy"],
                         check=True, capture_output=True, text=True).stdout
    return {int.from_bytes(bytes(int(b, 16) for b in e["key"]), "little") for e in json.loads(out)}


def worker_view(pid):
    """What the daemon holds for one process's threads: each row's policy and role, and the map entries
    (the host's other tasks come and go meanwhile, so the whole state digest is no witness)."""
    rows = cli_json("get", "tasks", "--tgid", str(pid), "--all")["items"]
    tids = {r["tid"] for r in rows}
    return sorted(json.dumps(r, sort_keys=True) for r in rows), sorted(tids & map_tids())


def intent_state():
    items = [i for i in cli_json("get", "intents")["items"] if i["policy"] == "llm-decode"]
    return items[0]["state"] if items else None


class Worker:
    """role_worker.py in the pod cgroup (optionally as uid 65534): name -> tid, self-registration results."""

    def __init__(self, names, prefix=()):
        cmd = " ".join(list(prefix) + ["/usr/bin/python3", WORKER, CLIENTS] + names)
        env = dict(os.environ, CLAIM2CORE_ROLE_SOCKET=role_sock)
        self.p = subprocess.Popen(["sh", "-c", f"echo $$ > {cg}/cgroup.procs && exec {cmd}"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, env=env)
        procs.append(self.p)
        words = self.p.stdout.readline().split()
        self.tids = dict((w.split("=")[0], int(w.split("=")[1])) for w in words[1:])
        self.selfs = {}
        for _ in [n for n in names if n.endswith("-self")]:
            _, name, result = self.p.stdout.readline().split()
            self.selfs[name] = result

    def stop(self):
        self.p.stdin.write("\n")
        self.p.stdin.close()
        self.p.wait(timeout=10)


try:
    os.mkdir(cg)
    for f, v in (("cpuset.cpus", "0"), ("cpuset.mems", "0")):
        with open(os.path.join(cg, f), "w") as fh:
            fh.write(v)
    daemon = start_daemon()

    # The pod and its three claims (gpu, rdma, cpu), as the observer would bind them.
    bindings = [pb.ClaimDeviceBinding(claim_uid=f"claim-{n}", claim_generation=1, pod_uid="pod-decode",
                                      node_name="c2c-test-node", driver=f"{n}.example.com", pool="p0",
                                      device=f"{n}-0", request=n) for n in ("gpu", "rdma", "cpu")]
    pod = pb.PodInfo(uid="pod-decode", namespace="llm", name="decode-0", labels={"llm-d.ai/role": "decode"},
                     claims={n: f"claim-{n}" for n in ("gpu", "rdma", "cpu")}, cgroup="/" + os.path.basename(cg))
    call("UpsertClaimBinding", pb.UpsertClaimBindingRequest(bindings=bindings, pods=[pod]), pb.UpsertClaimBindingResponse)
    policy = os.path.join(SRC, "examples", "policies", "llm-decode.yaml")
    check(cli("apply", "-f", policy)[0] == 0, "apply llm-decode.yaml")
    check(cli("preview", "-f", policy, "--acknowledge")[0] == 0, "preview --acknowledge (requirePreview)")

    w = Worker(["c2c-cli-role", "c2c-py-self", "c2c-no-role"])
    t_cli, t_py, t_none = w.tids["c2c-cli-role"], w.tids["c2c-py-self"], w.tids["c2c-no-role"]
    check(w.selfs.get("c2c-py-self") == "ok", f"the Python helper registered its own thread: {w.selfs}")
    code, out, err = cli("role", "set", "decode", "--tid", str(t_cli), "--role-socket", role_sock)
    check(code == 0 and f"tid {t_cli}" in out and "role decode" in out, f"claim2core role set: exit {code} {out}{err}")

    check(wait_for(lambda: {t_cli, t_py} <= map_tids()), "both registered threads reach the pinned map")
    check(t_none not in map_tids(), "the thread without a role has no entry")
    code, out, _ = cli("explain", str(t_cli))
    check(code == 0 and "registered role decode" in out and "llm-decode" in out, "explain names the role's source:\n" + out)
    ex = call("Explain", pb.ExplainRequest(tid=t_py), pb.ExplainResponse)
    check(ex.found and ex.lineage.role == "decode" and ex.lineage.role_source == "registered role decode",
          f"lineage of the self-registered thread: {ex.lineage.role}/{ex.lineage.role_source}")
    check(wait_for(lambda: intent_state() == "APPLIED"), f"the llm-decode intent is Applied: {intent_state()}")
    code, out, _ = cli("preview", "-f", policy)
    check(f"role: tid {t_cli} decode (registered role decode)" in out, "preview shows how the role reached the thread")

    # The header-only C helper, as a C workload calls it at thread start.
    env = dict(os.environ, CLAIM2CORE_ROLE_SOCKET=role_sock)
    cw = subprocess.Popen(["sh", "-c", f"echo $$ > {cg}/cgroup.procs && exec {C_EXAMPLE} decode"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True, env=env)
    procs.append(cw)
    words = cw.stdout.readline().split()  # tid <tid> rc <rc> reply OK ...
    t_c = int(words[1])
    check(words[3] == "0" and words[5] == "OK", f"c2c_register_role from C: {' '.join(words)}")
    check(wait_for(lambda: t_c in map_tids()), "the C thread reaches the map")
    cw.stdin.write("\n")
    cw.stdin.close()
    cw.wait(timeout=10)
    check(wait_for(lambda: t_c not in map_tids()), "... and leaves it with its thread")

    # A non-owner is refused and nothing changes (the CLI and the Python helper as uid 65534).
    before = worker_view(w.p.pid)
    r = subprocess.run(NOBODY + [CLI, "role", "set", "decode", "--tid", str(t_none), "--role-socket", role_sock],
                       capture_output=True, text=True)
    check(r.returncode == 1 and "PERMISSION_DENIED" in r.stderr, f"uid 65534 via the CLI: exit {r.returncode} {r.stderr}")
    r = subprocess.run(NOBODY + ["/usr/bin/python3", "-c",
                                 "import sys; sys.path.insert(0, sys.argv[1]); import claim2core_role as c\n"
                                 "try:\n c.register_role('decode', tid=int(sys.argv[2]), socket_path=sys.argv[3])\n"
                                 "except c.RolePermissionError as e: print('denied', e.code); sys.exit(0)\n"
                                 "sys.exit(1)", CLIENTS, str(t_none), role_sock], capture_output=True, text=True)
    check(r.returncode == 0 and "denied PERMISSION_DENIED" in r.stdout, f"uid 65534 via Python: {r.stdout}{r.stderr}")
    check(worker_view(w.p.pid) == before and t_none not in map_tids(), "refused calls changed nothing (tasks, map)")

    # A process of uid 65534 may label its own threads.
    w2 = Worker(["c2c-nobody-self"], prefix=NOBODY)
    t_nobody = w2.tids["c2c-nobody-self"]
    check(w2.selfs.get("c2c-nobody-self") == "ok", f"uid 65534 labels its own thread: {w2.selfs}")
    check(wait_for(lambda: t_nobody in map_tids()), "... and it reaches the map")

    # A container with its own pid namespace (a pod without hostPID) names its threads by their
    # namespaced tids: the daemon maps them through the caller's NSpid.
    w3 = Worker(["c2c-pidns-self"], prefix=["unshare", "--pid", "--fork"])
    ns_tid = w3.tids["c2c-pidns-self"]
    child = int(open(f"/proc/{w3.p.pid}/task/{w3.p.pid}/children").read().split()[0])
    host_tid = None
    for t in os.listdir(f"/proc/{child}/task"):
        ids = [l.split()[1:] for l in open(f"/proc/{child}/task/{t}/status") if l.startswith("NSpid:")][0]
        if int(ids[-1]) == ns_tid:
            host_tid = int(ids[0])
    check(w3.selfs.get("c2c-pidns-self") == "ok" and host_tid and host_tid != ns_tid,
          f"a thread in its own pid namespace registers (ns tid {ns_tid}, host tid {host_tid}): {w3.selfs}")
    check(wait_for(lambda: host_tid in map_tids()), "... and its host tid reaches the map")
    w3.stop()

    # gRPC: a start that is not the live task's (a reused tid) is refused; an empty role unregisters.
    try:
        call("RegisterTaskRole", pb.RegisterTaskRoleRequest(tid=t_none, start=1, role="decode"), pb.RegisterTaskRoleResponse)
        check(False, "a wrong start must be refused")
    except grpc.RpcError as e:
        check(e.code() == grpc.StatusCode.FAILED_PRECONDITION and "INV-2" in e.details(), f"wrong start: {e.code()}")
    try:
        call("RegisterTaskRole", pb.RegisterTaskRoleRequest(tid=t_none, role="bad role"), pb.RegisterTaskRoleResponse)
        check(False, "a bad role must be refused")
    except grpc.RpcError as e:
        check(e.code() == grpc.StatusCode.INVALID_ARGUMENT and e.details().startswith("role:"), f"bad role: {e.details()}")
    rep = call("RegisterTaskRole", pb.RegisterTaskRoleRequest(tid=t_cli, role=""), pb.RegisterTaskRoleResponse)
    check(rep.changed and rep.tgid == w.p.pid, f"gRPC unregister: {rep}")
    check(wait_for(lambda: t_cli not in map_tids()), "an unregistered thread's entry leaves the map")

    # INV-7: the role survives a restart while its task lives; then it leaves with the task.
    daemon.terminate()
    daemon.wait(timeout=20)
    daemon = start_daemon()
    check(wait_for(lambda: t_py in map_tids()), "after a restart the live task keeps its role")
    ex = call("Explain", pb.ExplainRequest(tid=t_py), pb.ExplainResponse)
    check(ex.found and ex.lineage.role_source == "registered role decode", "... and its lineage says so")
    w.stop()
    w2.stop()
    check(wait_for(lambda: not ({t_py, t_nobody} & map_tids())), "the roles' entries leave with their tasks")
    daemon.terminate()
    daemon.wait(timeout=20)
    daemon = start_daemon()
    with open(os.path.join(state, "state.json")) as f:
        roles = json.load(f)["state"].get("roles", [])
    check(not [r for r in roles if r["tid"] in (t_py, t_nobody)], f"a restart drops the roles of exited tasks: {roles}")
    # kill -9 while a role is only in the state log, then the task exits while no daemon runs: the
    # next start finds no live (tid, start) for it and drops it (INV-7), nothing comes back.
    w4 = Worker(["c2c-kill9-self"])
    t_k9 = w4.tids["c2c-kill9-self"]
    check(w4.selfs.get("c2c-kill9-self") == "ok" and wait_for(lambda: t_k9 in map_tids()), "a role before kill -9")
    daemon.kill()
    daemon.wait(timeout=20)
    w4.stop()
    daemon = start_daemon()
    with open(os.path.join(state, "state.json")) as f:
        roles = json.load(f)["state"].get("roles", [])
    check(not [r for r in roles if r["tid"] == t_k9], f"after kill -9 and the task's exit the role is dropped: {roles}")
    check(t_k9 not in map_tids() and not call("Explain", pb.ExplainRequest(tid=t_k9), pb.ExplainResponse).found,
          "... and its entry is gone")
finally:
    stop_processes(procs)
    for _ in range(50):
        try:
            os.rmdir(cg)
            break
        except OSError:
            time.sleep(0.1)
    subprocess.run(["rm", "-rf", pin_root])
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(role_dir, ignore_errors=True)

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
