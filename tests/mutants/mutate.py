#!/usr/bin/env python3
"""The one mutation runner: every section of seeded bugs (core, mirror, kernel, judge, vllm_judge, layering,
k8s_status, realk8s, role_socket, daemon_durable, names, rest, controller, classify, scx_peers) is read from its table (one format, below),
each mutant is written into a tree copy, only the targets its checkers need are rebuilt, the
section's checkers judge it, and the file is restored.

  mutate.py SECTION [--only NAME[,NAME...]] [--checkers "LIST"] [--full-matrix] [--keep]
            [--tree DIR] [--list] [--table FILE] [--prepare]
            [--integration-tests BIN]            (mirror: the main build's mirror_integration_tests)
            [--daemon CLAIM2CORED --fake VLLM]   (rest: the adversarial integration test)
            [--bpf-dir DIR]                      (role_socket: the BPF objects claim2cored loads)
            [--baseline-stamp FILE]              (kernel: proof.guards_wp's stamp)
            [--wp-cache DIR]                     (kernel: proof.guards_wp's cache of proved goals)
            [--guest-results FILE]               (kernel, scheduler: a guest run's results.jsonl)

The table format (tests/mutants/*.tsv): '#' comment lines, then a header line naming the
tab-separated columns, then one row per mutant. Every table has `name`, `file` (relative to the
tree), `from` and `to`: the exact text, found exactly once in `file`, and its replacement, with
`\\n` a line break and `\\t` a tab. A row whose `file` ends in `.patch` is a patch instead
(`patch -p1` in the tree; `from` and `to` are `-`). Optional columns: `what`, `inv`/`rule`,
`checkers` (the section's checkers that judge this row, default all), and each section's own
(`function` and `guest` for the kernel, `z3` and `spin` for the core).

The tree: sections that build (core, mirror, k8s_status, role_socket, daemon_durable, names,
rest, controller, classify) share one configured copy of the whole tree (--tree DIR, which ctest passes: the build
directory's mutants-tree, kept between sections and runs), brought up to date with the checkout
file by file (an unchanged file keeps its time stamp, so ninja rebuilds only what changed) and
built through ccache; a mutant rebuilds only its checker's targets. The others (kernel, judge,
layering, realk8s, vllm_judge, scx_peers) build nothing and work in a private temporary copy. Without --tree, a temporary copy.
--prepare only brings the tree up to date and builds every target of the section's checkers,
judging nothing: scripts/test does so in its build phase, so the default suite's first section
does not carry the copy's first build (tests/mutants/README.md).

Judging (the failure semantics of the runners this one replaced):
  * the unmutated tree must pass every checker first (baseline);
  * a text not found exactly once, a patch that does not apply, a mutant that does not compile,
    and a checker that ends in an error (ERROR, never a kill) fail the run;
  * mode "any" (every section but the kernel): a mutant must be killed by at least one checker.
    Checkers run cheapest first and a mutant's remaining checkers are skipped once one killed it,
    except that a checker with no kill yet in this run is tried first: so in the core section,
    where every checker must kill at least one mutant, that rule is still judged
    (--full-matrix runs every checker on every mutant: the whole kill matrix);
  * mode "every" (the kernel): every checker that can reach a mutant must kill it.
Exit 0: pass; 1: fail; 2: usage or setup error; 77: the checkers' tools are missing (skip).
"""
import argparse
import concurrent.futures
import copy
import filecmp
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
TOOL = "mutate"

# ---- the table format -------------------------------------------------------------------------


def unescape(text):
    """A table's text with its escapes read: \\n a line break, \\t a tab."""
    return text.replace("\\n", "\n").replace("\\t", "\t")


def read_table(path):
    """The rows of a table as dicts keyed by its header's names; exits naming the file and row on
    a row with another number of columns or a table without the required columns."""
    header, rows = None, []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            cols = line.split("\t")
            if header is None:
                header = cols
                missing = {"name", "file", "from", "to"} - set(header)
                if missing:
                    sys.exit(f"{TOOL}: {path}: the header line lacks the column(s) {', '.join(sorted(missing))}")
                continue
            if len(cols) != len(header):
                sys.exit(f"{TOOL}: {path}:{n}: row '{cols[0]}' has {len(cols)} columns, want {len(header)}")
            row = dict(zip(header, cols))
            row["from"], row["to"] = unescape(row["from"]), unescape(row["to"])
            rows.append(row)
    if header is None:
        sys.exit(f"{TOOL}: {path}: no header line")
    names = [r["name"] for r in rows]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        sys.exit(f"{TOOL}: {path}: mutant name(s) used twice: {', '.join(sorted(dup))}")
    return rows


def is_patch(row):
    return row["file"].endswith(".patch")


def replace_once(text, old, new):
    """text with old replaced by new, or None when old is not in text exactly once."""
    return text.replace(old, new) if text.count(old) == 1 else None


# ---- running things ---------------------------------------------------------------------------


def run(cmd, log, env=None, cwd=None, timeout=900):
    """The exit status of cmd, its output in the file log (124 on a timeout)."""
    with open(log, "w") as f:
        try:
            return subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=env, cwd=cwd,
                                  timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            f.write(f"\n{TOOL}: timed out after {timeout} s\n")
            return 124


def tail(path, n=20):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


def gtest_failures(log):
    """The failed tests named in a gtest log."""
    text = open(log, errors="replace").read()
    return sorted(set(re.findall(r"^\[  FAILED  \] ([A-Za-z0-9_/]+\.[A-Za-z0-9_/]+)", text, re.M)))


# A checker's verdict: KILLED (the mutant is caught), survived, ERROR (the checker broke: not a
# kill), SKIP (its tools are missing), n/a (it cannot reach this mutant), "not run" (no input).
KILLED, SURVIVED, ERROR, SKIP, NA, NOT_RUN = "KILLED", "survived", "ERROR", "SKIP", "n/a", "not run"


