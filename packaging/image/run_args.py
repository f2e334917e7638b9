"""The podman arguments that run an image the way deploy/kubernetes/base/daemonset.yaml runs its
claim2cored container: host PID namespace, the container's capabilities, no privilege escalation,
a read-only root, the volumes at their mount paths (bpffs with HostToContainer = rslave, cgroupfs
read-only), the command and args with $(NODE_NAME) filled in. Host directories for the hostPath
and configMap volumes are given on the command line (a test keeps them private).

  run_args.py daemonset.yaml CONTAINER NODE_NAME VOLUME=HOSTDIR... -> one argument per line
  run_args.py daemonset.yaml CONTAINER --probe readiness|liveness    -> the probe's command
"""
import sys

import yaml

path, container = sys.argv[1:3]
with open(path, encoding="utf-8") as f:
    ds = next(d for d in yaml.safe_load_all(f) if d and d.get("kind") == "DaemonSet")
pod = ds["spec"]["template"]["spec"]
c = next(c for c in pod["containers"] if c["name"] == container)

if sys.argv[3] == "--probe":
    for a in c[sys.argv[4] + "Probe"]["exec"]["command"]:
        print(a)
    sys.exit(0)

node = sys.argv[3]
hostdirs = dict(a.split("=", 1) for a in sys.argv[4:])
sc = c.get("securityContext", {})
args = []
if pod.get("hostPID"):
    args.append("--pid=host")
if pod.get("hostNetwork"):
    args.append("--network=host")
caps = sc.get("capabilities", {})
if "ALL" in caps.get("drop", []):
    args.append("--cap-drop=all")
for cap in caps.get("add", []):
    args.append(f"--cap-add={cap}")
if sc.get("allowPrivilegeEscalation") is False:
    args.append("--security-opt=no-new-privileges")
if sc.get("readOnlyRootFilesystem"):
    args.append("--read-only")
if sc.get("appArmorProfile", {}).get("type") == "Unconfined":
    args.append("--security-opt=apparmor=unconfined")
if sc.get("privileged"):
    args.append("--privileged")
if "runAsUser" in sc:
    args.append(f"--user={sc['runAsUser']}")
volumes = {v["name"]: v for v in pod.get("volumes", [])}
for m in c.get("volumeMounts", []):
    if m["name"] not in hostdirs:
        sys.exit(f"{path}: container {container} mounts volume {m['name']}: give {m['name']}=HOSTDIR")
    opts = ["ro"] if m.get("readOnly") else ["rw"]
    prop = {"HostToContainer": "rslave", "Bidirectional": "rshared"}.get(m.get("mountPropagation", ""))
    if prop:
        opts.append(prop)
    args.append(f"--volume={hostdirs[m['name']]}:{m['mountPath']}:{','.join(opts)}")
for e in c.get("env", []):
    value = node if e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "spec.nodeName" else e.get("value", "")
    args.append(f"--env={e['name']}={value}")
cmd = c.get("command", []) + [a.replace("$(NODE_NAME)", node) for a in c.get("args", [])]
args.append(f"--entrypoint={cmd[0]}")
args.append("IMAGE")
args.extend(cmd[1:])
for a in args:
    print(a)
