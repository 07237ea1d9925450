"""Holding back widening writes after a refused one: by key (the Hive Metastore's roles)
or every write alike (Ranger)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pushdown.reconcile.holdback import EVERY, HoldBack
from pushdown.reconcile.plan import Op


@dataclass(frozen=True)
class F:
    role: str

    @property
    def key(self) -> object:
        return self.role

    def to_json(self) -> dict[str, Any]:
        return {"role": self.role}

    def __str__(self) -> str:
        return f"grant on {self.role}"


def op(role: str, action: str = "add") -> Op:
    if action == "remove":
        return Op("remove", before=F(role))
    return Op("add", after=F(role))


def roles(o: Op) -> set[str]:
    assert isinstance(o.fact, F)
    return {o.fact.role} if o.fact.role else set()


def test_a_refusal_holds_back_only_the_writes_that_share_its_key() -> None:
    hold = HoldBack(roles)
    hold.refused(op("r1", "remove"))
    send, held = hold.split([op("r1"), op("r2"), op("")], lambda o, key: f"{o.fact} waits on {key}")
    assert send == [op("r2"), op("")]
    assert [str(f) for f in held] == ["grant on r1 waits on r1"] and held[0].ops == (op("r1"),)


def test_by_default_any_refusal_holds_back_every_widening_write() -> None:
    hold = HoldBack()
    assert hold.blocker(op("r1")) is None
    hold.refused(op("r2"))
    assert hold.blocker(op("r1")) == EVERY and hold.stuck == {EVERY: op("r2")}


def test_nothing_refused_holds_nothing_back() -> None:
    send, held = HoldBack(roles).split([op("r1")], lambda o, key: "")
    assert send == [op("r1")] and held == []
