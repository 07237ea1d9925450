"""Securable object types, their parent rules, and references to objects.

One store holds one metalake. Names are relative to it, as in the reference:
catalog ``c``, schema ``c.s``, table/topic/fileset/model ``c.s.x``. Roles, tags,
policies, job templates and jobs live directly under the metalake and carry
ownership (and, for tags, policies and job templates, their APPLY/USE privilege).
The metalake itself is written with its own name.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from functools import cached_property

from pushdown.errors import ModelError
from pushdown.model.names import format_name, parse_name


class SecurableType(enum.Enum):
    METALAKE = "metalake"
    CATALOG = "catalog"
    SCHEMA = "schema"
    TABLE = "table"
    TOPIC = "topic"
    FILESET = "fileset"
    MODEL = "model"
    ROLE = "role"
    TAG = "tag"
    POLICY = "policy"
    JOB_TEMPLATE = "job_template"
    JOB = "job"

    # Members are singletons compared by identity; hash them by identity too (C speed)
    # instead of Enum.__hash__, a Python-level hash(self._name_) on every dict/set lookup.
    __hash__ = object.__hash__

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, SecurableType):
            return NotImplemented
        return _ORDER[self] < _ORDER[other]

    @classmethod
    def parse(cls, text: str) -> SecurableType:
        key = text.strip().lower().replace("-", "_").replace(" ", "_")
        for member in cls:
            if member.value == key or member.value.replace("_", "") == key:
                return member
        accepted = ", ".join(m.value for m in cls)
        raise ModelError(f"unknown securable type {text!r}; accepted: {accepted}")

    @property
    def depth(self) -> int:
        """How many name segments an object of this type has (0 for the metalake)."""
        return _DEPTH[self]

    @property
    def label(self) -> str:
        return self.value.replace("_", " ")


_DEPTH = {
    SecurableType.METALAKE: 0,
    SecurableType.CATALOG: 1,
    SecurableType.SCHEMA: 2,
    SecurableType.TABLE: 3,
    SecurableType.TOPIC: 3,
    SecurableType.FILESET: 3,
    SecurableType.MODEL: 3,
    SecurableType.ROLE: 1,
    SecurableType.TAG: 1,
    SecurableType.POLICY: 1,
    SecurableType.JOB_TEMPLATE: 1,
    SecurableType.JOB: 1,
}

_ORDER = {t: i for i, t in enumerate(SecurableType)}

#: Types that sit in the catalog > schema > leaf containment tree.
DATA_TYPES = frozenset(
    {
        SecurableType.CATALOG,
        SecurableType.SCHEMA,
        SecurableType.TABLE,
        SecurableType.TOPIC,
        SecurableType.FILESET,
        SecurableType.MODEL,
    }
)
#: Types named by one flat string, never split at dots nor quoted (Gravitino's rule for a
#: role): the name a caller creates is the key every entry point uses.
FLAT_TYPES = frozenset(
    {
        SecurableType.ROLE,
        SecurableType.TAG,
        SecurableType.POLICY,
        SecurableType.JOB_TEMPLATE,
        SecurableType.JOB,
    }
)
LEAF_TYPES = frozenset({SecurableType.TABLE, SecurableType.TOPIC, SecurableType.FILESET, SecurableType.MODEL})


@dataclass(frozen=True, order=True)
class ObjectRef:
    """A securable object: its type and name segments (empty for the metalake)."""

    type: SecurableType
    names: tuple[str, ...]

    def __hash__(self) -> int:
        return self._hash  # type: ignore[attr-defined,no-any-return]

    def __eq__(self, other: object) -> bool:
        # Hash lookups compare on every hit: identity first, then the cached hash.
        if self is other:
            return True
        if other.__class__ is not ObjectRef:
            return NotImplemented
        ref: ObjectRef = other
        return self._hash == ref._hash and self.type is ref.type and self.names == ref.names  # type: ignore[attr-defined]

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        # Rebuild through __init__ so a copy or an unpickled ref recomputes its hash.
        return (ObjectRef, (self.type, self.names))

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.type, self.names)))
        if len(self.names) != self.type.depth:
            raise ModelError(
                f"a {self.type.label} name has {self.type.depth} dotted part(s), "
                f"got {format_name(self.names) or '(empty)'!r}"
            )

    @classmethod
    def of(cls, type_: SecurableType | str, name: str | tuple[str, ...] = ()) -> ObjectRef:
        kind = type_ if isinstance(type_, SecurableType) else SecurableType.parse(type_)
        if kind is SecurableType.METALAKE:
            return METALAKE
        if isinstance(name, tuple):
            return cls(kind, name)
        return cls(kind, (name,) if kind in FLAT_TYPES else parse_name(name))

    @classmethod
    def parse(cls, text: str) -> ObjectRef:
        """Parse ``"TYPE NAME"``, e.g. ``"table sales.crm.orders"`` or ``"metalake"``; the
        name of a flat type (a role) is everything after the first space, as it is."""
        kind, _, name = text.lstrip().partition(" ")
        type_ = SecurableType.parse(kind)
        return cls.of(type_, name if type_ in FLAT_TYPES else name.strip())

    @cached_property
    def name(self) -> str:
        return self.names[0] if self.type in FLAT_TYPES else format_name(self.names)

    @cached_property
    def parent(self) -> ObjectRef | None:
        if self.type is SecurableType.METALAKE:
            return None
        if self.type not in DATA_TYPES or self.type is SecurableType.CATALOG:
            return METALAKE
        parent_type = SecurableType.CATALOG if len(self.names) == 2 else SecurableType.SCHEMA
        return ObjectRef(parent_type, self.names[:-1])

    @cached_property
    def path(self) -> tuple[ObjectRef, ...]:
        """This object and its ancestors, the metalake first."""
        chain: list[ObjectRef] = []
        node: ObjectRef | None = self
        while node is not None:
            chain.append(node)
            node = node.parent
        return tuple(reversed(chain))

    def ancestor(self, type_: SecurableType) -> ObjectRef | None:
        for node in self.path:
            if node.type is type_:
                return node
        return None

    def is_within(self, root: ObjectRef) -> bool:
        """True when ``root`` is this object or one of its ancestors."""
        return root in self.path

    @property
    def catalog(self) -> str | None:
        return self.names[0] if self.type in DATA_TYPES else None

    def renamed(self, old_prefix: ObjectRef, new_prefix: ObjectRef) -> ObjectRef:
        """This object after ``old_prefix`` (itself or an ancestor) was renamed."""
        if not self.is_within(old_prefix):
            return self
        depth = len(old_prefix.names)
        return ObjectRef(self.type, new_prefix.names + self.names[depth:])

    def __str__(self) -> str:
        return f"{self.type.value} {self.name}" if self.names else self.type.value


METALAKE = ObjectRef(SecurableType.METALAKE, ())
