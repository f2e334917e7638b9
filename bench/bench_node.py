"""What the Python benches share (rest_gateway_bench.py, rest_tasks_bench.py, doors_under_attack.py):
a private node to measure (claim2cored with the fake vLLM, and claim2core-rest in front of it), one
percentile rule, the load average, and the gRPC messages generated from spec/claim2core.proto.

The node is private: its own socket, state directory, pin root, token file and port, so a daemon or
gateway already running on this host is never touched, and everything is removed by stop(). The
benches measure; the tests' harness (tests/integration/rest_env.py) stays the tests' own."""
import http.client
import importlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NODE = "dgx-spark-gb10"  # the seed's node name
# name -> (token, subject, permissions)
TOKENS = {
    "admin": ("bench-admin-token-0123456789abcdef", "alice", "*"),
    "reader": ("bench-reader-token-0123456789abcdef", "alice",
               "node_scheduling_policy.read,node_scheduling_intent.read"),
}


def pct(xs, q):
    """The q-quantile (0 < q < 1) of xs by nearest rank (the value below which a fraction q of the
    samples fall); nan for no samples. Every bench's percentiles are this one rule."""
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * q))] if xs else float("nan")


def loadavg():
    """The 1, 5 and 15 minute load averages, as /proc/loadavg prints them."""
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def require_root_and_bpffs(why):
    """Exits 77 (ctest's skip) when this is not root or bpffs cannot be mounted."""
    if os.geteuid() != 0:
        print(f"SKIP: needs root ({why})")
        sys.exit(77)
    if subprocess.run(["mountpoint", "-q", "/sys/fs/bpf"]).returncode != 0 and \
            subprocess.run(["mount", "-t", "bpf", "bpf", "/sys/fs/bpf"]).returncode != 0:
        print("SKIP: bpffs is not mounted and cannot be mounted")
        sys.exit(77)


def proto_messages(prefix="c2c-bench-pb-"):
    """The module protoc generates from spec/claim2core.proto (claim2core_pb2), imported from a
    temporary directory that is then removed."""
    gen = tempfile.mkdtemp(prefix=prefix)
    subprocess.run(["protoc", f"--proto_path={SRC}/spec", f"--python_out={gen}", f"{SRC}/spec/claim2core.proto"],
                   check=True)
    sys.path.insert(0, gen)
    try:
        return importlib.import_module("claim2core_pb2")
    finally:  # imported: the generated file is no longer read
        sys.path.remove(gen)
        shutil.rmtree(gen, ignore_errors=True)


class BenchNode:
    """A private claim2cored (pinned maps under its own pin root, tasks found by scanning /proc)
    beside the fake vLLM, and claim2core-rest in front of it on a free port."""

    def __init__(self, build, tag="bench", daemon_args=(), gateway_args=()):
        self.daemon_bin = os.path.join(build, "src", "daemon", "claim2cored")
        self.rest_bin = os.path.join(build, "src", "rest", "claim2core-rest")
        self.fake_bin = os.path.join(build, "src", "cli", "c2c-fake-vllm")
        self.daemon_args, self.gateway_args = list(daemon_args), list(gateway_args)
        self.work = tempfile.mkdtemp(prefix=f"c2c-{tag}-")
        self.sock = os.path.join(self.work, "claim2cored.sock")
        self.pin_root = f"/sys/fs/bpf/c2c-{tag}-{os.getpid()}"
        self.token_file = os.path.join(self.work, "tokens")
        self.port = free_port()
        self.procs = []
        self.daemon = None

    def start(self):
        fake = subprocess.Popen([self.fake_bin, "--seconds", "600"], stdout=subprocess.PIPE, text=True)
        self.procs.append(fake)
        for line in fake.stdout:  # "<tid> <comm>" per thread, then "ready"
            if line.strip() == "ready":
                break
        with open(os.path.join(self.work, "daemon.log"), "w") as log:
            self.daemon = subprocess.Popen(
                [self.daemon_bin, "--node-name", NODE, "--socket", self.sock, "--state-dir",
                 os.path.join(self.work, "state"), "--pin-root", self.pin_root, "--task-discovery", "scan",
                 "--config", "/dev/null", *self.daemon_args], stdout=log, stderr=subprocess.STDOUT)
        self.procs.append(self.daemon)
        with open(self.token_file, "w") as f:
            for token, subject, perms in TOKENS.values():
                f.write(f"{token} {subject} {perms}\n")
        os.chmod(self.token_file, 0o600)
        self.start_gateway(port=self.port)
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                if self.request("GET", "/health")[0] == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError("claim2core-rest or claim2cored did not come up; see " + self.work)

    def start_gateway(self, binary=None, port=None):
        """A claim2core-rest on port (another build's, e.g., to measure beside this one); returns
        the port once GET /version answers (30 s at most)."""
        port = port or free_port()
        with open(os.path.join(self.work, f"rest-{port}.log"), "w") as log:
            self.procs.append(subprocess.Popen(
                [binary or self.rest_bin, "--socket", self.sock, "--token-file", self.token_file, "--port", str(port),
                 *self.gateway_args], stdout=log, stderr=subprocess.STDOUT))
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                c.request("GET", "/version")
                if c.getresponse().status == 200:
                    return port
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"{binary or self.rest_bin} did not come up on port {port}; see {self.work}")

    def request(self, method, path, body=None, token="admin"):
        """(status, parsed JSON or None)"""
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        headers = {"Authorization": "Bearer " + TOKENS[token][0]}
        data = None if body is None else json.dumps(body)
        if data is not None:
            headers["Content-Type"] = "application/json"
        c.request(method, path, body=data, headers=headers)
        r = c.getresponse()
        text = r.read()
        c.close()
        try:
            return r.status, json.loads(text)
        except ValueError:
            return r.status, None

    def stop(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        shutil.rmtree(self.pin_root, ignore_errors=True)
        shutil.rmtree(self.work, ignore_errors=True)
