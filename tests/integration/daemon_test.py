#!/usr/bin/python3
"""claim2cored against an independent client (Debian's python3-grpcio), on a real socket.

Each daemon gets a private socket, state directory and pin root under /sys/fs/bpf, so a running
production daemon (/sys/fs/bpf/claim2core) is never touched. The Python modules are generated at
test time from spec/claim2core.proto (protoc --python_out); nothing generated is committed.

Usage (ctest runs one test class per entry):
  daemon_test.py <claim2cored> <proto> <thread-churn helper> <work dir> [unittest names...]
Environment: C2C_LOAD_SECONDS (default 5) for the load test; the full run uses 30.
"""
import functools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import grpc

DAEMON, PROTO, CHURN, WORK = sys.argv[1:5]
del sys.argv[1:5]
GEN = os.path.join(WORK, "daemon_py")
os.makedirs(GEN, exist_ok=True)
subprocess.run(["protoc", "--proto_path=" + os.path.dirname(PROTO), "--python_out=" + GEN, PROTO], check=True)
sys.path.insert(0, GEN)
import claim2core_pb2 as pb  # noqa: E402
import c2c_it  # noqa: E402
from c2c_it import bpf_skip_reason  # noqa: E402

SERVICE = "/claim2core.v1.Claim2Core/"
RESPONSES = {
    "UpsertPolicy": pb.UpsertPolicyResponse, "DeletePolicy": pb.DeletePolicyResponse,
    "UpsertClaimBinding": pb.UpsertClaimBindingResponse, "DeleteClaimBinding": pb.DeleteClaimBindingResponse,
    "Preview": pb.PreviewResponse, "ListIntents": pb.ListIntentsResponse, "Explain": pb.ExplainResponse,
    "Status": pb.StatusResponse, "ListTasks": pb.ListTasksResponse, "ListPolicies": pb.ListPoliciesResponse,
    "ListBindings": pb.ListBindingsResponse,
}


def skip_reason():
    return bpf_skip_reason("bpffs, BPF maps, tracepoints")


def wait_applied(d, policy, timeout=10):
    """The policy's intent reaches APPLIED (the read-back pass confirmed every entry)."""
    return wait_for(lambda: [i for i in d.call("ListIntents", pb.ListIntentsRequest(policy=policy)).intents
                             if i.state == pb.APPLIED], timeout=timeout)


def node_policy(name, regex, generation=0, priority=1, slice_ns=2_000_000, node="c2c-test-node"):
    return pb.Policy(node=pb.NodeSchedulingPolicy(name=name, generation=generation, node_names=[node],
                                                  command_regex=regex, priority=priority,
                                                  execution_time_ns=slice_ns))


def sweep_dead_test_pins(bpffs="/sys/fs/bpf"):
    """Removes the pin directories of test processes that no longer run (c2c-test-<tag>-<pid>):
    a run killed before its tearDown left them in bpffs for good."""
    for name in os.listdir(bpffs) if os.path.isdir(bpffs) else ():
        pid = name.rsplit("-", 1)[-1]
        if name.startswith("c2c-test-") and pid.isdigit() and not os.path.exists("/proc/" + pid):
            shutil.rmtree(os.path.join(bpffs, name), ignore_errors=True)


class Daemon:
    """One claim2cored process with private paths."""
    swept = False

    def __init__(self, tag, task_discovery="events", extra="", readback="1s"):
        if not Daemon.swept:
            sweep_dead_test_pins()
            Daemon.swept = True
        self.root = tempfile.mkdtemp(prefix="c2c-daemon-%s-" % tag, dir=WORK)
        self.socket = os.path.join(self.root, "run", "d.sock")
        self.state = os.path.join(self.root, "state")
        self.pin = "/sys/fs/bpf/c2c-test-%s-%d" % (tag, os.getpid())
        self.config = os.path.join(self.root, "claim2cored.yaml")
        self.log_path = os.path.join(self.root, "daemon.log")
        self.readback = readback
        self.write_config(task_discovery, extra)
        self.proc = None
        self.channel = None

    def write_config(self, task_discovery="events", extra=""):
        with open(self.config, "w") as f:
            f.write("node_name: c2c-test-node\nsocket: %s\nstate_dir: %s\npin_root: %s\n"
                    "task_discovery: %s\nreadback_interval: %s\nlog_level: info\n%s"
                    % (self.socket, self.state, self.pin, task_discovery, self.readback, extra))

    def start(self, timeout=30, args=(), prefix=()):
        """Runs the daemon (extra flags `args`, under a wrapper command `prefix` such as prlimit)."""
        if getattr(self, "log", None):
            self.log.close()
        self.log = open(self.log_path, "a")
        self.proc = subprocess.Popen(list(prefix) + [DAEMON, "--config", self.config] + list(args), stdout=self.log,
                                     stderr=self.log)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("claim2cored exited %d:\n%s" % (self.proc.returncode, self.read_log()))
            if os.path.exists(self.socket):
                try:
                    self.reconnect()
                    self.call("Status", pb.StatusRequest(), timeout=2)
                    return self
                except grpc.RpcError:
                    pass
            time.sleep(0.05)
        raise RuntimeError("claim2cored did not become ready:\n" + self.read_log())

    def reconnect(self):
        if self.channel:
            self.channel.close()
        self.channel = grpc.insecure_channel("unix://" + self.socket)

    def read_log(self):
        with open(self.log_path) as f:
            return f.read()

    def call(self, method, req, timeout=10, raw=None):
        fn = self.channel.unary_unary(SERVICE + method,
                                      request_serializer=(lambda r: r) if raw else (lambda r: r.SerializeToString()),
                                      response_deserializer=RESPONSES[method].FromString)
        return fn(raw if raw is not None else req, timeout=timeout)

    def status(self):
        return self.call("Status", pb.StatusRequest())

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self, sig=signal.SIGTERM, timeout=20):
        self.proc.send_signal(sig)
        return self.proc.wait(timeout=timeout)

    def rss_kib(self):
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def map_entries(self):
        """tid -> (start, generation) from the pinned policy map, read by bpftool."""
        out = subprocess.run(["bpftool", "-j", "map", "dump", "pinned", self.pin + "/c2c_policy"],
                             check=True, capture_output=True, text=True).stdout
        entries = {}
        for e in json.loads(out):
            key = bytes(int(b, 16) for b in e["key"])
            val = bytes(int(b, 16) for b in e["value"])
            entries[int.from_bytes(key, "little")] = (int.from_bytes(val[0:8], "little"),
                                                      int.from_bytes(val[8:16], "little"))
        return entries

    def map_boost_untils(self):
        """tid -> boost_until_ns (struct c2c_policy_value's fourth u64) from the pinned policy map."""
        out = subprocess.run(["bpftool", "-j", "map", "dump", "pinned", self.pin + "/c2c_policy"],
                             check=True, capture_output=True, text=True).stdout
        return {int.from_bytes(bytes(int(b, 16) for b in e["key"]), "little"):
                int.from_bytes(bytes(int(b, 16) for b in e["value"][24:32]), "little") for e in json.loads(out)}

    def cleanup(self):
        if self.channel:
            self.channel.close()
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if getattr(self, "log", None):
            self.log.close()
        if os.path.isdir(self.pin):
            for n in os.listdir(self.pin):
                os.unlink(os.path.join(self.pin, n))
            os.rmdir(self.pin)
        shutil.rmtree(self.root, ignore_errors=True)