class Tree:
    """A copy of the checkout that mutants are written into, and (for the sections that build)
    its configured build directory."""

    # The main build's flags (RelWithDebInfo) through ccache (cmake/ccache.cmake: paths relative to
    # the tree, so the copy's unmutated files are cache hits on the main build's objects), but the
    # core library without debug info: the core mutants recompile core files (a header's all of
    # them), no checker reads debug info and it is a quarter of each compile
    # (tests/mutants/README.md). lld links the test binaries several times faster than ld.bfd.
    PARTS = ["src/core", "src/codec", "src/trace", "src/k8s", "src/kernel", "src/host", "src/mirror", "src/sched", "src/api",
             "src/client", "src/daemon", "src/cli", "src/rest", "tests/unit", "tests/property", "tests/integration",
             "fuzz", "src/report", "bpf"]

    def __init__(self, root, builds, persistent):
        self.root, self.builds, self.persistent = root, builds, persistent
        self.build = os.path.join(root, "build")
        self.build_seconds = 0.0

    def sync(self):
        """Brings the copy up to date with the checkout: a changed or new file is copied (with a
        new time stamp, so that ninja rebuilds what depends on it), an unchanged one is left as it
        is, and a file the checkout no longer has is removed. A mutant left behind by an
        interrupted run is a changed file, so it is restored here."""
        files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=SRC, capture_output=True,
                               check=True).stdout.decode().split("\0")
        want = set()
        copied = 0
        for rel in files:
            src = os.path.join(SRC, rel)
            if not rel or not os.path.isfile(src) or os.path.islink(src):
                continue
            want.add(rel)
            dst = os.path.join(self.root, rel)
            if os.path.isfile(dst) and filecmp.cmp(src, dst, shallow=False):
                continue
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(src, dst)
            shutil.copymode(src, dst)
            copied += 1
        for d, subdirs, names in os.walk(self.root):
            rel_d = os.path.relpath(d, self.root)
            if rel_d == "build" or rel_d.startswith("build" + os.sep) or rel_d.startswith(".mutate"):
                subdirs[:] = []
                continue
            for n in names:
                rel = os.path.normpath(os.path.join(rel_d, n))
                if rel not in want:
                    os.unlink(os.path.join(d, n))
        return copied

    def configure(self):
        flags = ["-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DC2C_CORE_NO_DEBUG_INFO=ON", "-DC2C_BUILD_BENCH=OFF",
                 # The fuzz column replays the committed corpus (gcc); the libFuzzer short runs stay in
                 # the main suite (fuzz.short.*): a clang+sanitizer build per copy would double the cost.
                 "-DC2C_FUZZ_CLANG_BUILD=OFF", "-DC2C_PARTS=" + ";".join(self.PARTS)]
        if shutil.which("ld.lld"):
            flags.append("-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld")
        os.makedirs(self.build, exist_ok=True)
        stamp = os.path.join(self.build, "mutate-flags")
        if os.path.exists(os.path.join(self.build, "build.ninja")) and os.path.exists(stamp) \
                and open(stamp).read() == "\n".join(flags):
            return True  # configured with these flags; ninja re-runs cmake when a CMakeLists.txt changed
        log = os.path.join(self.build, "mutate-configure.log")
        if run(["cmake", "-S", self.root, "-B", self.build, "-G", "Ninja", *flags], log) != 0:
            print(f"{TOOL}: configure failed:\n{tail(log)}")
            return False
        with open(stamp, "w") as f:
            f.write("\n".join(flags))
        return True

    def make(self, targets, log):
        """Builds targets (ninja: only what changed); True when it built."""
        if not targets:
            return True
        t = time.time()
        rc = run(["nice", "cmake", "--build", self.build, "-j2", "--target", *targets], log, timeout=3600)
        self.build_seconds += time.time() - t
        return rc == 0


class Mutant:
    """Writes one row into the tree and restores it."""

    def __init__(self, tree, row):
        self.tree, self.row = tree, row
        self.original = None

    def check(self):
        """None when the row applies to the checkout, else why not."""
        row = self.row
        if is_patch(row):
            patch = os.path.join(SRC, row["file"])
            if not os.path.isfile(patch):
                return f"no patch {row['file']}"
            r = subprocess.run(["patch", "-p1", "--dry-run", "--quiet", "-i", patch], cwd=SRC, capture_output=True,
                               text=True)
            return None if r.returncode == 0 else f"{row['file']} no longer applies: {r.stdout.strip()[:300]}"
        path = os.path.join(SRC, row["file"])
        if not os.path.isfile(path):
            return f"no file {row['file']}"
        with open(path, encoding="utf-8") as f:
            n = f.read().count(row["from"])
        return None if n == 1 else f"text found {n} times in {row['file']}, not once: {row['from']!r}"

    def apply(self):
        row, root = self.row, self.tree.root
        if is_patch(row):
            r = subprocess.run(["patch", "-p1", "--quiet", "-i", os.path.join(SRC, row["file"])], cwd=root,
                               capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"{TOOL}: {row['name']}: {row['file']} does not apply to the copy: {r.stdout[:300]}")
            return
        path = os.path.join(root, row["file"])
        with open(path, encoding="utf-8") as f:
            self.original = f.read()
        mutated = replace_once(self.original, row["from"], row["to"])
        if mutated is None:
            sys.exit(f"{TOOL}: {row['name']}: text not found exactly once in the copy's {row['file']}")
        with open(path, "w", encoding="utf-8") as f:
            f.write(mutated)

    def restore(self):
        row, root = self.row, self.tree.root
        if is_patch(row):
            subprocess.run(["patch", "-R", "-p1", "--quiet", "-i", os.path.join(SRC, row["file"])], cwd=root,
                           check=True, capture_output=True)
            return
        path = os.path.join(root, row["file"])
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.original)
        # Written now, so newer than the mutant's objects: ninja rebuilds it (a ccache hit).
        os.utime(path)


# ---- checkers ---------------------------------------------------------------------------------


class Checker:
    """One way of judging a mutant: the targets it needs built and how it runs. run() returns a
    verdict and, for a kill, what caught it."""

    def __init__(self, name, targets=(), run=None, cost=1):
        self.name, self.targets, self.run_fn, self.cost = name, list(targets), run, cost

    def run(self, ctx, label):
        return self.run_fn(ctx, label)


