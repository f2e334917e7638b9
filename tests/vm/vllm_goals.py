#!/usr/bin/env python3
"""The vLLM runs' goals (issue 43 items 4 and 5), judged from a `run-scenarios.sh --mode vllm`
run's results.jsonl: goals.json, goals.md, exit 1 when a goal is missed or cannot be judged.

This rule was written down and committed before any run's data was looked at with it; a change
after seeing data must be argued in the note and must not loosen a goal (issue 43, "Done when").

What is measured, per configuration and round (one window of one configuration; the guest runs
round 1 of every configuration, then round 2, ..., in one boot, so round r of two configurations
is a pair that the emulated machine's drift hit alike):
  - missed: the round's missed ticks over its ticks, both EngineCores pooled (sum of `missed` /
    sum of `ticks` of the round's DP ranks), in percent;
  - p99: the step latency p99 of the worse EngineCore of the round (max over the DP ranks of
    `latency.p99_us`), in ms. The worse, not a pooled one: it needs no per-step CSV, and it is
    the same statistic in every configuration;
  - bogo: stress-ng's bogo ops/s of the round (`stress_bogo_ops_per_s`).
A round counts only when every EngineCore of it has a result with `pass` true (every due tick
counted) and the stress-ng figure is positive where hogs ran. A comparison of two configurations
uses the rounds both have (paired by round number). MIN_ROUNDS = 6 paired rounds are needed; with
fewer the goal is "not judged" (and the run exits 1): six is the fewest for which the paired test
below can reach its threshold (its smallest p is 2^-n for n rounds: 1/64 < 0.05 / 2).

A goal is a set of comparisons "A's X against f x B's X" (f = 1 unless the goal names a factor).
Each comparison turns the rounds into paired excesses, positive when the round is on the wrong
side of the goal:
    lower is better (missed, p99):   e_r = A_r - (f * B_r * (1 + rel) + abs)
    higher is better (bogo):         e_r = f * B_r - A_r
where (rel, abs) is the allowance of a "no worse" comparison: ALLOW[metric] (missed: 10 % of
B's value + 0.5 percentage points, i.e. two ticks of 400; p99: 10 % + 1 ms, 2 % of the 50 ms
deadline; the 2x2's "no worse" allows 10 % + one emulated timer tick the same way). A goal that
states its own margin (bogo >= 90 %, <= half) and every "better" comparison get no allowance.

The test: the exact one-sided Wilcoxon signed-rank test of the paired excesses (zeros dropped,
tied |e| given their mid-rank; the p is the share of the 2^n sign assignments whose sum of
positive ranks is at least the observed one, counted exactly, not sampled). It is the paired
counterpart of the Mann-Whitney test the 2x2's judge uses (tests/vm/experiment_table.py): it
uses the pairing by round, and ranks keep one round of a host stall from deciding alone.

Two kinds of goal, by where the burden of proof lies:
  - "keep" goals (do no harm: no worse than, bogo >= 90 %): the goal is MISSED when a comparison
    shows harm: the median of its excesses is > 0 AND the test that they lie above 0 confirms it
    at family-wise FAMILY_ALPHA = 0.05 over the goal's comparisons (Holm's step-down). A
    comparison whose rounds cannot reach its Holm threshold whatever they hold (2^-n above
    FAMILY_ALPHA / m, e.g. six rounds against m = 4 comparisons; n counts the non-zero excesses,
    so ties to the threshold count against it) is decided by the median alone: too few rounds
    never make harm invisible. A median past 0 that the test does not confirm is named in the
    note, not failed. Holm because the goal is missed when any one comparison is: m tests at 0.05
    each would call harm where there is none up to 1 - 0.95^m of the time.
  - "win" goals (<= half of EEVDF, better than both peers): the goal is MET only when every
    comparison shows the win: the median of its excesses is <= 0 (< 0 for "better") AND the test
    that they lie below 0 rejects at FAMILY_ALPHA. No correction: every one must hold, so the
    chance of calling the goal met when one comparison is not won is at most FAMILY_ALPHA
    (an intersection-union test, Berger 1982). Rounds that cannot show it (too few or too tied:
    2^-n > FAMILY_ALPHA, e.g. both at 0 missed in most rounds) leave the goal missed: a win must
    be shown.

The goals (issue 43 item 4; the peers of item 5 where the run has them, `scx-lavd`, `scx-bpfland`):
  1. keep: claim2core (no policies) no worse than eevdf on missed and on p99 (m = 2);
  2. win:  adapter <= 0.5 x eevdf on missed and on p99;
  3. keep: adapter-workers-lc no worse than adapter on missed and on p99 (m = 2);
  4. keep: bogo >= 0.9 x eevdf's in every other configuration of the run with hogs (m = their
     number; eevdf-idle runs none; the `-base` builds are not judged);
  5. keep: claim2core no worse than the better peer on missed and on p99: on each metric the peer
     with the smaller median is the bar, and the family holds claim2core against every peer on
     both metrics (m = 2 x peers): which peer is better is read from the same data, and testing
     only against it would let a metric's chance of a false call reach twice the alpha (as the
     2x2's judge does for D against min(B, C));
  6. win:  adapter better than every peer on missed and on p99 (f = 1, no allowance, strict).
A goal whose configurations the run did not include is "not run" (no verdict, not a failure);
a run that judges no goal at all exits 1. A goal with some comparison short of MIN_ROUNDS
paired rounds is "not judged", and the run exits 1.
"""

MIN_ROUNDS = 6
FAMILY_ALPHA = 0.05
# The allowance of a "no worse" comparison, per metric: (relative, absolute in the metric's unit).
ALLOW = {"missed": (0.10, 0.5), "p99": (0.10, 1.0)}
BOGO_SHARE = 0.90  # goal 4: every configuration keeps >= 90 % of EEVDF's background throughput
HALF = 0.5  # goal 2: the adapter at most half of EEVDF's missed steps and p99
PEERS = ("scx-lavd", "scx-bpfland")
