"""The whole-model steps a compile takes over from the last one while the model's roster
stamps (:attr:`Model.roster_stamped`: users and roles added or removed) prove that nobody
came or went: every user's Ranger name (the kept identity), the principals Ranger cannot
name, the refused roles. Each is made again when a role or user is added or removed, and
for another model object at the same count (a copy), and then equals a compile from
scratch."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile.backend import Desired
from pushdown.reconcile.identity import KeptIdentity
from pushdown_ranger.compile import compile_all
from pushdown_ranger.compile.classes import KeptClasses
from pushdown_ranger.compile.naming import RangerNaming
from pushdown_ranger.compile.principals import refused_roles
from pushdown_ranger.facts import RoleFact
from pushdown_ranger.tests.test_ranger_cost import DENY, two_databases
from tests.costs import Mapper, do

KW: dict[str, Any] = {"elsewhere": frozenset(), "hive": "c", "voided": {}, "services": frozenset(DENY)}
FOCUS = frozenset({ObjectRef.parse("schema c.a")})


class Compiles:
    """Scoped compiles of ``c.a`` over one kept identity and kept classes, as the backend
    makes them, each checked against a compile from scratch."""

    def __init__(self, model: Model) -> None:
        self.naming = RangerNaming(map_principal=Mapper())
        self.kept = KeptIdentity(self.naming.user, stable=lambda: True)
        self.classes = KeptClasses()
        compile_all(model, ["c"], self.naming, DENY, focus=None, identity=self.identity(model, None), **KW)

    def identity(self, model: Model, fresh: Any) -> Any:
        return self.kept.of(model.users, fresh, roster=(model, model.roster_stamped))

    def scoped(self, model: Model) -> Desired:
        desired = compile_all(
            model,
            ["c"],
            self.naming,
            DENY,
            focus=FOCUS,
            identity=self.identity(model, ()),
            kept=self.classes,
            **KW,
        )
        whole = compile_all(model, ["c"], self.naming, DENY, focus=FOCUS, identity=None, **KW)
        assert desired == whole
        return desired


def _roles(desired: Desired) -> set[str]:
    return {f.name for f in desired.facts if isinstance(f, RoleFact)}


def test_a_role_created_or_deleted_makes_the_refused_roles_again() -> None:
    """``R1`` created is one with ``r1`` but for case in Ranger: both are refused (their
    holders get per-user roles); deleted, ``r1`` is made again. The identity handed out is
    the same object throughout (no user came or went): only the roster stamps say that
    the roles moved."""
    model = two_databases(1)
    compiles = Compiles(model)
    before = compiles.scoped(model)
    assert compiles.naming.role("r1") in _roles(before)
    handed = compiles.identity(model, ())
    do(model, ch.create_role(model, "R1"))
    assert compiles.identity(model, ()) is handed
    assert refused_roles(model, compiles.naming) == {"R1", "r1"}
    assert compiles.naming.role("r1") not in _roles(compiles.scoped(model))
    do(model, ch.delete_role(model, "R1"))
    assert refused_roles(model, compiles.naming) == frozenset()
    assert compiles.scoped(model) == before


def test_a_user_added_or_removed_is_mapped_and_refused_as_a_whole_compile_does() -> None:
    """A user whose Ranger name Ranger cannot use (a wildcard) added to a role of ``c.a``:
    refused, nothing pushed for it; removed, the compile is as before."""
    model = two_databases(1)
    compiles = Compiles(model)
    before = compiles.scoped(model)
    do(model, ch.add_user(model, "x*"))
    do(model, ch.grant_role(model, "r1", Principal.user("x*")))
    assert any("x*" in note for note in compiles.scoped(model).notes)
    do(model, ch.revoke_role(model, "r1", Principal.user("x*")))
    do(model, ch.remove_user(model, "x*"))
    assert compiles.scoped(model) == before


@pytest.mark.parametrize("what", ["role", "user"])
def test_a_copy_at_the_same_count_proves_nothing(what: str) -> None:
    """A copy of the model and the model itself each take one roster stamp, the copy for a
    role (or user) that changes its compile, the model for one that does not: the copy's
    compile is made as from scratch, not taken over from the model's (the same count)."""
    model = two_databases(1)
    compiles = Compiles(model)
    compiles.scoped(model)
    replica = copy.deepcopy(model)
    if what == "role":
        do(model, ch.create_role(model, "other"))
        do(replica, ch.create_role(replica, "R1"))
    else:
        do(model, ch.add_user(model, "other"))
        do(replica, ch.add_user(replica, "x*"))
        do(replica, ch.grant_role(replica, "r1", Principal.user("x*")))
        do(model, ch.grant_role(model, "r1", Principal.user("other")))
    assert replica.roster_stamped == model.roster_stamped
    compiles.scoped(model)
    compiles.scoped(replica)
