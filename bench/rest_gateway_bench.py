#!/usr/bin/python3
"""Benchmark (not a test): what claim2core-rest adds to claim2cored's gRPC API.

In one run, against a private claim2cored (bench/bench_node.py, with the fake vLLM
process), side by side:
  * GET /api/v1/node-scheduling-intents/self  vs gRPC ListPolicies + ListIntents (the same two
    calls the gateway makes: "self" needs the policies' owners), back to back;
  * the same GET after an idle gap (10-30 ms, drawn from a fixed seed; the gap is not timed), as a
    script or the GUI makes requests;
  * POST /api/v1/node-scheduling-policies     vs gRPC UpsertPolicy with require_named_node (the
    gateway's one call: the write and its nodeNames check, issue 44); each new policy is deleted
    again, untimed, so every upsert meets the same daemon state.
With --before OLD_BINARY a second gateway (e.g. built from the commit before a change) serves the
same daemon, so before and after are measured in the same run, request by request.

Fair by construction: one client thread, one persistent connection per path (HTTP/1.1 keep-alive,
one gRPC channel), Python's http.client and grpcio (both the stock clients); 50 warm-up requests
per path; request bodies and messages built before the clock starts; the clock starts at the
call and stops when the reply is read; paths interleaved round by round, rotating which goes
first (an upsert leaves the daemon busy for a moment: the request after it pays for that).
Each gateway reply carries Server-Timing app;dur (the handler's time, daemon calls included), so
"HTTP layer" = client latency - app;dur is the cost of the HTTP hop itself. Load average before
and after.

usage: bench/rest_gateway_bench.py BUILD_DIR [N] [--before OLD_REST_BINARY] [--warm-up K]   (root, bpffs)
ctest bench_rest_smoke runs it with N=8 and 2 warm-up requests (no figure is checked).
"""
import argparse
import http.client
import json
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_node import NODE, TOKENS, BenchNode, pct, proto_messages, require_root_and_bpffs  # noqa: E402

import grpc  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("build")
ap.add_argument("n", nargs="?", type=int, default=2000)
ap.add_argument("--before", help="a claim2core-rest binary to measure next to this build's")
ap.add_argument("--warm-up", type=int, default=50, help="untimed requests a path before each measurement")
args = ap.parse_args()
require_root_and_bpffs("a private claim2cored (BPF maps, bpffs pins)")
N, WARM = args.n, args.warm_up
pb = proto_messages("c2c-bench-pb-")

SERVICE = "/claim2core.v1.Claim2Core/"
AUTH = {"Authorization": "Bearer " + TOKENS["admin"][0], "Content-Type": "application/json"}


def row(name, lat):
    return (f"{name:46s} {len(lat) / sum(lat):7.0f} req/s   p50 {pct(lat, 0.5) * 1e3:7.3f} ms   "
            f"p99 {pct(lat, 0.99) * 1e3:7.3f} ms")


class RestClient:
    def __init__(self, port):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.app = []  # Server-Timing app;dur of each timed reply, in seconds

    def call(self, method, path, body):
        t = time.perf_counter()
        self.conn.request(method, path, body=body, headers=AUTH)
        r = self.conn.getresponse()
        data = r.read()
        dt = time.perf_counter() - t
        assert r.status == 200, (r.status, data)
        timing = r.getheader("Server-Timing", "")
        self.app.append(float(timing.split("dur=")[1]) / 1e3 if "dur=" in timing else None)
        self.last = json.loads(data)
        return dt


