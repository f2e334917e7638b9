"""Probes of the API behaviours the k8s tests rely on, run against the fake and the real API server
(k8s_api_backends.py). Each probe returns facts (name -> value); k8s_realserver_test.py `parity`
asserts that the real server's facts are what src/k8s assumes and that the fake's equal them.
Everything the fake gets wrong shows up as a named fact with both values.
"""
import json
import re
import threading
import time

from k8s_api_backends import list_path, object_path

NS = "parity"
GROUP = "scheduling.gthulhu.io/v1alpha1"


def claim(name, device, pod_uid="pod-uid-1"):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
            "status": {"allocation": {"devices": {"results": [
                {"request": "gpu", "driver": "gpu.example.com", "pool": "node-a", "device": device}]},
                "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": ["node-a"]}]}]}},
                "reservedFor": [{"resource": "pods", "name": "p", "uid": pod_uid}]}}


def pod(name, node):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "example.invalid/c:1"}]}}


def nsp(name, regex="^engine$"):
    return {"apiVersion": GROUP, "kind": "NodeSchedulingPolicy", "metadata": {"name": name},
            "spec": {"nodeNames": ["node-a"], "commandRegex": regex, "priority": 1}}


def rv(obj):
    return int(obj["metadata"]["resourceVersion"])


def watch_events(b, path, seconds):
    """Every event of a watch that the server ends after `seconds` (timeoutSeconds), with arrival times."""
    out, t0 = [], time.monotonic()
    sep = "&" if "?" in path else "?"
    for ev in b.watch(f"{path}{sep}watch=1&timeoutSeconds={seconds}", timeout=seconds + 15):
        out.append((round(time.monotonic() - t0, 1), ev))
    return out


def probe_lists(b):
    f = {}
    for i, d in enumerate(("gpu-0", "gpu-1")):
        b.create("resourceclaims", claim(f"c{i}", d))
    b.create("nodeschedulingpolicies", nsp("listed"))
    code, lst = b.request("GET", list_path("resourceclaims"))
    f["claims list: HTTP"] = code
    f["claims list: kind"] = lst.get("kind")
    f["claims list: items carry apiVersion/kind"] = all("kind" in o and "apiVersion" in o for o in lst["items"])
    f["claims list: resourceVersion is a number >= every item's"] = (
        lst["metadata"]["resourceVersion"].isdigit() and all(rv(o) <= int(lst["metadata"]["resourceVersion"])
                                                             for o in lst["items"]))
    code, crs = b.request("GET", list_path("nodeschedulingpolicies"))
    f["custom resource list: items carry apiVersion/kind"] = all("kind" in o and "apiVersion" in o for o in crs["items"])
    f["custom resource list: kind"] = crs.get("kind")
    # Pages: a consistent snapshot? The continue token is taken before a third claim is written.
    code, p1 = b.request("GET", list_path("resourceclaims") + "?limit=1")
    b.create("resourceclaims", claim("c2", "gpu-2"))
    pages, names, token = [p1], [o["metadata"]["name"] for o in p1["items"]], p1["metadata"].get("continue")
    while token:
        code, p = b.request("GET", list_path("resourceclaims") + "?limit=1&continue=" + token)
        if code != 200:
            f["paginated list: continue answered"] = code
            break
        pages.append(p)
        names += [o["metadata"]["name"] for o in p["items"]]
        token = p["metadata"].get("continue")
    f["paginated list: names"] = names
    f["paginated list: every page has the first page's resourceVersion"] = \
        len({p["metadata"]["resourceVersion"] for p in pages}) == 1
    code, pods = b.request("GET", list_path("pods") + "?fieldSelector=spec.nodeName%3Dnode-a")
    f["pods by spec.nodeName: HTTP"] = code
    return f


def probe_watch(b):
    f = {}
    code, lst = b.request("GET", list_path("resourceclaims"))
    start = lst["metadata"]["resourceVersion"]
    unallocated = claim("w1", "gpu-5")
    del unallocated["status"]  # one write: created, not allocated
    b.create("resourceclaims", unallocated)
    b.delete("resourceclaims", NS, "w1")
    evs = watch_events(b, list_path("resourceclaims") + f"?resourceVersion={start}&allowWatchBookmarks=true", 3)
    typed = [e for _, e in evs if e["type"] != "BOOKMARK"]
    f["watch from the list's resourceVersion: events"] = [(e["type"], e["object"]["metadata"]["name"]) for e in typed]
    f["watch events carry apiVersion/kind"] = all("kind" in e["object"] and "apiVersion" in e["object"] for e in typed)
    f["watch: DELETED carries a newer resourceVersion than ADDED"] = (
        len(typed) == 2 and rv(typed[1]["object"]) > rv(typed[0]["object"]))
    # Bookmarks on a quiet 4 s watch of nodes, from the list's resourceVersion: none while nothing
    # moves past it; then, with a write elsewhere and a consistent list (which makes the real
    # server's watch cache catch up with etcd), how many, when, and what they hold.
    code, lst = b.request("GET", list_path("nodes"))
    q = list_path("nodes") + f"?resourceVersion={lst['metadata']['resourceVersion']}&allowWatchBookmarks=true"
    evs = watch_events(b, q, 4)
    f["quiet watch, nothing written: bookmarks"] = sum(1 for _, e in evs if e["type"] == "BOOKMARK")
    result = {}
    t = threading.Thread(target=lambda: result.setdefault("evs", watch_events(b, q, 4)))
    t.start()
    time.sleep(0.5)
    written = b.create("resourceclaims", dict(unallocated, metadata={"name": "w2", "namespace": NS}))
    b.request("GET", list_path("nodes"))
    t.join()
    marks = [(t_, e) for t_, e in result["evs"] if e["type"] == "BOOKMARK"]
    f["quiet 4 s watch, a write elsewhere: at least one bookmark"] = len(marks) >= 1
    print(f"  {b.name}: bookmarks at {[t_ for t_, _ in marks]} s of a 4 s watch")
    f["bookmark: after 1.5 s (2 s before the watch's end)"] = bool(marks) and marks[0][0] >= 1.5
    f["bookmark object: kind and apiVersion"] = (marks[0][1]["object"].get("kind"), marks[0][1]["object"].get("apiVersion")) \
        if marks else None
    f["bookmark resourceVersion >= the write elsewhere"] = bool(marks) and rv(marks[-1][1]["object"]) >= rv(written)
    # A watch without allowWatchBookmarks gets none.
    evs = watch_events(b, list_path("nodes") + f"?resourceVersion={lst['metadata']['resourceVersion']}", 3)
    f["no bookmarks unless asked"] = not any(e["type"] == "BOOKMARK" for _, e in evs)
    return f


