"""The core of `pushdown import --backend`: never wider, every omission reported; and the
``adopt = "additive"`` mode (pure, on made-up facts and the recording backend)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from pushdown.app.cli import main
from pushdown.errors import ConfigError
from pushdown.host.recording import RecordingBackend
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile.backend import BackendContext
from pushdown.reconcile.estate import Estate, Ownership, Proposal, adopt, estate_yaml
from pushdown.reconcile.plan import Plan, add, remove
from pushdown.reconcile.planner import additive, held_back
from pushdown.reconcile.scope import Scope


@dataclass(frozen=True, order=True)
class F:
    """A made-up server fact."""

    text: str

    @property
    def key(self) -> object:
        return self

    def to_json(self) -> dict[str, Any]:
        return {"f": self.text}

    def __str__(self) -> str:
        return self.text


T1, T2 = ObjectRef.of("table", ("c", "s", "t1")), ObjectRef.of("table", ("c", "s", "t2"))
GATES = (
    (ObjectRef.of("catalog", ("c",)), ("USE_CATALOG",)),
    (ObjectRef.of("schema", ("c", "s")), ("USE_SCHEMA",)),
)


def compile_(model: Model) -> frozenset[F]:
    """SELECT_TABLE on a table: read; MODIFY_TABLE: read and write; an owner: read, write, drop."""
    out: set[F] = set()
    for role, grants in model.roles.items():
        users = sorted(model.role_users.get(role, ()))
        for g in grants:
            name = g.object.names[-1]
            for user in users:
                if g.privilege.value in ("SELECT_TABLE", "MODIFY_TABLE"):
                    out.add(F(f"read {name} {user}"))
                if g.privilege.value == "MODIFY_TABLE":
                    out.add(F(f"write {name} {user}"))
    for obj, user in model.owners.items():
        out |= {F(f"{what} {obj.names[-1]} {user}") for what in ("read", "write", "drop")}
    return frozenset(out)


def test_a_proposal_kept_only_where_its_compile_is_held_and_every_omission_reported() -> None:
    held = frozenset({F("read t1 ann"), F("write t2 ann"), F("read t2 ann"), F("drop t2 ann"), F("column x")})
    to = (Principal.user("ann"),)
    estate = Estate(
        "b1",
        held,
        compile_,
        users={"ann"},
        catalogs={"c": {"backend": "b1"}},
        proposals=[
            Proposal("grants_of_ann", (*GATES, (T1, ("MODIFY_TABLE",))), shows="modify t1", to=to),
            Proposal("grants_of_ann", (*GATES, (T1, ("SELECT_TABLE",))), shows="read t1", to=to),
            Proposal("grants_of_ann", (*GATES, (T2, ("MODIFY_TABLE",))), shows="modify t2", to=to),
            Proposal("grants_of_ann", (*GATES, (T2, ("SELECT_TABLE",))), shows="read t2", to=to),
        ],
        owners=[Ownership(T1, "ann", shows="owner t1", facts=frozenset({F("read t1 ann")}))],
        why={F("column x"): "a column grant"},
    )
    adopted = adopt(estate)
    assert compile_(adopted.model) <= held and not adopted.wider  # never wider
    assert adopted.revoked == {F("drop t2 ann"), F("column x")}
    assert "left out (an authoritative apply revokes it): column x: a column grant" in adopted.report
    assert any(
        line.startswith("not imported: modify t1: pushed back it would also grant write t1 ann")
        for line in adopted.report
    )
    assert any(line.startswith("not imported: owner t1") for line in adopted.report)
    roles = adopted.model.roles["grants_of_ann"]
    assert {(g.object, g.privilege.value) for g in roles if g.object.type.value == "table"} == {
        (T1, "SELECT_TABLE"),
        (T2, "MODIFY_TABLE"),  # "read t2" added nothing after it: not kept
    }
    text = estate_yaml(adopted, "backend b1")
    assert text.startswith("# imported from backend b1\n# b1: 5 managed item(s) read, 3 imported\n")
    assert "backend: b1" in text


def gated_compile(model: Model) -> frozenset[F]:
    """An owner compiles to ``drop`` only with both USE gates (a backend whose gates
    compile to nothing, as the Hive Metastore's)."""
    gated = {
        u
        for role, grants in model.roles.items()
        if {g.privilege.value for g in grants} >= {"USE_CATALOG", "USE_SCHEMA"}
        for u in model.role_users.get(role, ())
    }
    return frozenset(F(f"drop {obj.names[-1]} {user}") for obj, user in model.owners.items() if user in gated)


def test_an_owner_is_kept_with_the_gates_it_needs_and_a_table_keeps_one_owner() -> None:
    held = frozenset({F("drop t1 ann"), F("drop t1 bob"), F("drop t2 bob")})
    needs = {
        u: Proposal(f"grants_of_{u}", GATES, shows=f"gates of {u}", to=(Principal.user(u),))
        for u in ("ann", "bob")
    }
    estate = Estate(
        "b1",
        held,
        gated_compile,
        users={"ann", "bob"},
        catalogs={"c": {"backend": "b1"}},
        owners=[
            Ownership(
                T1, "ann", shows="owner t1 ann", facts=frozenset({F("drop t1 ann")}), needs=needs["ann"]
            ),
            Ownership(
                T1, "bob", shows="owner t1 bob", facts=frozenset({F("drop t1 bob")}), needs=needs["bob"]
            ),
            Ownership(T2, "bob", shows="owner t2 bob", facts=frozenset({F("drop t2 bob")})),
        ],
    )
    adopted = adopt(estate)
    assert adopted.model.owners == {T1: "ann"}  # bob's t2 lacks the gates it was not given
    assert adopted.revoked == {F("drop t1 bob"), F("drop t2 bob")}
    assert "not imported: owner t1 bob: the model has one owner per object (ann is kept)" in adopted.report
    assert any(
        line.startswith("left out (an authoritative apply revokes it): drop t1 bob: the model's owner")
        for line in adopted.report
    )
    assert gated_compile(adopted.model) <= held and not adopted.wider


def test_additive_holds_back_removals_and_changes_as_findings() -> None:
    plan = Plan("b1", Scope.everything(), (add(F("new")), remove(F("old"))))
    kept = held_back(plan)
    assert [str(op) for op in kept.ops] == ["+ new"]
    assert kept.findings == ('adopt = "additive": kept - old; an authoritative apply would revoke it',)
    assert additive(RecordingBackend(BackendContext("b1", {"adopt": "additive"})))
    assert not additive(RecordingBackend(BackendContext("b1", {})))
    with pytest.raises(ConfigError, match="adopt"):
        additive(RecordingBackend(BackendContext("b1", {"adopt": "sometimes"})))


def test_a_backend_that_cannot_be_imported_from_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ConfigError, match="cannot import"):
        RecordingBackend(BackendContext("b1", {})).estate(Model())
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pushdown.toml").write_text('[backends.db]\nkind = "recording"\n')
    result = CliRunner().invoke(main, ["import", "--backend", "db"])
    assert result.exit_code == 1 and "error: backend db (recording) cannot import" in result.output
    result = CliRunner().invoke(main, ["import", "--backend", "nope"])
    assert result.exit_code == 1 and "no backend named 'nope' (configured: db)" in result.output
    result = CliRunner().invoke(main, ["import"])
    assert result.exit_code == 2 and "--dialect NAME FILE, or --backend NAME" in result.output


def test_additive_holds_back_an_addition_that_needs_a_kept_fact_gone() -> None:
    plan = Plan(
        "b1", Scope.everything(), (add(F("select")), remove(F("select with option")), add(F("other")))
    )
    kept = held_back(plan, lambda old, new: old.text.startswith(new.text))  # type: ignore[attr-defined]
    assert [str(op) for op in kept.ops] == ["+ other"]
    assert 'adopt = "additive": held back + select: the server holds it otherwise (kept)' in kept.findings


def test_principals_alone_granting_more_than_held_is_an_error_not_a_spec() -> None:
    def member_is_a_grant(model: Model) -> frozenset[F]:
        return frozenset(F(f"member {u}") for u in model.users)

    estate = Estate("b1", frozenset(), member_is_a_grant, users={"ann"})
    adopted = adopt(estate)
    assert adopted.wider == {F("member ann")}
    assert "error: the spec's principals alone would grant member ann" in adopted.report
