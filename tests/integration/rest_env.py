"""A private claim2cored, the fake vLLM and claim2core-rest for the REST tests, the browser test
and bench/rest_gateway_bench.py: private socket, state directory, pin root and port, so a running
daemon or gateway is never touched. Tokens: "admin" (every permission), "reader" (read only),
"bob" (every permission, another subject)."""
import http.client
import json
import os
import socket
import ssl
import subprocess
import tempfile
import time

from c2c_it import stop_processes

NODE = "dgx-spark-gb10"  # the seed's node name, so its curl example applies as is
TOKENS = {
    "admin": ("admin-token-0123456789abcdef", "alice", "*"),
    "reader": ("reader-token-0123456789abcdef", "alice",
               "node_scheduling_policy.read,node_scheduling_intent.read"),
    "bob": ("bob-token-0123456789abcdef01", "bob", "*"),
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_token_file(path, mode=0o600):
    with open(path, "w") as f:
        f.write("# <token> <subject> <permissions>\n")
        for tok, subject, perms in TOKENS.values():
            f.write(f"{tok} {subject} {perms}\n")
    os.chmod(path, mode)


def gateway_on(rest_bin, daemon_socket, work_dir):
    """A claim2core-rest in front of a daemon some other test started (its socket), with this
    module's tokens: returns (the process, get), where get(path) GETs as "reader" and gives
    (status, body bytes), or None while the gateway does not answer yet. The caller stops the
    process."""
    tokens = os.path.join(work_dir, "tokens")
    write_token_file(tokens)
    port = free_port()
    proc = subprocess.Popen([rest_bin, "--socket", daemon_socket, "--token-file", tokens, "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def get(path):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            c.request("GET", path, headers={"Authorization": "Bearer " + TOKENS["reader"][0]})
            r = c.getresponse()
            return r.status, r.read()
        except OSError:
            return None
        finally:
            c.close()
    return proc, get


class RestEnv:
    def __init__(self, daemon, rest, fake, tag="rest", daemon_args=(), gateway_args=(), tls=False):
        self.daemon_bin, self.rest_bin, self.fake_bin = daemon, rest, fake
        self.tls = tls  # serve HTTPS with a throwaway certificate for 127.0.0.1 (self.tls_context trusts it)
        self.tls_context = None
        self.daemon_args = list(daemon_args)  # more claim2cored flags (e.g. --role-socket)
        self.gateway_args = list(gateway_args)  # more claim2core-rest flags (its limits)
        self.work = tempfile.mkdtemp(prefix=f"c2c-{tag}-")
        self.sock = os.path.join(self.work, "claim2cored.sock")
        self.pin_root = f"/sys/fs/bpf/c2c-{tag}-{os.getpid()}"
        self.token_file = os.path.join(self.work, "tokens")
        self.port = free_port()
        self.procs = []
        self.threads = {}

    def start(self):
        vllm = subprocess.Popen([self.fake_bin, "--seconds", "600"], stdout=subprocess.PIPE, text=True)
        self.procs.append(vllm)
        for line in vllm.stdout:
            if line.strip() == "ready":
                break
            tid, comm = line.split()
            self.threads[comm] = int(tid)
        self.engines = sorted(self.threads[c] for c in ("EngineCore_DP0", "EngineCore_DP1"))
        log = open(os.path.join(self.work, "daemon.log"), "w")
        self.procs.append(subprocess.Popen(
            [self.daemon_bin, "--node-name", NODE, "--socket", self.sock, "--state-dir",
             os.path.join(self.work, "state"), "--pin-root", self.pin_root, "--task-discovery", "scan",
             "--config", "/dev/null", *self.daemon_args], stdout=log, stderr=subprocess.STDOUT))
        write_token_file(self.token_file)
        if self.tls:
            cert, key = os.path.join(self.work, "cert.pem"), os.path.join(self.work, "key.pem")
            subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                            "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost",
                            "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
            self.tls_context = ssl.create_default_context(cafile=cert)
            self.gateway_args += ["--tls-cert", cert, "--tls-key", key]
        self.gateway = self.start_gateway(*self.gateway_args)
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                if self.request("GET", "/health")[0] == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError("claim2core-rest or claim2cored did not come up; see " + self.work)

    def start_gateway(self, *extra, port=None):
        log = open(os.path.join(self.work, "rest.log"), "a")
        p = subprocess.Popen([self.rest_bin, "--socket", self.sock, "--token-file", self.token_file,
                              "--port", str(port or self.port), *extra], stdout=log, stderr=subprocess.STDOUT)
        self.procs.append(p)
        return p

    def request(self, method, path, body=None, token="admin", headers=None, raw=None):
        """(status, parsed JSON or None, response headers)"""
        c = self.connection(timeout=30)
        h = dict(headers or {})
        if token:
            h["Authorization"] = "Bearer " + TOKENS[token][0]
        data = raw if raw is not None else (None if body is None else json.dumps(body))
        if data is not None:
            h.setdefault("Content-Type", "application/json")
        c.request(method, path, body=data, headers=h)
        r = c.getresponse()
        text = r.read()
        c.close()
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        return r.status, parsed, {k.lower(): v for k, v in r.getheaders()}

    def connection(self, timeout=10, source=None):
        """An http.client connection to the gateway (HTTPS when self.tls), from `source` if given."""
        src = (source, 0) if source else None
        if self.tls:
            return http.client.HTTPSConnection("127.0.0.1", self.port, timeout=timeout, source_address=src,
                                               context=self.tls_context)
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout, source_address=src)

    def raw_socket(self, source=None, timeout=8):
        """A connected socket to the gateway (TLS handshake done when self.tls), from `source` if given."""
        s = socket.create_connection(("127.0.0.1", self.port), timeout=timeout,
                                     source_address=(source, 0) if source else None)
        if self.tls:
            s = self.tls_context.wrap_socket(s, server_hostname="127.0.0.1")
        return s

    def stop(self):
        stop_processes(self.procs, self.pin_root, self.work)
