"""The directory's members, in the one model every answer comes from.

Groups may have members the model does not list: a directory plugin
(``pushdown_resolve_group_members``) names them, and every sync records its answer in the
model (``Model.external_members``, journalled as ``ExternalMembersChanged``) before the
backends compile. The model a backend enforces and the model ``authorize``, ``explain``,
the REST service's checks and the report decide on are both :func:`enforced` of the
store's model: one resolution (the recorded one, no hook call per decision), one answer.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Mapping, Set
from dataclasses import dataclass

from pushdown.model.events import GroupMemberAdded, UserAdded
from pushdown.model.state import Model


def with_members(model: Model, members: Mapping[str, Set[str]]) -> Model:
    """``model``, or a view of it with ``members`` added to their groups (users the model
    does not list are added as users: the directory says they exist).

    The view copies only what the members change (the user set, the changed groups'
    member sets and the members' group sets, and the stamp tables, one dict copy each; a
    log of stamps of its own, empty);
    everything else it shares with ``model``. Read it, never
    change it; it is stale once ``model`` changes."""
    if not members:
        return model
    view = copy.copy(model)
    view.users = set(model.users)
    # the view's stamps its own: those it gives the members it adds never land in the
    # model's (whose count of them would then no longer prove who alone was stamped)
    view.roles_moved = dict(model.roles_moved)
    view.grants_moved = dict(model.grants_moved)
    # and its own log of them, from now (a cache of the model proves nothing of the view)
    view.stamp_log, view.stamp_log_base = [], model.roles_stamped
    view.groups = dict(model.groups)
    view.user_groups = defaultdict(set, model.user_groups)
    for group, users in sorted(members.items()):
        if group not in view.groups:
            continue
        view.groups[group] = set(view.groups[group])
        for user in sorted(users):
            view.user_groups[user] = set(view.user_groups.get(user, ()))
    for group, users in sorted(members.items()):
        for user in sorted(users):
            if user not in view.users:
                view.apply(UserAdded(user))
            if group in view.groups:
                view.apply(GroupMemberAdded(group, user))
    return view


def enforced(model: Model) -> Model:
    """The model with the directory's members recorded at the last sync: what the backends
    enforce, and what every decision is made on."""
    return with_members(model, model.external_members)


@dataclass
class EnforcedView:
    """:func:`enforced` of one model, kept while that model object stays at the same
    version (one view per change; none at all while the directory adds nobody). Decisions
    only read the view; nothing may change it. One entry, replaced whole, so a reader on
    another thread sees a model and its own view, never a mix."""

    _entry: tuple[Model, int, Model] | None = None

    def of(self, model: Model) -> Model:
        entry = self._entry
        if entry is not None and entry[0] is model and entry[1] == model.version:
            return entry[2]
        version = model.version
        view = enforced(model)
        self._entry = (model, version, view)
        return view
