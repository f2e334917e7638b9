#!/usr/bin/env bash
# The OCI image (issue 17): packaging/image/build-image.sh builds it with buildah from scratch out
# of the package's files (no registry, no base image), and podman runs it the way the DaemonSet
# runs its claim2cored container (packaging/image/run_args.py reads the DaemonSet: hostPID, the
# capabilities, which are the unit's, read-only root, bpffs rslave, cgroupfs read-only, the
# command). The daemon starts; the DaemonSet's readiness probe command passes inside the
# container; the host's CLI reaches the same socket and applies the seed's vLLM policy; the
# EngineCore thread of a host process (hostPID) lands in the pinned map on the host's bpffs.
# Seeded first: a DaemonSet whose containers name different images is refused by the build, and
# an image missing a shared library fails the readiness probe.
# Private host dirs stand in for the hostPaths, and the configmap's config runs with its own pin
# root and metrics port (a daemon of this host is left alone); podman's host network replaces the
# pod network (metrics scraped from the host).
#   image_test.sh <build dir> <source dir> <claim2core> <c2c-fake-vllm>
set -euo pipefail
BUILD=$(realpath "$1") SRC=$(realpath "$2") CLI=$3 FAKE=$4
fail() { echo "FAIL: $*" >&2; exit 1; }
if [ "$(id -u)" -ne 0 ] || ! mountpoint -q /sys/fs/bpf; then echo "SKIP: needs root and bpffs"; exit 0; fi
for t in buildah podman bpftool jq; do command -v $t >/dev/null || { echo "SKIP: $t missing (scripts/setup)"; exit 0; }; done
DS=$SRC/deploy/kubernetes/base/daemonset.yaml
UNIT=$SRC/deploy/systemd/claim2cored.service
IMG=$SRC/packaging/image
WORK=$(mktemp -d /tmp/c2c-image-test.XXXXXX)
PIN=/sys/fs/bpf/c2c-image-test-$$
NAME=c2c-image-test-$$
FAKE_PID=""
cleanup() {
  # One name per call: podman rm stops at the first name that does not exist. The daemon goes
  # before its pins (it would pin them again).
  for c in "$NAME" "$NAME-seeded"; do podman rm -f -t 0 "$c" >/dev/null 2>&1 || true; done
  podman rmi -f localhost/claim2core:seeded-missing-lib >/dev/null 2>&1 || true
  [ -n "$FAKE_PID" ] && kill "$FAKE_PID" 2>/dev/null && wait "$FAKE_PID" 2>/dev/null
  rm -rf "$WORK" "$PIN"
}
trap cleanup EXIT

# This machine's runtime quirks, not the image's: crun refuses hybrid cgroup hierarchies (runc
# does not), and the sandbox refuses rlimits at its own maximum, so they are set below it.
RUNTIME=()
command -v runc >/dev/null && RUNTIME=(--runtime runc)
NOFILE=$(ulimit -Hn); [ "$NOFILE" = unlimited ] || [ "$NOFILE" -gt 65536 ] && NOFILE=65536
LIMITS=(--ulimit "nofile=$NOFILE:$NOFILE" --ulimit nproc=4096:4096)

# 1. The capabilities the DaemonSet adds are the ones the unit names.
ds_caps=$(python3 -c 'import sys,yaml; d=[x for x in yaml.safe_load_all(open(sys.argv[1])) if x and x["kind"]=="DaemonSet"][0]; c=[c for c in d["spec"]["template"]["spec"]["containers"] if c["name"]=="claim2cored"][0]; print(" ".join(sorted(c["securityContext"]["capabilities"]["add"])))' "$DS")
unit_caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT" | tr ' ' '\n' | sed 's/^CAP_//' | sort | tr '\n' ' ' | sed 's/ $//')
[ "$ds_caps" = "$unit_caps" ] || fail "DaemonSet capabilities '$ds_caps' differ from the unit's '$unit_caps'"

# 2. Seeded: containers naming different images are refused (the build reads the DaemonSet).
sed '0,/image: /s|image: .*|image: localhost/claim2core:0.0.9|' "$DS" >"$WORK/seeded-ds.yaml"
if out=$(python3 "$IMG/image_ref.py" "$WORK/seeded-ds.yaml" 2>&1); then fail "image_ref.py accepted two image references"; fi
[[ $out == *"claim2cored: localhost/claim2core:0.0.9"* ]] || fail "the refusal does not name the containers: $out"
REF=$("$IMG/build-image.sh" "$BUILD" --print-ref)

# 3. Build.
"$IMG/build-image.sh" "$BUILD" >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; fail "build-image.sh"; }
[ "$(tail -n1 "$WORK/build.log")" = "$REF" ] || fail "build-image.sh did not end with $REF"
podman image exists "$REF" || fail "podman has no $REF"
[ "$(podman image inspect --format '{{index .Labels "org.opencontainers.image.version"}}' "$REF")" = "${REF##*:}" ] ||
  fail "the image's version label is not ${REF##*:}"

