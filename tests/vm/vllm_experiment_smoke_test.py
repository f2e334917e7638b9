#!/usr/bin/env python3
"""The default suite's smoke run of the vLLM runs' command (vm.vllm_experiment_smoke): no guest,
`vllm-experiment.sh --from` on the committed fixture (tests/vm/fixtures/vllm-smoke: a real run
of two 5 s rounds of eevdf, claim2core and adapter, see its README), so the judge, the table and
the picture run end to end on a real run's files in a few seconds. Two rounds are too few: the
goals of those configurations must say "not judged" (too few rounds), the others "not run", and
the command must exit 1; the picture must be a PNG, the table and goals.json must name the
run's configurations and metadata."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

here = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(here, "fixtures", "vllm-smoke")


class VllmExperimentSmoke(unittest.TestCase):
    def test_judge_table_and_picture_on_the_fixture(self):
        with tempfile.TemporaryDirectory() as out:
            p = subprocess.run([os.path.join(here, "vllm-experiment.sh"), "--from", FIXTURE, "--out", out],
                               capture_output=True, text=True, timeout=120, env=dict(os.environ, MPLBACKEND="Agg"))
            log = p.stdout + p.stderr
            self.assertEqual(p.returncode, 1, log)
            with open(os.path.join(out, "goals.json")) as f:
                g = json.load(f)
            with open(os.path.join(FIXTURE, "metadata.json")) as f:
                meta = json.load(f)
            self.assertEqual(g["metadata"]["commit"], meta["commit"])
            v = {x["name"]: x["verdict"] for x in g["goals"]}
            judged = [n for n in v if v[n] == "not judged"]
            self.assertEqual(sorted(judged), sorted([
                "claim2core (no policies) no worse than EEVDF on missed steps and p99",
                "adapter <= half of EEVDF's missed steps and p99",
                "stress-ng bogo ops >= 90 % of EEVDF's in every configuration"]), v)
            self.assertEqual({v[n] for n in v if n not in judged}, {"not run"}, v)
            for x in g["goals"]:
                if x["verdict"] == "not judged":
                    self.assertIn("too few rounds", x["notes"][0])
                    self.assertTrue(all(len(c["rounds"]) == 2 for c in x["comparisons"]), x["comparisons"])
            self.assertEqual(sorted(g["configurations"]), ["adapter", "claim2core", "eevdf"])
            self.assertIn("a goal missed or not judged", log)
            with open(os.path.join(out, "vllm-cdf.png"), "rb") as f:
                png = f.read()
            self.assertEqual(png[:8], b"\x89PNG\r\n\x1a\n")
            self.assertGreater(len(png), 10_000)
            # Every step of every CSV is in the picture: the steps it reports are the CSVs' rows.
            rows = {}
            for name in os.listdir(FIXTURE):
                if name.startswith("vllm-") and name.endswith(".csv"):
                    cfg = name[len("vllm-"):].rsplit("-r", 1)[0]
                    with open(os.path.join(FIXTURE, name)) as f:
                        rows[cfg] = rows.get(cfg, 0) + sum(1 for _ in f) - 1
            for cfg, n in rows.items():
                self.assertIn(f"vllm_picture: {cfg}: {n} steps in 2 rounds", log)
            with open(os.path.join(out, "table.md")) as f:
                table = f.read()
            for cfg in ("eevdf", "claim2core", "adapter"):
                self.assertIn(f"| {cfg} |", table)


if __name__ == "__main__":
    sys.exit(unittest.main())
