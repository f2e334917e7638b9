#!/usr/bin/python3
"""The original GUI's way in, against claim2core-rest and a real claim2cored (issue 47; private
socket, state directory, pin root and port, loopback):

* users added with `claim2core-rest add-user` (password from stdin) to a root-owned 0600 file; a
  file others can write is refused at start, naming it;
* POST /api/v1/auth/login -> token/accessToken/refreshToken; the access token creates and lists a
  policy, GET /api/v1/users/self names the user and role; a read-only user is refused a write
  (403 "permission denied"); the token file's static tokens keep working;
* a tampered token, a token after its lifetime (--access-token-seconds 2), a refresh token used as
  an access token: 401 with the original's messages; refresh gives a new access token; logout
  revokes both ("token revoked");
* wrong password and unknown user: 401 "invalid password"; after --login-max-failures a right
  password too is refused 429 with Retry-After; bad bodies name the field and change nothing;
* /health in the original's shape ("status": "healthy");
* CORS: a listed origin's preflight 204 with the allow headers, an unlisted one 403 without;
* --gui-dir: the folder's files and the SPA fallback served, traversal (.., %2e%2e, a symlink out)
  refused 400, API paths never answered with the GUI.

Exit 77 (ctest skip) without root or bpffs. Takes ~10 s.

usage: rest_login_test.py CLAIM2CORED CLAIM2CORE_REST FAKE_VLLM
"""
import base64
import http.client
import json
import os
import re
import subprocess
import sys
import time

from c2c_it import checker, require_bpf
from rest_env import TOKENS, RestEnv

DAEMON, REST, FAKE = sys.argv[1:4]
require_bpf("BPF maps, bpffs pins")

ORIGIN = "http://gui.example:5173"
POL = "/api/v1/node-scheduling-policies"
failures = []


check = checker(failures)


def add_user(users, name, role, password):
    return subprocess.run([REST, "--users-file", users, "add-user", name, "--role", role],
                          input=password + "\n", text=True, capture_output=True)


env = RestEnv(DAEMON, REST, FAKE, tag="rest-login")
users = os.path.join(env.work, "users")
gui = os.path.join(env.work, "dist")
os.makedirs(os.path.join(gui, "assets"))
with open(os.path.join(gui, "index.html"), "w") as f:
    f.write("<!doctype html><title>original gui</title>")
with open(os.path.join(gui, "assets", "index-abc.js"), "w") as f:
    f.write("console.log('gui');")
with open(os.path.join(env.work, "secret.txt"), "w") as f:
    f.write("outside the folder")
os.symlink(os.path.join(env.work, "secret.txt"), os.path.join(gui, "assets", "out.js"))

r = add_user(users, "alice", "admin", "correct horse battery")
check(r.returncode == 0 and "alice (admin) added" in r.stderr, f"add-user alice: {r.stderr.strip()}")
r = add_user(users, "carol", "read-only", "carol's password")
check(r.returncode == 0, f"add-user carol (read-only): {r.stderr.strip()}")
r = add_user(users, "alice", "admin", "another password")
check(r.returncode == 1 and "already" in r.stderr, f"add-user refuses a user already there: {r.stderr.strip()}")
check(os.stat(users).st_mode & 0o777 == 0o600, "the users file is created 0600")

env.gateway_args = ["--users-file", users, "--access-token-seconds", "2", "--login-max-failures", "3",
                    "--cors-origin", ORIGIN, "--gui-dir", gui]
