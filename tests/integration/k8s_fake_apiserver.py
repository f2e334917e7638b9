#!/usr/bin/python3
"""A loopback-only fake Kubernetes API server for the k8s observer tests.

Serves list and watch (chunked, JSON lines, bookmarks, limit/continue, fieldSelector
spec.nodeName= for pods, metadata.name= for nodes) for resourceclaims, resourceslices, pods, nodes
and the two policy CRDs (draexecutionpolicies, nodeschedulingpolicies: metadata.generation kept by
the server), GET of one object, and for the CRDs what their status subresource does on a real API
server (deploy/kubernetes/base/crd-*.yaml):
  PATCH <object>         application/merge-patch+json (RFC 7386): `status` is ignored; a spec
                         change bumps metadata.generation; metadata (annotations) is merged
  PATCH <object>/status  the same, but only `status` is applied and the generation never moves
  Both refuse a patch whose metadata.resourceVersion is not the object's current one with 409
  Conflict (optimistic concurrency, as kube-apiserver does), and other patch types with 415.
Discovery (/api, /apis, /api/v1, /apis/<group>/<version>) and, for Accept `as=Table`, server-side
printing from the CRDs' additionalPrinterColumns (--crds DIR: the crd-*.yaml files), so Debian's
kubectl can `get` them.
Control API:
  POST /_control/apply   {"resource": r, "object": {...}}   ADDED or MODIFIED (uid, resourceVersion set)
  POST /_control/delete  {"resource": r, "namespace": ns, "name": n}
  POST /_control/freeze  stop delivering watch events (they queue)
  POST /_control/expire  compact history: running watches get a 410 ERROR event, old RVs get 410
  POST /_control/cut     close every running watch abruptly (no final chunk), then unfreeze
  POST /_control/race    {"resource": r, "name": n, "status": {...}, "count": k}: the next k status
                         PATCHes of that object are preceded by this competing write (another
                         writer's merge patch of `status`), so a patch that carries the
                         resourceVersion it read gets 409 Conflict
  GET  /_control/stats   request counts
Options: --tls CERT KEY serves HTTPS; --token T requires "Authorization: Bearer T" on API paths;
--crds DIR reads the CRDs' printer columns.
Prints the port it listens on as the first line of stdout.

The real kube-apiserver is the reference: k8s_realserver_test.py `parity` runs the same probes
against both and fails on any difference. What it found (and is now the same here): the items of a
custom resource's list carry apiVersion/kind (built-in lists' do not); the pages of a list are one
snapshot at the first page's resourceVersion; bookmarks come 2 s before the watch's end (and each
minute), carry kind, and only when a newer resourceVersion exists; a 404 names the group-qualified
resource; `kubectl get KIND NAME` gets the server-side table too; the CRDs' schema defaults are
applied on every write (with --crds). Kept as the fake's own because
a real server cannot easily do them: freeze, cut, race and expire (fault injection).
"""
import calendar
import json
import re
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
    "/api/v1/nodes": ("nodes", "v1", "NodeList"),
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
# Kinds (for discovery and patch responses) and whether namespaced.
KINDS = {"resourceclaims": ("ResourceClaim", True), "resourceslices": ("ResourceSlice", False),
         "pods": ("Pod", True), "nodes": ("Node", False),
         "draexecutionpolicies": ("DRAExecutionPolicy", False),
         "nodeschedulingpolicies": ("NodeSchedulingPolicy", False)}
PATH_OF = {r[0]: path for path, r in RESOURCES.items()}
PRINTER_COLUMNS = {}  # resource -> additionalPrinterColumns of its CRD (--crds)
SHORT_NAMES = {}      # resource -> its CRD's shortNames (--crds), for `kubectl get nsp`
SCHEMAS = {}          # resource -> its CRD's openAPIV3Schema (--crds), for the defaults


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
        self.races = {}             # (resource, name) -> [status merge patch, count]
        self.snapshots = {}         # continue token prefix -> (resourceVersion, items) of a paginated list
        self.stats = {"list": {}, "watch": {}, "patch": {}, "conflicts": 0}


S = State()
TOKEN = None


def key(obj):
    md = obj.get("metadata", {})
    return md.get("namespace", "") + "/" + md.get("name", "")


