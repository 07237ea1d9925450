"""8 clients granting and revoking at once against ``pushdown serve`` (a child process),
with the library writing the same store from this process beside them, for a bounded
time (``PUSHDOWN_CONCURRENCY_SECONDS``, default 15; 60 for the full minute).

Each client owns its own (user, role) and (role, table) pairs, spread over shared users,
roles and tables, and toggles them: so every call it makes is a real change, it knows
what it last did to each pair, and a lost update shows. Then:
- no 5xx but a busy store's 503 (which carries Retry-After and is retried);
- every 2xx change is in the journal, under its request id (``X-Request-Id``);
- the model rebuilt by replaying the journal from the start on a fresh ``Model`` equals
  the stored model and what the server answers, and each pair is as its client left it.
"""

from __future__ import annotations

import base64
import os
import random
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from pushdown.app.service import AccessControl
from pushdown.app.settings import AccessSettings
from pushdown.journal.store import Store
from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model

from .conftest import init_store, serving

SECONDS = float(os.environ.get("PUSHDOWN_CONCURRENCY_SECONDS", "15"))
CLIENTS = 8
M = "/api/metalakes/test"
USERS = [f"u{i}" for i in range(6)]
ROLES = [f"r{i}" for i in range(6)]
TABLES = [f"t{i}" for i in range(6)]


def owner_of(a: int, b: int) -> int:
    """Which client owns a pair (client CLIENTS is the library writer)."""
    return (a * 7 + b) % (CLIENTS + 1)


@dataclass
class Tally:
    ok: list[str] = field(default_factory=list)  # request ids of 2xx changes
    busy: int = 0
    wrong: list[str] = field(default_factory=list)
    #: pair -> held after this client's last successful change
    held: dict[tuple[str, str, str], bool] = field(default_factory=dict)


def _call(h: httpx.Client, path: str, body: dict[str, Any], tally: Tally) -> bool:
    """PUT until answered other than busy (503 + Retry-After): True on 2xx."""
    for _ in range(100):
        r = h.put(path, json=body)
        if r.status_code == 503 and "Retry-After" in r.headers and r.json().get("code") == 1002:
            tally.busy += 1
            time.sleep(min(float(r.headers["Retry-After"]), 0.2))
            continue
        if 200 <= r.status_code < 300:
            tally.ok.append(r.headers["X-Request-Id"])
            return True
        tally.wrong.append(f"PUT {path}: {r.status_code} {r.text[:200]}")
        return False
    tally.wrong.append(f"PUT {path}: busy 100 times")
    return False


def client_loop(uri: str, me: int, stop: float, tally: Tally) -> None:
    rng = random.Random(me)
    roles = [(u, r) for u in range(len(USERS)) for r in range(len(ROLES)) if owner_of(u, r) == me]
    privs = [(r, t) for r in range(len(ROLES)) for t in range(len(TABLES)) if owner_of(r + 11, t) == me]
    with httpx.Client(base_url=uri, auth=httpx.BasicAuth("admin", "x"), timeout=60) as h:
        while time.monotonic() < stop:
            if rng.random() < 0.5 and roles:
                u, r = rng.choice(roles)
                key = ("role", USERS[u], ROLES[r])
                verb = "revoke" if tally.held.get(key) else "grant"
                body = {"roleNames": [ROLES[r]]}
                if _call(h, f"{M}/permissions/users/{USERS[u]}/{verb}", body, tally):
                    tally.held[key] = verb == "grant"
            elif privs:
                r, t = rng.choice(privs)
                key = ("privilege", ROLES[r], TABLES[t])
                verb = "revoke" if tally.held.get(key) else "grant"
                body = {"privileges": [{"name": "select_table", "condition": "allow"}]}
                path = f"{M}/permissions/roles/{ROLES[r]}/table/cat.db.{TABLES[t]}/{verb}"
                if _call(h, path, body, tally):
                    tally.held[key] = verb == "grant"


def library_loop(db: Path, stop: float, tally: Tally) -> None:
    """Another writer of the same store: the library, toggling its own pairs."""
    rng = random.Random(99)
    ac = AccessControl(Store(db, busy_timeout=30), access=AccessSettings(("admin",)), push=False)
    roles = [(u, r) for u in range(len(USERS)) for r in range(len(ROLES)) if owner_of(u, r) == CLIENTS]
    try:
        while time.monotonic() < stop and roles:
            u, r = rng.choice(roles)
            key = ("role", USERS[u], ROLES[r])
            if tally.held.get(key):
                ac.revoke_role(ROLES[r], Principal.user(USERS[u]))
            else:
                ac.grant_role(ROLES[r], Principal.user(USERS[u]))
            tally.held[key] = not tally.held.get(key)
            time.sleep(0.01)
    except Exception as exc:  # reported by the test, not lost in a thread
        tally.wrong.append(f"library: {exc!r}")
    finally:
        ac.close()