env = BenchNode(args.build, tag="rest-bench")
try:
    env.start()
    ch = grpc.insecure_channel("unix://" + env.sock)
    rpc = {m: ch.unary_unary(SERVICE + m, request_serializer=lambda r: r.SerializeToString(), response_deserializer=d.FromString)
           for m, d in [("ListIntents", pb.ListIntentsResponse), ("ListPolicies", pb.ListPoliciesResponse),
                        ("UpsertPolicy", pb.UpsertPolicyResponse), ("Status", pb.StatusResponse),
                        ("DeletePolicy", pb.DeletePolicyResponse)]}
    gateways = {"after": RestClient(env.port)}
    if args.before:
        gateways["before"] = RestClient(env.start_gateway(args.before))

    # Policies that match no thread, so the map and the policy count grow the same way on every path.
    post_body = json.dumps({"nodeNames": [NODE], "commandRegex": "^c2c-bench-none$", "priority": 1,
                            "executionTime": 2000000}).encode()
    list_policies, list_intents = pb.ListPoliciesRequest(), pb.ListIntentsRequest(kind=pb.NODE_SCHEDULING_POLICY)
    upserts = iter([pb.UpsertPolicyRequest(policy=pb.Policy(node=pb.NodeSchedulingPolicy(
        name=f"bench-grpc-{i}", node_names=[NODE], command_regex="^c2c-bench-none$", priority=1,
        execution_time_ns=2000000)), require_named_node=True) for i in range(N + 4 * WARM)])

    def grpc_get():
        t = time.perf_counter()
        rpc["ListPolicies"](list_policies, timeout=10)
        rpc["ListIntents"](list_intents, timeout=10)
        return time.perf_counter() - t

    def grpc_post():
        req = next(upserts)
        t = time.perf_counter()
        rpc["UpsertPolicy"](req, timeout=10)
        dt = time.perf_counter() - t
        untimed_delete(req.policy.node.name)
        return dt

    # Each POST's policy is deleted again (untimed), so every upsert meets the same daemon state
    # (an upsert's cost grows with the number of policies the daemon holds).
    def untimed_delete(name):
        rpc["DeletePolicy"](pb.DeletePolicyRequest(kind=pb.NODE_SCHEDULING_POLICY, name=name), timeout=10)

    def rest_post(c):
        dt = c.call("POST", "/api/v1/node-scheduling-policies", post_body)
        untimed_delete(f"{TOKENS['admin'][1]}-{c.last['data']['id']}")
        return dt

    def paths(kind):
        out = {"grpc": grpc_get if kind == "get" else grpc_post}
        for name, c in gateways.items():
            if kind == "get":
                out[name] = lambda c=c: c.call("GET", "/api/v1/node-scheduling-intents/self", None)
            else:
                out[name] = lambda c=c: rest_post(c)
        return out

    rng = random.Random(18)

    def run(kind, rounds, gap=None):
        fns = paths(kind)
        names = list(fns)
        lat = {k: [] for k in names}
        app = {k: [] for k in gateways}
        for i in range(WARM + rounds):
            k = i % len(names)
            for name in names[k:] + names[:k]:
                if gap:
                    time.sleep(rng.uniform(*gap))
                start = len(gateways[name].app) if name in gateways else 0
                dt = fns[name]()
                if i >= WARM:
                    lat[name].append(dt)
                    if name in gateways:
                        app[name].append(gateways[name].app[start])
        return lat, app

    load0 = open("/proc/loadavg").read().split()[:3]
    results = [("GET .../node-scheduling-intents/self, back to back", "ListPolicies + ListIntents", run("get", N)),
               ("GET .../node-scheduling-intents/self, 10-30 ms apart", "ListPolicies + ListIntents",
                run("get", N // 4, gap=(0.010, 0.030))),
               ("POST .../node-scheduling-policies", "UpsertPolicy", run("post", N // 4))]
    load1 = open("/proc/loadavg").read().split()[:3]
    print(f"claim2core-rest vs claim2cored gRPC: one client, keep-alive, {WARM} warm-up requests a path, "
          f"interleaved ({', '.join(['gRPC'] + ['REST ' + g for g in gateways])})")
    print(f"cpus {os.cpu_count()}, load average before {' '.join(load0)}, after {' '.join(load1)}")
    for title, grpc_calls, (lat, app) in results:
        print(f"\n{title}  ({len(lat['grpc'])} requests a path)")
        print(row(f"gRPC {grpc_calls}", lat["grpc"]))
        for g in gateways:
            print(row(f"REST ({g})", lat[g]))
        for g in gateways:
            hop = [t - a for t, a in zip(lat[g], app[g]) if a is not None]
            if hop:
                print(f"  REST ({g}) HTTP layer (latency - Server-Timing app): p50 {pct(hop, 0.5) * 1e3:.3f} ms, "
                      f"p99 {pct(hop, 0.99) * 1e3:.3f} ms")
            print(f"  REST ({g}) adds over gRPC: p50 {(pct(lat[g], 0.5) - pct(lat['grpc'], 0.5)) * 1e3:+.3f} ms, "
                  f"p99 {(pct(lat[g], 0.99) - pct(lat['grpc'], 0.99)) * 1e3:+.3f} ms")
finally:
    env.stop()
