#!/usr/bin/python3
"""claim2core-rest against a real claim2cored (private socket, state directory, pin root and
port) with the fake vLLM process: every endpoint and error of the original's node-policy REST API
(src/rest/README.md). The seed's curl example runs verbatim (placeholders filled) and its intent
reaches Applied with exactly our EngineCore threads in the pinned map; refused requests leave the
daemon's state digest unchanged; the gateway refuses a readable or non-root token file and a
non-loopback address without TLS; kept-alive connections serve several requests and an idle one
does not keep the gateway polling. Exit 77 (ctest skip) without root or bpffs.

usage: rest_api_test.py SOURCE_DIR CLAIM2CORED CLAIM2CORE_REST FAKE_VLLM CLAIM2CORE
"""
import http.client
import json
import os
import re
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request

from c2c_it import checker, require_bpf
from rest_env import NODE, TOKENS, RestEnv, free_port, write_token_file

SRC, DAEMON, REST, FAKE, CLI = sys.argv[1:6]
require_bpf("BPF maps, bpffs pins")

failures = []
POL = "/api/v1/node-scheduling-policies"
INT = "/api/v1/node-scheduling-intents"


check = checker(failures)


# The daemon's metrics show how many RPCs a REST request costs (claim2core_rpcs_total).
METRICS_PORT = free_port()
env = RestEnv(DAEMON, REST, FAKE, tag="rest-it", daemon_args=["--metrics-address", f"127.0.0.1:{METRICS_PORT}"])


