"""Every ``curl`` call of the reference's "Operations" section, run as written there (no
``Authorization`` header: the caller is ``anonymous``, this deployment's service admin,
who created metalake ``test``; only the port is the test's), answers 200 with the
documented shape.

The calls are read from the reference itself (``shared/reference`` beside the checkout,
as CI has it); the test is skipped where that directory is not found."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from .conftest import init_store, serving

HERE = Path(__file__).resolve()


def reference_text() -> str | None:
    for parent in HERE.parents:
        for doc in sorted((parent / "shared" / "reference").glob("000_*.txt")):
            return doc.read_text()
    return None


def curl_calls(text: str) -> list[str]:
    """Each curl command of the Operations section, its lines joined as the shell would."""
    section = text[text.index("\nOperations\n") : text.index("\nExample\n")]
    calls, current = [], None
    for line in section.splitlines():
        if line.startswith("curl "):
            current = []
        if current is not None:
            current.append(line)
            if "http://localhost:8090/" in line:
                calls.append("\n".join(current))
                current = None
    return calls


#: The key each documented answer carries, by the call's method and last path word.
SHAPES = {
    ("POST", "users"): "user",
    ("GET", "users"): "names",
    ("DELETE", "users"): "removed",
    ("POST", "groups"): "group",
    ("GET", "groups"): "names",
    ("DELETE", "groups"): "removed",
    ("POST", "roles"): "role",
    ("GET", "roles"): "names",
    ("DELETE", "roles"): "dropped",
}


def expected_key(call: str) -> str:
    method = re.search(r"-X (\w+)", call)
    url = re.search(r"http://localhost:8090(\S+)", call)
    assert method is not None and url is not None
    path = url.group(1).split("?")[0].rstrip("/")
    parts = path.split("/")
    if "details=true" in url.group(1):
        return parts[-1]  # users / groups
    if "/permissions/" in path:
        return parts[5].rstrip("s")  # user, group or role
    if "/owners/" in path:
        return "owner" if method.group(1) == "GET" else "set"
    if "/objects/" in path:
        return "names"
    word = parts[4]  # ["", "api", "metalakes", "test", word, ...]
    if method.group(1) in ("GET", "DELETE") and len(parts) == 6:  # one named user/group/role
        return {"GET": word.rstrip("s"), "DELETE": SHAPES[("DELETE", word)]}[method.group(1)]
    return SHAPES[(method.group(1), word)]


@pytest.fixture(scope="module")
def calls() -> list[str]:
    text = reference_text()
    if text is None:
        pytest.skip("the reference (shared/reference beside the checkout) is not here")
    found = curl_calls(text)
    assert len(found) >= 25, found
    return found


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    tmp = tmp_path_factory.mktemp("curls")
    config = tmp / "pushdown.toml"
    config.write_text('store = "pd.db"\n[access]\nservice_admins = ["anonymous"]\n')
    init_store(config)
    with serving(config, tmp / "serve.log") as server:
        uri = server.ready()
        with httpx.Client(base_url=f"{uri}/api/metalakes") as h:  # anonymous, as the curls
            assert h.post("", json={"name": "test"}).status_code == 200
            base = "/test/catalogs"
            assert h.post(
                base, json={"name": "catalog1", "type": "relational", "provider": "hive"}
            ).is_success
            assert h.post(f"{base}/catalog1/schemas", json={"name": "schema1"}).is_success
            assert h.post(f"{base}/catalog1/schemas/schema1/tables", json={"name": "table1"}).is_success
        yield server.port()


def prepare(port: int, call: str) -> None:
    """The state the call needs: user1, group1 and role1 exist (a call before may have
    removed one, as the section's order does), except the one a create call makes."""
    creates = re.search(r"-X POST .*?/api/metalakes/test/(users|groups|roles)$", call, flags=re.S)
    with httpx.Client(base_url=f"http://127.0.0.1:{port}/api/metalakes/test") as h:
        for kind, name in (("users", "user1"), ("groups", "group1"), ("roles", "role1")):
            exists = h.get(f"/{kind}/{name}").status_code == 200
            if creates is not None and creates.group(1) == kind:
                if exists:
                    assert h.delete(f"/{kind}/{name}").status_code == 200
            elif not exists:
                assert h.post(f"/{kind}", json={"name": name}).status_code == 200


def test_every_curl_call_of_the_reference_answers_its_documented_shape(calls: list[str], port: int) -> None:
    for call in calls:
        prepare(port, call)
        command = call.replace("http://localhost:8090/", f"http://localhost:{port}/")
        done = subprocess.run(
            ["bash", "-c", command.replace("curl ", "curl -s -w '\\n%{http_code}' ", 1)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        body, _, status = done.stdout.rpartition("\n")
        assert status == "200", (call, done.stdout, done.stderr)
        answer = json.loads(body)
        assert answer["code"] == 0, (call, answer)
        assert expected_key(call) in answer, (call, answer)