class Threads:
    """A helper process holding <count> threads named <name>."""

    def __init__(self, name, count=1):
        self.proc = subprocess.Popen([CHURN, "hold", name, str(count)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        words = self.proc.stdout.readline().split()
        assert words and words[0] == "ready", words
        self.tgid = int(words[1])
        self.tids = [int(w) for w in words[2:]]

    def start_of(self, tid):
        with open("/proc/%d/task/%d/stat" % (self.tgid, tid)) as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])

    def end(self):
        self.proc.stdin.write("\n")
        self.proc.stdin.close()
        self.proc.wait(timeout=10)
        self.proc.stdout.close()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def scrape_metrics(port):
    """name{labels} -> value from the daemon's /metrics."""
    import urllib.request
    text = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5).read().decode()
    metrics = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            k, v = line.rsplit(" ", 1)
            metrics[k] = float(v)
    return metrics


# The shared wait, polling faster: these checks watch single map writes.
wait_for = functools.partial(c2c_it.wait_for, step=0.02)


class HostCase(unittest.TestCase):
    """A scenario that needs root and bpffs: skipped, saying why, without them."""

    def setUp(self):
        reason = skip_reason()
        if reason:
            self.skipTest(reason)


class DaemonCase(HostCase):
    discovery = "events"

    def setUp(self):
        super().setUp()
        self.d = Daemon(self.id().split(".")[-1][:12], task_discovery=self.discovery).start()

    def tearDown(self):
        if hasattr(self, "d"):
            # ctest shows this only when asked (--output-on-failure); it is the daemon's side of a failure.
            sys.stderr.write("--- daemon log (tail) ---\n" + "\n".join(self.d.read_log().splitlines()[-15:]) + "\n")
            self.d.cleanup()

    def assertInvalid(self, method, req, field, raw=None):
        with self.assertRaises(grpc.RpcError) as cm:
            self.d.call(method, req, raw=raw)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT, cm.exception.details())
        self.assertTrue(cm.exception.details().startswith(field + ":"),
                        "%s: expected the field %r first in %r" % (method, field, cm.exception.details()))


class InvalidInput(DaemonCase):
    # No task discovery: other processes on the host must not change the digest between calls.
    discovery = "off"

    def test_every_rpc_refuses_bad_input_naming_the_field_and_changes_nothing(self):
        d = self.d
        good = node_policy("base", "^c2c-base$")
        d.call("UpsertPolicy", pb.UpsertPolicyRequest(policy=good))
        binding = pb.ClaimDeviceBinding(claim_uid="claim-1", claim_generation=1, pod_uid="pod-1",
                                        node_name="c2c-test-node", driver="gpu.example.com", pool="p0",
                                        device="gpu-0", cpus="0")
        d.call("UpsertClaimBinding", pb.UpsertClaimBindingRequest(bindings=[binding]))
        before = d.status().state_digest
        self.assertTrue(before)

        big = "x" * 5000
        cases = [
            ("UpsertPolicy", pb.UpsertPolicyRequest(), "policy", None),
            ("UpsertPolicy", pb.UpsertPolicyRequest(policy=pb.Policy()), "policy.kind", None),
            ("UpsertPolicy", pb.UpsertPolicyRequest(policy=node_policy("bad", "(")), "policy.node.command_regex", None),
            ("UpsertPolicy", pb.UpsertPolicyRequest(policy=node_policy("bad", big)), "policy.node.command_regex", None),
            ("UpsertPolicy", pb.UpsertPolicyRequest(policy=node_policy("Bad_Name", "x")), "policy.node.name", None),
            ("UpsertPolicy", pb.UpsertPolicyRequest(policy=node_policy("bad", "x", priority=-4)),
             "policy.node.priority", None),
            ("UpsertPolicy", pb.UpsertPolicyRequest(policy=node_policy("bad", "x", slice_ns=3)),
             "policy.node.execution_time_ns", None),
            # Same generation, different spec: INV-3 (the core refuses it).
            ("UpsertPolicy", pb.UpsertPolicyRequest(policy=node_policy("base", "^other$", generation=1)),
             "policy.node.generation", None),
            ("UpsertPolicy", pb.UpsertPolicyRequest(policy=pb.Policy(dra=pb.DRAExecutionPolicy(
                name="dra", resource_claims=["gpu"], task_roles=[pb.TaskRole(name="r", command_regex="x",
                                                                              execution_class="warp")]))),
             "policy.dra.task_roles[0].execution_class", None),
            ("UpsertPolicy", pb.UpsertPolicyRequest(policy=pb.Policy(dra=pb.DRAExecutionPolicy(
                name="dra", resource_claims=["gpu"], max_boost_duration="forever",
                task_roles=[pb.TaskRole(name="r", command_regex="x")]))),
             "policy.dra.max_boost_duration", None),
            ("UpsertPolicy", None, "request", b"\xff\xff\xff\xff"),
            ("UpsertPolicy", None, "request", b"\x0a" + b"\xff" * 8 + b"\x01"),
            ("DeletePolicy", pb.DeletePolicyRequest(name="base"), "kind", None),
            ("DeletePolicy", pb.DeletePolicyRequest(kind=pb.NODE_SCHEDULING_POLICY), "name", None),
            ("DeletePolicy", pb.DeletePolicyRequest(kind=pb.NODE_SCHEDULING_POLICY, name="base", generation=-1),
             "generation", None),
            ("UpsertClaimBinding", pb.UpsertClaimBindingRequest(), "bindings", None),
            ("UpsertClaimBinding", pb.UpsertClaimBindingRequest(bindings=[pb.ClaimDeviceBinding(
                claim_uid="c2", claim_generation=1, driver="d", pool="p", device="x", cpus="0-zz")]),
             "bindings[0].cpus", None),
            ("UpsertClaimBinding", pb.UpsertClaimBindingRequest(bindings=[binding, pb.ClaimDeviceBinding(
                claim_uid="c3", claim_generation=0, driver="d", pool="p", device="x")]),
             "bindings[1].claim_generation", None),
            ("UpsertClaimBinding", pb.UpsertClaimBindingRequest(bindings=[pb.ClaimDeviceBinding(
                claim_uid="c4", claim_generation=1, driver="d", pool=big, device="x")]),
             "bindings[0].pool", None),
            # Claim generation unchanged but content changed: refused by the core (INV-3).
            ("UpsertClaimBinding", pb.UpsertClaimBindingRequest(bindings=[pb.ClaimDeviceBinding(
                claim_uid="claim-1", claim_generation=1, pod_uid="pod-1", node_name="c2c-test-node",
                driver="gpu.example.com", pool="p0", device="gpu-9")]),
             "bindings[0].claim_generation", None),
            ("UpsertClaimBinding", pb.UpsertClaimBindingRequest(bindings=[binding], pods=[
                pb.PodInfo(uid="pod-1", cgroup="relative")]), "pods[0].cgroup", None),
            # The proto's field path, not the core's ("pods[0].taskRoles", issue 42).
            ("UpsertClaimBinding", pb.UpsertClaimBindingRequest(bindings=[binding], pods=[
                pb.PodInfo(uid="pod-1", task_roles={"a b": "^x$"})]), "pods[0].task_roles", None),
            ("UpsertClaimBinding", pb.UpsertClaimBindingRequest(bindings=[binding], pods=[
                pb.PodInfo(uid="pod-1", task_roles={"decode": "(("})]), "pods[0].task_roles[decode]", None),
            ("DeleteClaimBinding", pb.DeleteClaimBindingRequest(), "claim_uid", None),
            ("DeleteClaimBinding", pb.DeleteClaimBindingRequest(claim_uid="claim-1", claim_generation=-2),
             "claim_generation", None),
            ("Preview", pb.PreviewRequest(), "policy", None),
            ("Preview", pb.PreviewRequest(policy=node_policy("p", "[z-a]"), acknowledge=True),
             "policy.node.command_regex", None),
            ("ListIntents", pb.ListIntentsRequest(kind=7), "kind", None),
            ("ListIntents", pb.ListIntentsRequest(policy=big), "policy", None),
            ("Explain", pb.ExplainRequest(tid=0), "tid", None),
            ("ListTasks", pb.ListTasksRequest(comm_regex="(("), "comm_regex", None),
            ("Status", None, "request", b"\x08"),
            ("ListPolicies", None, "request", b"\xff"),
            ("ListBindings", None, "request", b"\x12\x05ab"),
            # Oversized: above max_message_bytes (4 MiB), below the transport limit.
            ("UpsertPolicy", pb.UpsertPolicyRequest(policy=pb.Policy(node=pb.NodeSchedulingPolicy(
                name="huge", node_names=["n" * 200] * 22000, command_regex="x"))), "request", None),
        ]
        for method, req, field, raw in cases:
            with self.subTest(method=method, field=field):
                self.assertInvalid(method, req, field, raw=raw)
                self.assertEqual(d.status().state_digest, before, "%s (%s) changed the state" % (method, field))
        # And the durable inputs are what they were.
        pols = d.call("ListPolicies", pb.ListPoliciesRequest()).policies
        self.assertEqual([p.node.command_regex for p in pols], ["^c2c-base$"])
        self.assertEqual(len(d.call("ListBindings", pb.ListBindingsRequest()).bindings), 1)


