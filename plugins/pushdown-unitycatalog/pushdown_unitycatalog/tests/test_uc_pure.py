"""The Unity Catalog backend's pure parts: the mapping by operation, groups, case, facts
and settings, without a server."""

from __future__ import annotations

import pytest

from pushdown.app.service.spec import load_spec_text
from pushdown.errors import ConfigError
from pushdown.reconcile.backend import BackendContext
from pushdown_unitycatalog.backend import UnityCatalogBackend
from pushdown_unitycatalog.compile import Held, compile_desired
from pushdown_unitycatalog.facts import UCGrant, fact_from_json

SPEC = """
metalake: m
users: [ann, ben]
groups:
  team: [ann, ben]
catalogs:
  c:
    backend: uc
    schemas:
      s:
        tables: [t, u]
roles:
  r:
    grants:
      - on: catalog c
        allow: [USE_CATALOG, USE_SCHEMA, SELECT_TABLE, CREATE_TABLE]
      - on: table c.s.t
        allow: [MODIFY_TABLE]
      - on: table c.s.u
        deny: [SELECT_TABLE]
    to: [group team]
"""


def _grants(spec: str, tables: dict[str, tuple[str, ...]]) -> tuple[set[str], tuple[str, ...]]:
    desired = compile_desired(load_spec_text(spec), Held("c", tables), lambda u: u)
    return {str(f) for f in desired.facts}, desired.notes


def test_the_mapping_by_operation() -> None:
    grants, _ = _grants(SPEC, {"s": ("t", "u")})
    assert grants == {
        f"GRANT {p} TO {u}"
        for u in ("ann", "ben")
        for p in (
            "USE CATALOG ON CATALOG c",
            "USE SCHEMA ON SCHEMA c.s",
            "CREATE TABLE ON SCHEMA c.s",
            "SELECT ON TABLE c.s.t",  # u is denied: no schema-level SELECT
            "MODIFY ON TABLE c.s.t",
        )
    }


def test_groups_are_expanded_with_a_note() -> None:
    _, notes = _grants(SPEC, {"s": ("t", "u")})
    assert any("group team" in n and "no groups" in n for n in notes)


def test_capitals_are_narrowed_with_a_note() -> None:
    spec = SPEC.replace("tables: [t, u]", "tables: [t, u, Big]")
    grants, notes = _grants(spec, {"s": ("t", "u", "big")})  # the server folds Big to big
    assert not any("Big" in g or "big" in g for g in grants)
    assert any("c.s.Big" in n and "lower case" in n for n in notes)


def test_a_fact_round_trips_through_json() -> None:
    g = UCGrant("table", "c.s.t", "ann", "SELECT")
    assert fact_from_json(g.to_json()) == g
    with pytest.raises(ConfigError):
        fact_from_json({"kind": "other"})


def test_settings_require_a_fence() -> None:
    with pytest.raises(ConfigError, match="principals"):
        UnityCatalogBackend(BackendContext("uc", {"token": "x"}))
    b = UnityCatalogBackend(BackendContext("uc", {"token": "x", "principal_prefix": "pd_"}))
    assert b.managed("pd_ann") and not b.managed("ann")
