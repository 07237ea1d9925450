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
