"""Contract fuzzing, stateful: schemathesis chains calls through OpenAPI links added to
Gravitino's own files (create a role, then get, grant on, ask the owner of, delete it by
the name the create answered; the same for users and catalogs). Beside no 5xx and answers
valid against the schema, schemathesis' stateful checks hold: a resource just created is
found by the name it was created with (``ensure_resource_availability``) and one deleted is
gone (``use_after_free``) - one name, one object, whatever the name holds.

``PUSHDOWN_FUZZ_STEPS`` (default 40) sets how many scenarios run; e.g. 500 for a longer run.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
import schemathesis
import yaml
from hypothesis import HealthCheck, Phase, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    ensure_resource_availability,
    response_schema_conformance,
    use_after_free,
)

from pushdown.app.settings.serve import ServeSettings

from .inprocess import Site, site

OPENAPI = Path(__file__).parent / "openapi" / "openapi.yaml"
STEPS = int(os.environ.get("PUSHDOWN_FUZZ_STEPS", "40"))
M = "/api/metalakes/test"
AUTH = {"Authorization": "Basic YWRtaW46YW55dGhpbmc="}  # admin:anything, the metalake's owner
_METALAKE = {"metalake": "$request.path.metalake"}


def _link(operation: str, **parameters: str) -> dict[str, Any]:
    return {"operationId": operation, "parameters": {**_METALAKE, **parameters}}


#: create -> what follows it, by the name the create answered
LINKS: dict[str, dict[str, dict[str, Any]]] = {
    "createRole": {
        "GetRole": _link("getRole", role="$response.body#/role/name"),
        "DeleteRole": _link("deleteRole", role="$response.body#/role/name"),
        "OwnerOfRole": _link(
            "getOwner", metadataObjectType="ROLE", metadataObjectFullName="$response.body#/role/name"
        ),
        "GrantOnCatalog": _link(
            "grantPrivilegeToRole",
            role="$response.body#/role/name",
            metadataObjectType="CATALOG",
            metadataObjectFullName="cat",
        ),
    },
    "addUser": {
        "GetUser": _link("getUser", user="$response.body#/user/name"),
        "RemoveUser": _link("removeUser", user="$response.body#/user/name"),
        "GrantToUser": _link("grantRoleToUser", user="$response.body#/user/name"),
    },
    "addGroup": {
        "GetGroup": _link("getGroup", group="$response.body#/group/name"),
        "RemoveGroup": _link("removeGroup", group="$response.body#/group/name"),
    },
    "createCatalog": {
        "LoadCatalog": _link("loadCatalog", catalog="$response.body#/catalog/name"),
        "DropCatalog": _link("dropCatalog", catalog="$response.body#/catalog/name"),
    },
}
#: operationId -> (kind, the response's key) of what it creates
CREATES = {"createRole": "role", "addUser": "user", "addGroup": "group", "createCatalog": "catalog"}
#: operationId -> (kind, the path parameter naming it) of what it reads or deletes
FINDS = {
    "getRole": ("role", "role"),
    "deleteRole": ("role", "role"),
    "getUser": ("user", "user"),
    "removeUser": ("user", "user"),
    "getGroup": ("group", "group"),
    "removeGroup": ("group", "group"),
    "loadCatalog": ("catalog", "catalog"),
    "dropCatalog": ("catalog", "catalog"),
}
INCLUDED = sorted({*LINKS, *(link["operationId"] for links in LINKS.values() for link in links.values())})


def _prepared(node: Any) -> Any:
    """The files without their named examples (as in the stateless run), with the links."""
    if isinstance(node, dict):
        out = {k: _prepared(v) for k, v in node.items() if k != "examples"}
        links = LINKS.get(str(node.get("operationId")))
        if links is not None:
            out["responses"]["200"]["links"] = links
        return out
    if isinstance(node, list):
        return [_prepared(v) for v in node]
    return node


@pytest.fixture(scope="module")
def linked(tmp_path_factory: pytest.TempPathFactory) -> Any:
    tmp = tmp_path_factory.mktemp("openapi-linked")
    here = {p.name for p in OPENAPI.parent.glob("*.yaml")}
    for source in OPENAPI.parent.glob("*.yaml"):
        doc = _prepared(yaml.safe_load(source.read_text()))
        if source == OPENAPI:  # the paths whose files are not copied here are not served
            doc["paths"] = {
                path: item
                for path, item in doc["paths"].items()
                if str(item.get("$ref", "./x.yaml#")).split("#")[0].removeprefix("./") in here
            }
        (tmp / source.name).write_text(yaml.safe_dump(doc, sort_keys=False))
    return schemathesis.openapi.from_path(tmp / OPENAPI.name).include(operation_id=INCLUDED)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with site(tmp_path_factory.mktemp("stateful"), ServeSettings()) as s:
        with s.http("admin") as h:
            body = {"name": "cat", "type": "relational", "provider": "hive"}
            assert h.post(f"{M}/catalogs", json=body).status_code == 200
            assert h.post(f"{M}/roles", json={"name": "reader"}).status_code == 200
        yield s


def test_the_links_name_operations_that_exist(linked: Any) -> None:
    found = set()
    for result in linked.get_all_operations():
        try:
            found.add(result.ok().definition.raw.get("operationId"))
        except AttributeError:  # a path whose file is not copied here: pushdown does not serve it
            continue
    assert set(INCLUDED) <= found, set(INCLUDED) - found


@pytest.mark.timeout(600)  # a bound on a hung run, not a speed target
def test_stateful_create_then_read_grant_delete_by_the_answered_name(linked: Any, served: Site) -> None:
    base = f"{served.uri}/api"
    failures: list[str] = []
    calls, found = [0], [0]
    created: set[tuple[str, str]] = set()

    initial = copy.deepcopy(served.ac.model)

    class Machine(linked.as_state_machine()):  # type: ignore[misc]
        def setup(self) -> None:
            # every scenario starts from the same estate: what the server answers (and so
            # which links schemathesis follows) depends only on the scenario's own calls
            served.ac.load_model(copy.deepcopy(initial))
            created.clear()

        def after_call(self, response: Any, case: Any) -> None:
            """What the metalake's owner created is found by the name the create answered."""
            super().after_call(response, case)
            op = case.operation.definition.raw.get("operationId")
            if op in CREATES and response.status_code == 200:
                created.add((CREATES[op], response.json()[CREATES[op]]["name"]))
            elif op in FINDS:
                kind, param = FINDS[op]
                name = unquote((case.path_parameters or {}).get(param, ""))  # as sent, encoded
                if (kind, name) in created:
                    found[0] += 1
                    if response.status_code != 200:
                        failures.append(f"{kind} {name!r} was created, {op} answered {response.text[:300]}")
                    elif case.method == "DELETE":
                        created.discard((kind, name))

        def before_call(self, case: Any) -> None:
            params = case.path_parameters
            if params is not None and "metalake" in params:
                params["metalake"] = "test"  # the served metalake; the rest is drawn

        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            return {"base_url": base, "headers": AUTH, "timeout": 30}

        def validate_response(self, response: Any, case: Any, **kwargs: Any) -> None:
            # a failure is collected, not raised: the server keeps its state between
            # scenarios, so a replay (to shrink or to report) would meet another state
            calls[0] += 1
            checks = [not_a_server_error, response_schema_conformance, ensure_resource_availability]
            try:
                case.validate_response(response, checks=[*checks, use_after_free])
            except Exception as exc:  # reported below with the request
                shown = f"{case.method} {case.formatted_path} -> {response.status_code} {response.text[:300]}"
                failures.append(f"{shown}: {exc}"[:2000])

    Machine.run(
        settings=settings(
            max_examples=STEPS,
            stateful_step_count=6,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
            phases=[Phase.explicit, Phase.generate],
        )
    )
    print(f"stateful: {calls[0]} calls, {found[0]} by a created name, {len(failures)} failures")
    assert not failures, "\n\n".join(failures[:5])
