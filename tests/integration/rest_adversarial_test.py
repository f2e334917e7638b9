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
* GET /metrics needs a token and counts every refusal above by reason;
* a client that sends a request head and then drips its body is answered 408 at the body
  deadline (--body-timeout-ms), naming it;
* a request head over 16 KiB (--max-header-bytes' default) is answered 431, naming the flag;
* 64 connections waiting for their heads from 16 addresses (4 each, so no per-client limit is
  reached) fill --max-connections (64, the default): a 65th from another address is served, and
  the oldest waiting connection of anyone made room for it (503 naming --max-connections).

Parts (--part): "bodies" (the body, PUT, tasks, token-file and metrics checks), "connections"
(the slow clients, the connection limits, the body deadline, the head size), "all" (default).
With --tls the gateway serves HTTPS (a throwaway certificate) and every connection check runs over
TLS (the same connection loop bounds it, keep_alive_server.hpp), plus: a client that never starts
its TLS handshake is closed at the head deadline, plain HTTP on the TLS port is refused as a
failed handshake, and a connection over the limits is closed without a reply (nothing can be said
before a handshake). ctest runs rest.adversarial (bodies), rest.adversarial_connections and
rest.adversarial_tls (connections, plain and TLS), each < 20 s.

Exit 77 (ctest skip) without root or bpffs.

usage: rest_adversarial_test.py CLAIM2CORED CLAIM2CORE_REST FAKE_VLLM [--part bodies|connections|all] [--tls]
"""
import argparse
import http.client
import os
import re
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.request

from c2c_it import checker, require_bpf
from rest_env import NODE, TOKENS, RestEnv, free_port

ap = argparse.ArgumentParser()
ap.add_argument("daemon")
ap.add_argument("rest")
ap.add_argument("fake")
ap.add_argument("--part", choices=("bodies", "connections", "all"), default="all")
ap.add_argument("--tls", action="store_true")
args = ap.parse_args()
DAEMON, REST, FAKE, TLS = args.daemon, args.rest, args.fake, args.tls
BODIES, CONNECTIONS = args.part in ("bodies", "all"), args.part in ("connections", "all")
require_bpf("BPF maps, bpffs pins")

POL = "/api/v1/node-scheduling-policies"
HEADER_TIMEOUT_S = 2.0
BODY_TIMEOUT_S = 1.5
PER_CLIENT = 4
MAX_CONNECTIONS = 64  # the default
failures = []


check = checker(failures)


daemon_metrics_port = free_port()
env = RestEnv(DAEMON, REST, FAKE, tag="rest-adv", tls=TLS,
              gateway_args=["--header-timeout-ms", str(int(HEADER_TIMEOUT_S * 1000)),
                            "--body-timeout-ms", str(int(BODY_TIMEOUT_S * 1000)),
                            "--max-connections-per-client", str(PER_CLIENT), "--max-connections", str(MAX_CONNECTIONS),
                            "--worker-threads", str(MAX_CONNECTIONS + 4), "--max-json-depth", "32"],
              daemon_args=["--metrics-address", f"127.0.0.1:{daemon_metrics_port}"])
MODE = "over TLS" if TLS else "plain HTTP"


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


def read_all(s, stop=None, until=6.0, send=None, every=0.25):
    """What a non-blocking socket `s` (plain or TLS) receives until the peer closes it, `until`
    seconds pass or `stop` is set; `send`, when given, is sent a byte every `every` seconds
    meanwhile (a drip). Returns (bytes, seconds)."""
    t0 = time.time()
    s.setblocking(False)
    got = b""
    while (stop is None or not stop.is_set()) and time.time() - t0 < until:
        try:
            chunk = s.recv(4096)
            if not chunk:
                break
            got += chunk
            continue
        except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
            pass
        except OSError:
            break
        if send is not None:
            try:
                s.send(send)
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
                pass
            except OSError:
                break
        time.sleep(every if send is not None else 0.02)
    return got, time.time() - t0


def drip(source, out, stop):
    """One slow client: a request line, then a header a byte every 0.25 s, never the blank line."""
    s = None
    try:
        s = env.raw_socket(source)
        s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nX-Drip: ")
        got, dt = read_all(s, stop, send=b"a")
        out.append((source, got, dt))
    except OSError as e:
        out.append((source, f"error {e}".encode(), 0.0))
    finally:
        if s:
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
            c = env.connection(timeout=3)
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
          f"{label} ({MODE}): another client is served within 3 s every time ({len(served)} requests, "
          f"slowest {max(dt for _, dt in served):.3f} s)")
    return out


def bodies():
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


def slow_clients():
    # From the client's own address (on loopback every local client is 127.0.0.1): over the
    # per-address limit, a new connection takes the place of the oldest one still waiting for its
    # head, so the drips never lock the honest client out.
    out = attack(["127.0.0.1"] * 16, "16 dripping connections from 127.0.0.1, the client's own address")
    evicted = [o for o in out if o[1].startswith(b"HTTP/1.1 429") and b"--max-connections-per-client" in o[1]
               or o[1].startswith(b"error") or o[1] == b""]
    timed_out = [o for o in out if o[1].startswith(b"HTTP/1.1 408")]
    check(len(evicted) >= 16 - PER_CLIENT and len(evicted) + len(timed_out) == 16
          and all(HEADER_TIMEOUT_S - 0.3 < dt < HEADER_TIMEOUT_S + 1.5 for _, _, dt in timed_out),
          f"over --max-connections-per-client {PER_CLIENT} ({MODE}): the oldest drips made room (429 or closed: "
          f"{len(evicted)}: {sum(o[1].startswith(b'HTTP/1.1 429') for o in evicted)} answered 429), the others 408 "
          f"after the {HEADER_TIMEOUT_S} s head deadline ({sorted(round(dt, 2) for _, _, dt in timed_out)})")
    # A client whose connections all have a request in hand (event streams) is refused one more.
    streams = []
    for _ in range(PER_CLIENT):
        s = env.raw_socket("127.0.0.3", timeout=5)
        s.sendall(b"GET /api/v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKENS["reader"][0].encode()
                  + b"\r\n\r\n")
        streams.append((s, s.recv(4096)))
    t0 = time.time()
    if TLS:
        # Nothing can be said before a handshake: the connection is closed at once, without one.
        try:
            s = env.raw_socket("127.0.0.3", timeout=5)
            s.close()
            status, text = "handshake done", ""
        except (OSError, ssl.SSLError) as e:
            status, text = None, repr(e)
        check(all(first.startswith(b"HTTP/1.1 200") for _, first in streams) and status is None
              and time.time() - t0 < 1.0,
              f"{PER_CLIENT} event streams from 127.0.0.3 over TLS, then one more connection: closed at once, "
              f"no handshake ({status} {text[:120]})")
    else:
        c = env.connection(timeout=5, source="127.0.0.3")
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
    check(len(timed_out) == 16, f"each answered 408 naming --header-timeout-ms ({MODE}, {len(timed_out)} of 16)")


def body_deadline():
    """A head in full, then the body a byte every 0.25 s: 408 at the body deadline."""
    s = env.raw_socket("127.0.0.4")
    s.sendall(b"POST " + POL.encode() + b" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: 4000\r\nAuthorization: Bearer " + TOKENS["admin"][0].encode() + b"\r\n\r\n{")
    got, dt = read_all(s, until=BODY_TIMEOUT_S + 4, send=b" ")
    s.close()
    check(got.startswith(b"HTTP/1.1 408") and b"--body-timeout-ms" in got
          and BODY_TIMEOUT_S - 0.3 < dt < BODY_TIMEOUT_S + 1.5,
          f"a body dripped a byte every 0.25 s ({MODE}): 408 naming --body-timeout-ms after the "
          f"{BODY_TIMEOUT_S} s body deadline ({dt:.2f} s: {got[:60]!r})")


def header_too_large():
    """A request head over --max-header-bytes (16 KiB by default): 431 naming the flag."""
    s = env.raw_socket("127.0.0.5")
    got = b""
    try:
        s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (17 * 1024) + b"\r\n\r\n")
    except OSError:
        pass  # the gateway may have answered and closed before the rest arrived: read what it said
    got, _ = read_all(s, until=5)
    s.close()
    check(got.startswith(b"HTTP/1.1 431") and b"--max-header-bytes" in got,
          f"a request head of 17 KiB ({MODE}): 431 naming --max-header-bytes ({got[:80]!r})")


def total_limit():
    """--max-connections full of kept-alive connections waiting for their next request (4 from each
    of 16 addresses: at the per-client limit, not over it): one more, from another address, takes
    the place of the oldest waiting connection of anyone (503), and is served. (Kept alive, not
    dripping, so the head deadline cannot end them first on a slow machine: they may idle 5 s.)"""
    conns = []
    for i in range(MAX_CONNECTIONS):
        c = env.connection(timeout=5, source=f"127.0.1.{i // PER_CLIENT + 1}")
        c.request("GET", "/version")
        c.getresponse().read()
        conns.append(c)  # admitted in this order: the first is the oldest
    t0 = time.time()
    try:
        c = env.connection(timeout=5, source="127.0.2.1")
        c.request("GET", "/version")
        status = c.getresponse().status
        c.close()
    except (OSError, http.client.HTTPException) as e:
        status = repr(e)
    served_in = time.time() - t0
    first, _ = read_all(conns[0].sock, until=1.0)
    others = []
    for c in conns[1:]:
        try:
            c.sock.setblocking(False)
            others.append(c.sock.recv(4096))
        except (BlockingIOError, ssl.SSLWantReadError):
            others.append(b"")
        except OSError as e:
            others.append(repr(e).encode())
    for c in conns:
        c.close()
    check(status == 200 and served_in < 3 and first.startswith(b"HTTP/1.1 503") and b"--max-connections)" in first
          and not any(o.startswith(b"HTTP/1.1 503") for o in others),
          f"{MAX_CONNECTIONS} idle kept-alive connections from 16 addresses, then one more from another ({MODE}): "
          f"served ({status} in {served_in:.2f} s), the oldest waiting one made room, 503 naming --max-connections "
          f"({first[:60]!r}), no other ({sum(o.startswith(b'HTTP/1.1 503') for o in others)})")


def tls_only():
    """What only a TLS listener meets: no handshake at all, and plain HTTP."""
    s = socket.create_connection(("127.0.0.1", env.port), source_address=("127.0.0.6", 0))
    got, dt = read_all(s, until=HEADER_TIMEOUT_S + 4)
    s.close()
    check(got == b"" and HEADER_TIMEOUT_S - 0.3 < dt < HEADER_TIMEOUT_S + 1.5,
          f"a TCP client that never starts its TLS handshake: closed at the {HEADER_TIMEOUT_S} s head deadline "
          f"({dt:.2f} s)")
    s = socket.create_connection(("127.0.0.1", env.port), source_address=("127.0.0.6", 0))
    s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    got, dt = read_all(s, until=5)
    s.close()
    check(not got.startswith(b"HTTP/") and dt < 1.5, f"plain HTTP on the TLS port: refused at once ({dt:.2f} s)")


def metrics():
    s, _, _ = env.request("GET", "/metrics", token=None)
    check(s == 401, f"GET /metrics without a token: 401 ({s})")
    c = env.connection(timeout=10)
    c.request("GET", "/metrics", headers={"Authorization": "Bearer " + TOKENS["reader"][0]})
    r = c.getresponse()
    text = r.read().decode()
    c.close()
    reasons = ["auth"]
    if BODIES:
        reasons += ["body-depth", "body-duplicate-key", "body-utf8"]
    if CONNECTIONS:
        reasons += ["connections-per-client", "connections-total", "header-deadline", "body-deadline", "header-too-large"]
    if CONNECTIONS and TLS:
        reasons += ["tls-handshake"]
    counts = {k: metric(text, "claim2core_rest_refusals_total", reason=k) for k in reasons}
    want = {"auth": 1}
    if BODIES:
        want.update({"body-depth": 1, "body-duplicate-key": 1, "body-utf8": 1})
    if CONNECTIONS:
        # +1: the connection over the limit while the event streams were open; +17: 16 drips from 16
        # addresses and, over TLS, the client that never started its handshake
        want.update({"connections-per-client": 16 - PER_CLIENT + 1, "connections-total": 1,
                     "header-deadline": 16 + (1 if TLS else 0), "body-deadline": 1, "header-too-large": 1})
    if CONNECTIONS and TLS:
        want["tls-handshake"] = 1
    exact = ("body-depth", "body-duplicate-key", "body-utf8", "connections-total", "body-deadline", "header-too-large",
             "tls-handshake")
    check(r.status == 200 and all(counts[k] is not None and (counts[k] == v if k in exact else counts[k] >= v)
                                  for k, v in want.items()),
          f"GET /metrics (read token): refusals by reason {counts} (wanted {want}; at least, for the others)")
    check(metric(text, "claim2core_rest_limit", limit="max_connections_per_client") == PER_CLIENT,
          "GET /metrics: the configured limits")


try:
    env.start()
    if BODIES:
        bodies()
    if CONNECTIONS:
        # First, while no other connection is open (an event stream's connection outlives its
        # client by up to the 15 s keep-alive, and would count against the total).
        total_limit()
        # These wait on deadlines, each from its own address: at once, to keep the test short.
        waits = [threading.Thread(target=f) for f in (body_deadline, header_too_large) + ((tls_only,) if TLS else ())]
        for t in waits:
            t.start()
        for t in waits:
            t.join(30)
        slow_clients()
    metrics()
finally:
    env.stop()

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