class Context:
    """What the checkers of one section see: the tree, the options, a log directory."""

    def __init__(self, tree, args, logs):
        self.tree, self.args, self.logs = tree, args, logs

    @property
    def build(self):
        return self.tree.build

    def log(self, label, checker):
        return os.path.join(self.logs, f"{label}.{checker}.log")


def gtest(checker, binary, *argv, env_extra=None, timeout=600):
    """A checker that runs a gtest binary of the tree's build: killed when a test fails."""

    def fn(ctx, label):
        log = ctx.log(label, checker)
        env = dict(os.environ, **(env_extra(ctx) if env_extra else {}))
        # --gtest_fail_fast: a mutant needs killed or survived, not every failing test.
        rc = run([os.path.join(ctx.build, binary), "--gtest_brief=1", "--gtest_fail_fast", *argv], log, env=env,
                 timeout=timeout)
        if rc == 0:
            return SURVIVED, ""
        return KILLED, ", ".join(gtest_failures(log)) or f"{os.path.basename(binary)} exit {rc}"

    return fn


def ctest_checker(checker, regex, env_extra=None):
    """A checker that runs the tree's ctest tests matching regex (their commands: corpora,
    findings, regressions); killed when one fails."""

    def fn(ctx, label):
        log = ctx.log(label, checker)
        env = dict(os.environ, **(env_extra or {}))
        run(["ctest", "-j2", "-R", regex, "--timeout", "300", "--stop-on-failure"], log, env=env, cwd=ctx.build,
            timeout=1800)
        text = open(log, errors="replace").read()
        failed = re.findall(r"^\s*\d+ - (\S+) \(", text, re.M)
        if failed:
            return KILLED, ", ".join(failed)
        if "tests passed" not in text:
            return ERROR, "ctest did not finish"
        return SURVIVED, ""

    return fn


# -- core ---------------------------------------------------------------------------------------


def core_replay(ctx, label):
    log = ctx.log(label, "replay")
    traces = sorted(p for d in ("examples", "tests/regressions") for p in
                    [os.path.join(ctx.tree.root, d, n) for n in sorted(os.listdir(os.path.join(ctx.tree.root, d)))]
                    if p.endswith(".jsonl"))
    cli = os.path.join(ctx.build, "src", "cli", "claim2core")
    with open(log, "w") as f:
        for t in traces:
            r = subprocess.run([cli, "replay", t], stdout=subprocess.DEVNULL, stderr=f, timeout=300)
            if r.returncode != 0:
                return KILLED, os.path.relpath(t, ctx.tree.root)
    return SURVIVED, ""


class ModelColumn:
    """z3 and spin check the model's version of each core bug (mutants.tsv's z3 and spin columns):
    that does not depend on the C++ tree, so one background thread runs them all, baseline first,
    while the copy builds."""

    def __init__(self, checkers, rows, logs):
        self.checkers, self.rows, self.logs = checkers, rows, logs
        self.results = {}
        self.cv = threading.Condition()
        self.thread = threading.Thread(target=self._work, daemon=True)
        self.thread.start()

    def _one(self, label, checker, variant):
        if variant == "-":
            return NA
        log = os.path.join(self.logs, f"{label}.{checker}.log")
        rc = run([os.path.join(HERE, "verify-" + checker), variant], log, timeout=1800)
        return {0: SURVIVED, 1: KILLED}.get(rc, ERROR)

    def _work(self):
        jobs = [("baseline", c, "none") for c in self.checkers]
        jobs += [(r["name"], c, r[c]) for r in self.rows for c in self.checkers]
        for label, c, variant in jobs:
            v = self._one(label, c, variant)
            with self.cv:
                self.results[(label, c)] = v
                self.cv.notify_all()

    def get(self, label, checker):
        with self.cv:
            self.cv.wait_for(lambda: (label, checker) in self.results)
            return self.results[(label, checker)]

    def summary(self, checker):
        text = tail(os.path.join(self.logs, f"baseline.{checker}.log"), 50)
        lines = [l for l in text.splitlines() if l.startswith(("spin: ", "c2c-z3-check: "))]
        return lines[-1] if lines else ""


def model_checker(name):
    def fn(ctx, label):
        v = ctx.model.get(label, name)
        return v, ("the model's version" if v == KILLED else "")

    return Checker(name, (), fn, cost=0)  # its baseline waits for the thread; mutants are read at the end


# -- kernel -------------------------------------------------------------------------------------

WP = os.path.join(SRC, "tests", "proof", "run-wp.sh")
UNIT_FLAGS = ["-std=c++20", "-O1", "-pthread"]


def kernel_proof(ctx, label):
    # A mutant: only its function's goals, at 10 s a goal: a goal left unproved (a prover's
    # Unknown or a timeout) kills it, as it would fail proof.guards_wp. The baseline: the whole
    # header at run-wp's own timeout, unless proof.guards_wp's stamp says that proof was made.
    cmd = [WP, "--header-dir", os.path.join(ctx.tree.root, "bpf")]
    if ctx.args.wp_cache:
        # Goals the mutation left as they were are replayed from the proofs proof.guards_wp made
        # (run-wp.sh keeps only proofs there): only the changed goals meet the provers.
        cmd += ["--cache-dir", ctx.args.wp_cache]
    row = ctx.rows_by_name.get(label)
    if row:
        cmd += ["--functions", row["function"], "--timeout", "10"]
    rc = run(cmd, ctx.log(label, "proof"), timeout=1800)
    if rc == 1:
        goals = re.findall(r"^\s*\[(?:Unknown|Timeout|Failed)[^\]]*\]\s*(.*)$", open(ctx.log(label, "proof")).read(), re.M)
        return KILLED, (goals[0][:80] if goals else "a goal not proved")
    return {0: (SURVIVED, ""), 77: (SKIP, "Frama-C or a prover missing")}.get(rc, (ERROR, f"run-wp exit {rc}"))


PCH_LOCK = threading.Lock()


