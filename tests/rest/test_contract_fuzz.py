"""Contract fuzzing: schemathesis generates requests from Gravitino's own OpenAPI 1.3.0
files (``openapi/``, Apache-2.0) for every route pushdown serves, and each answer must
be no 5xx and valid against the schema the files give for its status. Then explicit bad
input on every route that takes a body: bad JSON, wrong types, unknown privileges,
names with control characters, oversized bodies: a 400 with a message, nothing written.

CI runs a few examples per operation (``PUSHDOWN_FUZZ_EXAMPLES``, default 8, sets how
many; e.g. 300 for a longer run).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import hypothesis.strategies as st
import pytest
import schemathesis
import yaml
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

from pushdown.app.rest.routes import ROUTES
from pushdown.app.settings.serve import ServeSettings

from .inprocess import Site, site

OPENAPI = Path(__file__).parent / "openapi" / "openapi.yaml"
EXAMPLES = int(os.environ.get("PUSHDOWN_FUZZ_EXAMPLES", "8"))
M = "/api/metalakes/test"
MAX_BODY = 8192


def _shape(path: str) -> str:
    return re.sub(r"\{[^}]*\}", "{}", path)


#: what pushdown serves, as (method, path with its parameters blanked), without /api
SERVED = {(r.method, _shape(r.template.removeprefix("/api"))) for r in ROUTES}
#: routes that Gravitino's OpenAPI files do not describe (the client's version and close())
UNDESCRIBED = {("GET", "/version"), ("CLOSE", "/")}


def served_operations() -> list[Any]:
    schema = schemathesis.openapi.from_path(OPENAPI)
    out = []
    for result in schema.get_all_operations():
        try:
            op = result.ok()
        except AttributeError:  # a path whose file is not copied here: pushdown does not serve it
            continue
        if (op.method.upper(), _shape(op.path)) in SERVED:
            out.append(op)
    return sorted(out, key=lambda o: (o.path, o.method))


OPERATIONS = served_operations()


def _without_examples(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_examples(v) for k, v in node.items() if k != "examples"}
    if isinstance(node, list):
        return [_without_examples(v) for v in node]
    return node


@pytest.fixture(scope="module")
def schema(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The OpenAPI files without their named examples: the fuzzer generates from the
    schemas (the examples' references inside a referenced file are resolved against the
    root file by schemathesis, where they do not exist)."""
    tmp = tmp_path_factory.mktemp("openapi")
    for source in OPENAPI.parent.glob("*.yaml"):
        doc = yaml.safe_load(source.read_text())
        (tmp / source.name).write_text(yaml.safe_dump(_without_examples(doc), sort_keys=False))
    return schemathesis.openapi.from_path(tmp / OPENAPI.name)


@contextmanager
def _estate(tmp: Path) -> Iterator[Site]:
    with site(tmp, ServeSettings(max_body=MAX_BODY)) as s:
        with s.http("admin") as h:
            for path, body in (
                (f"{M}/catalogs", {"name": "cat", "type": "relational", "provider": "hive"}),
                (f"{M}/catalogs/cat/schemas", {"name": "db"}),
                (f"{M}/catalogs/cat/schemas/db/tables", {"name": "t", "columns": [{"name": "id"}]}),
                (f"{M}/users", {"name": "alice"}),
                (f"{M}/groups", {"name": "team"}),
                (f"{M}/roles", {"name": "reader"}),
            ):
                assert h.post(path, json=body).status_code == 200, path
        yield s


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The server the fuzzer changes at will (it may even drop the metalake)."""
    with _estate(tmp_path_factory.mktemp("fuzz")) as s:
        yield s


@pytest.fixture(scope="module")
def estate(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The server the explicit cases run against (nothing they send is written)."""
    with _estate(tmp_path_factory.mktemp("explicit")) as s:
        yield s


def test_every_served_route_is_described_by_the_openapi_files() -> None:
    described = {(op.method.upper(), _shape(op.path)) for op in OPERATIONS}
    assert sorted(SERVED - described - UNDESCRIBED) == []
    assert len(OPERATIONS) >= 40


#: names the fuzzer may put in the path instead of its own, to reach past "no such metalake"
KNOWN = {
    "metalake": "test",
    "name": "test",
    "catalog": "cat",
    "schema": "db",
    "table": "t",
    "user": "alice",
    "group": "team",
    "role": "reader",
}


