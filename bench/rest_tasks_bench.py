#!/usr/bin/python3
"""Benchmark (not a test): GET /api/v1/tasks with many policies and many clients (issue 42: with
~185 policies and 32 clients its p99 was 3.3 s, one Preview call per policy per request).

Against a private claim2cored (bench/bench_node.py, with the fake vLLM): P node
policies are created through the gateway (each matches nothing but one of them the EngineCore
threads), then C client threads, each with its own keep-alive connection, make N GETs of
/api/v1/tasks each; latencies from the call to the last byte; the daemon's Preview and ListTasks
call counts (its /metrics) before and after; the load average before and after. With --before
OLD_BINARY the same daemon is served by a second gateway and both are measured in one run,
alternately (old, new, old, new, ...).

usage: bench/rest_tasks_bench.py BUILD_DIR [--policies 185] [--clients 32] [--requests 10] [--before OLD_REST]
       (root, bpffs)
"""
import argparse
import http.client
import os
import re
import sys
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_node import NODE, TOKENS, BenchNode, free_port, loadavg, pct  # noqa: E402


def daemon_calls(port, method):
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    return sum(float(v) for v in re.findall(r'^claim2core_rpcs_total\{[^}]*method="' + method + r'"[^}]*\} (\S+)$',
                                            text, re.M))


def run(port, clients, requests):
    lat, errors = [], []
    lock = threading.Lock()

    def client():
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        mine = []
        for _ in range(requests):
            t0 = time.perf_counter()
            c.request("GET", "/api/v1/tasks", headers={"Authorization": "Bearer " + TOKENS["reader"][0]})
            r = c.getresponse()
            r.read()
            mine.append(time.perf_counter() - t0)
            if r.status != 200:
                errors.append(r.status)
            if r.getheader("Connection", "").lower() == "close":
                c.close()  # refused and closed: the next request opens a new connection
        c.close()
        with lock:
            lat.extend(mine)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return lat, errors, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--policies", type=int, default=185)
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--requests", type=int, default=10)
    ap.add_argument("--before")
    a = ap.parse_args()
    metrics_port = free_port()
    env = BenchNode(a.build, tag="rest-tasks-bench",
                  daemon_args=["--metrics-address", f"127.0.0.1:{metrics_port}"],
                  # every client comes from 127.0.0.1: the per-address limit (16) would refuse
                  # the 17th; this measures the daemon calls, not that limit
                  gateway_args=["--max-connections-per-client", "64", "--max-connections", "64", "--worker-threads", "68"])
    try:
        env.start()
        for i in range(a.policies):
            regex = "^EngineCore(_DP[0-9]+)?$" if i == 0 else f"^nothing{i}$"
            s, b = env.request("POST", "/api/v1/node-scheduling-policies",
                                  body={"nodeNames": [NODE], "commandRegex": regex, "priority": 1})
            assert s == 200, b
        gateways = [("after", env.port)]
        if a.before:
            old_port = env.start_gateway(a.before)
            gateways.insert(0, ("before", old_port))
        print(f"{a.policies} policies, {a.clients} clients x {a.requests} GET /api/v1/tasks each")
        print(f"load average before: {loadavg()}")
        results = {name: ([], [], 0.0, 0.0, 0.0) for name, _ in gateways}
        for rnd in range(2):  # alternate, so that neither always runs on a warmer daemon
            for name, port in gateways:
                p0, l0 = daemon_calls(metrics_port, "Preview"), daemon_calls(metrics_port, "ListTasks")
                lat, errors, wall = run(port, a.clients, max(1, a.requests // 2))
                p1, l1 = daemon_calls(metrics_port, "Preview"), daemon_calls(metrics_port, "ListTasks")
                r = results[name]
                results[name] = (r[0] + lat, r[1] + errors, r[2] + wall, r[3] + p1 - p0, r[4] + l1 - l0)
        for name, (lat, errors, wall, previews, lists) in results.items():
            n = len(lat)
            print(f"{name:6}: {n} requests, {len(errors)} errors {sorted(set(errors))}, p50 {pct(lat, 0.50) * 1000:.1f} ms, "
                  f"p99 {pct(lat, 0.99) * 1000:.1f} ms, max {max(lat) * 1000:.1f} ms, {n / wall:.1f} req/s; "
                  f"daemon calls per request: Preview {previews / n:.1f}, ListTasks {lists / n:.1f}")
        print(f"load average after: {loadavg()}")
    finally:
        env.stop()


if __name__ == "__main__":
    main()