def kernel_pch(work):
    """gtest's header precompiled once with the unit build's flags: each unit build then compiles
    the test's own code only, about half of its time (none when it cannot be built)."""
    d = os.path.join(work, "pch")
    os.makedirs(d, exist_ok=True)
    h = os.path.join(d, "gtest_pch.h")
    with open(h, "w") as f:
        f.write("#include <gtest/gtest.h>\n")
    cxx = os.environ.get("CXX", "g++")
    rc = run(["nice", cxx, *UNIT_FLAGS, "-x", "c++-header", h, "-o", h + ".gch"], h + ".log")
    return ["-I", d, "-include", "gtest_pch.h"] if rc == 0 else []


def kernel_unit(ctx, label):
    """tests/unit/guards_test.cpp compiled against the copy's (mutated) header, then run."""
    with PCH_LOCK:
        if ctx.pch is None:
            ctx.pch = kernel_pch(ctx.logs)
    exe = os.path.join(ctx.logs, f"{label}.guards_test")
    cxx = os.environ.get("CXX", "g++")
    unit = os.path.join(ctx.tree.root, "tests", "unit", "guards_test.cpp")
    if run(["nice", cxx, *UNIT_FLAGS, *ctx.pch, "-I", os.path.join(ctx.tree.root, "bpf"), unit, "-o", exe,
            "-lgtest", "-lgtest_main"], ctx.log(label, "unit") + ".build") != 0:
        return ERROR, "guards_test does not compile"
    return gtest("unit", exe)(ctx, label)


def guest_results(path):
    results = {}
    if not path:
        return None
    with open(path) as f:
        for line in f:
            try:
                j = json.loads(line)
            except json.JSONDecodeError:
                continue
            if j.get("scenario") == "sched_mutant":
                results[j.get("mutant", "")] = j
    return results


def guest_verdict(ctx, label):
    """The mutant-<name> result of a guest run (tests/vm/run-scenarios.sh --results FILE)."""
    row = ctx.rows_by_name.get(label)
    if row is None:
        return SURVIVED, ""  # the baseline: the guest's own runs judge the unmutated scheduler
    if row.get("guest", "-") == "-":
        return NA, ""
    if ctx.guest is None:
        return NOT_RUN, ""
    r = ctx.guest.get(label)
    if r is None:
        return ERROR, "no result in --guest-results"
    return (KILLED, row["guest"]) if r.get("killed") else (SURVIVED, "")


# -- the others ---------------------------------------------------------------------------------


def judge_test_of(script):
    """A checker that runs one of tests/vm's judges' unit tests (`script`) in the copy."""
    def judge_test(ctx, label):
        d = os.path.join(ctx.tree.root, "tests", "vm")
        log = ctx.log(label, "test")
        # --failfast: a mutant needs killed or survived, not every failing case.
        rc = run(["/usr/bin/python3", os.path.join(d, script), "--failfast"], log, cwd=d,
                 env=dict(os.environ, MPLBACKEND="Agg"))
        if rc == 0:
            return SURVIVED, ""
        failed = re.findall(r"^(?:FAIL|ERROR): (\S+)", open(log).read(), re.M)
        return KILLED, ", ".join(failed) or f"exit {rc}"
    return judge_test


def layer_script_check(script, checker, found):
    """A checker that runs one of tests/unit's layer-rule scripts over the copy's sources: exit 0
    survives, exit 1 with a line naming the broken rule (`found` picks it) kills, anything else is
    an error (a script that crashed has judged nothing)."""
    def check(ctx, label):
        log = ctx.log(label, checker)
        rc = run(["/usr/bin/python3", os.path.join(ctx.tree.root, "tests", "unit", script), ctx.tree.root], log,
                 timeout=120)
        if rc == 0:
            return SURVIVED, ""
        lines = [l for l in open(log).read().splitlines() if found(l)]
        return (KILLED, "; ".join(lines)[:200]) if rc == 1 and lines else (ERROR, f"exit {rc}")
    return check


# The front ends' rules 1-3 (a failure is a line "FAIL ...") and the one kernel layer's rule 3 (a
# line naming "(rule N" or what a file "includes").
frontend_layer_check = layer_script_check("frontend_layering_check.py", "frontends", lambda l: l.startswith("FAIL "))
kernel_layer_check = layer_script_check("daemon_layering_check.py", "kernel",
                                        lambda l: "(rule" in l or "includes" in l)


def scx_peers_test(ctx, label):
    """tools/scx-peers/build_test.sh on the copy's (mutated) build.sh: exit 0 survives, exit 1 with
    a FAIL line kills, anything else is an error."""
    log = ctx.log(label, "script")
    rc = run([os.path.join(ctx.tree.root, "tools", "scx-peers", "build_test.sh")], log, timeout=120)
    if rc == 0:
        return SURVIVED, ""
    failed = [l for l in open(log).read().splitlines() if l.startswith("FAIL: ")]
    return (KILLED, "; ".join(failed)[:200]) if rc == 1 and failed else (ERROR, f"exit {rc}")


REALK8S_TEST = os.path.join(SRC, "tests", "integration", "k8s_realserver_test.py")


def realk8s_parity(ctx, label):
    """k8s.real.parity with the copy's (mutated) fake against the real server's facts, measured
    once by the baseline and kept in a file."""
    log = ctx.log(label, "parity")
    env = dict(os.environ, C2C_PARITY_REAL_FACTS=os.path.join(ctx.logs, "real-facts.json"),
               C2C_K8S_FAKE_APISERVER=os.path.join(ctx.tree.root, "tests", "integration", "k8s_fake_apiserver.py"))
    rc = run(["/usr/bin/python3", REALK8S_TEST, "parity", SRC], log, env=env, timeout=600)
    diffs = [l for l in open(log).read().splitlines() if l.startswith("DIFF ")]
    if rc == 77:
        return SKIP, "the real kube-apiserver's binaries (tools/k8s-apiserver/build.sh)"
    if rc == 0:
        return SURVIVED, ""
    if rc == 1 and diffs:
        return KILLED, diffs[0][5:120]
    return (SURVIVED, "") if rc == 1 and label != "baseline" else (ERROR, f"exit {rc}")


