"""The two API servers the k8s tests talk to, behind one small interface, so that one probe can run
against both and their answers can be compared (k8s_realserver_test.py, scenario `parity`):

* FakeBackend: tests/integration/k8s_fake_apiserver.py (objects written through its control API);
* RealBackend: k8s_real_apiserver.RealCluster (objects written through the API as an admin; a
  claim's allocation through the status subresource, as the scheduler writes it).
"""
import json
import os
import subprocess
import urllib.error
import urllib.request

from k8s_real_apiserver import RealCluster

# resource -> (group/version path prefix, namespaced)
PATHS = {
    "resourceclaims": ("/apis/resource.k8s.io/v1", True),
    "resourceslices": ("/apis/resource.k8s.io/v1", False),
    "pods": ("/api/v1", True),
    "nodes": ("/api/v1", False),
    "draexecutionpolicies": ("/apis/scheduling.gthulhu.io/v1alpha1", False),
    "nodeschedulingpolicies": ("/apis/scheduling.gthulhu.io/v1alpha1", False),
}


def list_path(resource):
    """The cluster-wide list/watch path (what the observer uses)."""
    return PATHS[resource][0] + "/" + resource


def object_path(resource, namespace, name=None):
    prefix, namespaced = PATHS[resource]
    p = prefix + (f"/namespaces/{namespace}" if namespaced else "") + "/" + resource
    return p + ("/" + name if name else "")


class FakeBackend:
    name = "fake"

    def __init__(self, src, work, kubectl="kubectl", path=None):
        self.work = work
        self.kubectl_bin = kubectl
        fake = path or os.path.join(src, "tests", "integration", "k8s_fake_apiserver.py")
        self.proc = subprocess.Popen(["/usr/bin/python3", fake, "--crds", os.path.join(src, "deploy", "kubernetes", "base")],
                                     stdout=subprocess.PIPE, text=True)
        self.server = f"http://127.0.0.1:{int(self.proc.stdout.readline())}"
        self.kubeconfig = os.path.join(work, "kubeconfig-fake")
        with open(self.kubeconfig, "w") as f:
            f.write(f"apiVersion: v1\nkind: Config\nclusters: [{{name: fake, cluster: {{server: \"{self.server}\"}}}}]\n"
                    "users: [{name: u, user: {}}]\ncontexts: [{name: fake, context: {cluster: fake, user: u}}]\n"
                    "current-context: fake\n")

    def stop(self):
        self.proc.terminate()
        self.proc.wait()

    def request(self, method, path, body=None, ctype="application/json", headers=None):
        data = None if body is None else json.dumps(body).encode()
        h = {"Content-Type": ctype, **(headers or {})}
        req = urllib.request.Request(self.server + path, data=data, method=method, headers=h)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                code, text = r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            code, text = e.code, e.read().decode()
        try:
            return code, json.loads(text)
        except ValueError:
            return code, text

    def watch(self, path, timeout=30):
        with urllib.request.urlopen(self.server + path, timeout=timeout) as r:
            for line in r:
                if line.strip():
                    yield json.loads(line)

    def create(self, resource, obj):
        """Stores obj (status included, as the scheduler would have written it); returns it as stored."""
        self.request("POST", "/_control/apply", {"resource": resource, "object": obj})
        md = obj["metadata"]
        items = self.request("GET", list_path(resource))[1]["items"]
        return next(o for o in items if o["metadata"]["name"] == md["name"]
                    and o["metadata"].get("namespace") == md.get("namespace"))

    def delete(self, resource, namespace, name):
        self.request("POST", "/_control/delete", {"resource": resource, "namespace": namespace or "", "name": name})

    def kubectl(self, *args):
        r = subprocess.run([self.kubectl_bin, "--kubeconfig", self.kubeconfig, "--cache-dir",
                            os.path.join(self.work, "kube-cache-fake"), *args], capture_output=True, text=True, timeout=30)
        return r.returncode, r.stdout, r.stderr


class RealBackend:
    name = "real"

    def __init__(self, src, work, cluster=None):
        self.cluster = cluster or RealCluster(src).__enter__()
        self.owned = cluster is None
        self.server = self.cluster.server
        self.kubeconfig = self.cluster.admin_kubeconfig

    def stop(self):
        if self.owned:
            self.cluster.stop()

    def request(self, method, path, body=None, ctype="application/json", headers=None):
        return self.cluster.request(method, path, body, ctype)

    def watch(self, path, timeout=30):
        return self.cluster.watch(path, timeout=timeout)

    def create(self, resource, obj):
        obj = json.loads(json.dumps(obj))
        status = obj.pop("status", None)
        md = obj["metadata"]
        ns = md.get("namespace")
        if ns and self.request("GET", f"/api/v1/namespaces/{ns}")[0] == 404:
            self.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        code, out = self.request("POST", object_path(resource, ns), obj)
        if code != 201:
            raise RuntimeError(f"create {resource} {md['name']}: {code} {out}")
        if status is not None:
            out["status"] = status
            code, out = self.request("PUT", object_path(resource, ns, md["name"]) + "/status", out)
            if code != 200:
                raise RuntimeError(f"status of {resource} {md['name']}: {code} {out}")
        return out

    def delete(self, resource, namespace, name):
        self.request("DELETE", object_path(resource, namespace, name))

    def kubectl(self, *args):
        return self.cluster.kubectl(*args)
