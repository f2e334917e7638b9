#!/usr/bin/python3
"""claim2core-rest under attack, from the same host (issue 42), against a real claim2cored
(private socket, state directory, pin root and port; loopback only, bounded load):

* a ~200 KB body nested 100,000 deep (it segfaulted the gateway, read-only token included) is a
  400 naming the depth limit, and the gateway still answers;
* a key given twice is a 400 naming the key, raw invalid UTF-8 a 400 naming the byte (it was a
  500), and neither changes the state;
* a PUT that changes nothing answers 200 with the first reply's body (it was a 409), twice;
* 16 connections dripping header bytes from the client's own address, 127.0.0.1
  (--max-connections-per-client 4): each new connection takes the place of the oldest one still
  waiting for its head (429), the last ones get 408 at the head deadline (2 s); 16 from 16
  addresses: each held until the head deadline and answered 408; meanwhile the client is served
  within 3 s every time; a client whose 4 connections all have a request in hand (event streams)
  is refused a fifth at once (429);
* GET /api/v1/tasks calls the daemon's Preview no more (it made one Preview call per policy);
* a FIFO as the token file is refused at once, naming --token-file (it hung the start);
* GET /metrics needs a token and counts every refusal above by reason.

Exit 77 (ctest skip) without root or bpffs.

usage: rest_adversarial_test.py CLAIM2CORED CLAIM2CORE_REST FAKE_VLLM
"""
import http.client
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request

from c2c_it import require_bpf
from rest_env import NODE, TOKENS, RestEnv, free_port

DAEMON, REST, FAKE = sys.argv[1:4]
require_bpf("BPF maps, bpffs pins")

POL = "/api/v1/node-scheduling-policies"
HEADER_TIMEOUT_S = 2.0
PER_CLIENT = 4
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)
    return ok


daemon_metrics_port = free_port()
env = RestEnv(DAEMON, REST, FAKE, tag="rest-adv",
              gateway_args=["--header-timeout-ms", str(int(HEADER_TIMEOUT_S * 1000)), "--body-timeout-ms", "3000",
                            "--max-connections-per-client", str(PER_CLIENT), "--max-connections", "40",
                            "--worker-threads", "44", "--max-json-depth", "32"],
              daemon_args=["--metrics-address", f"127.0.0.1:{daemon_metrics_port}"])


def body(**kw):
    b = {"nodeNames": [NODE], "commandRegex": "^EngineCore(_DP[0-9]+)?$", "priority": 1, "executionTime": 2000000}
    b.update(kw)
    return b


def own_policies():
    s, b, _ = env.request("GET", POL + "/self")
    return b["data"]["policies"] if s == 200 else None


