#!/usr/bin/python3
"""An envtest-like real Kubernetes control plane for the `realk8s` tests: etcd and kube-apiserver
built from their Go modules (tools/k8s-apiserver/build.sh), on loopback only, everything under one
private temporary directory that is removed at the end.

* etcd: client and peer URLs on free 127.0.0.1 ports, --unsafe-no-fsync (a test store).
* kube-apiserver: --bind-address 127.0.0.1, a serving certificate for 127.0.0.1 signed by a
  throw-away CA (openssl), --authorization-mode RBAC, service-account tokens signed by a
  throw-away key (the TokenRequest API works without a controller manager), an admin bearer token
  (static token file, group system:masters), an audit log of every request (Metadata level), so a
  test can see what its client actually asked for.
* Two kubeconfigs: `admin` (system:masters) and `daemon`: the claim2cored service account's token,
  from the TokenRequest API after deploy/kubernetes/base/{namespace,rbac}.yaml were applied, so
  the daemon's requests are authorized by exactly the manifests' RBAC.

Python: `with RealCluster(src_dir) as c: c.kubectl(...); c.request(...)`.
Other languages (the C++ tests): `k8s_real_apiserver.py serve SOURCE_DIR [APISERVER FLAG...]` prints one JSON line
{"server", "ca_file", "admin_kubeconfig", "daemon_kubeconfig", "admin_token", "daemon_token",
"etcd", "dir", "audit_log"} once ready, then reads commands, one per line on stdin, and answers each
with one JSON line: `restart` (the API server only; etcd keeps the data), `compact` (etcd
compaction at its current revision: {"revision": N}), `revision`. EOF or SIGTERM: stop, clean up.
Exit 77 when the binaries are not built (build them with tools/k8s-apiserver/build.sh).
"""
import atexit
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ADMIN_TOKEN = "c2c-realk8s-admin"
SA_NAMESPACE, SA_NAME = "claim2core", "claim2cored"


def binaries(src):
    """The cached bin directory of tools/k8s-apiserver/build.sh, or None when not built."""
    build = os.path.join(src, "tools", "k8s-apiserver", "build.sh")
    d = subprocess.run([build, "--print-dir"], capture_output=True, text=True, check=True).stdout.strip()
    return d if os.path.exists(os.path.join(d, ".done")) else None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


