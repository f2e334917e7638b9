#!/usr/bin/env python3
"""The runner's own rules (mutate.py), each shown to fail a run that breaks it: a table whose row is
not found, a mutant no checker kills (an equivalent mutant), a table without its header, a row with
a column too many; and the table reader's escapes. Uses the judge section (no build, ~5 s of CPU)
with tables written here (--table)."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mutate  # noqa: E402

HEADER = "name\tfile\twhat\tfrom\tto\n"
JUDGE = "tests/vm/experiment_table.py"


class Runner(unittest.TestCase):
    def run_judge(self, table_text, *extra):
        with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as f:
            f.write(table_text)
        try:
            return subprocess.run([sys.executable, os.path.join(HERE, "mutate.py"), "judge", "--table", f.name, *extra],
                                  capture_output=True, text=True, timeout=600)
        finally:
            os.unlink(f.name)

    def test_a_text_no_longer_found_fails_before_anything_runs(self):
        r = self.run_judge(HEADER + f"gone\t{JUDGE}\tx\tthis text is not in the judge\tx\n")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("gone: text found 0 times", r.stdout)
        self.assertNotIn("baseline", r.stdout)

    def test_a_mutant_that_survives_fails_the_run(self):
        # An equivalent mutant: a constant's spelling changes, not its value.
        r = self.run_judge(HEADER + f"equivalent\t{JUDGE}\tx\tNOISE_REL = 0.10\tNOISE_REL = 0.100\n")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("equivalent: survived every checker", r.stdout)

    def test_a_table_without_its_header_is_refused(self):
        r = self.run_judge(f"x\t{JUDGE}\tx\ta\tb\n")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("lacks the column", r.stderr)

    def test_a_row_with_a_column_too_many_is_refused_naming_it(self):
        r = self.run_judge(HEADER + f"wide\t{JUDGE}\tx\ta\tb\tc\n")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("row 'wide' has 6 columns, want 5", r.stderr)

    def test_mutants_judged_side_by_side_each_in_its_own_copy(self):
        # Two mutants of one line, two at a time: each worker writes its mutant into its own copy,
        # so neither finds the other's in its file (a shared copy: "text not found exactly once
        # in the copy", or one restores the line under the other's checker); the table in row order.
        r = self.run_judge(HEADER + f"one\t{JUDGE}\tx\tNOISE_REL = 0.10\tNOISE_REL = 0.0\n"
                           f"two\t{JUDGE}\tx\tNOISE_REL = 0.10\tNOISE_REL = 0.5\n", "--jobs", "2")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        table = r.stdout[r.stdout.index("judge section of the kill matrix"):]
        self.assertRegex(table, r"one +KILLED[\s\S]*two +KILLED", r.stdout)

    def test_side_by_side_only_where_no_verdict_depends_on_another(self):
        class A:
            jobs = None
            full_matrix = False
        one, two = [mutate.Checker("a")], [mutate.Checker("a"), mutate.Checker("b")]
        kernel = dict(builds=False, mode="every", jobs=2)
        self.assertEqual(mutate.parallel_jobs(kernel, two, A()), 2)
        # "any" with several checkers: a mutant's order depends on the kills before it.
        self.assertEqual(mutate.parallel_jobs(dict(kernel, mode="any"), two, A()), 1)
        self.assertEqual(mutate.parallel_jobs(dict(kernel, mode="any"), one, A()), 2)
        # A section that builds shares one tree (and ninja) between its mutants.
        self.assertEqual(mutate.parallel_jobs(dict(kernel, builds=True), one, A()), 1)
        A.jobs = 1
        self.assertEqual(mutate.parallel_jobs(kernel, two, A()), 1)

    def test_escapes_are_a_line_break_and_a_tab(self):
        self.assertEqual(mutate.unescape("a\\nb\\tc"), "a\nb\tc")
        self.assertIsNone(mutate.replace_once("x x", "x", "y"))
        self.assertEqual(mutate.replace_once("x z", "x", "y"), "y z")


if __name__ == "__main__":
    unittest.main()
