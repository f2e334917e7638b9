#!/usr/bin/env python3
"""Unit test of experiment_table.py: medians per cell and the goal verdicts on synthetic runs."""
import importlib.util
import json
import math
import os
import sys
import unittest

spec = importlib.util.spec_from_file_location(
    "experiment_table", os.path.join(os.path.dirname(os.path.abspath(__file__)), "experiment_table.py"))
table_mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(table_mod)


def run(cell, rep, sd_p99, bg_ticks, t_p99=1000.0, window_cs=300, run_delay=True):
    probe = {"p50_us": 200, "p99_us": t_p99, "p999_us": 2 * t_p99, "ctx_switches": 2000, "migrations": 0}
    probe["run_delay"] = ({"p50_us": 0.0, "p99_us": sd_p99, "p999_us": 2 * sd_p99, "max_us": 3 * sd_p99}
                          if run_delay else None)
    alloc, sched = {"A": ("off", "off"), "B": ("off", "on"), "C": ("on", "off"), "D": ("on", "on")}[cell]
    return json.dumps({"experiment": "2x2", "cell": cell, "alloc": alloc, "sched": sched, "rep": rep,
                       "probe": probe, "sys_ctx_switches": 7000, "bg_bogo_ops": 500,
                       "bg_bogo_ops_per_s": 150.0, "bg_cpu_ticks_window": bg_ticks, "window_cs": window_cs})


def hackbench(sched, rep, seconds):
    return json.dumps({"experiment": "hackbench", "sched": sched, "rep": rep, "seconds": seconds})


class ExperimentTableTest(unittest.TestCase):
    def summarize(self, lines):
        return table_mod.summarize(*table_mod.load(lines))

    def test_medians_and_all_goals_met(self):
        lines = [run("A", i, sd, 540) for i, sd in enumerate([3000.0, 2500.0, 9000.0])]
        lines += [run("B", i, sd, 530) for i, sd in enumerate([100.0, 150.0, 90.0])]
        lines += [hackbench("off", 1, 1.00), hackbench("on", 1, 1.03)]
        s = self.summarize(lines)
        self.assertEqual(s["table"]["A"]["sd_p99"], 3000.0)  # median, not mean
        self.assertEqual(s["table"]["B"]["sd_p99"], 100.0)
        ratio, met = s["goals"]["p99_scheduling_delay_ratio"]
        self.assertAlmostEqual(ratio, 30.0)
        self.assertTrue(met)
        loss, met = s["goals"]["background_loss"]
        self.assertAlmostEqual(loss, 1 - 530 / 540)
        self.assertTrue(met)
        self.assertTrue(s["goals"]["hackbench_delta"][1])

    def test_goals_not_met(self):
        lines = [run("A", 1, 1000.0, 540), run("B", 1, 200.0, 400)]  # 5x, 26 % loss
        lines += [hackbench("off", 1, 1.00), hackbench("on", 1, 1.10)]  # 10 % slower
        g = self.summarize(lines)["goals"]
        self.assertFalse(g["p99_scheduling_delay_ratio"][1])
        self.assertFalse(g["background_loss"][1])
        self.assertFalse(g["hackbench_delta"][1])

    def test_faster_hackbench_is_fine(self):
        g = self.summarize([hackbench("off", 1, 1.0), hackbench("on", 1, 0.8)])["goals"]
        self.assertTrue(g["hackbench_delta"][1])

    def test_runs_without_scheduling_delay_never_meet_the_goal(self):
        # Raw files of an older probe have no run_delay: the ratio is unknown, not a pass.
        lines = [run("A", 1, 1000.0, 540, run_delay=False), run("B", 1, 10.0, 540, run_delay=False)]
        ratio, met = self.summarize(lines)["goals"]["p99_scheduling_delay_ratio"]
        self.assertTrue(math.isnan(ratio))
        self.assertFalse(met)

    def test_zero_window_gives_unknown_loss(self):
        lines = [run("A", 1, 1000.0, 540, window_cs=0), run("B", 1, 10.0, 540, window_cs=0)]
        loss, met = self.summarize(lines)["goals"]["background_loss"]
        self.assertTrue(math.isnan(loss))
        self.assertFalse(met)


if __name__ == "__main__":
    sys.exit(unittest.main())