class RealCluster:
    def __init__(self, src, bin_dir=None, apiserver_args=()):
        self.src = src
        self.bin = bin_dir or binaries(src)
        if self.bin is None:
            raise FileNotFoundError("kube-apiserver/etcd are not built: run tools/k8s-apiserver/build.sh")
        self.extra_args = list(apiserver_args)
        self.dir = tempfile.mkdtemp(prefix="c2c-realk8s-")
        self.procs = {}
        self.kubectl_bin = os.path.join(self.bin, "kubectl")

    # ---- lifecycle ----------------------------------------------------------------------------
    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        t0 = time.monotonic()
        self._pki()
        self._start_etcd()
        self.port = free_port()
        self.server = f"https://127.0.0.1:{self.port}"
        self.start_apiserver()
        self.admin_kubeconfig = self._kubeconfig("admin", ADMIN_TOKEN)
        # The daemon's identity: the manifests' namespace, service account and RBAC, nothing else.
        base = os.path.join(self.src, "deploy", "kubernetes", "base")
        for f in ("namespace.yaml", "rbac.yaml"):
            code, out, err = self.kubectl("apply", "--server-side", "-f", os.path.join(base, f))
            if code != 0:
                raise RuntimeError(f"applying {f}: {out}{err}")
        self.daemon_token = self.token_for(SA_NAMESPACE, SA_NAME)
        self.daemon_kubeconfig = self._kubeconfig("daemon", self.daemon_token)
        self.startup_s = time.monotonic() - t0

    def stop(self):
        for name in ("apiserver", "etcd"):
            p = self.procs.pop(name, None)
            if p and p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        if os.environ.get("C2C_REALK8S_KEEP"):
            print(f"k8s_real_apiserver: kept {self.dir} (C2C_REALK8S_KEEP)", file=sys.stderr)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)

    def _pki(self):
        d = self.dir
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=c2c-realk8s-ca",
                "-keyout", "ca.key", "-out", "ca.crt", cwd=d)
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=kube-apiserver",
                "-keyout", "serving.key", "-out", "serving.csr", cwd=d)
        with open(os.path.join(d, "serving.ext"), "w") as f:
            f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
        openssl("x509", "-req", "-in", "serving.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                "-days", "1", "-extfile", "serving.ext", "-out", "serving.crt", cwd=d)
        openssl("genrsa", "-out", "sa.key", "2048", cwd=d)
        openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=d)
        with open(os.path.join(d, "tokens.csv"), "w") as f:
            f.write(f'{ADMIN_TOKEN},c2c-admin,c2c-admin-uid,"system:masters"\n')
        # Every request at Metadata level: the tests read which URLs their clients asked for.
        with open(os.path.join(d, "audit-policy.yaml"), "w") as f:
            f.write("apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\n"
                    "rules:\n- level: Metadata\n")
        self.ca_file = os.path.join(d, "ca.crt")
        self.audit_log = os.path.join(d, "audit.log")

    def _start_etcd(self):
        client, peer = free_port(), free_port()
        self.etcd = f"http://127.0.0.1:{client}"
        log = open(os.path.join(self.dir, "etcd.log"), "ab")
        self.procs["etcd"] = subprocess.Popen(
            [os.path.join(self.bin, "etcd"), "--name", "c2c", "--data-dir", os.path.join(self.dir, "etcd-data"),
             "--listen-client-urls", self.etcd, "--advertise-client-urls", self.etcd,
             "--listen-peer-urls", f"http://127.0.0.1:{peer}", "--initial-advertise-peer-urls",
             f"http://127.0.0.1:{peer}", "--initial-cluster", f"c2c=http://127.0.0.1:{peer}",
             "--unsafe-no-fsync", "--log-level", "warn", "--listen-metrics-urls", ""],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self._wait(lambda: self._etcd_call("/health", None) is not None, "etcd", 30)

    def start_apiserver(self):
        d = self.dir
        log = open(os.path.join(d, "apiserver.log"), "ab")
        args = [os.path.join(self.bin, "kube-apiserver"),
                "--etcd-servers", self.etcd, "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
                "--secure-port", str(self.port), "--cert-dir", os.path.join(d, "apiserver-certs"),
                "--tls-cert-file", os.path.join(d, "serving.crt"),
                "--tls-private-key-file", os.path.join(d, "serving.key"),
                "--client-ca-file", self.ca_file, "--token-auth-file", os.path.join(d, "tokens.csv"),
                "--authorization-mode", "RBAC",
                "--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
                "--service-account-key-file", os.path.join(d, "sa.pub"),
                "--service-account-signing-key-file", os.path.join(d, "sa.key"),
                "--service-cluster-ip-range", "10.96.0.0/24", "--allow-privileged",
                "--audit-policy-file", os.path.join(d, "audit-policy.yaml"), "--audit-log-path", self.audit_log,
                "--audit-log-mode", "blocking", "--profiling=false", *self.extra_args]
        self.procs["apiserver"] = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT,
                                                   stdin=subprocess.DEVNULL)
        self._wait(lambda: self.request("GET", "/readyz")[0] == 200, "kube-apiserver /readyz", 90)

    def restart_apiserver(self):
        p = self.procs.pop("apiserver")
        p.terminate()
        p.wait(timeout=30)
        self.start_apiserver()

    def _wait(self, ready, what, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for name, p in self.procs.items():
                if p.poll() is not None:
                    raise RuntimeError(f"{name} exited ({p.returncode}): {self.log_tail(name)}")
            try:
                if ready():
                    return
            except (OSError, ValueError):
                pass
            time.sleep(0.2)
        raise RuntimeError(f"{what} not ready after {timeout} s")

    def log_tail(self, name, lines=30):
        try:
            with open(os.path.join(self.dir, name + ".log"), errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""

    # ---- clients ------------------------------------------------------------------------------
    def _kubeconfig(self, user, token):
        path = os.path.join(self.dir, f"kubeconfig-{user}")
        with open(path, "w") as f:
            f.write(f"""apiVersion: v1
kind: Config
clusters: [{{name: realk8s, cluster: {{server: "{self.server}", certificate-authority: "{self.ca_file}"}}}}]
users: [{{name: {user}, user: {{token: "{token}"}}}}]
contexts: [{{name: {user}, context: {{cluster: realk8s, user: {user}}}}}]
current-context: {user}
""")
        return path

    def request(self, method, path, body=None, ctype="application/json", token=ADMIN_TOKEN, raw=False):
        """(status, parsed body or text) of one API request; token None = anonymous."""
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = ctype
        if token:
            headers["Authorization"] = "Bearer " + token
        req = urllib.request.Request(self.server + path, data=data, method=method, headers=headers)
        ctx = ssl.create_default_context(cafile=self.ca_file)
        try:
            with urllib.request.urlopen(req, timeout=30, context=ctx) as r:
                code, text = r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            code, text = e.code, e.read().decode()
        if raw:
            return code, text
        try:
            return code, json.loads(text)
        except ValueError:
            return code, text

    def watch(self, path, token=ADMIN_TOKEN, timeout=30):
        """A streaming GET: yields each watch event (dict) until the server ends the response."""
        headers = {"Accept": "application/json", "Authorization": "Bearer " + token}
        req = urllib.request.Request(self.server + path, headers=headers)
        ctx = ssl.create_default_context(cafile=self.ca_file)
        with urllib.request.urlopen(req, timeout=timeout, context=ctx) as r:
            for line in r:
                if line.strip():
                    yield json.loads(line)

    def kubectl(self, *args, kubeconfig=None, input=None, timeout=60):
        r = subprocess.run([self.kubectl_bin, "--kubeconfig", kubeconfig or self.admin_kubeconfig,
                            "--cache-dir", os.path.join(self.dir, "kube-cache"), *args],
                           capture_output=True, text=True, timeout=timeout, input=input)
        return r.returncode, r.stdout, r.stderr

    def token_for(self, namespace, name):
        code, out = self.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
                                 {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                  "spec": {"expirationSeconds": 3600}})
        if code != 201:
            raise RuntimeError(f"TokenRequest for {namespace}/{name}: {code} {out}")
        return out["status"]["token"]

    # ---- etcd (its JSON gateway: no etcdctl needed) -------------------------------------------
    def _etcd_call(self, path, body):
        req = urllib.request.Request(self.etcd + path, data=None if body is None else json.dumps(body).encode(),
                                     method="GET" if body is None else "POST")
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())

    def etcd_revision(self):
        return int(self._etcd_call("/v3/kv/range", {"key": "AA=="})["header"]["revision"])

    def compact(self):
        """Compact etcd's history up to its current revision (what the API server does every 5 min)."""
        rev = self.etcd_revision()
        self._etcd_call("/v3/kv/compaction", {"revision": str(rev), "physical": True})
        return rev

    def audit(self):
        """The audit log's events (dicts), oldest first."""
        out = []
        try:
            with open(self.audit_log) as f:
                for line in f:
                    try:
                        out.append(json.loads(line))
                    except ValueError:
                        pass
        except OSError:
            pass
        return out