def metric(text, name, **labels):
    want = ",".join(f'{k}="{v}"' for k, v in labels.items())
    m = re.search(r"^" + re.escape(name) + r"\{" + re.escape(want) + r"\} (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


def daemon_rpcs(method=None):
    """The daemon's RPCs of one method (all methods when None), from its claim2core_rpcs_total."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{daemon_metrics_port}/metrics", timeout=10).read().decode()
    which = r'[^}]*method="' + method + r'"[^}]*' if method else r'[^}]*'
    return sum(float(v) for v in re.findall(r'^claim2core_rpcs_total\{' + which + r'\} (\S+)$', text, re.M))


def drip(source, out, stop):
    """One slow client: a request line, then a header a byte every 0.25 s, never the blank line."""
    s = socket.socket()
    s.settimeout(8)
    try:
        s.bind((source, 0))
        s.connect(("127.0.0.1", env.port))
        s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nX-Drip: ")
        t0 = time.time()
        s.setblocking(False)
        got = b""
        while not stop.is_set() and time.time() - t0 < 6:
            try:
                chunk = s.recv(4096)
                if not chunk:
                    break
                got += chunk
            except BlockingIOError:
                pass
            except OSError:
                break
            try:
                s.send(b"a")
            except OSError:
                break
            time.sleep(0.25)
        out.append((source, got, time.time() - t0))
    except OSError as e:
        out.append((source, f"error {e}".encode(), 0.0))
    finally:
        s.close()


def attack(sources, label):
    stop, out = threading.Event(), []
    threads = [threading.Thread(target=drip, args=(src, out, stop)) for src in sources]
    for t in threads:
        t.start()
    time.sleep(0.5)
    # A client from another address, several times while the drips hold their connections.
    served = []
    t_end = time.time() + HEADER_TIMEOUT_S - 0.6
    while time.time() < t_end:
        t0 = time.time()
        try:
            c = http.client.HTTPConnection("127.0.0.1", env.port, timeout=3)
            c.request("GET", "/version")
            served.append((c.getresponse().status, time.time() - t0))
            c.close()
        except OSError as e:
            served.append((str(e), time.time() - t0))
        time.sleep(0.2)
    for t in threads:
        t.join(10)
    stop.set()
    check(served and all(s == 200 and dt < 3 for s, dt in served),
          f"{label}: another client is served within 3 s every time ({len(served)} requests, "
          f"slowest {max(dt for _, dt in served):.3f} s)")
    return out


try:
    env.start()

    # ---- the deep body ------------------------------------------------------------------------
    deep = '{"nodeNames":' + "[" * 100000 + "]" * 100000 + "}"
    try:
        s, b, _ = env.request("POST", "/api/v1/preview", token="reader", raw=deep)
        check(s == 400 and "deeper than 32" in b["error"] and "--max-json-depth" in b["error"],
              f"a body nested 100,000 deep ({len(deep)} bytes, read-only token): 400 naming the limit: {s} {b}")
    except (OSError, http.client.HTTPException) as e:
        check(False, f"a body nested 100,000 deep: no reply ({e!r}); gateway exit {env.gateway.poll()}")
    check(env.gateway.poll() is None and env.request("GET", "/health")[0] == 200, "the gateway still answers")

    # ---- duplicate keys, invalid UTF-8 ----------------------------------------------------------
    before = own_policies()
    raw = '{"nodeNames": ["%s"], "commandRegex": "^EngineCore_DP0$", "priority": 1, "priority": 999}' % NODE
    s, b, _ = env.request("POST", POL, raw=raw)
    check(s == 400 and b.get("field") == "priority" and "given twice" in b["error"],
          f"a key given twice: 400 naming it: {s} {b}")
    bad = ('{"nodeNames": ["%s"], "commandRegex": "^Engine\xff$"}' % NODE).encode("latin-1")
    s, b, _ = env.request("POST", POL, raw=bad)
    at = bad.index(b"\xff")
    check(s == 400 and "UTF-8" in b["error"] and f"byte {at} " in b["error"],
          f"raw invalid UTF-8: 400 naming the byte ({at}): {s} {b}")
    check(own_policies() == before, "neither refusal changed the state")

    # ---- idempotent PUT -------------------------------------------------------------------------
    s, b, _ = env.request("POST", POL, body=body())
    pid = b["data"]["id"] if s == 200 else None
    replies = [env.request("PUT", POL, body=body(policyId=pid)) for _ in range(3)]
    firsts = [(s, b["data"]["id"], b["data"]["generation"], b["data"]["warnings"], b["data"]["intent"]["policyGeneration"])
              for s, b, _ in replies if s == 200]
    check(len(firsts) == 3 and len(set(map(str, firsts))) == 1,
          f"a PUT that changes nothing, three times: 200 with the same body each time: {[r[:2] for r in replies]}")
    s, b, _ = env.request("PUT", POL, body=body(policyId=pid, priority=2))
    check(s == 200 and b["data"]["generation"] == firsts[0][2] + 1 if firsts else False,
          f"a PUT that changes something: the next generation: {s}")

    # ---- one RPC per POST (issue 44): the node's name comes with the upsert's reply ---------------
    for what, path, b_, want in (
            ("a POST naming this node", POL, body(commandRegex="^one_rpc$"), 200),
            ("a POST naming another node", POL, body(nodeNames=["some-other-node"]), 404),
            ("a preview naming this node", "/api/v1/preview", body(commandRegex="^one_rpc$"), 200),
            ("a preview naming another node", "/api/v1/preview", body(nodeNames=["some-other-node"]), 404)):
        n0, st0 = daemon_rpcs(), daemon_rpcs("Status")
        s, b, _ = env.request("POST", path, body=b_)
        n = daemon_rpcs() - n0
        check(s == want and n == 1 and daemon_rpcs("Status") == st0,
              f"{what}: {want} after {n:.0f} RPC(s) to the daemon (1 wanted, no Status): {s} {b}")
    check(not [p for p in own_policies() if p["nodeNames"] == ["some-other-node"]],
          "the POST naming another node stored nothing")

    # ---- GET /api/v1/tasks: no Preview per policy -----------------------------------------------
    for i in range(5):
        env.request("POST", POL, body=body(commandRegex=f"^nothing{i}$"))
    previews, held = daemon_rpcs("Preview"), []
    deadline = time.time() + 15  # "applied" comes from the daemon's read-back of the pinned map (slower under load)
    while time.time() < deadline:
        s, b, _ = env.request("GET", "/api/v1/tasks")
        # (other processes on the host may run threads with these names too: ours only)
        held = [t for t in b["data"]["tasks"] if t["policyId"] == pid and t["tid"] in env.engines] if s == 200 else []
        if held and all(t["applied"] for t in held):
            break
        time.sleep(0.2)
    check(sorted(t["tid"] for t in held) == env.engines and all(t["applied"] for t in held),
          f"GET tasks: our EngineCore threads are held by the policy, in the map: {held}")
    check(daemon_rpcs("Preview") == previews,
          f"GET tasks with 7 policies called Preview {daemon_rpcs('Preview') - previews:.0f} times (0 wanted)")

    # ---- slow clients -------------------------------------------------------------------------
    # From the client's own address (on loopback every local client is 127.0.0.1): over the
    # per-address limit, a new connection takes the place of the oldest one still waiting for its
    # head, so the drips never lock the honest client out.
    out = attack(["127.0.0.1"] * 16, "16 dripping connections from 127.0.0.1, the client's own address")
    evicted = [o for o in out if o[1].startswith(b"HTTP/1.1 429") and b"--max-connections-per-client" in o[1]
               or o[1].startswith(b"error") or o[1] == b""]
    timed_out = [o for o in out if o[1].startswith(b"HTTP/1.1 408")]
    check(len(evicted) >= 16 - PER_CLIENT and len(evicted) + len(timed_out) == 16
          and all(HEADER_TIMEOUT_S - 0.3 < dt < HEADER_TIMEOUT_S + 1.5 for _, _, dt in timed_out),
          f"over --max-connections-per-client {PER_CLIENT}: the oldest drips made room (429 or closed: "
          f"{len(evicted)}), the others 408 after the {HEADER_TIMEOUT_S} s head deadline "
          f"({sorted(round(dt, 2) for _, _, dt in timed_out)})")
    # A client whose connections all have a request in hand (event streams) is refused one more.
    streams = []
    for _ in range(PER_CLIENT):
        s = socket.create_connection(("127.0.0.1", env.port), source_address=("127.0.0.3", 0))
        s.sendall(b"GET /api/v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKENS["reader"][0].encode()
                  + b"\r\n\r\n")
        s.settimeout(5)
        streams.append((s, s.recv(4096)))
    t0 = time.time()
    c = http.client.HTTPConnection("127.0.0.1", env.port, timeout=5, source_address=("127.0.0.3", 0))
    try:
        c.request("GET", "/version")
        r = c.getresponse()
        status, text = r.status, r.read().decode()
    except (OSError, http.client.HTTPException) as e:
        status, text = None, repr(e)
    check(all(first.startswith(b"HTTP/1.1 200") for _, first in streams) and status == 429
          and "--max-connections-per-client" in text and time.time() - t0 < 1.0,
          f"{PER_CLIENT} event streams from 127.0.0.3, then one more connection: 429 at once ({status} {text[:120]})")
    for s, _ in streams:
        s.close()
    out = attack([f"127.0.0.{10 + i}" for i in range(16)], "16 dripping connections from 16 addresses")
    timed_out = [o for o in out if o[1].startswith(b"HTTP/1.1 408") and b"--header-timeout-ms" in o[1]]
    check(len(timed_out) == 16, f"each answered 408 naming --header-timeout-ms ({len(timed_out)} of 16)")

    # ---- FIFO token file ----------------------------------------------------------------------
    fifo = os.path.join(env.work, "tokens.fifo")
    os.mkfifo(fifo, 0o600)
    p = subprocess.Popen([REST, "--socket", env.sock, "--port", str(free_port()), "--token-file", fifo],
                         stderr=subprocess.PIPE, text=True)
    try:
        _, err = p.communicate(timeout=5)
        check(p.returncode == 2 and "FIFO" in err and "--token-file" in err,
              f"a FIFO token file: refused at once naming the flag: {err.strip()}")
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        check(False, "a FIFO token file: the gateway still waits after 5 s")

    # ---- metrics --------------------------------------------------------------------------------
    s, _, _ = env.request("GET", "/metrics", token=None)
    check(s == 401, f"GET /metrics without a token: 401 ({s})")
    c = http.client.HTTPConnection("127.0.0.1", env.port, timeout=10)
    c.request("GET", "/metrics", headers={"Authorization": "Bearer " + TOKENS["reader"][0]})
    r = c.getresponse()
    text = r.read().decode()
    c.close()
    counts = {k: metric(text, "claim2core_rest_refusals_total", reason=k)
              for k in ("body-depth", "body-duplicate-key", "body-utf8", "connections-per-client", "header-deadline", "auth")}
    check(r.status == 200 and counts["body-depth"] == 1 and counts["body-duplicate-key"] == 1 and counts["body-utf8"] == 1
          and counts["connections-per-client"] >= 16 - PER_CLIENT + 1 and counts["header-deadline"] >= 16
          and counts["auth"] >= 1,
          f"GET /metrics (read token): refusals by reason {counts}")
    check(metric(text, "claim2core_rest_limit", limit="max_connections_per_client") == PER_CLIENT,
          "GET /metrics: the configured limits")
finally:
    env.stop()

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