class PeerCredentials(DaemonCase):
    discovery = "off"

    def test_socket_mode_and_a_peer_not_allowed_is_refused(self):
        st = os.stat(self.d.socket)
        self.assertEqual(st.st_mode & 0o777, 0o600)
        self.assertEqual(os.stat(os.path.dirname(self.d.socket)).st_mode & 0o777, 0o700)
        # "nobody" cannot even reach the socket through the 0700 directory; open the directory up
        # so that the uid check itself (SO_PEERCRED) is what refuses it.
        os.chmod(self.d.root, 0o711)
        os.chmod(os.path.dirname(self.d.socket), 0o711)
        os.chmod(self.d.socket, 0o666)
        script = ("import grpc,sys\nch=grpc.insecure_channel('unix://%s')\n"
                  "f=ch.unary_unary('/claim2core.v1.Claim2Core/Status')\n"
                  "try:\n f(b'',timeout=3); print('ALLOWED')\n"
                  "except grpc.RpcError as e: print('REFUSED', e.code())\n" % self.d.socket)
        out = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3",
                              "-c", script], capture_output=True, text=True, timeout=30)
        self.assertIn("REFUSED", out.stdout, out.stdout + out.stderr)
        self.assertTrue(wait_for(lambda: "refused a connection" in self.d.read_log()), self.d.read_log())
        self.assertIn("from uid 65534", self.d.read_log())
        # root (in allowed_uids) still gets through.
        self.assertEqual(self.d.status().node, "c2c-test-node")


class MutualTls(HostCase):
    def test_tcp_requires_a_client_certificate_signed_by_the_ca(self):
        tmp = tempfile.mkdtemp(prefix="c2c-tls-", dir=WORK)
        def ossl(*a):
            subprocess.run(["openssl"] + list(a), check=True, capture_output=True, cwd=tmp)
        ossl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "1",
             "-subj", "/CN=c2c-test-ca")
        for who in ("server", "client"):
            ossl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", who + ".key", "-out", who + ".csr",
                 "-subj", "/CN=localhost")
            with open(os.path.join(tmp, who + ".ext"), "w") as f:
                f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
            ossl("x509", "-req", "-in", who + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                 "-out", who + ".pem", "-days", "1", "-extfile", who + ".ext")
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        d = Daemon("tls", task_discovery="off", extra="tcp:\n  address: 127.0.0.1:%d\n  cert: %s/server.pem\n"
                   "  key: %s/server.key\n  client_ca: %s/ca.pem\n" % (port, tmp, tmp, tmp))
        try:
            d.start()
            def read(n):
                with open(os.path.join(tmp, n), "rb") as f:
                    return f.read()
            opts = (("grpc.ssl_target_name_override", "localhost"),)
            good = grpc.secure_channel("127.0.0.1:%d" % port, grpc.ssl_channel_credentials(
                read("ca.pem"), read("client.key"), read("client.pem")), opts)
            st = good.unary_unary(SERVICE + "Status", response_deserializer=pb.StatusResponse.FromString)(b"", timeout=10)
            self.assertEqual(st.node, "c2c-test-node")
            nocert = grpc.secure_channel("127.0.0.1:%d" % port, grpc.ssl_channel_credentials(read("ca.pem")), opts)
            with self.assertRaises(grpc.RpcError) as cm:
                nocert.unary_unary(SERVICE + "Status")(b"", timeout=5)
            self.assertEqual(cm.exception.code(), grpc.StatusCode.UNAVAILABLE)
            plain = grpc.insecure_channel("127.0.0.1:%d" % port)
            with self.assertRaises(grpc.RpcError):
                plain.unary_unary(SERVICE + "Status")(b"", timeout=5)
        finally:
            d.cleanup()
            shutil.rmtree(tmp, ignore_errors=True)

    def test_tcp_without_tls_material_is_refused_at_startup(self):
        d = Daemon("tlsbad", task_discovery="off", extra="tcp:\n  address: 127.0.0.1:1\n")
        try:
            with self.assertRaises(RuntimeError) as cm:
                d.start(timeout=10)
            self.assertIn("tcp.cert", str(cm.exception))
        finally:
            d.cleanup()


