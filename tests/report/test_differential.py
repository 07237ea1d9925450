"""The report equals ``authorize``: the same (user, object, operation) rows, and the same reasons.

On random models (``tests.builders.models()``), every user, every held object and every
operation the report can cover: a (user, object, operation) has rows exactly when
``authorize`` allows it (0 mismatches), and the rows' reasons are the evidence the
evaluator's trace shows for the accepted alternatives: each ALLOW line (privilege, object,
role, how it is held) and the ownership of the deepest owned object it names. Counts are
printed so a run shows how much it compared.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from hypothesis import given, settings

from pushdown.decide.evaluator import Decision, Evaluator
from pushdown.decide.inventory import Inventory
from pushdown.model.state import Model
from pushdown.report.local import local_rows
from pushdown.report.operations import REPORTED
from pushdown.report.schema import COLUMNS, Row, sort_key
from tests import builders

COUNTS = {"models": 0, "checks": 0, "allowed": 0, "rows": 0, "mismatches": 0}
_ALLOW = re.compile(
    r"ALLOW on (\w+)(?: (?!by role )(.+?))? by role (.+?) "
    r"\(held (directly|through group (.+?))\)(?=; ALLOW|, which|$)"
)
_OWNS = re.compile(r"^(\S+) owns (\w+) ?(.*)$")
Key = tuple[str, str, str]


def _rows(model: Model) -> list[Row]:
    rows: list[Row] = []
    for part in local_rows(model, REPORTED):
        for batch in part.batches:
            rows += batch
    return rows


def _evidence(decision: Decision, metalake: str) -> tuple[set[tuple[str, ...]], set[str]]:
    """The trace's reasons: lines that held, inside alternatives that held, not inside a
    nested operation (a gate); grants as (privilege, source, role, via, group), owners by name."""
    grants: set[tuple[str, ...]] = set()
    owners: set[str] = set()
    open_: list[tuple[int, bool]] = []  # (depth, counts) of the enclosing headers
    for step in decision.trace:
        while open_ and open_[-1][0] >= step.depth:
            open_.pop()
        counts = all(c for _, c in open_)
        if step.text in ("all of:", "any of:"):
            open_.append((step.depth, counts and step.ok))
            continue
        if step.text.endswith(":") or step.text.endswith(", as above"):
            open_.append((step.depth, False))  # a gate: its reasons are its own rows
            continue
        if not (counts and step.ok):
            continue
        if " allowed: " in step.text:
            privilege = step.text.split(" ", 1)[0]
            for m in _ALLOW.finditer(step.text):
                via = "direct" if m.group(4) == "directly" else "group"
                grants.add((privilege, m.group(2) or metalake, m.group(3), via, m.group(5) or ""))
        elif (m := _OWNS.match(step.text)) is not None:
            owners.add(m.group(3) or metalake)
    return grants, owners


def _compare(model: Model) -> int:
    rows = _rows(model)
    assert [sort_key(r) for r in rows] == sorted(sort_key(r) for r in rows), "rows are not in order"
    by_key: dict[Key, list[Row]] = {}
    for row in rows:
        assert all(row[i] for i, c in enumerate(COLUMNS[:6])), row
        by_key.setdefault((row[1], row[2], row[4]), []).append(row)  # type: ignore[arg-type]
    evaluator = Evaluator(model)
    objects = sorted(Inventory.of(model.objects).within(builders.METALAKE), key=lambda o: o.names)
    mismatches = 0
    for user in sorted(model.users):
        for obj in objects:
            for op in REPORTED:
                if str(getattr(_target(op), "value", "")) != obj.type.value:
                    continue
                COUNTS["checks"] += 1
                decision = evaluator.authorize(user, op, obj)
                mine = by_key.pop((user, obj.name, op), [])
                if bool(mine) != decision.allowed:
                    mismatches += 1
                    continue
                if not mine:
                    continue
                COUNTS["allowed"] += 1
                grants, owners = _evidence(decision, model.metalake)
                mine_grants = {(r[7], r[8], r[6], r[10], r[11] or "") for r in mine if r[5] == "grant"}
                mine_owners = {r[8] for r in mine if r[5] == "owner"}
                assert mine_grants == grants, (decision.explain(), mine)
                assert owners <= mine_owners, (decision.explain(), mine)  # the trace names the deepest
                assert all(model.owners.get(_ref(r)) == user for r in mine if r[5] == "owner")
                assert (mine_owners == set()) == (owners == set())
    assert not by_key, f"rows for what is not held or not reported: {sorted(by_key)[:5]}"
    COUNTS["rows"] += len(rows)
    return mismatches


def _target(op: str) -> object:
    from pushdown.decide.requirements import OPERATIONS

    return OPERATIONS[op].target


def _ref(row: Row) -> object:
    from pushdown.model.securables import METALAKE, ObjectRef

    assert row[8] is not None and row[9] is not None
    return METALAKE if row[9] == "metalake" else ObjectRef.of(row[9], row[8])


@given(builders.models())
@settings(max_examples=150, deadline=None)
def test_report_equals_authorize_on_random_models(model: Model) -> None:
    COUNTS["models"] += 1
    mismatches = _compare(model)
    COUNTS["mismatches"] += mismatches
    assert mismatches == 0


@pytest.fixture(scope="module", autouse=True)
def _print_counts() -> Iterator[None]:
    yield
    print(f"\nreport vs authorize: {COUNTS}")