def daemon_rpcs():
    """claim2core_rpcs_total per method, summed over status codes."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{METRICS_PORT}/metrics", timeout=10).read().decode()
    out = {}
    for labels, value in re.findall(r'^claim2core_rpcs_total\{([^}]*)\} (\S+)$', text, re.M):
        method = re.search(r'method="([^"]+)"', labels).group(1)
        out[method] = out.get(method, 0) + float(value)
    return out


def digest():
    r = subprocess.run([CLI, "status", "--socket", env.sock, "-o", "json"], capture_output=True, text=True, timeout=30)
    return json.loads(r.stdout)["stateDigest"]


def map_tids():
    dump = json.loads(subprocess.run(["bpftool", "-j", "map", "dump", "pinned", f"{env.pin_root}/c2c_policy"],
                                     capture_output=True, text=True).stdout or "[]")
    return sorted(e["key"]["tid"] if isinstance(e["key"], dict) else e["formatted"]["key"]["tid"] for e in dump)


def wait_applied(pid, want_entries, token="admin", timeout=20):
    deadline = time.time() + timeout
    intent = None
    while time.time() < deadline:
        s, b, _ = env.request("GET", INT + "/self", token=token)
        intent = next((i for i in b["data"]["intents"] if i["id"] == pid), None) if s == 200 else None
        if intent and intent["stateName"] == "Applied" and intent["appliedEntries"] >= want_entries:
            return intent
        time.sleep(0.2)
    return intent


def refused_start(*args, token_file=None):
    """Runs the gateway with these flags; (exit code, output) of a refusal (it must not serve)."""
    r = subprocess.run([REST, "--socket", env.sock, "--port", str(free_port()), "--token-file",
                        token_file or env.token_file, *args], capture_output=True, text=True, timeout=20)
    return r.returncode, r.stderr


try:
    env.start()
    d0 = digest()

    # ---- refusals to start -------------------------------------------------------------------
    loose = os.path.join(env.work, "tokens-0640")
    write_token_file(loose, 0o640)
    code, err = refused_start(token_file=loose)
    check(code == 2 and "accessible by group or others (mode 0640" in err, f"a group-readable token file is refused: {err.strip()}")
    foreign = os.path.join(env.work, "tokens-nobody")
    write_token_file(foreign)
    os.chown(foreign, 65534, 65534)
    code, err = refused_start(token_file=foreign)
    check(code == 2 and "not owned by root" in err, f"a token file not owned by root is refused: {err.strip()}")
    link = os.path.join(env.work, "tokens-link")
    os.symlink(env.token_file, link)
    code, err = refused_start(token_file=link)
    check(code == 2 and "token file" in err, f"a symlinked token file is refused: {err.strip()}")
    code, err = refused_start("--listen", "0.0.0.0")
    check(code == 2 and "TLS is required" in err, f"--listen 0.0.0.0 without TLS is refused: {err.strip()}")

    # ---- health, version, envelopes, headers -------------------------------------------------
    s, b, h = env.request("GET", "/health", token=None)
    check(s == 200 and b["success"] is True and b["data"]["node"] == NODE
          and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", b["timestamp"]), f"GET /health: {b}")
    check(h.get("cache-control") == "no-store" and "default-src 'none'" in h.get("content-security-policy", "")
          and h.get("x-content-type-options") == "nosniff", "API responses: no-store, CSP, nosniff")
    s, b, _ = env.request("GET", "/version", token=None)
    check(s == 200 and b["data"]["version"] and b["data"]["service"] == "claim2core-rest", f"GET /version: {b}")
    s, b, _ = env.request("GET", "/api/v1/nothing-here")
    check(s == 404 and b == {"success": False, "error": "not found"}, f"unknown path: 404 envelope {b}")

    check(re.fullmatch(r"app;dur=\d+\.\d{3}", h.get("server-timing", "")) is not None,
          f"API responses say the gateway's time in Server-Timing: {h.get('server-timing')}")

    # ---- keep-alive: one connection, several requests; an idle one costs no polling ------------
    # (httplib 0.11 polled 10 ms and slept 1 ms in a loop per idle connection: ~180 wake-ups a
    # second, and a request arriving in the sleep waited for it; src/rest/keep_alive_server.hpp.)
    def switches(pid):
        total = 0
        for t in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{t}/status") as f:
                total += sum(int(l.split()[1]) for l in f if l.startswith(("voluntary_ctxt", "nonvoluntary_ctxt")))
        return total
    kc = http.client.HTTPConnection("127.0.0.1", env.port, timeout=10)
    codes = []
    for path in ("/version", "/health"):
        kc.request("GET", path)
        r = kc.getresponse()
        r.read()
        codes.append((r.status, r.will_close, kc.sock.fileno()))
    before = switches(env.gateway.pid)
    time.sleep(1.0)
    idle = switches(env.gateway.pid) - before
    kc.request("GET", "/version")
    r = kc.getresponse()
    r.read()
    codes.append((r.status, r.will_close, kc.sock.fileno()))
    kc.close()
    check(all(c[:2] == (200, False) for c in codes) and len({c[2] for c in codes}) == 1,
          f"three requests on one kept-alive connection: {codes}")
    check(idle < 40, f"an idle kept-alive connection wakes the gateway {idle} times in 1 s (< 40)")

    # ---- auth: the original's 401/403 messages -----------------------------------------------
    for path, method in [(POL, "POST"), (POL, "PUT"), (POL, "DELETE"), (POL + "/self", "GET"), (INT + "/self", "GET"),
                         (INT, "DELETE"), ("/api/v1/tasks", "GET"), ("/api/v1/tasks/1/explain", "GET"),
                         ("/api/v1/preview", "POST"), ("/api/v1/events", "GET")]:
        s, b, _ = env.request(method, path, token=None)
        check(s == 401 and b == {"success": False, "error": "Missing Authorization header"}, f"{method} {path} without a token: 401")
    s, b, _ = env.request("GET", POL + "/self", token=None, headers={"Authorization": "Basic YWxpY2U6eA=="})
    check(s == 401 and b["error"] == "Invalid Authorization header format", "Basic auth: 401 Invalid Authorization header format")
    s, b, _ = env.request("GET", POL + "/self", token=None, headers={"Authorization": "Bearer not-a-token-of-ours"})
    check(s == 401 and b["error"] == "invalid or expired token", "unknown token: 401 invalid or expired token")
    seed = {"nodeNames": [NODE], "commandRegex": "^EngineCore(_DP[0-9]+)?$", "priority": 1, "executionTime": 2000000}
    for method, path, body in [("POST", POL, seed), ("PUT", POL, seed), ("DELETE", POL, {"policyId": "0" * 24}),
                               ("DELETE", INT, {"intentIds": ["0" * 24]})]:
        s, b, _ = env.request(method, path, body, token="reader")
        check(s == 403 and b == {"success": False, "error": "permission denied"}, f"{method} {path} with a read-only token: 403")
    check(digest() == d0, "nothing changed after the refused requests")

    # ---- the seed's curl example, verbatim ---------------------------------------------------
    with open(os.path.join(SRC, "tests", "fixtures", "rest", "seed-001-curl.sh")) as f:
        script = f.read().replace("<manager>:8080", f"127.0.0.1:{env.port}").replace("<token>", TOKENS["admin"][0])
    rpcs_before = daemon_rpcs()
    r = subprocess.run(["bash", "-c", script.replace("curl ", "curl -sS ", 1)], capture_output=True, text=True, timeout=30)
    rpcs_after = daemon_rpcs()
    out = json.loads(r.stdout)
    # One POST, one daemon call (issue 44: it was two, one of them a digest of the whole state).
    spent = {m: n - rpcs_before.get(m, 0) for m, n in rpcs_after.items() if n != rpcs_before.get(m, 0)}
    check(spent == {"UpsertPolicy": 1}, f"the POST cost the daemon one RPC, UpsertPolicy: {spent}")
    check(r.returncode == 0 and out["success"] is True and re.fullmatch(r"[0-9a-f]{24}", out["data"]["id"]),
          f"the seed's curl example: {r.stdout.strip()[:200]}")
    pid = out["data"]["id"]
    # The reply: written, not yet read back (the original said Applied here: the node received it).
    check(out["data"]["intent"]["stateName"] == "Sent" and out["data"]["intent"]["state"] == 1
          and "not yet read back" in out["data"]["intent"]["reason"],
          f"the POST's intent is Sent until the daemon reads the map back: {out['data']['intent']}")
    intent = wait_applied(pid, 2)
    check(intent and intent["stateName"] == "Applied" and intent["state"] == 2 and intent["nodeId"] == NODE
          and intent["appliedEntries"] == intent["matchedTasks"] >= 2 and "read back from the pinned map" in intent["reason"],
          f"its intent reaches Applied (original GUI state 2) with a reason: {intent}")
    tids = map_tids()
    others = [t for c, t in env.threads.items() if not c.startswith("EngineCore")]
    check(set(env.engines) <= set(tids) and not set(others) & set(tids),
          f"the pinned map holds our EngineCore TIDs {env.engines} and none of {others}: {tids}")

    s, b, _ = env.request("GET", POL + "/self")
    mine = [p for p in b["data"]["policies"] if p["id"] == pid]
    check(s == 200 and mine and mine[0]["commandRegex"] == seed["commandRegex"] and mine[0]["priority"] == 1
          and mine[0]["executionTime"] == 2000000 and mine[0]["nodeNames"] == [NODE] and mine[0]["nodeSelectors"] == [],
          f"GET policies/self: {mine}")
    s, b, _ = env.request("GET", POL + "/self", token="bob")
    check(s == 200 and b["data"]["policies"] == [], "another subject's GET policies/self does not list it")
    s, b, _ = env.request("GET", INT + "/self", token="bob")
    check(s == 200 and b["data"]["intents"] == [], "nor its intents")

    # ---- tasks, explain ----------------------------------------------------------------------
    s, b, _ = env.request("GET", f"/api/v1/tasks?policyId={pid}")
    ours = sorted(t["tid"] for t in b["data"]["tasks"] if t["tgid"] == env.threads["python3.12"])
    check(s == 200 and ours == env.engines and all(t["applied"] and t["policyId"] == pid for t in b["data"]["tasks"]),
          f"GET tasks?policyId: exactly our EngineCore threads, in the map: {ours}")
    s, b, _ = env.request("GET", "/api/v1/tasks?comm=^api_server$")
    api_rows = [t for t in b["data"]["tasks"] if t["tid"] == env.threads["api_server"]]
    check(s == 200 and api_rows and api_rows[0]["policy"] is None, "GET tasks?comm: api_server, held by no policy")
    # The process title (argv[0] of /proc/<tgid>/cmdline) is listed and can be filtered on.
    title = os.path.basename(env.fake_bin)
    s, b, _ = env.request("GET", "/api/v1/tasks?title=" + urllib.parse.quote(re.escape(title) + "$"))
    rows = b["data"]["tasks"] if s == 200 else []
    check(rows and all(t["title"].endswith(title) for t in rows)
          and env.threads["EngineCore_DP0"] in [t["tid"] for t in rows],
          f"GET tasks?title: the fake vLLM's threads carry its process title: {rows[:3]}")
    s, b, _ = env.request("GET", "/api/v1/tasks?title=(")
    check(s == 400 and "title" in b["error"].lower(), f"GET tasks?title=( : 400 {b}")
    s, b, _ = env.request("GET", "/api/v1/tasks?comm=(")
    check(s == 400 and "comm" in b["error"].lower(), f"GET tasks?comm=( : 400 {b}")
    s, b, _ = env.request("GET", "/api/v1/tasks?policyId=xyz")
    check(s == 400 and b["field"] == "policyId", "GET tasks?policyId=xyz: 400")
    s, b, _ = env.request("GET", f"/api/v1/tasks/{env.threads['EngineCore_DP0']}/explain")
    lin = b["data"]["lineage"] if s == 200 else {}
    check(lin.get("comm") == "EngineCore_DP0" and lin.get("policyId") == pid and lin.get("strategy") == "exact-tid"
          and lin["entry"]["sliceNs"] == 2000000, f"explain: lineage of EngineCore_DP0: {lin}")
    s, b, _ = env.request("GET", "/api/v1/tasks/abc/explain")
    check(s == 400 and b["field"] == "tid", "explain abc: 400 naming tid")
    s, b, _ = env.request("GET", "/api/v1/tasks/4294967295/explain")
    check(s == 404, f"explain of an unknown tid: 404 {b}")

    # ---- preview: read-only ------------------------------------------------------------------
    d1 = digest()
    s, b, _ = env.request("POST", "/api/v1/preview", {"nodeNames": [NODE], "commandRegex": "^api_server$", "priority": 0})
    matched = [m["tid"] for m in b["data"]["matched"]] if s == 200 else []
    check(s == 200 and env.threads["api_server"] in matched and b["data"]["readOnly"], f"preview matches api_server: {matched}")
    s, b, _ = env.request("POST", "/api/v1/preview", {"nodeNames": [NODE], "commandRegex": "("})
    check(s == 400 and b["field"] == "commandRegex", "preview with a bad regex: 400")
    check(digest() == d1, "preview changed nothing")

    # ---- bad bodies: 400 naming the field, nothing applied -----------------------------------
    bad = [
        ("not JSON", None, "{nope", ""),
        ("empty body", None, "", ""),
        ("a JSON list", [], None, ""),
        ("priority a string", dict(seed, priority="high"), None, "priority"),
        ("priority out of range", dict(seed, priority=5000), None, "priority"),
        ("executionTime below 10us", dict(seed, executionTime=5), None, "executionTime"),
        ("executionTime negative", dict(seed, executionTime=-1), None, "executionTime"),
        ("commandRegex not RE2", dict(seed, commandRegex="(?<=x)"), None, "commandRegex"),
        ("no commandRegex", {"nodeNames": [NODE]}, None, "commandRegex"),
        ("no selector", {"commandRegex": "^x$"}, None, "nodeNames"),
        ("nodeSelectors a map", dict(seed, nodeSelectors={"role": "x"}), None, "nodeSelectors"),
        ("DRA attribute unknown", dict(seed, draSelectors=[{"deviceClass": "gpu", "attributes": [{"key": "model", "value": "x"}]}]),
         None, "draSelectors[0].attributes[0].key"),
        ("key twice", None, '{"nodeNames":["%s"],"commandRegex":"^a$","COMMANDREGEX":"^b$"}' % NODE, "commandRegex"),
    ]
    for what, body, raw, field in bad:
        s, b, _ = env.request("POST", POL, body, raw=raw)
        check(s == 400 and b["success"] is False and b["error"].startswith("Invalid request body")
              and b.get("field", "") == field, f"POST {what}: 400 field {field!r}: {b}")
    s, b, _ = env.request("POST", POL, dict(seed, nodeNames=["some-other-node"]))
    check(s == 404 and b["error"].startswith("no nodes match the policy criteria"), f"POST for another node: 404 {b}")
    s, b, _ = env.request("POST", POL, raw="x" * (2 << 20))
    check(s == 413, f"a 2 MiB body: 413 ({s})")
    check(digest() == d1, "state digest unchanged after every refused body")

    # ---- zeros are sent; keys are case-insensitive -------------------------------------------
    s, b, _ = env.request("POST", POL, {"NodeNames": [NODE], "CommandRegex": "^tokenizer$", "priority": 0, "executionTime": 0})
    zid = b["data"]["id"] if s == 200 else None
    s, b, _ = env.request("GET", POL + "/self")
    z = next((p for p in b["data"]["policies"] if p["id"] == zid), {})
    check(z.get("priority") == 0 and z.get("executionTime") == 0, f"priority 0 and executionTime 0 are sent, not omitted: {z}")
    zi = wait_applied(zid, 1)
    check(zi and zi["priority"] == 0 and zi["state"] == 2, f"the intent too has priority 0 and state 2: {zi}")

    # ---- PUT ---------------------------------------------------------------------------------
    d2 = digest()
    s, b, _ = env.request("PUT", POL, seed)
    check(s == 400 and b["error"] == "Policy ID is required", f"PUT without policyId: 400 {b}")
    s, b, _ = env.request("PUT", POL, dict(seed, policyId="not-hex"))
    check(s == 400 and b["field"] == "policyId", f"PUT with a non-hex id: 400, not the original's 500: {b}")
    s, b, _ = env.request("PUT", POL, dict(seed, policyId="0123456789abcdef01234567"))
    check(s == 404 and b["error"] == "node policy not found or you don't have permission to update it", f"PUT unknown id: 404 {b}")
    s, b, _ = env.request("PUT", POL, dict(seed, policyId=pid), token="bob")
    check(s == 404, "PUT of another subject's policy: 404")
    s, b, _ = env.request("PUT", POL, dict(seed, policyId=pid, priority="x"))
    check(s == 400 and b["field"] == "priority", "PUT with a bad field: 400")
    check(digest() == d2, "state digest unchanged after the refused PUTs")
    s, b, _ = env.request("PUT", POL, dict(seed, policyId=pid.upper(), executionTime=3000000))
    check(s == 200 and b["data"]["id"] == pid and b["data"]["generation"] == 2, f"PUT: generation 2: {b}")
    s, b, _ = env.request("GET", f"/api/v1/tasks/{env.threads['EngineCore_DP1']}/explain")
    check(s == 200 and b["data"]["lineage"]["entry"]["sliceNs"] == 3000000, "PUT changed the slice in the map's entry")

    # ---- events (SSE) ------------------------------------------------------------------------
    conn = http.client.HTTPConnection("127.0.0.1", env.port, timeout=20)
    conn.request("GET", "/api/v1/events", headers={"Authorization": "Bearer " + TOKENS["reader"][0]})
    resp = conn.getresponse()
    check(resp.status == 200 and resp.getheader("Content-Type", "").startswith("text/event-stream"), "GET events: an SSE stream")
    threading.Timer(0.5, lambda: env.request("POST", POL, {"nodeNames": [NODE], "commandRegex": "^detokenizer$"})).start()
    got = None
    deadline = time.time() + 15
    while time.time() < deadline and got is None:
        line = resp.fp.readline().decode()
        if line.startswith("data: "):
            ev = json.loads(line[6:])
            if ev.get("eventKind") == "policy_upsert" and env.threads["detokenizer"] in ev.get("changedTids", []):
                got = ev
    conn.close()
    check(got is not None and got["nodeGeneration"] > 0, f"the stream carries the daemon's change (detokenizer's entry): {got}")
    s, b, _ = env.request("GET", "/api/v1/events?access_token=wrong-token", token=None)
    check(s == 401 and b["error"] == "invalid or expired token", "events with a wrong ?access_token: 401")

    # ---- DELETE intents and policies ---------------------------------------------------------
    s, b, _ = env.request("DELETE", INT, {"intentIds": []})
    check(s == 400 and b["error"] == "At least one intent ID is required", f"DELETE intents []: 400 {b}")
    s, b, _ = env.request("DELETE", INT, {"intentIds": [zid, "nope"]})
    check(s == 400 and b["field"] == "intentIds[1]", "DELETE intents with a non-hex id: 400 naming it")
    s, b, _ = env.request("DELETE", INT, {"intentIds": [zid, "0123456789abcdef01234567"]})
    check(s == 404, "DELETE intents with an unknown id: 404")
    s, b, _ = env.request("GET", INT + "/self")
    check(any(i["id"] == zid for i in b["data"]["intents"]), "... and nothing was deleted (all or nothing)")
    s, b, _ = env.request("DELETE", INT, {"intentIds": [zid]})
    check(s == 200 and b["data"] == {}, f"DELETE intents: data {{}}: {b}")
    s, b, _ = env.request("GET", INT + "/self")
    check(not any(i["id"] == zid for i in b["data"]["intents"]), "the intent is gone")

    s, b, _ = env.request("DELETE", POL, {})
    check(s == 400 and b["error"] == "Policy ID is required", "DELETE policy without id: 400")
    s, b, _ = env.request("DELETE", POL, {"policyId": pid}, token="bob")
    check(s == 404, "DELETE of another subject's policy: 404")
    s, b, _ = env.request("DELETE", POL, {"policyId": pid})
    check(s == 200 and b["data"] == {}, f"DELETE policy: data {{}}: {b}")
    s, b, _ = env.request("DELETE", POL, {"policyId": pid})
    check(s == 404 and b["error"] == "node policy not found or you don't have permission to delete it", "DELETE again: 404")
    check(not set(env.engines) & set(map_tids()), f"the EngineCore threads left the pinned map: {map_tids()}")

    # ---- TLS: beyond loopback it starts with a certificate -----------------------------------
    cert, key = os.path.join(env.work, "cert.pem"), os.path.join(env.work, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    tls_port = free_port()
    env.start_gateway("--listen", "0.0.0.0", "--tls-cert", cert, "--tls-key", key, port=tls_port)
    ctx = ssl.create_default_context(cafile=cert)
    body = None
    for _ in range(50):
        try:
            c = http.client.HTTPSConnection("127.0.0.1", tls_port, context=ctx, timeout=10)
            c.request("GET", INT + "/self", headers={"Authorization": "Bearer " + TOKENS["reader"][0]})
            body = json.loads(c.getresponse().read())
            break
        except OSError:
            time.sleep(0.2)
    check(body is not None and body["success"], f"--listen 0.0.0.0 with --tls-cert/--tls-key serves HTTPS: {body}")

    # ---- the GUI's files ---------------------------------------------------------------------
    s, _, h = env.request("GET", "/", token=None)
    check(s == 200 and h["content-type"].startswith("text/html") and h.get("cache-control") == "no-cache" and h.get("etag")
          and "script-src 'self'" in h["content-security-policy"], "GET / : the GUI, CSP, no-cache + ETag")
    s, _, h2 = env.request("GET", "/app.js", token=None, headers={"If-None-Match": env.request("GET", "/app.js", token=None)[2]["etag"]})
    check(s == 304, "GET /app.js with its ETag: 304")

    # ---- no daemon: 503 ----------------------------------------------------------------------
    env.procs[1].terminate()
    env.procs[1].wait(timeout=20)
    s, b, _ = env.request("GET", "/health", token=None)
    check(s == 503 and "claim2cored unavailable" in b["error"], f"daemon gone: /health 503 {b}")
finally:
    env.stop()

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