def integration_variants(ctx, label, checker, argv, variants, prefix="", **kw):
    """An integration test run as given, then once per variant (extra arguments) while it passes:
    the mutant is killed by the first run that fails (77: skipped, root and bpffs needed)."""
    log = ctx.log(label, checker)
    rc = run(argv, log, timeout=300, **kw)
    for suffix, extra in variants:
        if rc != 0:
            break
        log = ctx.log(label, checker) + "." + suffix
        rc = run(argv + extra, log, timeout=300, **kw)
    if rc == 77:
        return SKIP, "root and bpffs needed"
    if rc == 0:
        return SURVIVED, ""
    fails = [l[5:95] for l in open(log, errors="replace").read().splitlines() if l.startswith("FAIL ")]
    return KILLED, prefix + ("; ".join(fails[:2]) or f"exit {rc}")


def role_attack(ctx, label):
    """tests/integration/role_socket_attack_test.py against the copy's claim2cored (root, bpffs),
    then its pid reuse with the older kernels' binding (the start time, no SO_PEERPIDFD)."""
    env = dict(os.environ, C2C_BPF_DIR=ctx.args.bpf_dir or os.path.join(ctx.build, "bpf"))
    test = ["/usr/bin/python3", os.path.join(ctx.tree.root, "tests", "integration", "role_socket_attack_test.py"),
            ctx.tree.root, os.path.join(ctx.build, "src", "daemon", "claim2cored")]
    return integration_variants(ctx, label, "attack", test,
                                [("start-time", ["--only", "pid-reuse", "--peer-identity", "start-time"])], env=env)


def rest_adversarial(ctx, label):
    """tests/integration/rest_adversarial_test.py against the copy's claim2core-rest and the
    main build's claim2cored and fake vLLM (root, bpffs): every part over plain HTTP, then the
    connection part over TLS (the same loop, another transport)."""
    if not (ctx.args.daemon and ctx.args.fake):
        return NOT_RUN, "needs --daemon and --fake"
    argv = ["timeout", "120", "/usr/bin/python3", "rest_adversarial_test.py", ctx.args.daemon,
            os.path.join(ctx.build, "src", "rest", "claim2core-rest"), ctx.args.fake]
    return integration_variants(ctx, label, "adversarial", argv, [("tls", ["--part", "connections", "--tls"])],
                                prefix="rest.adversarial: ", cwd=os.path.join(ctx.tree.root, "tests", "integration"))


def mirror_bpf(ctx, label):
    """The main build's MirrorPinned.DeletesAreComparedAndMadeInTheKernel loading the copy's
    (mutated) policy_maps.bpf.o through $C2C_POLICY_MAPS_OBJ: root and bpffs."""
    its = ctx.args.integration_tests
    if not its or not os.access(its, os.X_OK):
        return ERROR, "no --integration-tests binary: the kernel program's mutants cannot be judged"
    log = ctx.log(label, "bpf")
    env = dict(os.environ, C2C_POLICY_MAPS_OBJ=os.path.join(ctx.build, "bpf", "policy_maps.bpf.o"))
    rc = run([its, "--gtest_brief=1", "--gtest_filter=MirrorPinned.DeletesAreComparedAndMadeInTheKernel"], log,
             env=env, timeout=300)
    if rc != 0:
        return KILLED, ", ".join(gtest_failures(log)) or f"exit {rc}"
    if "SKIPPED" in open(log).read():
        return ERROR, "skipped: root and bpffs needed"
    return SURVIVED, ""


# ---- the sections -----------------------------------------------------------------------------
# table: the rows; builds: whether it uses the shared built tree; mode: "any" or "every";
# idle_fails: a checker that kills no mutant fails the run; checkers in cheapest-first order.

# Tests that need files the copy leaves out or judge none of names.tsv's rules.
NAMES_FILTER = "--gtest_filter=-BoundedYaml.*:CliConnection.*"


