"""What a point read of ``pushdown serve`` costs, counted (not timed) at two estates ten
times apart: the store statements it runs and the decisions it explains. A point read
reads the store's position once (the model is reloaded only when another writer moved
it) and the audit row it answers with; an allowed read is decided without a trace (the
trace is built for a refusal only, for the log). And however little it reads, a read is
never older than a commit made before it, by this process or another."""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from pushdown.app.service import AccessControl
from pushdown.decide import evaluator
from pushdown.journal.store import Store
from pushdown.model import changes as ch
from pushdown.model.events import Event
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model

from .asgi import Door

M = "/api/metalakes/test"
SMALL, LARGE = 1, 10


def estate(scale: int) -> Callable[[Model], list[Event]]:
    """``10 * scale`` users ``u{i}``, each holding role ``r{i}``, which may read table
    ``lake.s.t{i}`` (and use its catalog and schema); ``admin`` owns everything."""

    def build(model: Model) -> list[Event]:
        scratch, events = copy.deepcopy(model), []

        def do(fn: Callable[..., list[Event]], *args: Any) -> None:
            made = fn(scratch, *args)
            for event in made:
                scratch.apply(event)
            events.extend(made)

        do(ch.create_object, ObjectRef.parse("catalog lake"), "admin", None)
        do(ch.create_object, ObjectRef.parse("schema lake.s"), "admin", None)
        for i in range(10 * scale):
            table = ObjectRef.parse(f"table lake.s.t{i}")
            do(ch.add_user, f"u{i}")
            do(ch.create_object, table, "admin", None)
            do(ch.create_role, f"r{i}", "admin")
            do(ch.grant_privileges, f"r{i}", ObjectRef.parse("catalog lake"), ["USE_CATALOG", "USE_SCHEMA"])
            do(ch.grant_privileges, f"r{i}", table, ["SELECT_TABLE"])
            do(ch.grant_role, f"r{i}", Principal.user(f"u{i}"))
        return events

    return build


@contextmanager
def door_at(tmp: Path, scale: int) -> Iterator[Door]:
    door = Door.open(tmp / f"pd{scale}.db")
    try:
        assert door.request("POST", "/api/metalakes", "admin", {"name": "test"}).status == 200
        door.ac.change(estate(scale))
        yield door
    finally:
        door.close()


READS = (  # (caller, path): the point reads of bench_rest.py
    ("admin", f"{M}/users/u3"),
    ("admin", f"{M}/roles/r3"),
    ("u3", f"{M}/catalogs/lake/schemas/s/tables/t3"),
)


class Counted:
    """The statements the store's connection runs, and the decisions explained."""

    def __init__(self, door: Door, monkeypatch: pytest.MonkeyPatch) -> None:
        self.statements: list[str] = []
        self.explained = 0
        door.ac.store.db.set_trace_callback(self.statements.append)
        plain = evaluator.Evaluator.authorize

        def authorize(ev: evaluator.Evaluator, *args: Any, explain: bool = True, **kw: Any) -> Any:
            self.explained += explain
            return plain(ev, *args, explain=explain, **kw)

        monkeypatch.setattr(evaluator.Evaluator, "authorize", authorize)

    def of(self, door: Door, user: str, path: str, status: int = 200) -> tuple[int, int]:
        self.statements.clear()
        self.explained = 0
        answer = door.request("GET", path, user)
        assert answer.status == status, (path, answer.body)
        return len(self.statements), self.explained


def test_a_point_read_reads_the_store_twice_and_explains_nothing_at_both_scales(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    costs = {}
    for scale in (SMALL, LARGE):
        with door_at(tmp_path, scale) as door:
            counted = Counted(door, monkeypatch)
            for user, path in READS:
                door.request("GET", path, user)  # any first-time work (a reload) done
                costs[scale, path] = counted.of(door, user, path)
            assert counted.of(door, "admin", "/api/version") == (0, 0)
            monkeypatch.undo()
    for _, path in READS:
        # the store's position (with the metalake's name) and the audit row answered with
        assert costs[SMALL, path] == costs[LARGE, path] == (2, 0), (path, costs)


def test_a_refusal_is_explained_to_the_log_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    with door_at(tmp_path, SMALL) as door:
        counted = Counted(door, monkeypatch)
        with caplog.at_level(logging.INFO, logger="pushdown.serve"):
            statements, explained = counted.of(door, "u3", f"{M}/catalogs/lake/schemas/s/tables/t4", 403)
        assert explained == 1 and statements == 1  # the position; nothing looked up
        logged = [r.getMessage() for r in caplog.records]
        assert any("refused" in line and "SELECT_TABLE: no role" in line for line in logged)
        body = door.request("GET", f"{M}/catalogs/lake/schemas/s/tables/t4", "u3").body
        assert b"owns" not in body and b"SELECT_TABLE" not in body  # the reasons are the log's


def test_a_read_sees_every_commit_made_before_it_by_another_writer(tmp_path: Path) -> None:
    with door_at(tmp_path, SMALL) as door:
        other = AccessControl(Store(tmp_path / f"pd{SMALL}.db"), push=False)  # another process's
        try:
            table = f"{M}/catalogs/lake/schemas/s/tables/t3"
            for user, path in READS:
                assert door.request("GET", path, user).status == 200
            other.revoke_role("r3", "user u3")
            assert door.request("GET", table, "u3").status == 403
            assert door.request("GET", f"{M}/users/u3", "admin").json()["user"]["roles"] == []
            other.grant_role("r3", "user u3")
            assert door.request("GET", table, "u3").status == 200
            other.add_user("newcomer")
            assert door.request("GET", f"{M}/users/newcomer", "admin").status == 200
            other.delete_role("r4")
            assert door.request("GET", f"{M}/roles/r4", "admin").status == 404
        finally:
            other.store.close()
