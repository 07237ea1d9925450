"""Grants as code: the spec loader's model, and one message per problem with its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from pushdown.app.service.spec import load_spec, load_spec_text
from pushdown.errors import SpecError
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import ObjectRef
from tests.fakes import access_control

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "demo.yaml"


def problems(text: str) -> list[str]:
    with pytest.raises(SpecError) as info:
        load_spec_text(text, "s.yaml")
    return info.value.problems


def test_the_example_spec_loads() -> None:
    model = load_spec(EXAMPLE)
    assert model.metalake == "demo"
    assert model.groups["analysts"] == {"alice", "bob"}
    assert model.objects[ObjectRef.parse("catalog sales")] == {"backend": "demo"}
    assert model.owners[ObjectRef.parse("catalog sales")] == "carol"
    grants = {(g.object, g.privilege, g.condition) for g in model.roles["no_salaries"]}
    salaries = ObjectRef.parse("table sales.crm.salaries")
    assert (salaries, Privilege.SELECT_TABLE, Condition.DENY) in grants
    assert model.group_roles["analysts"] == {"reader", "no_salaries"}


def test_every_problem_is_reported_with_file_line_column_and_value() -> None:
    found = problems(
        "users: [alice]\n"
        "catalogs:\n"
        "  sales: {backend: demo}\n"
        "roles:\n"
        "  r:\n"
        "    grants:\n"
        "      - on: catalog sales\n"
        "        allow: [SELECT_TABEL]\n"
        "      - on: table sales.crm.t\n"
        "        allow: [USE_CATALOG]\n"
        "    to: [user mallory, group nobody]\n"
        "owners:\n"
        "  catalog sales: {not: a name}\n"
        "colour: blue\n"
    )
    assert found[0].startswith("s.yaml:14:1: unknown key 'colour'")
    joined = "\n".join(found)
    assert "s.yaml:8:17: unknown privilege 'SELECT_TABEL'" in joined
    assert (
        "s.yaml:10:17: privilege USE_CATALOG cannot be granted on a table; "
        "it is accepted on: metalake, catalog" in joined
    )
    assert "s.yaml:11:10: unknown user 'mallory'" in joined
    assert "s.yaml:11:24: unknown group 'nobody'" in joined
    assert "s.yaml:13:18: owner of catalog sales must be a non-empty string, got a mapping" in joined
    assert len(found) == 6


def test_a_group_cannot_own_anything() -> None:
    found = problems("users: [a]\ngroups: {g: [a]}\ncatalogs: {c: {owner: g}}\n")
    assert found == [
        "s.yaml:3:23: cannot make group 'g' the owner of catalog c: groups can be granted roles "
        "and privileges, but they cannot be owners of securable objects; only users can be owners"
    ]


def test_invalid_yaml_names_the_place() -> None:
    [found] = problems("users: [alice\n")
    assert found.startswith("s.yaml:2:1: not valid YAML")


def test_a_bad_spec_writes_nothing(tmp_path: Path) -> None:
    ac = access_control(tmp_path)
    ac.load_model(load_spec(EXAMPLE))
    before = (ac.store.last_seq(), ac.model.users.copy())
    bad = tmp_path / "bad.yaml"
    bad.write_text(EXAMPLE.read_text().replace("USE_SCHEMA, SELECT_TABLE", "USE_SCHEMA, SELECT"))
    with pytest.raises(SpecError):
        ac.load_model(load_spec(bad))
    assert (ac.store.last_seq(), ac.model.users) == before


def test_loading_the_same_spec_twice_changes_nothing_the_second_time(tmp_path: Path) -> None:
    ac = access_control(tmp_path)
    first = ac.load_model(load_spec(EXAMPLE))
    assert len(first.events) > 10
    assert ac.load_model(load_spec(EXAMPLE)).events == ()


def test_a_changed_spec_records_only_the_difference(tmp_path: Path) -> None:
    ac = access_control(tmp_path)
    ac.load_model(load_spec(EXAMPLE))
    changed = tmp_path / "changed.yaml"
    changed.write_text(EXAMPLE.read_text().replace("to: [user dave]", "to: [user dave, user alice]"))
    result = ac.load_model(load_spec(changed))
    assert [e.to_json() for e in result.events] == [
        '{"name": "role_granted", "principal": "user alice", "role": "orders_writer"}'
    ]


def test_names_with_dots_and_backticks_round_trip_through_a_spec() -> None:
    model = load_spec_text(
        "users: [u]\n"
        "catalogs:\n"
        "  'odd.cat':\n"
        "    schemas:\n"
        "      'we`ird':\n"
        "        tables: ['a.b']\n"
        "roles:\n"
        "  r:\n"
        "    grants:\n"
        "      - on: 'table `odd.cat`.`we``ird`.`a.b`'\n"
        "        allow: [SELECT_TABLE]\n"
    )
    table = ObjectRef.of("table", ("odd.cat", "we`ird", "a.b"))
    assert table in model.objects
    assert {g.object for g in model.roles["r"]} == {table}


def test_deprecated_privilege_names_are_accepted() -> None:
    model = load_spec_text(
        "catalogs: {c: {}}\nroles:\n  r:\n    grants:\n      - {on: catalog c, allow: [CREATE_MODEL]}\n"
    )
    assert {g.privilege for g in model.roles["r"]} == {Privilege.REGISTER_MODEL}
