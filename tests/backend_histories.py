"""Random histories of model changes for the backends' property tests (MySQL, Hive, Ranger).

A step is a tuple: ``("grant" | "revoke", role, object, privilege, condition)``,
``("role_user", role, user, on)``, ``("role_group", role, on)`` (the group ``g``),
``("member", user, on)``, ``("owner", object, user)``, and the table steps
``("create" | "drop", schema, table)`` and ``("rename", schema, table, new_name)``,
which each backend plays on its own server as well as in the model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import strategies as st

from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model

GROUP = "g"
TABLE_STEPS = ("create", "drop", "rename")


def steps(
    *,
    roles: Sequence[str],
    users: Sequence[str],
    objects: Sequence[str],
    privileges: Sequence[str],
    schemas: Sequence[str],
    tables: Sequence[str],
    rename: bool = True,
    grant_weight: int = 1,
) -> st.SearchStrategy[tuple[Any, ...]]:
    """One step of a history; ``grant_weight`` > 1 draws grants that much more often."""
    grants = st.tuples(
        st.just("grant"),
        st.sampled_from(roles),
        st.sampled_from(objects),
        st.sampled_from(privileges),
        st.sampled_from(("ALLOW", "ALLOW", "DENY")),
    )
    others = [
        st.tuples(
            st.just("revoke"),
            st.sampled_from(roles),
            st.sampled_from(objects),
            st.sampled_from(privileges),
            st.sampled_from(("ALLOW", "DENY")),
        ),
        st.tuples(st.just("role_user"), st.sampled_from(roles), st.sampled_from(users), st.booleans()),
        st.tuples(st.just("role_group"), st.sampled_from(roles), st.booleans()),
        st.tuples(st.just("member"), st.sampled_from(users), st.booleans()),
        st.tuples(st.just("owner"), st.sampled_from(objects), st.sampled_from(users)),
        st.tuples(st.just("create"), st.sampled_from(schemas), st.sampled_from(tables)),
        st.tuples(st.just("drop"), st.sampled_from(schemas), st.sampled_from(tables)),
    ]
    if rename:
        others.append(
            st.tuples(
                st.just("rename"), st.sampled_from(schemas), st.sampled_from(tables), st.sampled_from(tables)
            )
        )
    return st.one_of(*([grants] * grant_weight), *others)


def model_changes(
    model: Model, step: tuple[Any, ...], ref: Callable[[str], ObjectRef] = ObjectRef.parse
) -> list[Any]:
    """The events of a step that changes only the model (none for a table step).
    ``ref`` turns the step's object text into the model's object."""
    kind, *args = step
    if kind in ("grant", "revoke"):
        role, obj, privilege, condition = args
        change = ch.grant_privileges if kind == "grant" else ch.revoke_privileges
        return change(model, role, ref(obj), [privilege], Condition(condition))
    if kind == "role_user":
        role, user, on = args
        return (ch.grant_role if on else ch.revoke_role)(model, role, Principal.user(user))
    if kind == "role_group":
        role, on = args
        return (ch.grant_role if on else ch.revoke_role)(model, role, Principal.group(GROUP))
    if kind == "member":
        user, on = args
        return (ch.add_member if on else ch.remove_member)(model, GROUP, user)
    if kind == "owner":
        return ch.set_owner(model, ref(args[0]), args[1])
    return []
