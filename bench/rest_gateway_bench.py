#!/usr/bin/python3
"""Benchmark (not a test): what claim2core-rest adds to claim2cored's gRPC API. In one run, against a
private claim2cored + gateway (tests/integration/rest_env.py) with the fake vLLM process:
GET /api/v1/node-scheduling-intents/self vs gRPC ListIntents (+ ListPolicies, which the
gateway also calls for "self"), and POST /api/v1/node-scheduling-policies vs gRPC UpsertPolicy
(+ Status, the gateway's nodeNames check), interleaved request by request (alternating which goes first) so both paths see
the same daemon state. One client, one persistent connection each (HTTP keep-alive, one gRPC
channel): requests/s and p50/p99 latency, plus the load average before and after.

usage: bench/rest_gateway_bench.py BUILD_DIR [N]   (root and bpffs; e.g. build 2000)
"""
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(SRC, "tests", "integration"))
from rest_env import NODE, RestEnv  # noqa: E402

import grpc  # noqa: E402
import http.client  # noqa: E402
import json  # noqa: E402

BUILD = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
GEN = tempfile.mkdtemp(prefix="c2c-bench-pb-")
subprocess.run(["protoc", f"--proto_path={SRC}/spec", f"--python_out={GEN}", f"{SRC}/spec/claim2core.proto"], check=True)
sys.path.insert(0, GEN)
import claim2core_pb2 as pb  # noqa: E402

SERVICE = "/claim2core.v1.Claim2Core/"


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]


def row(name, lat):
    total = sum(lat)
    return f"{name:44s} {len(lat) / total:9.0f} req/s   p50 {pct(lat, 0.5) * 1e3:6.3f} ms   p99 {pct(lat, 0.99) * 1e3:6.3f} ms"


env = RestEnv(f"{BUILD}/src/daemon/claim2cored", f"{BUILD}/src/rest/claim2core-rest", f"{BUILD}/src/cli/c2c-fake-vllm",
              tag="rest-bench")
try:
    env.start()
    ch = grpc.insecure_channel("unix://" + env.sock)
    rpc = {m: ch.unary_unary(SERVICE + m, request_serializer=lambda r: r.SerializeToString(), response_deserializer=d.FromString)
           for m, d in [("ListIntents", pb.ListIntentsResponse), ("ListPolicies", pb.ListPoliciesResponse),
                        ("UpsertPolicy", pb.UpsertPolicyResponse), ("Status", pb.StatusResponse)]}
    http_conn = http.client.HTTPConnection("127.0.0.1", env.port, timeout=30)
    auth = {"Authorization": "Bearer admin-token-0123456789abcdef", "Content-Type": "application/json"}

    def http_call(method, path, body=None):
        http_conn.request(method, path, body=None if body is None else json.dumps(body), headers=auth)
        r = http_conn.getresponse()
        data = r.read()
        assert r.status == 200, (r.status, data)

    # Policies that match no thread, so the map and the policy count grow the same way on both paths.
    body = {"nodeNames": [NODE], "commandRegex": "^c2c-bench-none$", "priority": 1, "executionTime": 2000000}
    load0 = open("/proc/loadavg").read().split()[:3]
    lat = {k: [] for k in ("rest_get", "grpc_get", "rest_post", "grpc_post")}
    def rest_get(i):
        http_call("GET", "/api/v1/node-scheduling-intents/self")

    def grpc_get(i):
        rpc["ListPolicies"](pb.ListPoliciesRequest(), timeout=10)
        rpc["ListIntents"](pb.ListIntentsRequest(kind=pb.NODE_SCHEDULING_POLICY), timeout=10)

    def rest_post(i):
        http_call("POST", "/api/v1/node-scheduling-policies", body)

    def grpc_post(i):
        rpc["Status"](pb.StatusRequest(), timeout=10)
        rpc["UpsertPolicy"](pb.UpsertPolicyRequest(policy=pb.Policy(node=pb.NodeSchedulingPolicy(
            name=f"bench-grpc-{i}", node_names=[NODE], command_regex="^c2c-bench-none$", priority=1,
            execution_time_ns=2000000))), timeout=10)

    # Which path goes first alternates: an upsert leaves the daemon busy (map apply, durable
    # commit) for a moment, and the request right after it would pay for that.
    def pair(i, a, b):
        for name, fn in ((a, b) if i % 2 == 0 else (b, a)):
            t = time.perf_counter()
            fn(i)
            lat[name].append(time.perf_counter() - t)

    for i in range(N):
        pair(i, ("rest_get", rest_get), ("grpc_get", grpc_get))
    for i in range(N // 4):
        pair(i, ("rest_post", rest_post), ("grpc_post", grpc_post))
    load1 = open("/proc/loadavg").read().split()[:3]
    print(f"claim2core-rest vs claim2cored gRPC, one client, {N} GETs and {N // 4} POSTs each, interleaved")
    print(f"cpus {os.cpu_count()}, load average before {' '.join(load0)}, after {' '.join(load1)}")
    print(row("REST GET .../node-scheduling-intents/self", lat["rest_get"]))
    print(row("gRPC ListPolicies + ListIntents", lat["grpc_get"]))
    print(row("REST POST .../node-scheduling-policies", lat["rest_post"]))
    print(row("gRPC Status + UpsertPolicy", lat["grpc_post"]))
    for a, b, what in (("rest_get", "grpc_get", "GET"), ("rest_post", "grpc_post", "POST")):
        print(f"gateway adds at p99 ({what}): {(pct(lat[a], 0.99) - pct(lat[b], 0.99)) * 1e3:+.3f} ms, "
              f"at p50: {(pct(lat[a], 0.5) - pct(lat[b], 0.5)) * 1e3:+.3f} ms")
finally:
    env.stop()
