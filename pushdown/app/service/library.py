"""The library API: make model changes, journal them, push them to the backends.

    ac = AccessControl.open()                       # ./pushdown.toml or embedded defaults
    ac.add_user("alice")
    ac.create_role("reader", owner="carol")
    result = ac.grant_privileges("reader", "schema sales.crm", ["SELECT_TABLE"])
    result.lagging                                  # backends that could not be reached

Each call validates the change against the current model, commits the model change
and its events in one SQLite transaction (an invalid change writes nothing), then,
when ``push`` is on, syncs every backend over the scope the journal says changed.
A backend that fails keeps its cursor: the change stays committed and the next
sync catches the backend up.

:class:`AccessControl` is assembled from one part per concern, each above the one before:
:mod:`~pushdown.app.service.base` (state, views, opening, leases),
:mod:`~pushdown.app.service.changing` (making and checking a change),
:mod:`~pushdown.app.service.changes` (the named changes),
:mod:`~pushdown.app.service.syncing` (decisions, the directory, previews, syncs) and
:mod:`~pushdown.app.service.metalakes` (the metalake and the audit).
"""

from __future__ import annotations

from pushdown.app.service.metalakes import Metalakes


class AccessControl(Metalakes):
    """The library. ``actor``: who makes the changes (None: the plain library, unchecked,
    recorded without an author); :meth:`acting` gives a view whose changes are checked."""
