"""What the backend keeps between syncs about its token's sight must not outlive the
catalog it was seen on: a catalog dropped and made again by somebody else is no longer the
token's, and the server then shows the token only its own grants in it."""

from __future__ import annotations

from typing import Any

from pushdown.app.service.spec import load_spec_text
from pushdown.model.securables import ObjectRef
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_unitycatalog.client import API

from .test_uc_review import _made_by
from .test_uc_sync import SEED, SEED_HELD


def test_a_catalog_made_again_by_another_owner_is_not_read_as_the_tokens(uc_standin: Any) -> None:
    """keeper's token owned catalog main when a full sync saw it; the metastore admin drops
    main and makes it again (the admin owns it now) and grants ann MODIFY on main.hr.pay by
    hand. A scoped sync of that table must not read main as the token's: the server shows
    the token only its own grants there, so ann's MODIFY would look absent and the plan
    would hold back its revoke without a word."""
    model = load_spec_text(SEED)
    w = _made_by(uc_standin, model, "keeper", ["ann", "ben", "cat"])
    backend = w.backend(token=uc_standin.token_of("keeper"))
    reconcile(backend, model, Scope.everything())
    uc_standin.store.drop(("main",))
    w.admin.call("POST", API + "/catalogs", {"name": "main"})
    for schema, tables in SEED_HELD.items():
        w.schema(schema)
        for t in tables:
            w.table(schema, t)
    w.admin.update("table", "main.hr.pay", "ann", ["MODIFY"], [])
    plan, _ = reconcile(backend, model, Scope.of([ObjectRef.parse("table main.hr.pay")]), dry_run=True)
    assert any(f.startswith("catalog main: the token owns neither") for f in plan.findings), plan.findings