@pytest.mark.timeout(600)  # a bound on a hung run, not a speed target
@pytest.mark.parametrize("label", [f"{o.method.upper()} {o.path}" for o in OPERATIONS])
def test_fuzzed_requests_get_no_5xx_and_answers_valid_against_the_schema(
    fuzzed: Site, schema: Any, label: str
) -> None:
    operation = schema.find_operation_by_label(label)
    auth = {"Authorization": "Basic " + "YWRtaW46YW55dGhpbmc="}  # admin:anything

    @given(case=operation.as_strategy(), known=st.sets(st.sampled_from(sorted(KNOWN))))
    @settings(
        max_examples=EXAMPLES,
        deadline=None,  # the loaded CI machine: the bound is the number of examples
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def run(case: Any, known: set[str]) -> None:
        for param in known & set(case.path_parameters or {}):
            case.path_parameters[param] = KNOWN[param]
        response = case.call(base_url=f"{fuzzed.uri}/api", headers=auth, timeout=30)
        case.validate_response(response, checks=[not_a_server_error, response_schema_conformance])

    run()


# -- explicit bad input ----------------------------------------------------------------

CONTROL = ["a\x00b", "a\nb", "\x1b[31mred", "tab\there", "del\x7f"]
#: every route that takes a body: a good body for it, and the field holding a name
BODIES: dict[tuple[str, str], tuple[dict[str, Any], str]] = {
    ("POST", "/api/metalakes"): ({"name": "other"}, "name"),
    ("POST", f"{M}/users"): ({"name": "bob"}, "name"),
    ("POST", f"{M}/groups"): ({"name": "g2"}, "name"),
    ("POST", f"{M}/roles"): ({"name": "r2", "securableObjects": []}, "name"),
    ("POST", f"{M}/catalogs"): ({"name": "c2", "type": "relational", "provider": "hive"}, "name"),
    ("POST", f"{M}/catalogs/cat/schemas"): ({"name": "db2"}, "name"),
    ("POST", f"{M}/catalogs/cat/schemas/db/tables"): ({"name": "t2", "columns": []}, "name"),
    ("POST", f"{M}/catalogs/cat/schemas/db/topics"): ({"name": "tp2"}, "name"),
    ("POST", f"{M}/catalogs/cat/schemas/db/filesets"): ({"name": "fs2"}, "name"),
    ("PUT", f"{M}/permissions/users/alice/grant"): ({"roleNames": ["reader"]}, "roleNames"),
    ("PUT", f"{M}/permissions/users/alice/revoke"): ({"roleNames": ["reader"]}, "roleNames"),
    ("PUT", f"{M}/permissions/groups/team/grant"): ({"roleNames": ["reader"]}, "roleNames"),
    ("PUT", f"{M}/permissions/groups/team/revoke"): ({"roleNames": ["reader"]}, "roleNames"),
    ("PUT", f"{M}/permissions/roles/reader/table/cat.db.t/grant"): (
        {"privileges": [{"name": "select_table", "condition": "allow"}]},
        "privileges",
    ),
    ("PUT", f"{M}/permissions/roles/reader/table/cat.db.t/revoke"): (
        {"privileges": [{"name": "select_table", "condition": "allow"}]},
        "privileges",
    ),
    ("PUT", f"{M}/owners/table/cat.db.t"): ({"name": "alice", "type": "USER"}, "name"),
    ("PUT", M): ({"updates": [{"@type": "updateComment", "newComment": "c"}]}, "updates"),
    ("PUT", f"{M}/permissions/roles/reader"): (
        {"overrides": [{"fullName": "cat.db.t", "type": "table", "privileges": [{"name": "select_table"}]}]},
        "overrides",
    ),
}


def _bad_inputs(body: dict[str, Any], field: str) -> list[tuple[str, bytes | dict[str, Any] | list[Any]]]:
    out: list[tuple[str, bytes | dict[str, Any] | list[Any]]] = [
        ("not JSON", b'{"name": '),
        ("not UTF-8", b'{"name": "\xff\xfe"}'),
        ("a list", [body]),
        ("a string", b'"just a string"'),
        ("oversized", json.dumps({**body, "comment": "x" * (MAX_BODY + 1)}).encode()),
    ]
    for key, value in body.items():
        for wrong in (5, True, {"x": 1}) if not isinstance(value, list) else ("r", 5, [5], []):
            if wrong == [] and key not in ("roleNames", "privileges"):  # may be empty
                continue
            out.append((f"{key}={wrong!r}", {**body, key: wrong}))
    if field in ("name",):
        out += [(f"name {c!r}", {**body, "name": c}) for c in CONTROL]
    if field == "roleNames":
        out += [(f"roleNames {c!r}", {"roleNames": [c]}) for c in CONTROL]
    if field == "privileges":
        out += [
            ("unknown privilege", {"privileges": [{"name": "fly_table", "condition": "allow"}]}),
            ("unknown condition", {"privileges": [{"name": "select_table", "condition": "maybe"}]}),
            ("privilege not a string", {"privileges": [{"name": 7, "condition": "allow"}]}),
            (
                "privilege on the wrong type",
                {"privileges": [{"name": "create_catalog", "condition": "allow"}]},
            ),
        ]
    return out


CASES = [
    (method, path, what, bad)
    for (method, path), (body, field) in BODIES.items()
    for what, bad in _bad_inputs(body, field)
]


def test_the_explicit_cases_cover_every_route_that_takes_a_body() -> None:
    with_body = {(r.method, r.template) for r in ROUTES if r.method in ("POST", "PUT")}
    covered = set()
    for method, path in BODIES:
        segments = tuple(path.strip("/").split("/"))
        covered |= {
            (r.method, r.template) for r in ROUTES if r.method == method and r.match(segments) is not None
        }
    assert sorted(with_body - covered) == []


@pytest.mark.parametrize(
    ("method", "path", "what", "bad"), CASES, ids=[f"{c[0]} {c[1]} {c[2]}" for c in CASES]
)
def test_bad_input_is_a_400_with_a_message_and_writes_nothing(
    estate: Site, method: str, path: str, what: str, bad: bytes | dict[str, Any] | list[Any]
) -> None:
    before = estate.seq()
    with estate.http("admin") as h:
        if isinstance(bad, bytes):
            r = h.request(method, path, content=bad, headers={"Content-Type": "application/json"})
        else:
            r = h.request(method, path, json=bad)
    assert r.status_code == 400, f"{what}: {r.status_code} {r.text[:300]}"
    err = r.json()
    assert err["code"] == 1001 and err["type"] and err["message"].strip(), err
    assert "Traceback" not in err["message"]
    assert estate.seq() == before, f"{what}: refused, yet something was written"


#: a good value for each path parameter of the estate
GOOD = {
    "metalake": "test",
    "user": "alice",
    "group": "team",
    "role": "reader",
    "catalog": "cat",
    "schema": "db",
    "name": "t",
    "type": "table",
    "fullName": "cat.db.t",
}
BAD_SEGMENTS = ("a%0Ab", "a%00b", "a%1B%5B31m", "a%7F", "%0D")
PATH_CASES = [
    (route.method, route.template, param)
    for route in ROUTES
    for param in (s[1:-1] for s in route.segments if s.startswith("{"))
]


@pytest.mark.parametrize(("method", "template", "param"), PATH_CASES, ids=[" ".join(c) for c in PATH_CASES])
def test_a_control_character_in_any_name_of_the_path_is_a_400_that_writes_nothing(
    estate: Site, method: str, template: str, param: str
) -> None:
    bad = BAD_SEGMENTS[PATH_CASES.index((method, template, param)) % len(BAD_SEGMENTS)]
    path = template
    for key, value in GOOD.items():
        path = path.replace(f"{{{key}}}", bad if key == param else value)
    body = {"name": "x", "roleNames": ["reader"], "type": "USER"}
    before = estate.seq()
    with estate.http("admin") as h:
        r = h.request(method, path, json=body if method in ("POST", "PUT") else None)
    assert r.status_code == 400, f"{method} {path}: {r.status_code} {r.text[:300]}"
    err = r.json()
    assert err["code"] == 1001 and f"{{{param}}}" in err["message"] and "control character" in err["message"]
    assert estate.seq() == before
