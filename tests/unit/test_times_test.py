#!/usr/bin/python3
"""scripts/test-times (the per-test top 10 that scripts/test prints): the slowest tests of a
ctest LastTest.log, longest first, ties by name, the shares of the summed time; a missing log
or one without test times is an error (exit 2) naming the file, not an empty report."""
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(sys.argv[1], "scripts", "test-times")

# The shape ctest writes: a header, then per test its "K/M Testing: NAME" line, its command and
# output, and its "Test time" line; a failed test's time is there too.
LOG = """Start testing: Dec 07 05:20 UTC
----------------------------------------------------------
2/5 Testing: fast.one
2/5 Test: fast.one
Command: "/bin/true"
Output:
----------------------------------------------------------
<end of output>
Test time =   0.50 sec
----------------------------------------------------------
Test Passed.
1/5 Testing: mutants.mirror
Output:
Test time = 420.84 sec
3/5 Testing: proof.guards_wp
Test time =  87.62 sec
4/5 Testing: tie.b
Test time =  10.00 sec
Test Failed.
5/5 Testing: tie.a
Test time =  10.00 sec
End testing: Dec 07 05:43 UTC
"""


def run(*argv):
    return subprocess.run([SCRIPT, *argv], capture_output=True, text=True)


def main():
    fails = []
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "LastTest.log")
        with open(log, "w") as f:
            f.write(LOG)
        r = run("--top", "4", log)
        rows = [l.split() for l in r.stdout.splitlines()[1:]]
        got = [(row[0], row[4]) for row in rows]
        want = [("420.8", "mutants.mirror"), ("87.6", "proof.guards_wp"), ("10.0", "tie.a"), ("10.0", "tie.b")]
        if r.returncode != 0 or got != want:
            fails.append(f"top 4: rc {r.returncode}, got {got}, want {want}\n{r.stdout}{r.stderr}")
        if "the 4 slowest of 5 tests (529 s of tests summed, 528 s of it these)" not in r.stdout:
            fails.append(f"the heading: {r.stdout.splitlines()[:1]}")
        if rows and rows[0][2] != "79.6":  # 420.84 of 528.96
            fails.append(f"the share of mutants.mirror: {rows[0][2]}")
        r = run(log)  # the default, 10: every test of a shorter log
        if len(r.stdout.splitlines()) != 6:
            fails.append(f"default top: {r.stdout}")
        missing = os.path.join(d, "none.log")
        r = run(missing)
        if r.returncode != 2 or missing not in r.stderr:
            fails.append(f"a missing log: rc {r.returncode}, stderr {r.stderr!r}")
        empty = os.path.join(d, "empty.log")
        open(empty, "w").write("Start testing\n")
        r = run(empty)
        if r.returncode != 2 or "no 'Test time' lines" not in r.stderr:
            fails.append(f"a log without times: rc {r.returncode}, stderr {r.stderr!r}")
    for f in fails:
        print("FAIL", f)
    print("test_times_test:", "FAIL" if fails else "PASS")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