def sections():
    prop_env = {"RC_PARAMS": "max_success=2000 max_size=50 noshrink=1"}
    return {
        "core": dict(
            table="mutants.tsv", builds=True, mode="any", idle_fails=True,
            checkers=[
                model_checker("z3"), model_checker("spin"),
                Checker("unit", ["core_unit_tests"], gtest("unit", "tests/unit/core_unit_tests"), 1),
                Checker("replay", ["claim2core"], core_replay, 2),
                Checker("fuzz", ["fuzz/all", "c2c-report", "claim2core"],
                        ctest_checker("fuzz", r"^fuzz\.(corpus|regression|report)"), 3),
                # 2,000 traces, not the suite's 10,000 (tests/mutants/README.md); no shrinking.
                Checker("property", ["tests/property/all"], ctest_checker("property", "^property", prop_env), 4),
            ]),
        "controller": dict(
            table="controller.tsv", builds=True, mode="any", idle_fails=False,
            # A fixed seed: every run draws the same 3,000 traces (the runner it replaced did so).
            checkers=[Checker("property", ["c2c_property_controller"],
                              gtest("property", "tests/property/c2c_property_controller",
                                    env_extra=lambda ctx: {"RC_PARAMS": "max_success=3000 seed=46 noshrink=1"}))]),
        "classify": dict(
            table="role_proposals.tsv", builds=True, mode="any", idle_fails=False,
            # A fixed seed, as the controller's: every run draws the same 3,000 windows.
            checkers=[Checker("property", ["c2c_property_role_proposals"],
                              gtest("property", "tests/property/c2c_property_role_proposals",
                                    env_extra=lambda ctx: {"RC_PARAMS": "max_success=3000 seed=46 noshrink=1"}))]),
        "activity": dict(
            table="activity.tsv", builds=True, mode="any", idle_fails=False,
            checkers=[Checker("controller", ["daemon_controller_tests"],
                              gtest("controller", "tests/unit/daemon_controller_tests")),
                      Checker("state", ["daemon_state_tests"],
                              gtest("state", "tests/unit/daemon_state_tests", "--gtest_filter=RoleProposalView.*"))]),
        "mirror": dict(
            table="mirror.tsv", builds=True, mode="any", idle_fails=False,
            checkers=[
                Checker("mirror", ["mirror_unit_tests"], gtest("mirror", "tests/unit/mirror_unit_tests")),
                Checker("host", ["host_unit_tests"], gtest("host", "tests/unit/host_unit_tests")),
                Checker("intents", ["daemon_intents_tests"], gtest("intents", "tests/unit/daemon_intents_tests")),
                Checker("bpf", ["c2c_bpf_policy_maps"], mirror_bpf),
            ]),
        "kernel": dict(
            table="kernel.tsv", builds=False, mode="every", idle_fails=False, jobs=2,
            copy=["bpf", "tests/unit/guards_test.cpp"],
            checkers=[Checker("unit", (), kernel_unit, 1), Checker("proof", (), kernel_proof, 2),
                      Checker("guest", (), guest_verdict, 0)]),
        "scheduler": dict(
            table="scheduler.tsv", builds=False, mode="every", idle_fails=False, copy=["bpf"],
            checkers=[Checker("guest", (), guest_verdict, 0)]),
        "judge": dict(
            table="judge.tsv", builds=False, mode="any", idle_fails=False, copy=["tests/vm"], jobs=2,
            checkers=[Checker("test", (), judge_test_of("experiment_table_test.py"))]),
        "vllm_judge": dict(
            table="vllm_judge.tsv", builds=False, mode="any", idle_fails=False, copy=["tests/vm"], jobs=2,
            checkers=[Checker("test", (), judge_test_of("vllm_goals_test.py"))]),
        "layering": dict(
            table="layering.tsv", builds=False, mode="any", idle_fails=False,
            copy=["src", "bpf", "tests/unit/frontend_layering_check.py", "tests/unit/daemon_layering_check.py"],
            checkers=[Checker("frontends", (), frontend_layer_check), Checker("kernel", (), kernel_layer_check)]),
        "scx_peers": dict(
            table="scx_peers.tsv", builds=False, mode="any", idle_fails=False, copy=["tools/scx-peers"],
            checkers=[Checker("script", (), scx_peers_test)]),
        "realk8s": dict(
            table="realk8s.tsv", builds=False, mode="any", idle_fails=False, copy=["tests/integration"],
            checkers=[Checker("parity", (), realk8s_parity)]),
        "k8s_status": dict(
            table="k8s_status.tsv", builds=True, mode="any", idle_fails=False,
            checkers=[Checker("feed", ["k8s_feed_unit_tests"], gtest("feed", "tests/unit/k8s_feed_unit_tests")),
                      Checker("writer", ["k8s_status_writer_tests"],
                              gtest("writer", "tests/unit/k8s_status_writer_tests"), 2)]),
        "daemon_durable": dict(
            table="daemon_durable.tsv", builds=True, mode="any", idle_fails=False,
            checkers=[Checker("durable", ["daemon_durable_tests"],
                              gtest("durable", "tests/unit/daemon_durable_tests"))]),
        "names": dict(
            table="names.tsv", builds=True, mode="any", idle_fails=False,
            checkers=[Checker(c, [t], gtest(c, "tests/unit/" + t, NAMES_FILTER)) for c, t in
                      (("core", "core_unit_tests"), ("intents", "daemon_intents_tests"),
                       ("convert", "daemon_convert_tests"), ("cli", "cli_unit_tests"))]),
        "role_socket": dict(
            table="role_socket.tsv", builds=True, mode="any", idle_fails=False, skip_ok={"attack"},
            checkers=[
                Checker("core", ["core_unit_tests"],
                        gtest("core", "tests/unit/core_unit_tests", "--gtest_filter=DecodePod.*:*Role*")),
                Checker("state", ["daemon_state_tests"],
                        gtest("state", "tests/unit/daemon_state_tests", "--gtest_filter=*Role*:DaemonCommandQueue.*")),
                Checker("corpus", ["fuzz_role_protocol_replay"], role_corpus),
                Checker("attack", ["claim2cored"], role_attack, 5),
            ]),
        "rest": dict(
            table="rest.tsv", builds=True, mode="any", idle_fails=False,
            checkers=[Checker("unit", ["rest_unit_tests"], gtest("unit", "tests/unit/rest_unit_tests")),
                      Checker("adversarial", ["claim2core-rest"], rest_adversarial, 5)]),
    }


def role_corpus(ctx, label):
    """The role protocol fuzzer's committed corpus replayed through the copy's decoder."""
    log = ctx.log(label, "corpus")
    rc = run([os.path.join(ctx.build, "fuzz", "fuzz_role_protocol_replay"),
              os.path.join(ctx.tree.root, "fuzz", "corpus", "fuzz_role_protocol")], log, timeout=300)
    if rc == 0:
        return SURVIVED, ""
    m = re.findall(r"failing input: \S*/(\S+)", open(log, errors="replace").read())
    return KILLED, "fuzz_role_protocol_replay: " + (m[0] if m else f"exit {rc}")


# ---- the run ----------------------------------------------------------------------------------


def prepare_tree(sec, args, work):
    if sec["builds"]:
        root = os.path.abspath(args.tree) if args.tree else os.path.join(work, "tree")
        os.makedirs(root, exist_ok=True)
        tree = Tree(root, True, bool(args.tree))
        n = tree.sync()
        print(f"{TOOL}: tree {root} ({n} files brought up to date)", flush=True)
        if not tree.configure():
            return None
        return tree
    # Nothing to build: a private copy of the files the checkers read.
    root = os.path.join(work, "tree")
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z", *sec["copy"]], cwd=SRC,
                           capture_output=True, check=True).stdout.decode().split("\0")
    for rel in files:
        src = os.path.join(SRC, rel)
        if rel and os.path.isfile(src):
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            shutil.copy2(src, os.path.join(root, rel))
    return Tree(root, False, False)