def probe_expired(b, expire):
    """A watch from a resourceVersion the server no longer has: how the 410 arrives. `expire` makes
    it so (the real server: a restart, whose fresh watch cache starts after it; the fake: its
    /_control/expire)."""
    f = {}
    code, lst = b.request("GET", list_path("resourceclaims"))
    old = lst["metadata"]["resourceVersion"]
    b.create("nodeschedulingpolicies", nsp("moves-the-revision"))
    expire()
    path = list_path("resourceclaims") + f"?watch=1&resourceVersion={old}&timeoutSeconds=5"
    code, body = None, None
    try:
        evs = list(b.watch(path, timeout=20))
        code = 200
        body = evs[0] if evs else None
    except Exception as e:  # urllib.error.HTTPError
        code = getattr(e, "code", str(e))
        body = json.loads(e.read()) if hasattr(e, "read") else None
    f["expired watch: HTTP status"] = code
    obj = (body or {}).get("object", body) or {}
    f["expired watch: event type"] = (body or {}).get("type")
    f["expired watch: Status code/reason"] = (obj.get("code"), obj.get("reason"))
    f["expired watch: message says too old"] = "too old resource version" in obj.get("message", "")
    return f


def probe_custom_resource_writes(b):
    f = {}
    NSPS = "nodeschedulingpolicies"
    path = object_path(NSPS, None, "engine")
    b.create(NSPS, nsp("engine"))
    code, o = b.request("GET", path)
    f["created: generation"] = o["metadata"].get("generation")
    merge = "application/merge-patch+json"
    code, o = b.request("PATCH", path, {"status": {"applied": "9/9 nodes"}}, ctype=merge)
    f["PATCH object with status: HTTP, status written"] = (code, "status" in o and o["status"].get("applied") == "9/9 nodes")
    code, o = b.request("PATCH", path, {"metadata": {"annotations": {"a": "b"}}}, ctype=merge)
    f["PATCH annotation: HTTP, generation"] = (code, o["metadata"].get("generation"))
    code, o = b.request("PATCH", path, {"spec": {"priority": 2}}, ctype=merge)
    f["PATCH spec: HTTP, generation"] = (code, o["metadata"].get("generation"))
    before = o["metadata"]["resourceVersion"]
    code, o = b.request("PATCH", path + "/status", {"spec": {"priority": 3}, "status": {"applied": "1/1 nodes"}},
                        ctype=merge)
    f["PATCH /status with spec: HTTP, spec.priority, status.applied, generation"] = (
        code, o["spec"]["priority"], o.get("status", {}).get("applied"), o["metadata"].get("generation"))
    code, o = b.request("PATCH", path + "/status", {"status": {"applied": "1/1 nodes"}}, ctype=merge)
    f["PATCH /status without change: resourceVersion unchanged"] = code == 200 and \
        o["metadata"]["resourceVersion"] == b.request("GET", path)[1]["metadata"]["resourceVersion"]
    code, o = b.request("PATCH", path + "/status", {"metadata": {"resourceVersion": before}, "status": {"reason": "x"}},
                        ctype=merge)
    f["PATCH /status with a stale resourceVersion: HTTP, reason"] = (code, o.get("reason"))
    f["409 message"] = o.get("message")
    code, o = b.request("PATCH", path + "/status", {"status": {"reason": "x"}}, ctype="application/json")
    f["PATCH as application/json: HTTP"] = code
    code, o = b.request("GET", object_path(NSPS, None, "missing"))
    f["GET a missing object: HTTP, reason"] = (code, o.get("reason") if isinstance(o, dict) else o)
    f["404 message"] = o.get("message") if isinstance(o, dict) else o
    code, o = b.request("PATCH", object_path(NSPS, None, "missing") + "/status", {"status": {}}, ctype=merge)
    f["PATCH /status of a missing object: HTTP"] = code
    return f


def probe_kubectl_table(b):
    """`kubectl get nodeschedulingpolicies`: the header and the engine row without AGE."""
    f = {}
    code, out, err = b.kubectl("get", "nodeschedulingpolicies", "engine")
    lines = out.splitlines()
    f["kubectl get: exit"] = code
    f["kubectl get: header"] = lines[0].split() if lines else err.strip()
    f["kubectl get: row without AGE"] = re.sub(r"\s+\S+$", "", lines[1]).split() if len(lines) > 1 else None
    code, out, err = b.kubectl("get", "nsp", "engine", "-o", "name")
    f["kubectl get nsp -o name"] = out.strip() or err.strip()
    return f