def canon(model: Model) -> dict[str, Any]:
    return {
        "users": sorted(model.users),
        "groups": {g: sorted(m) for g, m in model.groups.items()},
        "roles": {r: sorted(str(g) for g in gs) for r, gs in model.roles.items()},
        "user_roles": {u: sorted(rs) for u, rs in model.user_roles.items() if rs},
        "group_roles": {g: sorted(rs) for g, rs in model.group_roles.items() if rs},
        "owners": {str(o): u for o, u in model.owners.items()},
        "objects": {str(o): p for o, p in model.objects.items()},
    }


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path, Path]]:
    config = tmp_path / "pushdown.toml"
    config.write_text('store = "pd.db"\n[access]\nservice_admins = ["admin"]\n')
    init_store(config)
    log = tmp_path / "serve.log"
    with serving(config, log) as server:
        uri = server.ready()
        with httpx.Client(base_url=uri, auth=httpx.BasicAuth("admin", "x"), timeout=60) as h:
            assert h.post("/api/metalakes", json={"name": "test"}).status_code == 200
            for path, body in (
                (f"{M}/catalogs", {"name": "cat", "type": "relational", "provider": "hive"}),
                (f"{M}/catalogs/cat/schemas", {"name": "db"}),
                *((f"{M}/catalogs/cat/schemas/db/tables", {"name": t}) for t in TABLES),
                *((f"{M}/users", {"name": u}) for u in USERS),
                *((f"{M}/roles", {"name": r}) for r in ROLES),
            ):
                assert h.post(path, json=body).status_code == 200, (path, body)
        yield uri, tmp_path / "pd.db", log


def test_eight_clients_and_the_library_at_once_lose_nothing(served: tuple[str, Path, Path]) -> None:
    uri, db, log = served
    stop = time.monotonic() + SECONDS
    tallies = [Tally() for _ in range(CLIENTS + 1)]
    threads = [threading.Thread(target=client_loop, args=(uri, i, stop, tallies[i])) for i in range(CLIENTS)]
    threads.append(threading.Thread(target=library_loop, args=(db, stop, tallies[CLIENTS])))
    for t in threads:
        t.start()
    for t in threads:
        t.join(SECONDS + 300)
        assert not t.is_alive(), "a client is still running"
    wrong = [w for tally in tallies for w in tally.wrong]
    assert wrong == []
    changes = sum(len(t.ok) for t in tallies[:CLIENTS])
    busy = sum(t.busy for t in tallies)
    print(f"{changes} changes over HTTP, {len(tallies[CLIENTS].held)} pairs by the library, {busy} busy")
    assert changes >= CLIENTS * 5, f"only {changes} changes over HTTP in {SECONDS} s: nothing was contended"

    store = Store(db)
    try:
        # every 2xx change is in the journal, under its request id
        journalled = {e.request for e in store.history() if e.request is not None}
        lost = [rid for tally in tallies[:CLIENTS] for rid in tally.ok if rid not in journalled]
        assert lost == []
        # a serial replay of the journal equals the stored model
        replay = Model(metalake=store.get_meta("metalake") or "metalake")
        for _, event in store.events_since(0):
            replay.apply(event)
        stored = store.load()
        assert canon(replay) == canon(stored)
    finally:
        store.close()
    # ... and each pair is as its client left it
    for tally in tallies:
        for (kind, a, b), held in tally.held.items():
            if kind == "role":
                assert (b in replay.user_roles.get(a, set())) == held, (a, b)
            else:
                grant = (ObjectRef.parse(f"table cat.db.{b}"), Privilege.SELECT_TABLE, Condition.ALLOW)
                has = any((g.object, g.privilege, g.condition) == grant for g in replay.roles[a])
                assert has == held, (a, b)
    # ... and the server answers the same
    with httpx.Client(base_url=uri, auth=httpx.BasicAuth("admin", "x"), timeout=60) as h:
        users = h.get(f"{M}/users?details=true").json()["users"]
        assert {u["name"]: sorted(u["roles"]) for u in users if u["name"] in USERS} == {
            u: sorted(replay.user_roles.get(u, set())) for u in USERS
        }
    text = log.read_text()
    assert '"status": 500' not in text and " -> 500 " not in text
    assert " -> 200 " in text  # the log holds the requests: the check below looks at something
    assert base64.b64encode(b"admin:x").decode() not in text and "admin:x" not in text