class PolicyToMap(DaemonCase):
    def test_policy_reaches_the_pinned_map_and_explain_preview_intents_agree(self):
        t = Threads("c2c-it-match", 2)
        try:
            d = self.d
            pol = node_policy("it-match", "^c2c-it-match$")
            pv = wait_for(lambda: (lambda r: r if len(r.matched) == 2 else None)(
                d.call("Preview", pb.PreviewRequest(policy=pol))))
            self.assertEqual(sorted(m.tid for m in pv.matched), sorted(t.tids))
            self.assertEqual({m.comm for m in pv.matched}, {b"c2c-it-match"})  # names are bytes (spec/daemon.md)
            self.assertTrue(all(m.tgid == t.tgid and m.HasField("intended") and not m.HasField("actual")
                                for m in pv.matched))
            r = d.call("UpsertPolicy", pb.UpsertPolicyRequest(policy=pol))
            # Written, not yet read back: SENT in the reply; APPLIED once the read-back pass saw both.
            self.assertEqual(r.intent.state, pb.SENT, r)
            self.assertEqual(r.intent.matched_tasks, 2)
            self.assertIn("not yet read back", r.intent.reason)
            self.assertTrue(wait_applied(d, "it-match"), "the intent reaches APPLIED after the read-back")
            entries = d.map_entries()
            for tid in t.tids:
                self.assertIn(tid, entries)
                self.assertEqual(entries[tid][0], t.start_of(tid))
            ex = d.call("Explain", pb.ExplainRequest(tid=t.tids[0]))
            self.assertTrue(ex.found)
            self.assertEqual(ex.lineage.policy, "it-match")
            self.assertEqual(ex.lineage.entry.slice_ns, 2_000_000)
            self.assertEqual(ex.lineage.entry.generation, entries[t.tids[0]][1])
            st = d.status()
            self.assertFalse(st.scheduler_enforcing)
            self.assertIn("no scheduler enforces", st.scheduler_message)
            # The threads end: their entries leave the map.
            t.end()
            self.assertTrue(wait_for(lambda: not (set(t.tids) & set(d.map_entries()))), "entries of exited threads stayed")
            # A new matching thread gets an entry without any RPC.
            t2 = Threads("c2c-it-match", 1)
            self.assertTrue(wait_for(lambda: t2.tids[0] in d.map_entries(), timeout=5))
            t2.end()
            d.call("DeletePolicy", pb.DeletePolicyRequest(kind=pb.NODE_SCHEDULING_POLICY, name="it-match"))
            self.assertEqual(len(d.call("ListIntents", pb.ListIntentsRequest()).intents), 0)
        finally:
            if t.proc.poll() is None:
                t.end()

    def test_require_preview_keeps_a_dra_policy_pending_until_acknowledged(self):
        d = self.d
        pol = pb.Policy(dra=pb.DRAExecutionPolicy(name="needs-preview", resource_claims=["gpu"], require_preview=True,
                                                  task_roles=[pb.TaskRole(name="r", command_regex="^x$",
                                                                          execution_class="latency-critical")]))
        r = d.call("UpsertPolicy", pb.UpsertPolicyRequest(policy=pol))
        self.assertEqual(r.intent.state, pb.PENDING)
        self.assertIn("requirePreview", r.intent.reason)
        pol.dra.generation = r.policy_generation
        pv = d.call("Preview", pb.PreviewRequest(policy=pol, acknowledge=True))
        self.assertTrue(pv.acknowledged)
        # Live now; with no pod it has nothing to write: PENDING, saying that instead of the preview.
        intents = wait_for(lambda: [i for i in d.call("ListIntents", pb.ListIntentsRequest(policy="needs-preview")).intents
                                    if "requirePreview" not in i.reason])
        self.assertTrue(intents)
        self.assertEqual(intents[0].state, pb.PENDING)
        self.assertEqual(intents[0].reason, "matches no task on this node")

    def test_watch_streams_changes(self):
        d = self.d
        t = Threads("c2c-it-watched", 1)
        try:
            self.assertTrue(wait_for(lambda: d.call("Preview", pb.PreviewRequest(
                policy=node_policy("watched", "^c2c-it-watched$"))).matched), "the daemon sees the thread")
            stream = d.channel.unary_stream(SERVICE + "Watch", response_deserializer=pb.ChangeEvent.FromString)(
                pb.WatchRequest().SerializeToString(), timeout=20)
            got = []

            def reader():
                for ev in stream:
                    got.append(ev)
                    if any(i.policy == "watched" and i.state == pb.APPLIED for i in ev.intents):
                        return
            th = threading.Thread(target=reader)
            th.start()
            time.sleep(0.3)
            d.call("UpsertPolicy", pb.UpsertPolicyRequest(policy=node_policy("watched", "^c2c-it-watched$")))
            th.join(timeout=15)
            stream.cancel()
            self.assertTrue(any(ev.event_kind == "policy_upsert" for ev in got), got)
            # The transitions as they happen: SENT (written) in the upsert's change, then APPLIED
            # (read back) in a later one, never APPLIED first.
            states = [i.state for ev in got for i in ev.intents if i.policy == "watched"]
            self.assertIn(pb.SENT, states, got)
            self.assertIn(pb.APPLIED, states, got)
            self.assertLess(states.index(pb.SENT), states.index(pb.APPLIED), states)
        finally:
            t.end()


class IntentReasons(DaemonCase):
    """Issue #14 item 3: every intent says why it has fewer entries than tasks, per task where it
    applies; a node the policy does not select gets no intent."""

    def intent(self, name):
        got = self.d.call("ListIntents", pb.ListIntentsRequest(policy=name)).intents
        return got[0] if got else None

    def test_each_reason_is_named(self):
        d = self.d
        t = Threads("c2c-it-reason", 2)
        try:
            self.assertTrue(wait_for(lambda: len(d.call("Preview", pb.PreviewRequest(
                policy=node_policy("probe", "^c2c-it-reason$"))).matched) == 2), "the daemon sees both threads")
            # Matches no task: PENDING (nothing in the map), not "Applied, 0 tasks".
            r = d.call("UpsertPolicy", pb.UpsertPolicyRequest(policy=node_policy("r-none", "^c2c-it-nothing$")))
            self.assertEqual((r.intent.state, r.intent.reason), (pb.PENDING, "matches no task on this node"), r)

            # Another node's policy: no intent here; the reply and the preview say why.
            other = node_policy("r-other", "^c2c-it-reason$", node="another-node")
            r = d.call("UpsertPolicy", pb.UpsertPolicyRequest(policy=other))
            self.assertFalse(r.HasField("intent"), r)
            self.assertTrue(any(w.startswith("node not selected: ") for w in r.warnings), r.warnings)
            self.assertIsNone(self.intent("r-other"))
            pv = d.call("Preview", pb.PreviewRequest(policy=other))
            self.assertTrue(any("node not selected: nodeNames does not name this node" in w for w in pv.warnings), pv.warnings)
            self.assertFalse(set(t.tids) & set(d.map_entries()), "another node's policy wrote entries here")

            # Lost the conflict: the higher priority takes both threads; the loser names it, per tid.
            d.call("UpsertPolicy", pb.UpsertPolicyRequest(policy=node_policy("r-high", "^c2c-it-reason$", priority=9)))
            r = d.call("UpsertPolicy", pb.UpsertPolicyRequest(policy=node_policy("r-low", "^c2c-it-reason$", priority=1)))
            want = "lost the conflict to NodeSchedulingPolicy/r-high (higher-priority) on tids %s" % ", ".join(
                str(x) for x in sorted(t.tids))
            self.assertEqual((r.intent.state, r.intent.reason), (pb.PENDING, want), r)
            self.assertTrue(wait_applied(d, "r-high"))
            self.assertEqual(self.intent("r-low").state, pb.PENDING, "a lost conflict is never APPLIED")
            # The winner leaves: the loser's entries are written, then read back.
            d.call("DeletePolicy", pb.DeletePolicyRequest(kind=pb.NODE_SCHEDULING_POLICY, name="r-high"))
            self.assertTrue(wait_applied(d, "r-low"), self.intent("r-low"))
            self.assertEqual(self.intent("r-low").matched_tasks, 2)
            self.assertNotIn("lost the conflict", self.intent("r-low").reason)
        finally:
            t.end()

    def test_stale_claim_fails_closed_and_says_which_claim(self):
        d = self.d
        # A pod whose claim "gpu" is allocated, but for another pod: stale for this one (INV-1).
        binding = pb.ClaimDeviceBinding(claim_uid="claim-of-another-pod", claim_generation=1, pod_uid="pod-other",
                                        node_name="c2c-test-node", driver="gpu.example.com", pool="p0",
                                        device="gpu-0", request="gpu")
        pod = pb.PodInfo(uid="pod-stale", namespace="ml", name="decode-0", labels={"app": "decode"},
                         claims={"gpu": "claim-of-another-pod"}, cgroup="/c2c-it-no-such-cgroup")
        d.call("UpsertClaimBinding", pb.UpsertClaimBindingRequest(bindings=[binding], pods=[pod]))
        pol = pb.Policy(dra=pb.DRAExecutionPolicy(
            name="r-stale", match_labels={"app": "decode"}, resource_claims=["gpu"], fail_closed_on_stale_claim=True,
            task_roles=[pb.TaskRole(name="decode", command_regex="^decode$", execution_class="latency-critical")]))
        r = d.call("UpsertPolicy", pb.UpsertPolicyRequest(policy=pol))
        self.assertEqual(r.intent.state, pb.PENDING, r)
        self.assertTrue(r.intent.reason.startswith("claim claim-of-another-pod stale (fail closed)"), r.intent.reason)


