#!/usr/bin/python3
"""claim2core --server HOST:PORT against claim2cored's TCP listener, which is mutual TLS only:
a client certificate signed by the daemon's client CA works (-o json parses); one from another
CA is refused (exit 1, the gRPC status); missing TLS files are a usage error naming the flag
(exit 2, nothing sent). Exit 77 (ctest skip) without root, bpffs or openssl.

usage: cli_mtls_test.py CLAIM2CORE CLAIM2CORED
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from c2c_it import require_bpf, stop_processes

CLI, DAEMON = sys.argv[1:3]
require_bpf("the daemon pins BPF maps")
if not shutil.which("openssl"):
    print("SKIP: openssl is not installed")
    sys.exit(77)

work = tempfile.mkdtemp(prefix="c2c-cli-tls-")
pin_root = f"/sys/fs/bpf/c2c-cli-tls-{os.getpid()}"
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def ossl(*a):
    subprocess.run(["openssl", *a], check=True, capture_output=True, cwd=work)


def make_ca(name):
    ossl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "1",
         "-subj", f"/CN={name}")


def make_cert(who, ca):
    ossl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{who}.key", "-out", f"{who}.csr", "-subj", "/CN=localhost")
    with open(os.path.join(work, f"{who}.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    ossl("x509", "-req", "-in", f"{who}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key", "-CAcreateserial",
         "-out", f"{who}.pem", "-days", "1", "-extfile", f"{who}.ext")


daemon = None
try:
    make_ca("ca")
    make_ca("other-ca")
    make_cert("server", "ca")
    make_cert("client", "ca")
    make_cert("stranger", "other-ca")
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    cfg = os.path.join(work, "claim2cored.yaml")
    with open(cfg, "w") as f:
        f.write(f"tcp:\n  address: 127.0.0.1:{port}\n  cert: {work}/server.pem\n  key: {work}/server.key\n"
                f"  client_ca: {work}/ca.pem\n")
    log = open(os.path.join(work, "daemon.log"), "w")
    daemon = subprocess.Popen([DAEMON, "--config", cfg, "--node-name", "tls-node", "--socket", f"{work}/d.sock",
                               "--state-dir", f"{work}/state", "--pin-root", pin_root, "--task-discovery", "off"],
                              stdout=log, stderr=subprocess.STDOUT)

    def tcp(*args, cert="client"):
        return subprocess.run([CLI, *args, "--server", f"127.0.0.1:{port}", "--cacert", f"{work}/ca.pem",
                               "--cert", f"{work}/{cert}.pem", "--key", f"{work}/{cert}.key",
                               "--tls-server-name", "localhost", "--timeout", "5"],
                              capture_output=True, text=True, timeout=60)

    deadline = time.time() + 20
    while time.time() < deadline and tcp("status").returncode != 0:
        time.sleep(0.3)
    r = tcp("status", "-o", "json")
    check(r.returncode == 0 and json.loads(r.stdout)["node"] == "tls-node",
          f"status over mutual TLS: exit {r.returncode} {r.stderr.strip()[:200]}")
    r = tcp("get", "policies", "-o", "yaml")
    check(r.returncode == 0, "get policies over mutual TLS")
    r = tcp("status", cert="stranger")
    check(r.returncode == 1 and "UNAVAILABLE" in r.stderr,
          f"a client certificate from another CA is refused: exit {r.returncode} {r.stderr.strip()[:200]}")
    r = subprocess.run([CLI, "status", "--server", f"127.0.0.1:{port}"], capture_output=True, text=True)
    check(r.returncode == 2 and "--cacert: required with --server" in r.stderr,
          f"--server without TLS files: exit {r.returncode} {r.stderr.strip()}")
finally:
    stop_processes([daemon], pin_root, work)

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
