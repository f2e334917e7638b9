#!/usr/bin/python3
"""A loopback-only fake Kubernetes API server for the k8s observer tests.

Serves list and watch (chunked, JSON lines, bookmarks, limit/continue, fieldSelector
spec.nodeName=) for resourceclaims, resourceslices, pods and the two policy CRDs
(draexecutionpolicies, nodeschedulingpolicies: metadata.generation kept by the server), with a
control API:
  POST /_control/apply   {"resource": r, "object": {...}}   ADDED or MODIFIED (uid, resourceVersion set)
  POST /_control/delete  {"resource": r, "namespace": ns, "name": n}
  POST /_control/freeze  stop delivering watch events (they queue)
  POST /_control/expire  compact history: running watches get a 410 ERROR event, old RVs get 410
  POST /_control/cut     close every running watch abruptly (no final chunk), then unfreeze
  GET  /_control/stats   request counts
Options: --tls CERT KEY serves HTTPS; --token T requires "Authorization: Bearer T" on API paths.
Prints the port it listens on as the first line of stdout.
"""
import json
import socket
import ssl
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

RESOURCES = {
    "/apis/resource.k8s.io/v1/resourceclaims": ("resourceclaims", "resource.k8s.io/v1", "ResourceClaimList"),
    "/apis/resource.k8s.io/v1/resourceslices": ("resourceslices", "resource.k8s.io/v1", "ResourceSliceList"),
    "/api/v1/pods": ("pods", "v1", "PodList"),
    # The policy CRDs (deploy/kubernetes/base/crd-*.yaml), cluster-scoped.
    "/apis/scheduling.gthulhu.io/v1alpha1/draexecutionpolicies":
        ("draexecutionpolicies", "scheduling.gthulhu.io/v1alpha1", "DRAExecutionPolicyList"),
    "/apis/scheduling.gthulhu.io/v1alpha1/nodeschedulingpolicies":
        ("nodeschedulingpolicies", "scheduling.gthulhu.io/v1alpha1", "NodeSchedulingPolicyList"),
}
API_VERSION = {r[0]: r[1] for r in RESOURCES.values()}
# Resources whose metadata.generation the server keeps, as a real API server does for custom
# resources: 1 on create, +1 whenever the spec changes.
SERVER_GENERATION = {"draexecutionpolicies", "nodeschedulingpolicies"}


class State:
    def __init__(self):
        self.cond = threading.Condition()
        self.rv = 100
        self.compacted = 0          # watches from an RV below this get 410
        self.expire_gen = 0         # bumps make running watches send 410
        self.cut_gen = 0            # bumps make running watches drop the connection
        self.frozen = False
        self.objects = {r[0]: {} for r in RESOURCES.values()}
        self.events = []            # (rv, resource, type, object)
        self.stats = {"list": {}, "watch": {}}


S = State()
TOKEN = None


def key(obj):
    md = obj.get("metadata", {})
    return md.get("namespace", "") + "/" + md.get("name", "")


