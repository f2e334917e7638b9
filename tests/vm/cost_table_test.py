#!/usr/bin/env python3
"""Unit test of cost_table.py: medians over rounds, BPF time per probe switch, base beside new."""
import importlib.util
import os
import unittest

spec = importlib.util.spec_from_file_location(
    "cost_table", os.path.join(os.path.dirname(os.path.abspath(__file__)), "cost_table.py"))
T = importlib.util.module_from_spec(spec)
spec.loader.exec_module(T)


def line(obj, shape, select_ns, enqueue_calls=10, switches=100, p99=50.0):
    return {"scenario": "cost", "object": obj, "round": 1, "shape": shape, "ctx_switches": switches,
            "run_delay": {"p50_us": 0, "p99_us": p99},
            "programs": {"c2c_select_cpu": {"runs": 100, "ns": 100 * select_ns},
                         "c2c_enqueue": {"runs": enqueue_calls, "ns": enqueue_calls * 5000},
                         "c2c_exit": {"runs": 0, "ns": 0}}}


class CostTable(unittest.TestCase):
    def test_median_over_rounds_and_time_per_switch(self):
        tab = T.table([line("new", "placed", s) for s in (9000, 1000, 3000)])
        row = tab[("placed", "new")]
        self.assertEqual(row["select_cpu"], 3000)
        # (100 * 3000 + 10 * 5000) / 100 switches in the median round
        self.assertEqual(row["bpf_ns_per_switch"], 3500)
        self.assertEqual(row["run_delay_p99_us"], 50.0)
        self.assertIsNone(row["tick"])

    def test_objects_kept_apart_and_other_results_ignored(self):
        tab = T.table([line("base", "none", 4000, enqueue_calls=90), line("new", "none", 2000),
                       {"scenario": "latency", "pass": True}])
        self.assertEqual(set(tab), {("none", "base"), ("none", "new")})
        self.assertEqual(tab[("none", "base")]["enqueue_calls"], 90)
        text = T.render(tab)
        self.assertLess(text.index("| none | base |"), text.index("| none | new |"))

    def test_no_switches_gives_no_per_switch_figure(self):
        self.assertIsNone(T.table([line("new", "class", 1000, switches=0)])[("class", "new")]["bpf_ns_per_switch"])


if __name__ == "__main__":
    unittest.main()