def main():
    secs = sections()
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("section", choices=sorted(secs))
    ap.add_argument("--only", help="NAME[,NAME...]")
    ap.add_argument("--checkers", help="the checkers to run (default: the section's all)")
    ap.add_argument("--full-matrix", action="store_true", help="every checker on every mutant")
    ap.add_argument("--keep", action="store_true", help="keep the logs (and a temporary tree)")
    ap.add_argument("--tree", help="the shared tree copy (kept; ctest passes the build's mutants-tree)")
    ap.add_argument("--list", action="store_true", help="print the section's rows and checkers, and exit")
    ap.add_argument("--prepare", action="store_true",
                    help="bring the --tree copy up to date and build its checkers' targets; judge nothing")
    ap.add_argument("--table", help="another table for the section (mutate_test.py's seeded runner bugs)")
    ap.add_argument("--integration-tests")
    ap.add_argument("--daemon")
    ap.add_argument("--fake")
    ap.add_argument("--bpf-dir")
    ap.add_argument("--baseline-stamp")
    ap.add_argument("--wp-cache")
    ap.add_argument("--jobs", type=int, help="mutants judged at once (sections that build nothing)")
    ap.add_argument("--guest-results")
    args = ap.parse_args()
    sec = secs[args.section]
    global TOOL
    TOOL = f"mutate {args.section}"
    rows = read_table(args.table or os.path.join(HERE, sec["table"]))
    if args.only:
        want = args.only.split(",")
        unknown = set(want) - {r["name"] for r in rows}
        if unknown:
            sys.exit(f"{TOOL}: no mutant named {', '.join(sorted(unknown))} in {sec['table']}")
        rows = [r for r in rows if r["name"] in want]
    checkers = sec["checkers"]
    names = [c.name for c in checkers]
    if args.checkers:
        asked = args.checkers.split()
        unknown = set(asked) - set(names)
        if unknown:
            sys.exit(f"{TOOL}: no checker {', '.join(sorted(unknown))} (the section's: {' '.join(names)})")
        checkers = [c for c in checkers if c.name in asked]
    for r in rows:  # a row's own checkers must be the section's
        if "checkers" in r and set(r["checkers"].split()) - set(names):
            sys.exit(f"{TOOL}: {sec['table']}: row '{r['name']}' names a checker that is not the section's: {r['checkers']}")
    if args.list:
        for r in rows:
            print(f"{r['name']}\t{r['file']}\t{r.get('checkers', ' '.join(names))}")
        return 0
    # Every row must apply before anything is built: a text gone or a patch that no longer applies
    # fails the run as it is.
    bad = [f"{r['name']}: {why}" for r in rows if (why := Mutant(None, r).check())]
    if bad:
        print(f"{TOOL}: FAIL: " + "; ".join(bad) + f" (update tests/mutants/{sec['table']})")
        return 1

    t0 = time.time()
    work = tempfile.mkdtemp(prefix=f"c2c-mutate-{args.section}.")
    logs = os.path.join(work, "logs")
    os.makedirs(logs)
    try:
        return run_section(sec, args, rows, checkers, work, logs, t0)
    finally:
        if args.keep:
            print(f"{TOOL}: logs kept in {logs}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def run_section(sec, args, rows, checkers, work, logs, t0):
    model = [c.name for c in checkers if c.name in ("z3", "spin")]
    for c in list(model):
        ok = os.access(os.path.join(HERE, "verify-" + c), os.X_OK) and (
            c != "spin" or shutil.which("spin")) and (c != "z3" or os.path.isfile(os.path.join(SRC, "model/z3/CMakeLists.txt")))
        if not ok:
            print(f"{TOOL}: checker '{c}' not available here, skipped")
            model.remove(c)
            checkers = [k for k in checkers if k.name != c]
    tree = prepare_tree(sec, args, work)
    if tree is None:
        return 2
    if args.prepare:
        return prepare_only(sec, tree, checkers, work, t0)
    ctx = Context(tree, args, logs)
    ctx.rows_by_name = {r["name"]: r for r in rows}
    ctx.pch = None
    ctx.guest = guest_results(args.guest_results)
    ctx.model = ModelColumn(model, rows, logs) if model else None

    def judge(label, c):
        if not tree.make(c.targets, ctx.log(label, c.name) + ".build"):
            return ERROR, "does not build: " + tail(ctx.log(label, c.name) + ".build", 3).strip()[-200:]
        return c.run(ctx, label)

    # ---- baseline: the unmutated tree passes every checker, or a kill means nothing ----
    tb = time.time()
    skipped = set()
    for c in sorted(checkers, key=lambda c: c.name in model):  # the model's wait for their thread
        if c.name == "proof" and stamped_baseline(args.baseline_stamp):
            print(f"{TOOL}: baseline proof: pass (proved by the run that wrote {args.baseline_stamp})")
            continue
        v, why = judge("baseline", c)
        if v == SKIP and c.name in sec.get("skip_ok", ()):
            print(f"{TOOL}: baseline {c.name}: skipped here ({why}): the other checkers judge alone")
            skipped.add(c.name)
            continue
        if v == SKIP:
            print(f"{TOOL}: SKIP: {c.name}: {why}")
            return 77
        if v in (NA, NOT_RUN, SURVIVED):
            print(f"{TOOL}: baseline {c.name}: {'pass' if v == SURVIVED else v + ' ' + why}", flush=True)
            continue
        print(f"{TOOL}: FAIL: checker '{c.name}' fails on the unmutated tree ({why}); log {ctx.log('baseline', c.name)}")
        print(tail(ctx.log("baseline", c.name)))
        args.keep = True
        return 1
    checkers = [c for c in checkers if c.name not in skipped]
    print(f"{TOOL}: baseline in {time.time() - tb:.0f} s ({time.time() - t0:.0f} s so far)", flush=True)

    # ---- the mutants ----
    kills = {c.name: 0 for c in checkers}
    failures = []
    table = []
    lock = threading.Lock()

    def judge_row(row, tree, ctx):
        """Writes row's mutant into tree, lets its checkers judge it, restores the file."""
        mine = [c for c in checkers if c.name not in model
                and ("checkers" not in row or c.name in row["checkers"].split())]
        if sec["mode"] == "any" and not args.full_matrix:
            # Cheapest first, but a checker without a kill yet first of all: the rule "every checker
            # kills a mutant" stays judged while a mutant's other checkers are skipped after a kill.
            mine.sort(key=lambda c: (kills[c.name] > 0, c.cost))
        m = Mutant(tree, row)
        m.apply()
        cells, by = {}, ""
        tm, b0 = time.time(), tree.build_seconds
        try:
            for c in mine:
                if sec["mode"] == "any" and not args.full_matrix and KILLED in cells.values():
                    cells[c.name] = "-"
                    continue
                if not tree.make(c.targets, ctx.log(row["name"], c.name) + ".build"):
                    v, why = ERROR, "does not build: " + tail(ctx.log(row["name"], c.name) + ".build", 3).strip()[-200:]
                    failures.append(f"{row['name']}: does not compile (not a useful mutant)")
                else:
                    v, why = c.run(ctx, row["name"])
                cells[c.name] = v
                if v == KILLED:
                    with lock:
                        kills[c.name] += 1
                    by = by or f"{c.name}: {why}"
        finally:
            m.restore()
        secs_build, secs_all = tree.build_seconds - b0, time.time() - tm
        with lock:
            print(f"{TOOL}: {row['name']}: " + ", ".join(f"{c} {v}" for c, v in cells.items() if v != "-")
                  + (f" (by {by[:140]})" if by else "") + f" [{secs_build:.0f} + {secs_all - secs_build:.0f} s]",
                  flush=True)
        return row, cells, secs_build, secs_all

    jobs = parallel_jobs(sec, checkers, args)
    if jobs > 1:
        # Mutants judged side by side, each worker in its own copy of the files: only where no
        # mutant's verdict depends on another's (every checker runs, or there is one), and no
        # checker builds in the shared tree.
        workers = []
        for i in range(jobs):
            root = os.path.join(work, f"tree-{i}")
            shutil.copytree(tree.root, root, symlinks=True)
            wctx = copy.copy(ctx)
            wctx.tree = Tree(root, False, False)
            workers.append(wctx)
        free = queue.Queue()
        for w in workers:
            free.put(w)

        def one(row):
            w = free.get()
            try:
                return judge_row(row, w.tree, w)
            finally:
                free.put(w)

        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            table = list(pool.map(one, rows))
    else:
        table = [judge_row(row, tree, ctx) for row in rows]
    # The model's columns (z3, spin), from the background thread, which may still be running.
    for row, cells, _, _ in table:
        for c in model:
            v = ctx.model.get(row["name"], c)
            cells[c] = v
            kills[c] += v == KILLED
    for row, cells, _, _ in table:
        vals = [v for v in cells.values() if v != "-"]
        line = ", ".join(f"{c} {v}" for c, v in cells.items() if v != "-")
        if ERROR in vals or SKIP in vals:
            failures.append(f"{row['name']}: " + line)
        elif sec["mode"] == "every":
            survived = [c for c, v in cells.items() if v == SURVIVED]
            if survived:
                failures.append(f"{row['name']} survived {', '.join(survived)}")
        elif KILLED not in vals:
            failures.append(f"{row['name']}: " + ("NOT RUN: " + line if NOT_RUN in vals else "survived every checker"))

    # ---- the matrix ----
    names = [c.name for c in checkers]
    w = max([len(r["name"]) for r in rows] + [6])
    print(f"\n{args.section} section of the kill matrix (tests/mutants/{sec['table']}; '-': not run, killed already)")
    print(f"{'mutant':<{w}}  " + "  ".join(f"{c:<8}" for c in names) + "  seconds (build + checks)")
    for row, cells, sb, sa in table:
        print(f"{row['name']:<{w}}  " + "  ".join(f"{cells.get(c, 'n/a'):<8}" for c in names) + f"  {sb:.0f} + {sa - sb:.0f}")
    print(f"{'kills':<{w}}  " + "  ".join(f"{kills[c]:<8}" for c in names))
    if sec["idle_fails"] and not args.only:
        idle = [c for c in names if kills[c] == 0]
        if idle:
            failures.append(f"checker(s) that killed no mutant: {', '.join(idle)}")
    if ctx.model:
        for c in model:
            s = ctx.model.summary(c)
            if s:
                print(f"  baseline {c}: {s}")
    print(f"{TOOL}: {len(rows)} mutants in {time.time() - t0:.0f} s; builds {tree.build_seconds:.0f} s")
    if failures:
        print(f"{TOOL}: FAIL: " + "; ".join(failures))
        return 1
    print(f"{TOOL}: PASS: every mutant killed")
    return 0


def prepare_only(sec, tree, checkers, work, t0):
    """--prepare: the section's checkers' targets built in the tree, so that its baseline builds
    nothing; a section that does not build has nothing to prepare."""
    if not sec["builds"]:
        print(f"{TOOL}: nothing to prepare (the section builds nothing)")
        return 0
    targets = sorted({t for c in checkers for t in c.targets})
    log = os.path.join(work, "prepare.log")
    if not tree.make(targets, log):
        print(f"{TOOL}: FAIL: the tree's checker targets do not build:\n{tail(log)}")
        return 1
    print(f"{TOOL}: prepared {tree.root}: {' '.join(targets)} built in {time.time() - t0:.0f} s")
    return 0


def parallel_jobs(sec, checkers, args):
    """How many mutants a section judges at once: its `jobs` (default 1) where that cannot change
    a verdict: nothing is built in the shared tree, and every checker runs on every mutant (mode
    "every", the whole matrix, or a single checker), so no mutant's checkers depend on the kills
    before it. --jobs overrides the section's own."""
    jobs = args.jobs if args.jobs is not None else sec.get("jobs", 1)
    independent = sec["mode"] == "every" or args.full_matrix or len(checkers) == 1
    return jobs if jobs > 1 and not sec["builds"] and independent else 1


def stamped_baseline(stamp):
    """True when stamp records a whole-header PASS of the proof's current inputs (proof.guards_wp)."""
    if not stamp or not os.path.exists(stamp):
        return False
    now = subprocess.run([WP, "--print-inputs-hash"], capture_output=True, text=True)
    with open(stamp) as f:
        return now.returncode == 0 and now.stdout.strip() != "" and f.read().strip() == now.stdout.strip()


if __name__ == "__main__":
    sys.exit(main())