def matches(resource, obj, selector):
    if resource != "pods" or not selector:
        return True
    field, _, value = selector.partition("=")
    return field == "spec.nodeName" and obj.get("spec", {}).get("nodeName", "") == value


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_json(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        op = urlparse(self.path).path
        with S.cond:
            if op == "/_control/apply":
                r, obj = body["resource"], body["object"]
                md = obj.setdefault("metadata", {})
                old = S.objects[r].get(key(obj))
                md.setdefault("uid", old["metadata"]["uid"] if old else str(uuid.uuid4()))
                if r in SERVER_GENERATION:
                    if old is None:
                        md["generation"] = 1
                    else:
                        same = old.get("spec") == obj.get("spec")
                        md["generation"] = old["metadata"]["generation"] + (0 if same else 1)
                S.rv += 1
                md["resourceVersion"] = str(S.rv)
                S.objects[r][key(obj)] = obj
                S.events.append((S.rv, r, "MODIFIED" if old else "ADDED", obj))
            elif op == "/_control/delete":
                r = body["resource"]
                obj = S.objects[r].pop(body.get("namespace", "") + "/" + body["name"], None)
                if obj is None:
                    return self.send_json(404, {"error": "no such object"})
                S.rv += 1
                obj = json.loads(json.dumps(obj))
                obj["metadata"]["resourceVersion"] = str(S.rv)
                S.events.append((S.rv, r, "DELETED", obj))
            elif op == "/_control/freeze":
                S.frozen = True
            elif op == "/_control/expire":
                S.compacted = S.rv
                S.expire_gen += 1
                S.frozen = False
            elif op == "/_control/cut":
                S.cut_gen += 1
                S.frozen = False
            else:
                return self.send_json(404, {"error": "unknown control " + op})
            S.cond.notify_all()
            rv = S.rv
        self.send_json(200, {"resourceVersion": str(rv)})

    def do_GET(self):
        url = urlparse(self.path)
        q = {k: v[0] for k, v in parse_qs(url.query).items()}
        if url.path == "/_control/stats":
            with S.cond:
                return self.send_json(200, S.stats)
        if TOKEN is not None and self.headers.get("Authorization") != "Bearer " + TOKEN:
            return self.send_json(401, {"kind": "Status", "code": 401, "reason": "Unauthorized"})
        if url.path not in RESOURCES:
            return self.send_json(404, {"kind": "Status", "code": 404, "message": "not found"})
        resource, api, list_kind = RESOURCES[url.path]
        if q.get("watch") in ("1", "true"):
            return self.watch(resource, q)
        with S.cond:
            S.stats["list"][resource] = S.stats["list"].get(resource, 0) + 1
            items = [o for k, o in sorted(S.objects[resource].items()) if matches(resource, o, q.get("fieldSelector"))]
            rv = S.rv
        start = int(q.get("continue", "0"))
        limit = int(q.get("limit", "0")) or len(items)
        page = items[start:start + limit]
        md = {"resourceVersion": str(rv)}
        if start + limit < len(items):
            md["continue"] = str(start + limit)
        # Items of a typed list carry no apiVersion/kind, as from a real API server.
        page = [{k: v for k, v in o.items() if k not in ("apiVersion", "kind")} for o in page]
        self.send_json(200, {"apiVersion": api, "kind": list_kind, "metadata": md, "items": page})

    def chunk(self, obj):
        data = (json.dumps(obj) + "\n").encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def watch(self, resource, q):
        since = int(q.get("resourceVersion", "0") or "0")
        selector = q.get("fieldSelector")
        bookmarks = q.get("allowWatchBookmarks") == "true"
        deadline = time.monotonic() + int(q.get("timeoutSeconds", "300"))
        with S.cond:
            S.stats["watch"][resource] = S.stats["watch"].get(resource, 0) + 1
            expire_gen, cut_gen = S.expire_gen, S.cut_gen
            too_old = since < S.compacted
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        gone = {"type": "ERROR", "object": {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                            "reason": "Expired", "code": 410, "message": "too old resource version"}}
        try:
            if too_old:
                self.chunk(gone)
                self.wfile.write(b"0\r\n\r\n")
                return
            sent = since
            last_bookmark = time.monotonic()
            while time.monotonic() < deadline:
                with S.cond:
                    S.cond.wait(timeout=0.1)
                    if S.cut_gen != cut_gen:
                        self.connection.shutdown(socket.SHUT_RDWR)  # abrupt: no final chunk
                        self.close_connection = True
                        return
                    if S.expire_gen != expire_gen:
                        pending, expired = [], True
                    else:
                        expired = False
                        pending = [] if S.frozen else [e for e in S.events if e[0] > sent and e[1] == resource]
                    current = S.rv
                if expired:
                    self.chunk(gone)
                    break
                for rv, _, typ, obj in pending:
                    sent = rv
                    if matches(resource, obj, selector):
                        self.chunk({"type": typ, "object": obj})
                if bookmarks and time.monotonic() - last_bookmark > 0.5 and not S.frozen:
                    api = API_VERSION[resource]
                    self.chunk({"type": "BOOKMARK", "object": {"apiVersion": api, "metadata": {"resourceVersion": str(max(sent, current))}}})
                    sent = max(sent, current)
                    last_bookmark = time.monotonic()
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass


def main():
    global TOKEN
    args = sys.argv[1:]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    if "--token" in args:
        TOKEN = args[args.index("--token") + 1]
    if "--tls" in args:
        i = args.index("--tls")
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args[i + 1], args[i + 2])
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
