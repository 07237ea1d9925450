#!/usr/bin/env python3
"""Benchmark the Ranger judge: access checks per second of Ranger's own policy engine (a Java
process, ``pushdown_lab.ranger_judge``) against the stand-in's engine, on the same batch.

The estate is ``bench_ranger.py``'s (at ``--scale 1``: 1,000 roles and users, 100 Hive
databases x 100 tables), synced by pushdown's Ranger backend into a stand-in. The batch
(``--checks`` at scale 1, default 100,000, linear in the scale, at least 500): users drawn
from the estate's (and one nobody knows), a table of a database, an access out of select,
update, alter, drop, with the user's groups; the same questions in the same order to both.

1. the judge: start (a JVM, Ranger's classes), the engine built from what a plugin of the
   hive service downloads, then the batch, best of three (JSON both ways over a pipe
   included): checks per second;
2. the floor: the stand-in's engine (Python, in this process) over the same batch, best of
   three; the ratio of times, and how many answers differ (goal 0).
"""

from __future__ import annotations

import random
import sys
import time
from typing import Any

from bench_ranger import backend_on, estate, sizes, standin
from harness import cli
from harness.clock import measure
from harness.report import Report
from pushdown_lab.ranger_ground_truth import download
from pushdown_lab.ranger_judge import RangerJudge, request
from pushdown_lab.ranger_standin.policy_evaluation import AccessRequest

from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile

ACCESSES = ("select", "update", "alter", "drop")


def batch(scale: float, checks: int, seed: int) -> list[tuple[dict[str, str], str, str, list[str]]]:
    schemas, tables, roles = sizes(scale)
    rng = random.Random(seed)
    out = []
    for _ in range(max(500, round(checks * scale))):
        user = f"u{rng.randrange(roles + 1)}"  # u<roles> holds nothing
        resource = {"database": f"s{rng.randrange(schemas)}", "table": f"t{rng.randrange(tables)}"}
        out.append((resource, rng.choice(ACCESSES), user, []))
    return out


def main() -> int:
    parser = cli.parser(__doc__)
    parser.add_argument("--checks", type=int, default=100_000, help="checks in the batch at scale 1")
    args = parser.parse_args()
    with Report("ranger-judge", args) as report:
        model, _ = estate(args.scale)
        ranger = standin()
        try:
            reconcile(backend_on(ranger), model, Scope.everything())
            run(report, ranger, batch(args.scale, args.checks, args.seed))
        finally:
            ranger.stop()
    return 0


def run(report: Report, ranger: Any, asks: list[tuple[dict[str, str], str, str, list[str]]]) -> None:
    policies, roles, _ = download(ranger, "hive")
    report.section("the batch")
    report.row("hive policies", len(policies["policies"]))
    report.row("roles", len(roles["rangerRoles"]))
    report.row("checks in the batch", len(asks))

    report.section("1. Ranger's own engine (the judge)")
    t0 = time.perf_counter()
    with RangerJudge() as judge:
        report.row("judge started in", time.perf_counter() - t0, "s")
        t1 = time.perf_counter()
        judge.load("hive", policies, roles)
        report.row("engine built from the download in", time.perf_counter() - t1, "s")
        requests = [request(r, a, u, g) for r, a, u, g in asks]
        judged = measure(lambda: judge.decide("hive", requests), repeats=3)
    report.row("the batch, best of 3", judged.best, "s")
    report.row("judge: checks per second", len(asks) / judged.best, "checks/s")

    report.section("2. the stand-in's engine (the floor)")
    engine = ranger.service_policies("hive")
    questions = [AccessRequest(dict(r), a, u, list(g)) for r, a, u, g in asks]
    local = measure(lambda: [engine.evaluate(q) for q in questions], repeats=3)
    report.floor("stand-in's engine: the batch, best of 3", local.best)
    report.row("stand-in: checks per second", len(asks) / local.best, "checks/s")
    report.ratio("the judge's time over the stand-in's", judged.best, local.best)
    differ = sum(1 for j, s in zip(judged.result, local.result, strict=True) if j.allowed != s.allowed)
    report.row("answers that differ (goal 0)", differ)
    report.row("allowed (judge)", sum(1 for j in judged.result if j.allowed))


if __name__ == "__main__":
    sys.exit(main())