class PodCgroup:
    """A pod cgroup in the v1 cpuset hierarchy (cpuset 0) with a helper holding `count` threads
    named `comm` inside it from birth; `name` is its path under the hierarchy root."""

    ROOT = "/sys/fs/cgroup/cpuset"

    def __init__(self, tag, comm, count=2):
        self.tag, self.comm, self.count = tag, comm, count

    def __enter__(self):
        self.name = "c2c-it-%s-%d" % (self.tag, os.getpid())
        self.path = os.path.join(self.ROOT, self.name)
        os.mkdir(self.path)
        self.proc = None
        try:
            for f, v in (("cpuset.cpus", "0"), ("cpuset.mems", "0")):
                with open(os.path.join(self.path, f), "w") as fh:
                    fh.write(v)
            self.proc = subprocess.Popen(["sh", "-c", "echo $$ > %s/cgroup.procs && exec %s hold %s %d"
                                          % (self.path, CHURN, self.comm, self.count)],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            self.tids = [int(w) for w in self.proc.stdout.readline().split()[2:]]
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        if self.proc:
            if self.proc.poll() is None:
                self.proc.stdin.write("\n")
                self.proc.stdin.close()
                self.proc.wait(timeout=10)
            self.proc.stdout.close()
        for _ in range(50):
            try:
                os.rmdir(self.path)
                break
            except OSError:
                time.sleep(0.1)


def need_cpuset_v1(case):
    if not os.path.isdir(PodCgroup.ROOT):
        case.skipTest("needs the v1 cpuset hierarchy at %s to make a pod cgroup" % PodCgroup.ROOT)


class DraPolicy(DaemonCase):
    def test_claim_binding_pod_and_dra_policy_reach_the_map_and_deallocation_removes_them(self):
        need_cpuset_v1(self)
        d = self.d
        with PodCgroup("pod", "c2c-dra") as pod_cg:
            tids = pod_cg.tids
            binding = pb.ClaimDeviceBinding(claim_uid="claim-gpu", claim_generation=1, pod_uid="pod-a",
                                            node_name="c2c-test-node", driver="gpu.example.com", pool="p0",
                                            device="gpu-0", numa_nodes=[0], request="gpu")
            pod = pb.PodInfo(uid="pod-a", namespace="ml", name="vllm-0", labels={"app": "vllm"},
                             claims={"gpu": "claim-gpu"}, cgroup="/" + pod_cg.name)
            d.call("UpsertClaimBinding", pb.UpsertClaimBindingRequest(bindings=[binding], pods=[pod]))
            lb = d.call("ListBindings", pb.ListBindingsRequest())
            self.assertEqual([b.claim_uid for b in lb.bindings], ["claim-gpu"])
            pol = pb.Policy(dra=pb.DRAExecutionPolicy(
                name="vllm-decode", match_labels={"app": "vllm"}, resource_claims=["gpu"],
                respect_allocated_cpuset=True,
                task_roles=[pb.TaskRole(name="engine", command_regex="^c2c-dra$", execution_class="latency-critical")]))
            r = d.call("UpsertPolicy", pb.UpsertPolicyRequest(policy=pol))
            self.assertEqual(r.intent.state, pb.SENT, r)
            self.assertEqual(r.intent.matched_tasks, 2, r)
            self.assertTrue(wait_applied(d, "vllm-decode"), "the intent reaches APPLIED after the read-back")
            entries = d.map_entries()
            for tid in tids:
                self.assertIn(tid, entries)
            ex = d.call("Explain", pb.ExplainRequest(tid=tids[0]))
            self.assertEqual([(c.uid, c.generation) for c in ex.lineage.claims], [("claim-gpu", 1)])
            self.assertEqual(ex.lineage.pod_uid, "pod-a")
            self.assertEqual(ex.lineage.role, "engine")
            self.assertEqual(ex.lineage.entry.allowed_cpus, "0", "INV-6: the pod cgroup's cpuset bounds the entry")
            # INV-1: the claim goes away, so do its entries.
            d.call("DeleteClaimBinding", pb.DeleteClaimBindingRequest(claim_uid="claim-gpu"))
            self.assertTrue(wait_for(lambda: not (set(tids) & set(d.map_entries()))), "INV-1: entries outlived the claim")
            self.assertFalse(d.call("Explain", pb.ExplainRequest(tid=tids[0])).found)


class DriftAndMetrics(HostCase):
    def test_an_injected_entry_is_drift_removed_and_counted(self):
        port = free_port()
        d = Daemon("drift", task_discovery="off", extra="metrics:\n  address: 127.0.0.1:%d\n" % port)
        try:
            d.start()
            d.call("UpsertPolicy", pb.UpsertPolicyRequest(policy=node_policy("m", "^nothing$")))
            # An entry nobody derived (tid 4000000): a valid value for this ABI, written by hand.
            value = ((1).to_bytes(8, "little") + (1).to_bytes(8, "little") + bytes(24) + bytes(64) +
                     (1).to_bytes(4, "little") + (1).to_bytes(2, "little") + bytes([5, 0]))
            hexs = lambda b: [hex(x) for x in b]
            subprocess.run(["bpftool", "map", "update", "pinned", d.pin + "/c2c_policy", "key"] +
                           hexs((4000000).to_bytes(4, "little")) + ["value"] + hexs(value), check=True)
            self.assertIn(4000000, d.map_entries())
            # The read-back (readback_interval: 1s) sees it, and the plan removes it (INV-5).
            self.assertTrue(wait_for(lambda: 4000000 not in d.map_entries(), timeout=10), "unexplained entry stayed")
            metrics = scrape_metrics(port)
            self.assertGreaterEqual(metrics["claim2core_reconcile_drift_total"], 1)
            self.assertEqual(metrics['claim2core_rpcs_total{code="OK",method="UpsertPolicy"}'], 1)
            self.assertGreaterEqual(metrics["claim2core_apply_seconds_count"], 1)
            # It matches nothing (no task discovery): PENDING, not APPLIED.
            self.assertEqual(metrics['claim2core_intents{state="PENDING"}'], 1)
            self.assertEqual(metrics['claim2core_intents{state="APPLIED"}'], 0)
            self.assertIn('claim2core_invariant_violations_total{invariant="INV-5"}', metrics)
        finally:
            d.cleanup()


    def test_under_thread_churn_the_short_read_back_reads_only_the_written_keys(self):
        # A matching thread every ~50 ms: each write leaves the intent SENT, and a short read-back
        # follows 100 ms later. It reads the keys written (one lookup each); the whole map is read
        # only by the full pass (readback_interval: 1s). Before, every short pass read the whole
        # map: ~10 per second of churn instead of ~1.
        port = free_port()
        d = Daemon("rbkeys", extra="metrics:\n  address: 127.0.0.1:%d\n" % port)
        try:
            d.start()
            d.call("UpsertPolicy", pb.UpsertPolicyRequest(policy=node_policy("rb", "^c2c-rb-")))
            before = scrape_metrics(port)
            t0 = time.monotonic()
            churn = subprocess.run([CHURN, "churn", "c2c-rb-", "60", "3", "4"], capture_output=True, text=True,
                                   timeout=60)
            self.assertEqual(churn.returncode, 0, churn.stderr)
            time.sleep(0.3)  # the last short pass
            elapsed = time.monotonic() - t0
            after = scrape_metrics(port)
            key = lambda read: 'claim2core_readback_passes_total{read="%s"}' % read
            keys = after.get(key("written_keys"), 0) - before.get(key("written_keys"), 0)
            whole = after[key("whole_map")] - before.get(key("whole_map"), 0)
            self.assertLessEqual(whole, elapsed / 1.0 + 2, "whole-map reads during %.1f s of churn" % elapsed)
            self.assertGreaterEqual(keys, 3, "short passes during %.1f s of churn" % elapsed)
            # Each periodic full pass reports how long it held the loop; a small map's takes far
            # less than the 1 % pacing bound's 1s / 99 (full_pass_pacing.hpp).
            took = after.get('claim2core_full_pass_seconds{pass="readback"}')
            self.assertIsNotNone(took, "no full read-back reported in %.1f s" % elapsed)
            self.assertLess(took, 1.0 / 99)
        finally:
            d.cleanup()


class LeaseRenewalWave(HostCase):
    def test_leases_due_together_are_renewed_in_batches_and_none_runs_out(self):
        # 2,500 threads boosted by one node policy get their leases in one turn, so all reach
        # half-life together (node.default_max_boost 4s: a wave every 2 s). The daemon renews at
        # most 512 a turn (spec/daemon.md, "Lease renewals in batches"), so a wave takes at
        # least five turns, and no lease in the map runs out meanwhile (INV-8).
        n, per_turn = 2500, 512
        port = free_port()
        d = Daemon("lwave", extra="metrics:\n  address: 127.0.0.1:%d\nnode:\n  default_max_boost: 4s\n" % port)
        threads = None
        try:
            d.start()
            threads = Threads("c2c-lwave", n)
            d.call("UpsertPolicy", pb.UpsertPolicyRequest(policy=node_policy("lw", "^c2c-lwave$")))
            self.assertTrue(wait_for(lambda: len(set(threads.tids) & set(d.map_entries())) == n, timeout=30),
                            "the policy's entries did not all reach the map")
            renewals, batches = "claim2core_lease_renewals_total", "claim2core_lease_renewal_batches_total"
            before = scrape_metrics(port)
            time.sleep(4.5)  # two waves
            after = scrape_metrics(port)
            renewed = after[renewals] - before[renewals]
            turns = after[batches] - before[batches]
            self.assertGreaterEqual(renewed, 2 * n, "leases renewed in 4.5 s")
            self.assertGreaterEqual(turns, 2 * 5, "turns that renewed leases in two waves of %d" % n)
            self.assertLessEqual(renewed, per_turn * turns, "a turn renewed more than %d leases" % per_turn)
            now = time.clock_gettime_ns(time.CLOCK_BOOTTIME)
            untils = d.map_boost_untils()
            lapsed = [t for t in threads.tids if untils.get(t, 0) <= now]
            self.assertEqual(lapsed, [], "leases in the map that ran out")
            self.assertTrue(all(untils[t] - now <= 4_000_000_000 for t in threads.tids), "a lease past maxBoost")
            self.assertEqual(after['claim2core_invariant_violations_total{invariant="INV-8"}'], 0)
        finally:
            if threads:
                threads.end()
            d.cleanup()


class LeaseAhead(HostCase):
    def test_calls_across_lease_windows_never_copy_the_state(self):
        # Each UpsertPolicy moves the generation; the durable lease covers 1,024 at a time. A
        # batch that cannot be sure its generations are covered copies the whole state first
        # (O(state): tens of ms at 100k tasks). The daemon keeps the lease 256 generations ahead at
        # the end of each turn (Engine::keep_lease_ahead), so calls across several windows copy
        # nothing; before, the calls in the last 64 generations of every window did (~6 %).
        port = free_port()
        d = Daemon("ahead", extra="metrics:\n  address: 127.0.0.1:%d\n" % port)
        thread = None
        try:
            d.start()
            thread = Threads("c2c-ahead")
            first = d.status().node_generation
            # Each call gives the thread's entry another slice: one generation a call at least.
            for g in range(1, 1301):
                d.call("UpsertPolicy", pb.UpsertPolicyRequest(
                    policy=node_policy("ahead", "^c2c-ahead$", slice_ns=1_000_000 + 1000 * (g % 2))))
            used = d.status().node_generation - first
            self.assertGreaterEqual(used, 1300, "generations the calls used")
            self.assertEqual(scrape_metrics(port)["claim2core_batch_undo_copies_total"], 0,
                             "calls that copied the state across %d generations" % used)
        finally:
            if thread:
                thread.end()
            d.cleanup()


class TaskEventStorms(HostCase):
    def test_a_fork_storm_is_read_on_the_clock_and_a_lone_thread_after_it_at_once(self):
        # In a storm of task events the ring buffer is read every task_event_poll_interval with
        # the kernel's wake-ups off (src/daemon/loop/task_event_pacing.hpp); the first read that finds
        # nothing turns them back on. With readback_interval 30s (and the rescan at 30s) the
        # timer reads nothing meanwhile, so a lone matching thread after the storm reaches the
        # map within seconds only if its record woke the loop: wake-ups left off would keep it
        # out until the next full pass.
        port = free_port()
        d = Daemon("storm", extra="metrics:\n  address: 127.0.0.1:%d\n" % port, readback="30s")
        try:
            d.start()
            d.call("UpsertPolicy", pb.UpsertPolicyRequest(policy=node_policy("storm", "^c2c-storm-")))
            storms = "claim2core_task_event_storms_total"
            before = scrape_metrics(port).get(storms, 0)
            # 300 threads at once (a fork and a rename each), then 1,000 short processes one after
            # the other (a fork, an exec and an exit each).
            burst = Threads("c2c-burst", 300)
            burst.end()
            subprocess.run(["sh", "-c", "i=0; while [ $i -lt 1000 ]; do /bin/true; i=$((i+1)); done"], check=True,
                           timeout=300)
            self.assertGreaterEqual(scrape_metrics(port).get(storms, 0) - before, 1,
                                    "no storm seen in ~4,000 task events:\n" + d.read_log()[-2000:])
            time.sleep(0.5)  # the storm's last poll found nothing; its settle read has passed
            for i in range(3):
                t = Threads("c2c-storm-%d" % i, 1)
                try:
                    self.assertTrue(wait_for(lambda: t.tids[0] in d.map_entries(), timeout=5, step=0.05),
                                    "thread %d after the storm: no entry within 5 s (wake-ups left off?)" % i)
                finally:
                    t.end()
                time.sleep(0.2)
        finally:
            d.cleanup()


def thread_policies(pid):
    """(comm, policy, priority) of every thread of process `pid`."""
    out = []
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
            comm = f.read().strip()
        out.append((comm, os.sched_getscheduler(int(tid)), os.sched_getparam(int(tid)).sched_priority))
    return out


class RealtimeCase(HostCase):
    """realtime_priority (src/daemon/loop/realtime_priority.hpp): the loop and gRPC threads SCHED_FIFO at
    the configured priority, or time-shared with the reason logged when the kernel refuses."""

    def started(self, tag, priority, prefix=()):
        port = free_port()
        extra = "metrics:\n  address: 127.0.0.1:%d\n" % port
        if priority is not None:
            extra += "realtime_priority: %d\n" % priority
        d = Daemon(tag, extra=extra)
        self.addCleanup(d.cleanup)
        d.start(prefix=prefix)
        t = Threads("c2c-rt-%s" % tag, 1)
        self.addCleanup(t.end)
        # A write through the loop: the gRPC server and the loop have made their threads by then.
        d.call("UpsertPolicy", pb.UpsertPolicyRequest(policy=node_policy("rt", "^c2c-rt-")))
        self.assertTrue(wait_for(lambda: t.tids[0] in d.map_entries(), timeout=10), d.read_log()[-2000:])
        return d, port


class RealtimePriority(RealtimeCase):
    def fifo_allowed(self):
        return subprocess.run(["chrt", "-f", "1", "true"], capture_output=True).returncode == 0

    def test_every_thread_runs_fifo_at_the_configured_priority(self):
        if not self.fifo_allowed():
            self.skipTest("SCHED_FIFO is not permitted here (no CAP_SYS_NICE, or no real-time run time in this cgroup)")
        d, port = self.started("rt", 3)
        threads = thread_policies(d.proc.pid)
        self.assertGreaterEqual(len(threads), 5, threads)  # main, loop, gRPC, metrics at least
        # The metrics endpoint's threads (civetweb) start before the priority and stay
        # time-shared; every other thread runs at it.
        metrics = [t for t in threads if t[0].startswith("civetweb")]
        self.assertTrue(metrics, threads)
        self.assertEqual([t for t in metrics if t[1] != os.SCHED_OTHER], [], "metrics threads at real-time priority")
        self.assertEqual([t for t in threads if t not in metrics and t[1:] != (os.SCHED_FIFO, 3)], [],
                         "threads not at SCHED_FIFO 3: made before the priority was set, or during startup?")
        self.assertEqual(scrape_metrics(port).get("claim2core_realtime_priority"), 3)
        self.assertIn("SCHED_FIFO 3", d.read_log())

    def test_by_default_every_thread_is_time_shared(self):
        d, port = self.started("ts", None)
        threads = thread_policies(d.proc.pid)
        self.assertEqual([t for t in threads if t[1] != os.SCHED_OTHER], [], threads)
        self.assertEqual(scrape_metrics(port).get("claim2core_realtime_priority"), 0)


class RealtimeRefused(RealtimeCase):
    """Its own ctest entry: it skips where the kernel cannot refuse this way (cgroup v2 only)."""

    def test_a_refusal_is_logged_and_the_daemon_runs_time_shared(self):
        # A kernel with CONFIG_RT_GROUP_SCHED refuses SCHED_FIFO in a cgroup whose
        # cpu.rt_runtime_us is 0 (a new child's default, and what a container runtime leaves).
        base = "/sys/fs/cgroup/cpu"
        if not os.path.exists(os.path.join(base, "cpu.rt_runtime_us")):
            self.skipTest("no cgroup v1 cpu controller with CONFIG_RT_GROUP_SCHED here")
        group = os.path.join(base, "c2c-test-rt-%d" % os.getpid())
        try:
            os.mkdir(group)
        except OSError as e:
            self.skipTest("cannot make a cpu cgroup here: %s" % e)

        def remove_group():
            for _ in range(100):  # the daemon's threads leave the group when it has exited
                try:
                    os.rmdir(group)
                    return
                except OSError:
                    time.sleep(0.05)
        self.addCleanup(remove_group)
        with open(os.path.join(group, "cpu.rt_runtime_us")) as f:
            self.assertEqual(f.read().strip(), "0")
        prefix = ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', group]
        d, port = self.started("rtno", 2, prefix=prefix)
        self.assertEqual([t for t in thread_policies(d.proc.pid) if t[1] != os.SCHED_OTHER], [])
        self.assertEqual(scrape_metrics(port).get("claim2core_realtime_priority"), 0)
        log = d.read_log()
        self.assertIn("realtime_priority: SCHED_FIFO 2 refused", log)
        self.assertIn("cpu.rt_runtime_us", log)
        d.stop()


class Restart(DaemonCase):
    def test_kill9_keeps_intents_and_generation_and_the_map_converges(self):
        d = self.d
        t = Threads("c2c-it-kill", 3)
        try:
            for i in range(5):
                d.call("UpsertPolicy", pb.UpsertPolicyRequest(policy=node_policy("keep-%d" % i, "^c2c-it-kill$",
                                                                                  priority=i + 1)))
            d.call("UpsertPolicy", pb.UpsertPolicyRequest(policy=node_policy("gone", "^c2c-it-kill$", priority=50)))
            d.call("DeletePolicy", pb.DeletePolicyRequest(kind=pb.NODE_SCHEDULING_POLICY, name="gone"))
            intents_before = sorted((i.policy, i.policy_generation, i.state)
                                    for i in d.call("ListIntents", pb.ListIntentsRequest()).intents)
            gen_before = d.status().node_generation
            entries_before = d.map_entries()
            for tid in t.tids:
                self.assertIn(tid, entries_before)
            d.kill9()
            # While it is down, one thread ends: its entry is stale and must be pruned (INV-7).
            stale_tid = t.tids[0]
            d.start()
            st = d.status()
            self.assertGreater(st.node_generation, gen_before, "INV-4: the generation went back")
            intents_after = sorted((i.policy, i.policy_generation, i.state)
                                   for i in d.call("ListIntents", pb.ListIntentsRequest()).intents)
            self.assertEqual(intents_after, intents_before)
            # A deleted policy stays deleted, and its generation cannot be reused (tombstone).
            r = d.call("UpsertPolicy", pb.UpsertPolicyRequest(policy=node_policy("gone", "^c2c-it-kill$",
                                                                                  generation=1, priority=50)))
            self.assertTrue(r.ignored, r)
            t.end()
            self.assertTrue(wait_for(lambda: not (set(t.tids) & set(d.map_entries()))),
                            "stale entries stayed after restart: %s" % d.map_entries())
            self.assertNotIn(stale_tid, d.map_entries())
        finally:
            if t.proc.poll() is None:
                t.end()

    def test_sigterm_drains_and_sighup_reloads(self):
        d = self.d
        d.call("UpsertPolicy", pb.UpsertPolicyRequest(policy=node_policy("drained", "^c2c-drain$")))
        # A bad config on SIGHUP is refused, naming the field; the daemon keeps running.
        with open(d.config, "a") as f:
            f.write("rescan_interval: soon\n")
        d.proc.send_signal(signal.SIGHUP)
        self.assertTrue(wait_for(lambda: "rescan_interval" in d.read_log() and "refused" in d.read_log()))
        self.assertEqual(d.status().policies, 1)
        d.write_config(extra="watch_queue: 64\n")
        d.proc.send_signal(signal.SIGHUP)
        self.assertTrue(wait_for(lambda: "configuration reloaded" in d.read_log()))
        gen = d.status().node_generation
        self.assertEqual(d.stop(signal.SIGTERM), 0)
        self.assertIn("drained", d.read_log())
        self.assertTrue(os.path.exists(d.pin + "/c2c_policy"), "pinned maps must stay after SIGTERM")
        d.start()
        self.assertGreater(d.status().node_generation, gen)
        self.assertEqual([p.node.name for p in d.call("ListPolicies", pb.ListPoliciesRequest()).policies], ["drained"])


class Load(DaemonCase):
    def test_1000_updates_per_second_while_threads_churn(self):
        seconds = float(os.environ.get("C2C_LOAD_SECONDS", "5"))
        d = self.d
        acked = {}
        errors = []
        churn = subprocess.Popen([CHURN, "churn", "c2c-load-", "10000", str(seconds), "200"],
                                 stdout=subprocess.PIPE, text=True)
        rss = []
        stop = threading.Event()

        def sample():
            while not stop.is_set():
                rss.append(d.rss_kib())
                time.sleep(0.25)
        sampler = threading.Thread(target=sample)
        sampler.start()
        # One pipelined client: 1,000 updates/s spread over 1,000 policies, at most one update of a
        # policy in flight (so each policy's generations arrive in order), replies counted as they
        # come back. Every reply waited for the durable write and the map apply of its batch.
        policies = ["load-%d" % i for i in range(1000)]
        ch = grpc.insecure_channel("unix://" + d.socket)
        fn = ch.unary_unary(SERVICE + "UpsertPolicy", request_serializer=lambda r: r.SerializeToString(),
                            response_deserializer=pb.UpsertPolicyResponse.FromString)
        gen = {p: 0 for p in policies}
        inflight = {}
        latencies = []
        lock = threading.Lock()

        def done(p, g, k, prio, sent_at, fut):
            with lock:
                inflight.pop(p, None)
                try:
                    r = fut.result()
                    latencies.append(time.time() - sent_at)
                    if r.ignored:
                        errors.append("ignored %s@%d" % (p, g))
                    acked[p] = (g, k, prio)
                except grpc.RpcError as e:
                    errors.append("%s@%d: %s" % (p, g, e.details()))
        t0 = time.time()
        n = sent = 0
        while time.time() - t0 < seconds:
            due = t0 + sent / 1000.0
            now = time.time()
            if due > now:
                time.sleep(due - now)
            p = policies[n % len(policies)]
            n += 1
            with lock:
                if p in inflight:
                    continue
                gen[p] += 1
                g, k, prio = gen[p], n % 100, 1 + n % 900
                inflight[p] = True
            fut = fn.future(pb.UpsertPolicyRequest(policy=node_policy(p, "^c2c-load-%d$" % k, generation=g,
                                                                      priority=prio)), timeout=30)
            fut.add_done_callback(lambda f, p=p, g=g, k=k, prio=prio, at=time.time(): done(p, g, k, prio, at, f))
            sent += 1
        while True:
            with lock:
                if not inflight:
                    break
            time.sleep(0.01)
        elapsed = time.time() - t0
        ch.close()
        counts = [len(latencies)]
        churn_out = churn.communicate(timeout=120)[0]
        stop.set()
        sampler.join()
        total = sum(counts)
        self.assertEqual(errors, [])
        # No update lost: the daemon's policies are exactly the last acknowledged ones.
        pols = {p.node.name: p.node for p in d.call("ListPolicies", pb.ListPoliciesRequest()).policies}
        for p, (g, k, prio) in acked.items():
            self.assertEqual(pols[p].generation, g, p)
            self.assertEqual(pols[p].command_regex, "^c2c-load-%d$" % k, p)
            self.assertEqual(pols[p].priority, prio, p)
        # ... and they survive a kill -9.
        d.kill9()
        d.start()
        pols = {p.node.name: p.node.generation for p in d.call("ListPolicies", pb.ListPoliciesRequest()).policies}
        self.assertEqual(pols, {p: g for p, (g, _, _) in acked.items()})
        self.assertIn("done 10000", churn_out)
        rate = total / elapsed
        offered = sent / seconds
        latencies.sort()
        sys.stderr.write("load: %d updates sent in %.0f s (%.0f/s offered), %d acknowledged in %.1f s (%.0f/s), reply latency p50 %.1f ms p99 %.1f ms, "
                         "while 10000 threads came and went; daemon RSS KiB first/max/last %d/%d/%d\n"
                         % (sent, seconds, offered, total, elapsed, rate, latencies[len(latencies) // 2] * 1e3,
                            latencies[int(len(latencies) * 0.99)] * 1e3, rss[0], max(rss), rss[-1]))
        # The client paces 1,000/s; it skips a slot only when all 1,000 policies have an update in
        # flight (the daemon is behind). Every update sent was acknowledged (no error above).
        self.assertEqual(total, sent)
        self.assertGreater(offered, 900, "the daemon could not keep up with 1,000 updates/s")
        # Memory bounded: the churn must not grow the daemon without limit.
        self.assertLess(max(rss), rss[0] + 200 * 1024, "RSS grew by more than 200 MiB")


class KernelState(HostCase):
    """Kernel state that vanishes under the daemon or lingers across its restart (spec/daemon.md,
    "Kernel state that vanishes or lingers")."""

    def setUp(self):
        super().setUp()
        self.port = free_port()
        self.d = Daemon(self.id().split(".")[-1][:12], extra="metrics:\n  address: 127.0.0.1:%d\n" % self.port)
        self.d.start()
        self.t = Threads("c2c-it-pins", 2)

    def tearDown(self):
        if self.t.proc.poll() is None:
            self.t.end()
        sys.stderr.write("--- daemon log (tail) ---\n" + "\n".join(self.d.read_log().splitlines()[-15:]) + "\n")
        self.d.cleanup()

    def map_or_none(self):
        try:
            return self.d.map_entries()
        except subprocess.CalledProcessError:
            return None  # the pin is not there (yet)

    def check_restored(self, remove):
        d = self.d
        d.call("UpsertPolicy", pb.UpsertPolicyRequest(policy=node_policy("pins", "^c2c-it-pins$")))
        self.assertTrue(wait_for(lambda: set(self.t.tids) <= set(d.map_entries())), d.map_entries())
        before = d.map_entries()
        remove()
        self.assertIsNone(self.map_or_none())
        # readback_interval: 1s; generous for a loaded machine.
        self.assertTrue(wait_for(lambda: self.map_or_none() == before, timeout=20),
                        "pinned map not restored with its entries: %s" % self.map_or_none())
        for name in ("c2c_policy", "c2c_stats", "c2c_events", "c2c_meta"):
            self.assertTrue(os.path.exists(os.path.join(d.pin, name)), name)
        st = wait_for(lambda: (lambda s: s if s.pins_restored >= 1 else None)(d.status()), timeout=5)
        self.assertTrue(st, "Status.pins_restored stayed 0")
        self.assertIn("c2c_policy", st.pin_repair)
        self.assertEqual(st.desired_entries, st.actual_entries)
        self.assertGreaterEqual(scrape_metrics(self.port)["claim2core_pins_restored_total"], 1)
        self.assertIn("re-pinned", d.read_log())
        # Still the daemon's map: a later change reaches it.
        d.call("DeletePolicy", pb.DeletePolicyRequest(kind=pb.NODE_SCHEDULING_POLICY, name="pins"))
        self.assertTrue(wait_for(lambda: not (set(self.t.tids) & set(d.map_entries()))), d.map_entries())

    def test_a_deleted_policy_pin_is_restored_with_its_entries(self):
        self.check_restored(lambda: os.unlink(os.path.join(self.d.pin, "c2c_policy")))

    def test_a_deleted_pin_root_is_restored_with_its_entries(self):
        self.check_restored(lambda: shutil.rmtree(self.d.pin))

    def test_threads_that_died_while_the_daemon_was_down_leave_no_entry(self):
        d = self.d
        d.call("UpsertPolicy", pb.UpsertPolicyRequest(policy=node_policy("dead", "^c2c-it-dead$")))
        # Stopped, the daemon reads nothing: the forks and renames of these threads stay in the
        # pinned ring buffer. Killed, its tracepoints go: their exits are never recorded.
        d.proc.send_signal(signal.SIGSTOP)
        dead = Threads("c2c-it-dead", 3)
        time.sleep(0.2)
        d.kill9()
        dead.end()
        for tid in dead.tids:
            self.assertFalse(os.path.exists("/proc/%d" % tid))
        d.start()
        # The restart must not resurrect them from the stale records (1 s: the spec's bound).
        time.sleep(1.0)
        self.assertFalse(set(dead.tids) & set(d.map_entries()),
                         "entries for threads that died while the daemon was down: %s" % d.map_entries())
        self.assertEqual(d.status().desired_entries, 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
