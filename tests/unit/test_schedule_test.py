#!/usr/bin/python3
"""scripts/test-schedule's model of ctest's -j schedule (issue 44 item 7): a fixture's setup runs
before everything else, then the highest COST first; a RUN_SERIAL test starts only on empty slots
and nothing starts beside it; a RESOURCE_LOCK keeps two tests apart; a COST property outranks the
measured time; the makespan, the RUN_SERIAL seconds and the idle-slot seconds it prints."""
import os
import sys
from importlib.machinery import SourceFileLoader

sched = SourceFileLoader("test_schedule", os.path.join(sys.argv[1], "scripts", "test-schedule")).load_module()


def test(name, serial=False, locks=(), depends=(), cost=0.0):
    return dict(name=name, serial=serial, locks=set(locks), depends=set(depends), cost_prop=cost, procs=1)


def spans(timeline):
    return {n: (s, e) for s, e, n in timeline}


def main():
    fails = []

    def expect(what, got, want):
        if got != want:
            fails.append(f"{what}: got {got}, want {want}")

    # A RUN_SERIAL guest of the highest COST starts first only when nothing is ahead of it; a
    # fixture's setup is (ctest sorts dependencies first), and then the guest waits until both
    # slots are empty: it runs last, alone (the suite before issue 44 item 7).
    t = spans(sched.schedule([test("guest", serial=True, cost=10000), test("a"), test("b"), test("c")],
                             {"guest": 100, "a": 30, "b": 20, "c": 10}, 2))
    expect("serial guest first", (t["guest"], t["a"]), ((0.0, 100.0), (100.0, 130.0)))
    t = spans(sched.schedule([test("guest", serial=True, cost=10000), test("a", depends=["setup"]), test("setup"),
                              test("b"), test("c")],
                             {"guest": 100, "a": 30, "setup": 5, "b": 20, "c": 10}, 2))
    expect("serial guest behind a fixture", t["guest"], (35.0, 135.0))
    # The same guest with a lock instead: it starts first and the others run beside it.
    t = spans(sched.schedule([test("guest", locks=["g"], cost=10000), test("a"), test("b"), test("c")],
                             {"guest": 100, "a": 30, "b": 20, "c": 10}, 2))
    expect("locked guest", t["guest"], (0.0, 100.0))
    expect("beside the guest", (t["a"], t["b"], t["c"]), ((0.0, 30.0), (30.0, 50.0), (50.0, 60.0)))
    # A test whose lock is held waits, and the next one that can start takes the slot.
    t = spans(sched.schedule([test("guest", locks=["g"], cost=3), test("smoke", locks=["g"], cost=2), test("unit", cost=1)],
                             {"guest": 100, "smoke": 10, "unit": 10}, 2))
    expect("held lock", (t["unit"], t["smoke"]), ((0.0, 10.0), (100.0, 110.0)))
    # Two tests of one lock never overlap; the fixture's setup (a dependency) goes first although
    # its cost is lower; a test waits for its dependency even when a slot is free.
    t = spans(sched.schedule([test("kernel", locks=["f"], depends=["proof"], cost=3000), test("proof", locks=["f"]),
                              test("tree1", locks=["t"], cost=5000), test("tree2", locks=["t"], cost=4000)],
                             {"kernel": 50, "proof": 40, "tree1": 30, "tree2": 20}, 2))
    expect("fixture first", t["proof"], (0.0, 40.0))
    expect("one tree lock", (t["tree1"], t["tree2"]), ((0.0, 30.0), (30.0, 50.0)))
    expect("after its fixture", t["kernel"], (40.0, 90.0))
    # A measured time orders tests without a COST property; the property outranks it.
    t = spans(sched.schedule([test("long"), test("short", cost=9000), test("mid")], {"long": 50, "short": 5, "mid": 20}, 1))
    expect("COST first", [n for n, _ in sorted(t.items(), key=lambda kv: kv[1])], ["short", "long", "mid"])
    if fails:
        for f in fails:
            print("FAIL", f)
    print("test_schedule_test:", "FAIL" if fails else "PASS")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
