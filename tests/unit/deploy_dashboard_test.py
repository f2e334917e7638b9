#!/usr/bin/python3
"""deploy/monitoring/claim2core-dashboard.json (Grafana): every query names only metrics
claim2cored exports (the names in src/daemon's metric definitions, plus _bucket/_sum/_count of
them), names at least one, and parses as PromQL (promtool check rules on the queries written as
recording rules). First shown to catch a misspelt metric, another exporter's metric and an
unbalanced query in seeded copies.

usage: deploy_dashboard_test.py SOURCE_DIR
"""
import copy
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SRC = sys.argv[1]
DASHBOARD = os.path.join(SRC, "deploy", "monitoring", "claim2core-dashboard.json")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_lines import check, finish  # noqa: E402


def exported_metrics():
    names = set()
    for path in glob.glob(os.path.join(SRC, "src", "daemon", "**", "*.cpp"), recursive=True):
        with open(path, encoding="utf-8") as f:
            names |= set(re.findall(r'"((?:claim2core|process)_[a-z0-9_]+)"', f.read()))
    return names


def queries(dash):
    """(where, PromQL) of every panel target (rows included) and query variable."""
    out = []

    def walk(panels):
        for p in panels:
            for t in p.get("targets", []):
                if t.get("expr"):
                    out.append((f"panel '{p.get('title')}' {t.get('refId')}", t["expr"]))
            walk(p.get("panels", []))

    walk(dash.get("panels", []))
    for v in dash.get("templating", {}).get("list", []):
        q = v.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        if v.get("type") == "query" and q:
            m = re.fullmatch(r"\s*label_values\((.*),\s*[A-Za-z_]+\)\s*", q)
            out.append((f"variable '{v['name']}'", m.group(1) if m else q))
    return out


KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless",
            "offset", "inf", "nan"}


def metric_names(expr):
    """The metric names a PromQL expression selects (functions, label names, keywords left out)."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)            # string literals (label values)
    e = re.sub(r"\{[^}]*\}", "", e)                           # label matchers
    e = re.sub(r"\[[^\]]*\]", "", e)                          # range and subquery durations
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", e)
    names = []
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", e):
        rest = e[m.end():].lstrip()
        if rest.startswith("(") or m.group(0).lower() in KEYWORDS:
            continue
        names.append(m.group(0))
    return names


def known(name, exported):
    if name in exported:
        return True
    base = re.sub(r"_(bucket|sum|count)$", "", name)
    return base != name and base in exported


def problems(dash, exported):
    out = []
    for where, expr in queries(dash):
        names = metric_names(expr)
        if not names:
            out.append(f"{where}: names no metric: {expr}")
        for n in names:
            if not known(n, exported):
                out.append(f"{where}: {n} is not a metric claim2cored exports")
    return out


def promtool_problems(dash):
    """promtool check rules over every query as a recording rule, Grafana's variables substituted."""
    if shutil.which("promtool") is None:
        return None
    rules = []
    for i, (where, expr) in enumerate(queries(dash)):
        e = expr.replace("$__rate_interval", "5m").replace("$__interval", "1m").replace("$instance", ".*")
        rules.append({"record": f"dashboard:query_{i}", "expr": e})
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        # promtool reads YAML, and JSON is YAML.
        json.dump({"groups": [{"name": "dashboard", "rules": rules}]}, f)
    try:
        r = subprocess.run(["promtool", "check", "rules", f.name], capture_output=True, text=True)
        return [] if r.returncode == 0 else [(r.stdout + r.stderr).strip()]
    finally:
        os.unlink(f.name)


with open(DASHBOARD, encoding="utf-8") as f:
    dash = json.load(f)
exported = exported_metrics()
check(len(exported) >= 15, f"{len(exported)} metric names found in src/daemon")
check(len(queries(dash)) >= 10, f"{len(queries(dash))} queries in the dashboard")

# Seeded bugs: each copy must be refused.
def first_target(d):
    return next(t for p in d["panels"] for t in p.get("targets", []) if "claim2core_apply_seconds_bucket" in t["expr"])


bad = copy.deepcopy(dash)
first_target(bad)["expr"] = first_target(bad)["expr"].replace("claim2core_apply_seconds_bucket", "claim2core_apply_second_bucket")
check(any("claim2core_apply_second_bucket" in p for p in problems(bad, exported)), "seeded misspelt metric is caught")
bad = copy.deepcopy(dash)
first_target(bad)["expr"] = 'rate(node_cpu_seconds_total{mode="idle"}[5m])'
check(any("node_cpu_seconds_total" in p for p in problems(bad, exported)), "seeded foreign metric is caught")
bad = copy.deepcopy(dash)
first_target(bad)["expr"] = first_target(bad)["expr"].rstrip(")")
pt = promtool_problems(bad)
if pt is None:
    print("SKIP promtool checks: promtool missing (scripts/setup installs prometheus)")
else:
    check(len(pt) == 1, "seeded unbalanced query is refused by promtool")

for p in problems(dash, exported):
    check(False, p)
check(not problems(dash, exported), "every query names only exported metrics")
pt = promtool_problems(dash)
if pt is not None:
    check(pt == [], "promtool parses every query" + ("" if not pt else f": {pt[0]}"))
used = {n for _, e in queries(dash) for n in metric_names(e)}
print(f"{len(used)} metrics used: {', '.join(sorted(used))}")
finish()