def matches(resource, obj, selector):
    if not selector or resource not in ("pods", "nodes"):
        return True
    field, _, value = selector.partition("=")
    if resource == "nodes":
        return field == "metadata.name" and obj.get("metadata", {}).get("name", "") == value
    return field == "spec.nodeName" and obj.get("spec", {}).get("nodeName", "") == value


def merge_patch(target, patch):
    """RFC 7386: objects merge, null deletes, everything else (lists included) replaces."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def qualified(resource):
    """'nodeschedulingpolicies.scheduling.gthulhu.io', 'pods': how the API server names a resource in messages."""
    api = API_VERSION[resource]
    return resource + ("." + api.split("/")[0] if "/" in api else "")


def not_found(resource, name):
    return status_error(404, "NotFound", f'{qualified(resource)} "{name}" not found')


def status_error(code, reason, message):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code}


def store_locked(resource, obj, typ):
    """Give obj the next resourceVersion, keep it and queue its watch event (S.cond held)."""
    S.rv += 1
    obj["metadata"]["resourceVersion"] = str(S.rv)
    S.objects[resource][key(obj)] = obj
    S.events.append((S.rv, resource, typ, obj))
    S.cond.notify_all()


def patch_locked(resource, name, body, subresource):
    """One PATCH of a stored object (S.cond held): (code, object or Status)."""
    old = S.objects[resource].get("/" + name)
    if old is None:
        return 404, not_found(resource, name)
    race = S.races.get((resource, name)) if subresource == "status" else None
    if race and race[1] > 0:  # another writer gets there first
        race[1] -= 1
        raced = json.loads(json.dumps(old))
        raced["status"] = merge_patch(raced.get("status", {}), race[0])
        store_locked(resource, raced, "MODIFIED")
        old = raced
    want_rv = (body.get("metadata") or {}).get("resourceVersion")
    if want_rv is not None and want_rv != old["metadata"]["resourceVersion"]:
        S.stats["conflicts"] += 1
        return 409, status_error(409, "Conflict",
                                 f'Operation cannot be fulfilled on {qualified(resource)} '
                                 f'"{name}": the object has been modified; please apply your changes to the latest '
                                 f'version and try again')
    body = json.loads(json.dumps(body))
    (body.get("metadata") or {}).pop("resourceVersion", None)
    new = json.loads(json.dumps(old))
    if subresource == "status":
        new["status"] = merge_patch(old.get("status", {}), body.get("status", {}))
    else:  # the main resource ignores status when the CRD has a status subresource
        body.pop("status", None)
        for f in ("uid", "generation", "name", "resourceVersion"):
            (body.get("metadata") or {}).pop(f, None)
        new = merge_patch(new, body)
        if resource in SCHEMAS:
            new = with_defaults(SCHEMAS[resource], new)
        if resource in SERVER_GENERATION and new.get("spec") != old.get("spec"):
            new["metadata"]["generation"] = old["metadata"]["generation"] + 1
    if new != old:
        store_locked(resource, new, "MODIFIED")
    return 200, new


def with_defaults(schema, value):
    """The CRD's structural defaults applied as kube-apiserver applies them on every write: a
    missing property that has a `default` gets it, in every object present (not inside
    x-kubernetes-preserve-unknown-fields maps' unknown keys)."""
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for k, sub in props.items():
            if k not in value and "default" in sub:
                value[k] = json.loads(json.dumps(sub["default"]))
            if k in value:
                value[k] = with_defaults(sub, value[k])
    elif isinstance(value, list) and "items" in schema:
        value = [with_defaults(schema["items"], v) for v in value]
    return value


def jsonpath(obj, path):
    """The subset of JSONPath printer columns use here: .a.b.c, with \\. inside a key."""
    cur = obj
    for part in re.split(r"(?<!\\)\.", path.lstrip(".")):
        part = part.replace("\\.", ".")
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def age(timestamp):
    """A date column as the API server prints it: the age ("5m", "3h", "2d")."""
    try:
        t = calendar.timegm(time.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ"))
    except (TypeError, ValueError):
        return "<unknown>"
    s = max(0, int(time.time() - t))
    for unit, n in (("d", 86400), ("h", 3600), ("m", 60)):
        if s >= n:
            return f"{s // n}{unit}"
    return f"{s}s"


def as_table(resource, items):
    cols = PRINTER_COLUMNS.get(resource, [])
    defs = [{"name": "Name", "type": "string", "format": "name"}] + \
           [{"name": c["name"], "type": c["type"], "format": ""} for c in cols]
    rows = []
    for o in items:
        cells = [o["metadata"]["name"]]
        for c in cols:
            v = jsonpath(o, c["jsonPath"])
            cells.append(age(v) if c["type"] == "date" else v)
        rows.append({"cells": cells, "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                                "metadata": o["metadata"]}})
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": str(S.rv)},
            "columnDefinitions": defs, "rows": rows}


def discovery(path):
    """Legacy discovery documents for kubectl (None: not a discovery path)."""
    groups = {}
    for res_path, (resource, api, _) in RESOURCES.items():
        groups.setdefault(api, []).append(resource)
    if path == "/api":
        return {"kind": "APIVersions", "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]}
    if path == "/apis":
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
            {"name": api.split("/")[0], "versions": [{"groupVersion": api, "version": api.split("/")[1]}],
             "preferredVersion": {"groupVersion": api, "version": api.split("/")[1]}}
            for api in sorted(groups) if "/" in api]}
    for api, resources in groups.items():
        if path == ("/api/" if "/" not in api else "/apis/") + api:
            out = []
            for r in resources:
                kind, namespaced = KINDS[r]
                out.append({"name": r, "singularName": kind.lower(), "namespaced": namespaced, "kind": kind,
                            "verbs": ["get", "list", "watch", "patch"], "shortNames": SHORT_NAMES.get(r, [])})
                if r in SERVER_GENERATION:
                    out.append({"name": r + "/status", "singularName": "", "namespaced": False, "kind": kind,
                                "verbs": ["get", "patch"]})
            return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": api, "resources": out}
    return None


def split_object_path(path):
    """'/apis/g/v/plural/name[/status]' -> (resource, name, subresource) for cluster-scoped objects."""
    for res_path, (resource, _, _) in RESOURCES.items():
        if path.startswith(res_path + "/"):
            rest = path[len(res_path) + 1:].split("/")
            if len(rest) == 1 or (len(rest) == 2 and rest[1] == "status"):
                return resource, rest[0], rest[1] if len(rest) == 2 else ""
    return None


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
                if r in SCHEMAS:  # before the generation: the stored spec has its defaults
                    obj = with_defaults(SCHEMAS[r], obj)
                if r in SERVER_GENERATION:
                    if old is None:
                        md["generation"] = 1
                    else:
                        same = old.get("spec") == obj.get("spec")
                        md["generation"] = old["metadata"]["generation"] + (0 if same else 1)
                if old is not None and "status" in old and "status" not in obj and r in SERVER_GENERATION:
                    obj["status"] = old["status"]  # like kubectl apply: the spec's writer leaves status alone
                store_locked(r, obj, "MODIFIED" if old else "ADDED")
            elif op == "/_control/race":
                S.races[(body["resource"], body["name"])] = [body["status"], int(body.get("count", 1))]
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

    def authorized(self):
        if TOKEN is not None and self.headers.get("Authorization") != "Bearer " + TOKEN:
            self.send_json(401, {"kind": "Status", "code": 401, "reason": "Unauthorized"})
            return False
        return True

    def do_PATCH(self):
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        if not self.authorized():
            return
        target = split_object_path(urlparse(self.path).path)
        if target is None or target[0] not in SERVER_GENERATION:
            return self.send_json(404, status_error(404, "NotFound", "no such object: " + self.path))
        ctype = self.headers.get("Content-Type", "").split(";")[0].strip()
        if ctype != "application/merge-patch+json":
            return self.send_json(415, status_error(415, "UnsupportedMediaType", "unsupported patch type " + ctype))
        try:
            body = json.loads(raw or b"{}")
        except ValueError as e:
            return self.send_json(400, status_error(400, "BadRequest", str(e)))
        resource, name, sub = target
        with S.cond:
            S.stats["patch"][resource + ("/status" if sub else "")] = \
                S.stats["patch"].get(resource + ("/status" if sub else ""), 0) + 1
            code, out = patch_locked(resource, name, body, sub)
        self.send_json(code, out)

    def do_GET(self):
        url = urlparse(self.path)
        q = {k: v[0] for k, v in parse_qs(url.query).items()}
        if url.path == "/_control/stats":
            with S.cond:
                return self.send_json(200, S.stats)
        if not self.authorized():
            return
        doc = discovery(url.path)
        if doc is not None:
            return self.send_json(200, doc)
        target = split_object_path(url.path)
        if target is not None:
            resource, name, _ = target
            with S.cond:
                obj = S.objects[resource].get("/" + name)
                obj = json.loads(json.dumps(obj)) if obj else None
            if obj is None:
                return self.send_json(404, not_found(resource, name))
            obj.setdefault("apiVersion", API_VERSION[resource])
            obj.setdefault("kind", KINDS[resource][0])
            if "as=Table" in self.headers.get("Accept", ""):
                return self.send_json(200, as_table(resource, [obj]))
            return self.send_json(200, obj)
        if url.path not in RESOURCES:
            return self.send_json(404, {"kind": "Status", "code": 404, "message": "not found"})
        resource, api, list_kind = RESOURCES[url.path]
        if q.get("watch") in ("1", "true"):
            return self.watch(resource, q)
        with S.cond:
            S.stats["list"][resource] = S.stats["list"].get(resource, 0) + 1
            if q.get("continue"):
                # Later pages come from the first page's snapshot, at its resourceVersion, as a
                # real API server reads them from etcd at that revision.
                snap, _, offset = q["continue"].partition(":")
                if snap not in S.snapshots:
                    return self.send_json(410, status_error(410, "Expired", "The provided continue parameter is too old"))
                rv, items = S.snapshots[snap]
                start = int(offset)
            else:
                items = [json.loads(json.dumps(o)) for k, o in sorted(S.objects[resource].items())
                         if matches(resource, o, q.get("fieldSelector"))]
                rv, start = S.rv, 0
        limit = int(q.get("limit", "0")) or len(items)
        page = items[start:start + limit]
        md = {"resourceVersion": str(rv)}
        if start + limit < len(items):
            with S.cond:
                snap = q["continue"].partition(":")[0] if q.get("continue") else str(len(S.snapshots))
                S.snapshots[snap] = (rv, items)
            md["continue"] = f"{snap}:{start + limit}"
        if "as=Table" in self.headers.get("Accept", ""):
            with S.cond:
                return self.send_json(200, as_table(resource, page))
        # Items of a built-in typed list carry no apiVersion/kind, as from a real API server; a
        # custom resource's list items (unstructured) do.
        if resource not in SERVER_GENERATION:
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
            # When kube-apiserver's watch cache sends bookmarks: once a minute and 2 s before the
            # watch's end (timeoutSeconds), and only when the resourceVersion it can vouch for is
            # past what the watch has already delivered (a quiet cluster gets none).
            next_bookmark = min(time.monotonic() + 60, deadline - 2)
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
                now = time.monotonic()
                if bookmarks and now >= next_bookmark and not S.frozen:
                    if current > sent:
                        self.chunk({"type": "BOOKMARK", "object": {
                            "kind": KINDS[resource][0], "apiVersion": API_VERSION[resource],
                            "metadata": {"resourceVersion": str(current)}}})
                        sent = current
                    next_bookmark = now + 60 if now + 60 < deadline - 2 else float("inf")
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass


def main():
    global TOKEN
    args = sys.argv[1:]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    if "--crds" in args:
        import glob
        import yaml
        for path in glob.glob(args[args.index("--crds") + 1] + "/crd-*.yaml"):
            with open(path, encoding="utf-8") as f:
                crd = yaml.safe_load(f)
            PRINTER_COLUMNS[crd["spec"]["names"]["plural"]] = crd["spec"]["versions"][0].get("additionalPrinterColumns", [])
            SCHEMAS[crd["spec"]["names"]["plural"]] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
            SHORT_NAMES[crd["spec"]["names"]["plural"]] = crd["spec"]["names"].get("shortNames", [])
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