def serve(src, apiserver_args):
    try:
        cluster = RealCluster(src, apiserver_args=apiserver_args)
    except FileNotFoundError as e:
        print(json.dumps({"error": str(e)}), flush=True)
        return 77
    atexit.register(cluster.stop)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        cluster.start()
    except (RuntimeError, subprocess.CalledProcessError) as e:
        print(json.dumps({"error": str(e), "apiserver_log": cluster.log_tail("apiserver"),
                          "etcd_log": cluster.log_tail("etcd")}), flush=True)
        return 1
    print(json.dumps({"server": cluster.server, "ca_file": cluster.ca_file, "dir": cluster.dir,
                      "admin_kubeconfig": cluster.admin_kubeconfig, "daemon_kubeconfig": cluster.daemon_kubeconfig,
                      "admin_token": ADMIN_TOKEN, "daemon_token": cluster.daemon_token, "etcd": cluster.etcd,
                      "audit_log": cluster.audit_log, "startup_s": round(cluster.startup_s, 1)}), flush=True)
    for line in sys.stdin:
        cmd = line.strip()
        try:
            if cmd == "restart":
                t0 = time.monotonic()
                cluster.restart_apiserver()
                answer = {"ok": True, "seconds": round(time.monotonic() - t0, 1)}
            elif cmd == "compact":
                answer = {"ok": True, "revision": cluster.compact()}
            elif cmd == "revision":
                answer = {"ok": True, "revision": cluster.etcd_revision()}
            else:
                answer = {"ok": False, "error": "unknown command " + cmd}
        except Exception as e:  # noqa: BLE001 -- reported to the test, which fails on it
            answer = {"ok": False, "error": str(e)}
        print(json.dumps(answer), flush=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "serve":
        sys.exit(serve(sys.argv[2], sys.argv[3:]))
    print(__doc__, file=sys.stderr)
    sys.exit(2)