# Host directories for the DaemonSet's volumes; the configmap's config with private paths.
mkdir -p "$WORK"/{run,state,config,roles}
chmod 0700 "$WORK/run"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 - "$SRC/deploy/kubernetes/base/configmap.yaml" "$PIN" "$PORT" >"$WORK/config/claim2cored.yaml" <<'PY'
import sys, yaml
cm = yaml.safe_load(open(sys.argv[1]))
c = yaml.safe_load(cm["data"]["claim2cored.yaml"])
c["pin_root"] = sys.argv[2]
c["metrics"]["address"] = "127.0.0.1:" + sys.argv[3]
c["readback_interval"] = "500ms"
print(yaml.safe_dump(c))
PY
mapfile -t RUN < <(python3 "$IMG/run_args.py" "$DS" claim2cored dgx-spark-gb10 bpffs=/sys/fs/bpf \
  cgroupfs=/sys/fs/cgroup run="$WORK/run" state="$WORK/state" config="$WORK/config" roles="$WORK/roles")
mapfile -t PROBE < <(python3 "$IMG/run_args.py" "$DS" claim2cored --probe readiness)
run_as_daemonset() {  # run_as_daemonset <container name> <image>
  local args=("${RUN[@]/#IMAGE/$2}")
  podman "${RUNTIME[@]}" run -d --name "$1" --network host "${LIMITS[@]}" "${args[@]}" >/dev/null
}
ready() {  # ready <container name>: the DaemonSet's readiness probe, inside the container
  podman exec "$1" "${PROBE[@]}" >/dev/null 2>&1
}

# 4. Seeded: the image without libgrpc++ must not pass the readiness probe.
c=$(buildah from "$REF")
m=$(buildah mount "$c")
rm -f "$m"/lib/x86_64-linux-gnu/libgrpc++.so.* "$m"/usr/lib/x86_64-linux-gnu/libgrpc++.so.*
buildah umount "$c" >/dev/null
buildah commit -q --rm "$c" localhost/claim2core:seeded-missing-lib >/dev/null
run_as_daemonset "$NAME-seeded" localhost/claim2core:seeded-missing-lib || true
sleep 2
if ready "$NAME-seeded"; then fail "an image without libgrpc++ passed the readiness probe"; fi
podman rm -f -t 0 "$NAME-seeded" >/dev/null 2>&1
podman rmi -f localhost/claim2core:seeded-missing-lib >/dev/null
rm -rf "$WORK/state"/* "$PIN"

# 5. The real image, as the DaemonSet runs it.
"$FAKE" >"$WORK/fake.out" &
FAKE_PID=$!
for _ in $(seq 100); do grep -qx ready "$WORK/fake.out" && break; sleep 0.1; done
ENGINE0=$(awk '$2 == "EngineCore_DP0" {print $1}' "$WORK/fake.out")
[ -n "$ENGINE0" ] || fail "the helper printed no EngineCore_DP0 thread"
run_as_daemonset "$NAME" "$REF" || fail "podman run $REF"
for _ in $(seq 150); do ready "$NAME" && break; sleep 0.2; done
ready "$NAME" || { podman logs "$NAME" | tail -20; fail "the readiness probe (${PROBE[*]}) fails inside the container"; }
echo "ok: inside the container: ${PROBE[*]}"
export CLAIM2CORE_SOCKET=$WORK/run/claim2cored.sock
"$CLI" status >/dev/null || fail "the host's CLI cannot reach $CLAIM2CORE_SOCKET"
"$CLI" apply -f "$SRC/examples/policies/vllm-enginecore.yaml" >/dev/null || fail "apply from the host"
has_entry() {
  bpftool -j map dump pinned "$PIN/c2c_policy" 2>/dev/null |
    jq -e --argjson t "$ENGINE0" '[.[] | (.formatted.key.tid? // .key.tid?)] | index($t) != null' >/dev/null
}
for _ in $(seq 100); do has_entry && break; sleep 0.2; done
has_entry || { "$CLI" get intents; podman logs "$NAME" | tail -20; fail "EngineCore_DP0 ($ENGINE0) is not in $PIN/c2c_policy on the host"; }
echo "ok: outside: the host's CLI applied the policy; EngineCore_DP0 $ENGINE0 is in the host's $PIN/c2c_policy"
curl -sf "http://127.0.0.1:$PORT/metrics" | grep -q '^claim2core_build_info{version="'"${REF##*:}" ||
  fail "no claim2core_build_info from the container's metrics endpoint"
podman logs "$NAME" 2>&1 | grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+[+-][0-9]{2}:[0-9]{2} info .*intent .* policy=NodeSchedulingPolicy/vllm-enginecore' ||
  fail "the container log has no zoned, structured intent line"
# Kubernetes stops a pod with SIGTERM and the grace period; the drain must end in time, exit 0.
podman stop -t 45 "$NAME" >/dev/null
[ "$(podman inspect --format '{{.State.ExitCode}}' "$NAME")" = 0 ] || { podman logs "$NAME" | tail; fail "the daemon did not exit 0 on SIGTERM"; }
[ -e "$PIN/c2c_policy" ] || fail "the pinned map did not outlive the container"
echo "ok: $REF built from the package's files and run as the DaemonSet runs it"
