"""A served page over a store of its own: the demo estate (examples/demo.yaml, enforced by
the recording backend ``demo`` as under the embedded defaults) or a random one, served by
``build_app`` (the REST app, which mounts the page) with uvicorn on a thread."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import uvicorn

from pushdown.app.rest.app import build_app
from pushdown.app.rest.server import listen
from pushdown.app.service import AccessControl
from pushdown.app.service.spec import load_spec
from pushdown.app.settings.serve import ServeSettings
from pushdown.errors import ModelError
from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import METALAKE, ObjectRef
from pushdown.model.state import Model

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "demo.yaml"


@dataclass
class Site:
    uri: str
    ac: AccessControl


def demo_core(tmp: Path, drift: bool = True) -> AccessControl:
    """The demo estate applied to the recording backend; with ``drift``, then one grant the
    backend has not seen yet (so the read back differs on table sales.crm.customers)."""
    (tmp / "pushdown.toml").write_text(
        f'store = "{tmp / "pd.db"}"\n[access]\nservice_admins = ["admin"]\n'
        f'[backends.demo]\nkind = "recording"\nstate = "{tmp / "state.json"}"\n',
        encoding="utf-8",
    )
    ac = AccessControl.open(str(tmp / "pushdown.toml"), create_store=True)
    ac.as_admin("spec").load_model(load_spec(str(DEMO)))
    ac.as_admin("cli").set_owner("metalake", "admin")  # the administrator who sees everything
    ac.sync(full=True)
    if drift:
        quiet = AccessControl.open(str(tmp / "pushdown.toml"), push=False)
        quiet.as_admin("cli").create_role("late", owner="carol")
        quiet.as_admin("cli").grant_privileges("late", "table sales.crm.customers", ["MODIFY_TABLE"])
        quiet.as_admin("cli").grant_role("late", "user bob")
        quiet.close()
    return ac


def random_model(seed: int, users: int = 12, tables: int = 6) -> Model:
    """A random estate: users, groups, roles with ALLOWs and DENYs at every level, owners."""
    rng = random.Random(seed)
    scratch, out = Model(metalake="rand"), []  # out: the events, in order

    def do(fn, *args):  # type: ignore[no-untyped-def]
        try:
            events = fn(scratch, *args)
        except ModelError:
            return
        for e in events:
            scratch.apply(e)
        out.extend(events)

    names = ["admin", *(f"u{i}" for i in range(users))]
    for u in names:
        do(ch.add_user, u)
    do(ch.set_owner, METALAKE, "admin")
    do(ch.set_service_admins, ["admin"])
    for g in ("g1", "g2"):
        do(ch.add_group, g)
        for u in rng.sample(names[1:], 4):
            do(ch.add_member, g, u)
    objects = []
    for c in ("c1", "c2"):
        cat = ObjectRef.parse(f"catalog {c}")
        do(ch.create_object, cat, rng.choice(names), None)
        objects.append(cat)
        for s in ("s1", "s2"):
            sch = ObjectRef.parse(f"schema {c}.{s}")
            do(ch.create_object, sch, rng.choice([None, *names[1:4]]) or "admin", None)
            objects.append(sch)
            for t in range(tables):
                tab = ObjectRef.parse(f"table {c}.{s}.t{t}")
                do(ch.create_object, tab, "admin", None)
                objects.append(tab)
    privs = [
        Privilege.USE_CATALOG,
        Privilege.USE_SCHEMA,
        Privilege.SELECT_TABLE,
        Privilege.MODIFY_TABLE,
        Privilege.CREATE_TABLE,
    ]
    for r in range(8):
        role = f"r{r}"
        do(ch.create_role, role, "admin")
        for _ in range(3):
            obj = rng.choice(objects)
            cond = Condition.DENY if rng.random() < 0.25 else Condition.ALLOW
            for privilege in rng.sample(privs, 2):
                do(ch.grant_privileges, role, obj, [privilege], cond)
        who = rng.choice([Principal.user(rng.choice(names[1:])), Principal.group(rng.choice(["g1", "g2"]))])
        do(ch.grant_role, role, who)
    return scratch


def random_core(tmp: Path, seed: int) -> AccessControl:
    """A random estate in a store of its own, no backend configured (nothing enforced)."""
    (tmp / "pushdown.toml").write_text(
        f'store = "{tmp / "pd.db"}"\n[access]\nservice_admins = ["admin"]\n', encoding="utf-8"
    )
    ac = AccessControl.open(str(tmp / "pushdown.toml"), create_store=True)
    ac.as_admin("spec").load_model(random_model(seed))
    return ac


@contextmanager
def serve(ac: AccessControl) -> Iterator[Site]:
    sock = listen("127.0.0.1", 0)
    app = build_app(ac, ServeSettings())
    server = uvicorn.Server(uvicorn.Config(app, log_config=None, lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        import time

        deadline = time.monotonic() + 30
        while not server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        yield Site(f"http://127.0.0.1:{sock.getsockname()[1]}", ac)
    finally:
        server.should_exit = True
        thread.join(30)
