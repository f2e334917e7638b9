"""Prints the image reference a DaemonSet manifest names; exits 1, naming the containers, when its
containers do not all name the same one (the image build and the DaemonSet must agree).

  image_ref.py daemonset.yaml
"""
import sys

import yaml

with open(sys.argv[1], encoding="utf-8") as f:
    ds = next(d for d in yaml.safe_load_all(f) if d and d.get("kind") == "DaemonSet")
spec = ds["spec"]["template"]["spec"]
images = {c["name"]: c.get("image", "") for c in spec.get("initContainers", []) + spec["containers"]}
refs = set(images.values())
if len(refs) != 1 or "" in refs or ":" not in next(iter(refs)).rsplit("/", 1)[-1]:
    print(f"{sys.argv[1]}: spec.template.spec.containers[].image must be one tagged reference, found "
          + ", ".join(f"{k}: {v or '(none)'}" for k, v in images.items()), file=sys.stderr)
    sys.exit(1)
print(refs.pop())
