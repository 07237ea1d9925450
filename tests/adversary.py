"""The hostile environment every backend's random histories are played in.

The plain histories (:mod:`tests.backend_histories`) share the blind spots of the world
that builds them: names mapped to themselves, every granted object registered, groups
resolved as the model says, an empty server. This module draws what they leave out, and
each backend's adversary test plays it on its own (real or stand-in) server:

- a **name mapping** (:data:`MAPPINGS`) handed to the backend as ``map_principal``:
  identity, lower-casing, a realm suffix, and one under which two users collide;
- **removals** of users, groups and roles, and their return;
- grants, DENYs and owners on **unregistered** objects: new names, capitalised names,
  case twins of registered ones (each backend passes its own texts);
- **server-only steps** the model never sees: ``("outside", schema, table)`` a table
  created on the server by other hands, ``("hand", i)`` the backend's own i-th kind of
  hand-made state (grants by others, nested roles, policies with exceptions, a changed
  server setting…), ``("external", user, on)`` the enforcing host resolving ``user``
  into group ``g`` (or out of it) unlike the model.

After every scoped sync and after the full sync that follows, the backend's probe asks the
server what each user of the pool (removed ones included, through the name the user maps
to) may do, and :func:`compare` holds it against the evaluator: a *wider* answer is a
failure; a *narrower* one must be explained by a plan note or a finding that names the
user or the object (:class:`Tally` counts both).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from pushdown.model import changes as ch
from pushdown.model.principals import Principal, PrincipalKind
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from tests import backend_histories
from tests.backend_histories import GROUP

#: (user, operation or privilege, object): one decision, the same shape for every backend
Triple = tuple[str, str, str]
Mapping_ = Callable[[Principal], str]

#: environment variable that sets how many histories each backend's adversary plays
#: (the slow run: ``PUSHDOWN_ADVERSARY_HISTORIES=10000``); CI plays each test's default
HISTORIES_VARIABLE = "PUSHDOWN_ADVERSARY_HISTORIES"

#: steps played on the server only (the model never sees them)
SERVER_STEPS = ("outside", "hand", "external")
REALM = "@CORP"
#: the collision mapping sends these users (any case) to the first one's server name
COLLIDING = ("u1", "u3")


def _identity(p: Principal) -> str:
    return p.name


def _lower(p: Principal) -> str:
    return p.name.lower()


def _realm(p: Principal) -> str:
    return p.name + REALM if p.kind is PrincipalKind.USER else p.name


def _collide(p: Principal) -> str:
    if p.kind is PrincipalKind.USER and p.name.lower() in COLLIDING:
        return COLLIDING[0]
    return p.name


#: the name mappings a history draws from (``pushdown_map_principal`` as a function)
MAPPINGS: dict[str, Mapping_] = {
    "identity": _identity,
    "lower": _lower,
    "realm": _realm,
    "collide": _collide,
}
mapping_names = st.sampled_from(tuple(MAPPINGS))


def histories(default: int) -> int:
    """How many histories to play: ``default``, unless the slow run asks for more."""
    text = os.environ.get(HISTORIES_VARIABLE, "").strip()
    return int(text) if text.isdigit() and int(text) > 0 else default


def hostile_steps(
    *,
    roles: Sequence[str],
    users: Sequence[str],
    objects: Sequence[str],
    unregistered: Sequence[str],
    privileges: Sequence[str],
    schemas: Sequence[str],
    tables: Sequence[str],
    hand: int = 0,
    external: bool = False,
    rename: bool = False,
    grant_weight: int = 2,
) -> st.SearchStrategy[tuple[Any, ...]]:
    """One step of a hostile history: every plain step (on registered and unregistered
    objects alike), removals and returns of principals, and the server-only steps."""
    plain = backend_histories.steps(
        roles=roles,
        users=users,
        objects=(*objects, *unregistered),
        privileges=privileges,
        schemas=schemas,
        tables=tables,
        rename=rename,
        grant_weight=grant_weight,
    )
    more = [
        st.tuples(st.sampled_from(("remove_user", "add_user")), st.sampled_from(users)),
        st.tuples(st.sampled_from(("delete_role", "create_role")), st.sampled_from(roles)),
        st.tuples(st.sampled_from(("remove_group", "add_group"))),
        st.tuples(st.just("outside"), st.sampled_from(schemas), st.sampled_from(tables)),
    ]
    if hand > 0:
        more.append(st.tuples(st.just("hand"), st.integers(min_value=0, max_value=hand - 1)))
    if external:
        more.append(st.tuples(st.just("external"), st.sampled_from(users), st.booleans()))
    return st.one_of(plain, *more)


def model_changes(
    model: Model, step: tuple[Any, ...], ref: Callable[[str], ObjectRef] = ObjectRef.parse
) -> list[Any]:
    """The events of a step that changes the model (none for a server-only or table step).
    Raises ``ModelError`` for a step the model refuses (the history skips it)."""
    kind, *args = step
    if kind in SERVER_STEPS:
        return []
    if kind == "remove_user":
        return ch.remove_user(model, args[0])
    if kind == "add_user":
        return ch.add_user(model, args[0])
    if kind == "delete_role":
        return ch.delete_role(model, args[0])
    if kind == "create_role":
        return ch.create_role(model, args[0])
    if kind == "remove_group":
        return ch.remove_group(model, GROUP)
    if kind == "add_group":
        return ch.add_group(model, GROUP)
    return backend_histories.model_changes(model, step, ref)


def compare(server: Iterable[Triple], evaluator: Iterable[Triple]) -> tuple[list[Triple], list[Triple]]:
    """(wider, narrower): what the server allows that the evaluator does not, and the reverse."""
    on_server, decided = set(server), set(evaluator)
    return sorted(on_server - decided), sorted(decided - on_server)


def explained(triple: Triple, notes: Iterable[str], mapped: Callable[[str], str] = str) -> bool:
    """A narrower answer is explained when a note or finding names its user (by the model's
    or the server's name) or its object (by its last segment, in any case)."""
    user, _, obj = triple
    last = obj.rsplit(".", 1)[-1].rsplit(" ", 1)[-1].strip("`").lower()
    words = {user.lower(), mapped(user).lower()}
    for note in notes:
        text = note.lower()
        if (last and last in text) or any(w and w in text for w in words):
            return True
    return False


@dataclass
class Tally:
    """Counts over all histories of one backend; ``line`` is what the test prints."""

    histories: int = 0
    syncs: int = 0
    checks: int = 0
    wider: int = 0
    narrower: int = 0
    narrower_with_note: int = 0
    examples: list[str] = field(default_factory=list)
    #: surface keys (``Backend.SURFACE``) this run drew, and the size of the table
    drawn: set[str] = field(default_factory=set)
    surface: int = 0

    def draw(self, key: str) -> None:
        """One draw of a surface entry (a hand-made state, a principal form, a field)."""
        self.drawn.add(key)

    def record(
        self,
        checks: int,
        wider: Sequence[Triple],
        narrower: Sequence[Triple],
        notes: Iterable[str],
        mapped: Callable[[str], str] = str,
    ) -> None:
        """One check of the server after one sync."""
        notes = list(notes)
        self.syncs += 1
        self.checks += checks
        self.wider += len(wider)
        self.narrower += len(narrower)
        self.narrower_with_note += sum(1 for t in narrower if explained(t, notes, mapped))
        if wider and len(self.examples) < 5:
            self.examples.append(f"wider: {list(wider)[:3]}")

    def line(self, backend: str) -> str:
        return (
            f"{backend} adversary: {self.histories} histories, {self.syncs} syncs, {self.checks} checks, "
            f"{self.wider} wider, {self.narrower} narrower ({self.narrower_with_note} with a note)"
            + (f", surface drawn {len(self.drawn)}/{self.surface}" if self.surface else "")
        )
