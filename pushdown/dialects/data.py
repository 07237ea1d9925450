"""The shape every dialect's data takes: securables, privileges, implications, gates, owners.

Nothing here decides: :mod:`pushdown.dialects.evaluate` interprets a :class:`Dialect`.
An operation's requirement is a conjunction of :class:`Need` clauses; each clause asks for
one of some privileges at one level of the target's path (the target itself, or its
ancestor of a given securable type).
"""

from __future__ import annotations

from dataclasses import dataclass, field

CSM = ("catalog", "schema", "table")

#: The operations every dialect is compared on, with the model operation each stands for.
#: (``modify`` is writing data; ``describe`` is reading metadata.)
COMMON_OPERATIONS: dict[str, str] = {
    "select": "load_table",
    "modify": "alter_table",
    "describe": "load_table",
    "create_table": "create_table",
    "create_schema": "create_schema",
}

ALL = "ALL PRIVILEGES"


@dataclass(frozen=True)
class Need:
    """One of ``privileges`` held at ``at`` (``"target"`` or an ancestor's securable type)."""

    privileges: tuple[str, ...]
    at: str = "target"


@dataclass(frozen=True)
class Mapping:
    """How one dialect privilege on one securable type stands to the model."""

    privilege: str
    on: str
    model: tuple[str, ...]
    exact: bool
    note: str


@dataclass(frozen=True)
class Translation:
    """How grants cross between the dialect and the model, never wider in either direction.

    A *form* is the dialect's securable type, or ``"TABLES IN SCHEMA"`` for Singdata's
    ``ALL TABLES IN SCHEMA``; ``forms`` maps each form to the model's securable type.
    """

    forms: dict[str, str] = field(default_factory=dict)
    #: (dialect privilege, form) -> model privileges an ALLOW gives
    allow: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    #: (dialect privileges all held, form) -> model privileges they give together
    combos: tuple[tuple[frozenset[str], str, tuple[str, ...]], ...] = ()
    #: (dialect privilege, form) -> model privileges a DENY becomes (as wide a DENY, or wider)
    deny: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    #: (model privilege, model type) -> (form, dialect privileges all needed)
    export: dict[tuple[str, str], tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    #: model privileges granted on the catalog to everyone holding a grant inside it
    implied_catalog: tuple[str, ...] = ()


@dataclass(frozen=True)
class Dialect:
    name: str
    title: str
    reference: str
    #: securable type -> parent type (None at the top)
    securables: dict[str, str | None]
    #: privilege -> the securable types it may be granted on
    privileges: dict[str, frozenset[str]]
    #: securable types whose grants are inherited by everything below them
    inherits_from: frozenset[str]
    has_deny: bool
    #: "expands": ALL PRIVILEGES gives every privilege applicable, at check time;
    #: "independent": a privilege point of its own that allows every operation on the object
    all_privileges: str
    #: True when REVOKE ALL PRIVILEGES also removes the privileges granted one by one
    revoke_all_removes_each: bool
    #: an owner holds every privilege on what it owns (never on children unless listed)
    owner_has_all: bool
    #: securable types whose owner may manage grants on everything below them
    owner_manages_below: frozenset[str]
    grant_option: bool
    #: a privilege that is given on every object of a kind, never granted (informational)
    gates: tuple[str, ...]
    #: operation -> the clauses it needs (all of them)
    operations: dict[str, tuple[Need, ...]]
    #: model securable type -> this dialect's type for the same object
    object_types: dict[str, str]
    mappings: tuple[Mapping, ...] = ()
    notes: tuple[str, ...] = ()
    #: Singdata's "ALL TABLES IN SCHEMA s": scope word -> the securable types it covers
    all_objects: dict[str, frozenset[str]] = field(default_factory=dict)
    #: the catalog (workspace) a two-part name lives in, when the dialect names it implicitly
    default_catalog: str | None = None
    translation: Translation = field(default_factory=Translation)

    def parent(self, type_: str) -> str | None:
        return self.securables[type_]

    def grantable(self, privilege: str, type_: str) -> bool:
        if privilege == ALL:
            return ALL in self.privileges and type_ in self.privileges[ALL]
        return type_ in self.privileges.get(privilege, frozenset())