try:
    env.start()

    # A users file others may write is refused at start, naming it.
    os.chmod(users, 0o620)
    p = subprocess.run([REST, "--socket", env.sock, "--token-file", env.token_file, "--port", "1",
                        "--users-file", users], capture_output=True, text=True, timeout=20)
    check(p.returncode == 2 and users in p.stderr and "--users-file" in p.stderr,
          f"a group-writable users file is refused, named: {p.stderr.strip()}")
    os.chmod(users, 0o600)

    def call(method, path, body=None, bearer=None, headers=None, raw=None):
        h = dict(headers or {})
        if bearer:
            h["Authorization"] = "Bearer " + bearer
        return env.request(method, path, body=body, token=None, headers=h, raw=raw)

    # ---- /health in the original's shape -------------------------------------------------------
    s, b, _ = call("GET", "/health")
    check(s == 200 and b.get("status") == "healthy" and b.get("service") and
          re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", b.get("timestamp", "")) and b["data"]["node"],
          f"/health: status healthy, timestamp, service (the original GUI's check): {b}")

    # ---- login, the token at work, self, roles -------------------------------------------------
    s, b, _ = call("POST", "/api/v1/auth/login", {"username": "alice", "password": "correct horse battery"})
    check(s == 200 and b["data"]["token"] == b["data"]["accessToken"] and b["data"]["refreshToken"],
          f"login: token, accessToken, refreshToken: {s}")
    access, refresh = b["data"]["accessToken"], b["data"]["refreshToken"]
    header = json.loads(base64.urlsafe_b64decode(access.split(".")[0] + "=="))
    check(header.get("alg") == "ES256", f"the token is signed ES256: {header}")
    s, b, _ = call("POST", POL, {"nodeNames": ["dgx-spark-gb10"], "commandRegex": "^EngineCore", "priority": 3},
                   bearer=access)
    check(s == 200 and b["data"]["id"], f"POST a policy with the login's token: {s} {b}")
    pid = (b.get("data") or {}).get("id")
    s, b, _ = call("GET", POL + "/self", bearer=access)
    check(s == 200 and [p["id"] for p in b["data"]["policies"]] == [pid], "the policy is alice's own")
    s, b, _ = call("GET", "/api/v1/users/self", bearer=access)
    check(s == 200 and b["data"]["username"] == "alice" and b["data"]["roles"] == ["admin"],
          f"GET /api/v1/users/self: {b}")
    s, b, _ = env.request("GET", POL + "/self", token="admin")  # the token file's alice
    check(s == 200 and [p["id"] for p in b["data"]["policies"]] == [pid], "a static token keeps working (same subject)")
    s, b, _ = env.request("GET", "/api/v1/users/self", token="admin")
    check(s == 200 and b["data"]["roles"] == ["token"], f"users/self with a static token: {b}")

    s, b, _ = call("POST", "/api/v1/auth/login", {"username": "carol", "password": "carol's password"})
    carol = b["data"]["accessToken"]
    s, b, _ = call("GET", "/api/v1/node-scheduling-intents/self", bearer=carol)
    check(s == 200, "read-only: reads")
    s, b, _ = call("POST", POL, {"nodeNames": ["dgx-spark-gb10"], "commandRegex": "x"}, bearer=carol)
    check(s == 403 and b["error"] == "permission denied", f"read-only: a write is 403 permission denied: {b}")

    # ---- refusals with the original's messages -------------------------------------------------
    tampered = access[:-4] + ("AAAA" if not access.endswith("AAAA") else "BBBB")
    s, b, _ = call("GET", POL + "/self", bearer=tampered)
    check(s == 401 and b["error"] == "invalid or expired token", f"a tampered token: {s} {b}")
    parts = access.split(".")
    claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=="))
    claims["role"], claims["sub"] = "admin", "carol"
    forged = parts[0] + "." + base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=") + "." + parts[2]
    s, b, _ = call("GET", POL + "/self", bearer=forged)
    check(s == 401 and b["error"] == "invalid or expired token", f"a token with changed claims: {s} {b}")
    s, b, _ = call("GET", POL + "/self", bearer=refresh)
    check(s == 401 and b["error"] == "invalid token type", f"a refresh token as access token: {b}")
    s, b, _ = call("GET", POL + "/self")
    check(s == 401 and b["error"] == "Missing Authorization header", "no token")

    time.sleep(2.2)  # --access-token-seconds 2
    s, b, _ = call("GET", POL + "/self", bearer=access)
    check(s == 401 and b["error"] == "invalid or expired token", f"an expired access token: {s} {b}")
    s, b, _ = call("POST", "/api/v1/auth/refresh", {"refreshToken": refresh})
    check(s == 200 and b["data"]["accessToken"] != access, f"refresh: a new access token: {s}")
    access2 = b["data"]["accessToken"]
    s, b, _ = call("GET", POL + "/self", bearer=access2)
    check(s == 200, "the refreshed token works")

    # ---- logout ----------------------------------------------------------------------------------
    s, b, _ = call("POST", "/api/v1/auth/logout", raw='{"refreshToken": 5}', bearer=access2)
    check(s == 400 and b.get("field") == "refreshToken", f"logout with a bad body: 400 naming the field: {b}")
    s, b, _ = call("GET", POL + "/self", bearer=access2)
    check(s == 200, "... and nothing was revoked")
    s, b, _ = call("POST", "/api/v1/auth/logout", {"refreshToken": refresh}, bearer=access2)
    check(s == 200, f"logout: {s} {b}")
    s, b, _ = call("GET", POL + "/self", bearer=access2)
    check(s == 401 and b["error"] == "token revoked", f"the access token after logout: {b}")
    s, b, _ = call("POST", "/api/v1/auth/refresh", {"refreshToken": refresh})
    check(s == 401 and b["error"] == "token revoked", f"the refresh token after logout: {b}")

    # ---- bad login bodies, wrong passwords, the throttle ---------------------------------------
    for raw, status, field in [("", 400, None), ('{"username": 1, "password": "x"}', 400, "username"),
                               ('{"username": "alice"}', 422, "password"),
                               ('{"username": "a", "username": "b", "password": "x"}', 400, "username")]:
        s, b, _ = call("POST", "/api/v1/auth/login", raw=raw)
        check(s == status and b.get("field") == field, f"login body {raw!r}: {s} naming {field}: {b}")
    s, b, _ = call("POST", "/api/v1/auth/login", {"username": "nobody", "password": "whatever"})
    check(s == 401 and b["error"] == "invalid password", f"an unknown user: 401 invalid password: {b}")
    for i in range(3):
        s, b, _ = call("POST", "/api/v1/auth/login", {"username": "alice", "password": f"wrong {i}"},
                       headers={})
        check(s == 401 and b["error"] == "invalid password", f"wrong password {i + 1}: {s} {b}")
    s, b, h = call("POST", "/api/v1/auth/login", {"username": "alice", "password": "correct horse battery"})
    check(s == 429 and int(h.get("retry-after", "0")) > 0, f"after 3 failures the right password is held: {s} {b}")
    s, b, _ = call("POST", "/api/v1/auth/login", {"username": "carol", "password": "carol's password"})
    check(s == 200, "another user is not held")

    # ---- CORS ----------------------------------------------------------------------------------
    s, _, h = call("OPTIONS", "/api/v1/auth/login", headers={
        "Origin": ORIGIN, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type,authorization"})
    check(s == 204 and h.get("access-control-allow-origin") == ORIGIN and
          "authorization" in h.get("access-control-allow-headers", "").lower(), f"preflight of {ORIGIN}: {s} {h}")
    s, b, h = call("OPTIONS", "/api/v1/auth/login", headers={
        "Origin": "http://evil.example", "Access-Control-Request-Method": "POST"})
    check(s == 403 and "access-control-allow-origin" not in h, f"preflight of an unlisted origin: {s} {b}")
    s, b, h = call("GET", POL + "/self", bearer=carol, headers={"Origin": ORIGIN})
    check(h.get("access-control-allow-origin") == ORIGIN, "a listed origin's request: the allow header")
    s, b, h = call("GET", "/health", headers={"Origin": "http://evil.example"})
    check("access-control-allow-origin" not in h, "an unlisted origin's request: no allow header")

    # ---- --gui-dir -----------------------------------------------------------------------------
    def get_raw(path):
        c = http.client.HTTPConnection("127.0.0.1", env.port, timeout=10)
        c.request("GET", path)
        r = c.getresponse()
        body = r.read()
        c.close()
        return r.status, body, r.getheader("Content-Type")

    s, body, ct = get_raw("/")
    check(s == 200 and b"original gui" in body and ct.startswith("text/html"), f"GET / serves the folder's index.html: {s}")
    s, body, ct = get_raw("/assets/index-abc.js")
    check(s == 200 and body == b"console.log('gui');" and "javascript" in ct, f"an asset: {s} {ct}")
    s, body, _ = get_raw("/node-policies")
    check(s == 200 and b"original gui" in body, "an SPA route: index.html")
    for path in ("/../secret.txt", "/assets/../../secret.txt", "/%2e%2e/secret.txt", "/assets/..%2f..%2fsecret.txt",
                 "/assets/out.js"):
        s, body, _ = get_raw(path)
        check(s == 400 and b"outside" not in body and b"path traversal refused" in body, f"traversal {path}: {s} {body[:80]}")
    s, body, _ = get_raw("/api/v1/no-such")
    check(s == 404 and b"original gui" not in body, "an unknown API path is a 404, not the GUI")
    c = env.connection()
    c.request("GET", "/metrics", headers={"Authorization": "Bearer " + TOKENS["reader"][0]})  # carol's expired
    text = c.getresponse().read().decode()
    counted = {r: float(v) for r, v in re.findall(r'claim2core_rest_refusals_total\{reason="([a-z-]+)"\} (\S+)', text)}
    check(counted.get("login-throttled", 0) >= 1 and counted.get("login", 0) >= 4 and counted.get("cors", 0) >= 1
          and counted.get("path", 0) >= 5, f"/metrics counts the refusals: { {k: counted.get(k) for k in ('login', 'login-throttled', 'cors', 'path')} }")
finally:
    env.stop()

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
