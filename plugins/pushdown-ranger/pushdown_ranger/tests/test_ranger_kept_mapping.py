"""What the Ranger backend keeps between syncs must not outlive the mapping it was made
through: when the mapping hook may answer otherwise from one sync to the next (a plugin
implements it), a sync of the same model maps again, and never pushes the old names."""

from __future__ import annotations

from pushdown_lab.ranger_standin import Standin

from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile

from .world import backend_for, sales


def _members(standin: Standin, role: str) -> set[str]:
    return {m["name"] for r in standin.store.list_roles({}) if r["name"] == role for m in r["users"]}


def test_a_mapping_that_answers_otherwise_is_pushed_at_the_next_sync_of_the_same_model(
    ranger_standin: Standin,
) -> None:
    """alice maps to ``alice``, then (the hook's directory changed) to ``alice2``: the next
    full sync of the very same model must make ``alice2`` the member of pd_reader and take
    ``alice`` out, not push the names of the compile it kept."""
    names = {"alice": "alice"}
    backend = backend_for(ranger_standin, map_principal=lambda p: names.get(p.name, p.name))
    model = sales().model
    reconcile(backend, model, Scope.everything())
    assert "alice" in _members(ranger_standin, "pd_reader")
    names["alice"] = "alice2"
    reconcile(backend, model, Scope.everything())
    members = _members(ranger_standin, "pd_reader")
    assert "alice2" in members and "alice" not in members, members


def _named(standin: Standin, database: str) -> set[str]:
    """The roles the items of ``database``'s Hive policies name."""
    return {
        role
        for p in standin.store.list_policies({})
        if p.get("service") == "hive" and p["resources"].get("database", {}).get("values") == [database]
        for item in [*(p.get("policyItems") or ()), *(p.get("denyPolicyItems") or ())]
        for role in item.get("roles") or ()
    }


def test_a_mapping_that_answers_otherwise_renames_the_per_user_roles_a_scoped_sync_names(
    ranger_standin: Standin,
) -> None:
    """The Ranger names of a policy item's roles are kept with the choice of roles for the
    kept identity: dave (owner of the catalog, in no role) is named through ``pdu_dave``; the hook
    then answers ``dave2``, and a sync scoped to a grant in crm (which maps everyone again)
    names ``pdu_dave2`` in crm's items, never the old per-user role."""
    from pushdown.model import changes as ch
    from pushdown.model.securables import ObjectRef
    from pushdown.reconcile.scope import scope_of

    names = {"dave": "dave"}
    backend = backend_for(ranger_standin, map_principal=lambda p: names.get(p.name, p.name))
    model = sales().users("dave").owner("catalog sales", "dave").model
    reconcile(backend, model, Scope.everything())
    assert "pdu_dave" in _named(ranger_standin, "crm")
    names["dave"] = "dave2"
    events = ch.grant_privileges(model, "reader", ObjectRef.parse("table sales.crm.leads"), ["MODIFY_TABLE"])
    for event in events:
        model.apply(event)
    reconcile(backend, model, Scope.union(scope_of(e) for e in events))
    named = _named(ranger_standin, "crm")
    assert "pdu_dave2" in named and "pdu_dave" not in named, named
    assert _members(ranger_standin, "pdu_dave2") == {"dave2"}
