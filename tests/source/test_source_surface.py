"""The Gravitino source's surface (pushdown.app.source.surface): every privilege name,
condition and securable type Gravitino's OpenAPI and its official client can put in a
role has an entry, each entry is treated as the table says (handled, narrowed with a
note, refused, or a DENY enforced wider), and docs/gravitino.md publishes the table."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
import yaml
from gravitino.api.authorization.privileges import Privilege as ClientPrivilege
from gravitino.api.metadata_object import MetadataObject
from hypothesis import given, settings
from hypothesis import strategies as st

from pushdown.app.source.follow import Follower
from pushdown.app.source.gravitino import Snapshot, SourceUnreadable
from pushdown.app.source.surface import COVERED_BY, SURFACE
from pushdown.app.source.target import NOT_EXACT, to_model
from pushdown.errors import ModelError
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import SecurableType
from pushdown.reconcile.surface import BEGIN, END, Treatment, markdown, problems

from .conftest import Rig, follow_config
from .test_follow import _on, _served_with, _viewer, decisions

ROOT = Path(__file__).resolve().parents[2]
OPENAPI = ROOT / "tests" / "rest" / "openapi"
SHARED = Path("/work/shared/gravitino/open-api")  # the newer files, where this machine has them
KEYS = {e.key for e in SURFACE}


def _schemas(path: Path) -> dict[str, Any]:
    return dict(yaml.safe_load(path.read_text())["components"]["schemas"])


def _openapi_dirs() -> list[Path]:
    return [d for d in (OPENAPI, SHARED) if (d / "roles.yaml").is_file()]


def _openapi(field: str) -> set[str]:
    """Every value of the enum ``field`` of roles.yaml (privilege name, condition, type)."""
    out: set[str] = set()
    for d in _openapi_dirs():
        s = _schemas(d / "roles.yaml")
        where = {
            "name": s["Privilege"]["properties"]["name"],
            "condition": s["Privilege"]["properties"]["condition"],
            "type": s["SecurableObject"]["properties"]["type"],
        }[field]
        out |= {str(v).upper() for v in where["enum"]}
    return out


def test_every_privilege_name_condition_and_type_of_the_openapi_and_client_has_an_entry() -> None:
    assert _openapi_dirs(), "no Gravitino OpenAPI files"
    names = _openapi("name") | {n for n in ClientPrivilege.Name.__members__}
    assert {"SELECT_VIEW", "EXECUTE_FUNCTION", "SELECT_TABLE"} <= names
    assert sorted(n for n in names if f"privilege:{n}" not in KEYS) == []
    conditions = _openapi("condition") | {c.name for c in ClientPrivilege.Condition}
    assert sorted(c for c in conditions if f"condition:{c}" not in KEYS) == []
    types = _openapi("type") | {t.name for t in MetadataObject.Type}
    assert sorted(t for t in types if f"type:{t}" not in KEYS) == []


def _test_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name.startswith("test")}


def test_every_entry_has_a_treatment_and_a_test_that_exists() -> None:
    assert problems(SURFACE) == []
    missing = []
    for e in SURFACE:
        for node in e.tests:
            path, _, name = node.partition("::")
            if not (ROOT / path).is_file() or name.split("[")[0] not in _test_names(ROOT / path):
                missing.append(f"{e.key}: {node}")
    assert missing == []


def test_the_docs_publish_the_surface_table() -> None:
    doc = (ROOT / "docs" / "gravitino.md").read_text()
    assert BEGIN in doc and END in doc, "docs/gravitino.md has no surface table markers"
    published = doc[doc.index(BEGIN) + len(BEGIN) : doc.index(END)].strip()
    assert published == markdown(SURFACE).strip(), "run: python scripts/surface_docs.py"


# -- each entry does what it says -------------------------------------------------------

#: a place for each privilege pushdown holds (the first type it may be granted on)
TREE = frozenset({("schema", ("c", "db")), ("table", ("c", "db", "t"))})


def _config(tmp: Path) -> Any:
    config = follow_config(tmp, "http://127.0.0.1:1")
    assert config.follow is not None
    return config


def _read(tmp: Path, *rows: tuple[str, str, str, str]) -> Any:
    """to_model of a read where role r (held by ann) carries ``rows`` besides an ALLOW."""
    config = _config(tmp)
    snap = Snapshot(
        "test",
        users={"ann": frozenset({"r"})},
        roles={"r": frozenset({("schema", "c.db", "SELECT_TABLE", "ALLOW"), *rows})},
        catalogs={"c": ("relational", "demo")},
        tree=TREE,
    )
    return to_model(snap, config.follow, config.backends)


def _place(type_: str) -> str:
    return {"metalake": "test", "catalog": "c", "schema": "c.db", "table": "c.db.t"}.get(type_, "c.db.x")


def _grants(built: Any) -> set[str]:
    return {str(g) for g in built.model.roles["r"]}


def _privilege_rows() -> list[tuple[str, str]]:
    """(name, type to grant it on) for every privilege entry with a name."""
    out = []
    for e in SURFACE:
        if e.area != "privilege" or "(" in e.key:
            continue
        name = e.key.split(":", 1)[1]
        try:
            held = Privilege.parse(name)
            type_ = sorted(held.securable_types)[0].value
        except ModelError:  # a name pushdown does not hold: try a catalog
            type_ = "catalog"
        out.append((name, type_))
    return out


@pytest.mark.parametrize("name,type_", _privilege_rows())
def test_each_privilege_and_type_is_treated_as_the_table_says(tmp_path: Path, name: str, type_: str) -> None:
    entry = next(e for e in SURFACE if e.key == f"privilege:{name}")
    full = _place(type_)
    allow = _read(tmp_path, (type_, full, name, "ALLOW"))
    if Treatment.HANDLED in entry.treatments() and Treatment.NARROWED not in entry.treatments():
        held = Privilege.parse(name)
        assert any(g.startswith(f"ALLOW {held.value} on") for g in _grants(allow)), _grants(allow)
        deny = _read(tmp_path, (type_, full, name, "DENY"))
        assert any(g.startswith(f"DENY {held.value}") for g in _grants(deny))
        return
    assert Treatment.NARROWED in entry.treatments()
    assert _grants(allow) == {"ALLOW SELECT_TABLE on schema c.db"}  # left out, the rest used
    assert any(f"allow {name.lower()}" in n and "left out" in n for n in allow.notes)
    if name in COVERED_BY:
        deny = _read(tmp_path, (type_, full, name, "DENY"))
        assert f"DENY {COVERED_BY[name].value} on catalog c" in _grants(deny)
        assert any("wider" in n for n in deny.notes)
        return
    assert Treatment.REFUSED in entry.treatments()
    with pytest.raises(SourceUnreadable, match=NOT_EXACT) as refused:
        _read(tmp_path, (type_, full, name, "DENY"))
    assert f"deny {name.lower()}" in str(refused.value)


@pytest.mark.parametrize("type_", [e.key.split(":", 1)[1] for e in SURFACE if e.area == "securable type"])
def test_each_securable_type_is_treated_as_the_table_says(tmp_path: Path, type_: str) -> None:
    entry = next(e for e in SURFACE if e.key == f"type:{type_}")
    kind = type_.lower()
    row_allow = (kind, _place(kind), "SELECT_TABLE", "ALLOW")
    if Treatment.HANDLED in entry.treatments():
        placed = SecurableType.parse(kind)
        held = sorted(p for p in Privilege if placed in p.securable_types)
        full = _place(kind) if kind in ("metalake", "catalog", "schema", "table") else None
        if held and full is not None:  # a DENY there is kept as it is
            deny = _read(tmp_path, (kind, full, held[0].value, "DENY"))
            assert any(g.startswith(f"DENY {held[0].value}") for g in _grants(deny))
        else:  # no privilege of this one's can be placed here: a DENY refuses the read
            with pytest.raises(SourceUnreadable, match=NOT_EXACT):
                _read(tmp_path, (kind, _place(kind), "SELECT_TABLE", "DENY"))
        return
    built = _read(tmp_path, row_allow)
    assert _grants(built) == {"ALLOW SELECT_TABLE on schema c.db"}
    assert any("left out" in n for n in built.notes)
    with pytest.raises(SourceUnreadable, match=NOT_EXACT):
        _read(tmp_path, (kind, _place(kind), "SELECT_TABLE", "DENY"))


@pytest.mark.parametrize("cond", ["ALLOW", "DENY"])
def test_the_conditions_are_read_as_they_are(tmp_path: Path, cond: str) -> None:
    built = _read(tmp_path, ("table", "c.db.t", "SELECT_TABLE", cond))
    assert f"{Condition(cond).value} SELECT_TABLE on table c.db.t" in _grants(built)


@settings(max_examples=40, deadline=None)
@given(cond=st.text(min_size=1, max_size=12).filter(lambda c: c.strip().upper() not in ("ALLOW", "DENY")))
def test_an_unknown_condition_refuses_the_read(tmp_path_factory: Any, cond: str) -> None:
    tmp = tmp_path_factory.mktemp("cond")
    with pytest.raises(SourceUnreadable, match=NOT_EXACT):
        _read(tmp, ("table", "c.db.t", "SELECT_TABLE", cond))


@settings(max_examples=40, deadline=None)
@given(
    name=st.from_regex(r"[A-Z][A-Z_]{2,20}", fullmatch=True).filter(
        lambda n: n not in {p.value for p in Privilege} and n not in COVERED_BY
    ),
    type_=st.sampled_from(["metalake", "catalog", "schema", "table", "view", "function", "column"]),
)
def test_a_deny_of_any_name_pushdown_does_not_hold_is_never_dropped(
    tmp_path_factory: Any, name: str, type_: str
) -> None:
    tmp = tmp_path_factory.mktemp("name")
    try:
        Privilege.parse(name)  # a deprecated alias: held
        return
    except ModelError:
        pass
    with pytest.raises(SourceUnreadable, match=NOT_EXACT):
        _read(tmp, (type_, _place(type_), name, "DENY"))
    allowed = _read(tmp, (type_, _place(type_), name, "ALLOW"))
    assert _grants(allowed) == {"ALLOW SELECT_TABLE on schema c.db"}


def test_a_name_or_condition_the_client_does_not_know_refuses_the_read(rig: Rig) -> None:
    """What the official client cannot decode (a privilege or condition of a later
    Gravitino) is a bad answer: the read is not used, the model stays as it was."""
    f = Follower(rig.config)
    assert f.poll(rig.ac).ok
    before = decisions(rig.ac.model)
    _viewer(rig)
    for extra in (
        _on("catalog", "c", "drop_everything", "deny"),
        _on("catalog", "c", "select_table", "deny_later"),
    ):
        _served_with(rig, "viewer", [extra])
        result = f.poll(rig.ac)
        assert not result.ok and result.kind == "bad answer", result
        assert decisions(rig.ac.model) == before
