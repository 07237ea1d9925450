"""The privilege catalog: every privilege of the reference model and where it may be granted."""

from __future__ import annotations

import enum

from pushdown.errors import ModelError
from pushdown.model.securables import SecurableType as T

_M, _C, _S = T.METALAKE, T.CATALOG, T.SCHEMA


class _Ordered(enum.Enum):
    __hash__ = object.__hash__

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, type(self)):
            return NotImplemented
        return bool(self.value < other.value)


class Privilege(_Ordered):
    MANAGE_USERS = "MANAGE_USERS"
    MANAGE_GROUPS = "MANAGE_GROUPS"
    CREATE_ROLE = "CREATE_ROLE"
    MANAGE_GRANTS = "MANAGE_GRANTS"
    CREATE_CATALOG = "CREATE_CATALOG"
    USE_CATALOG = "USE_CATALOG"
    CREATE_SCHEMA = "CREATE_SCHEMA"
    USE_SCHEMA = "USE_SCHEMA"
    CREATE_TABLE = "CREATE_TABLE"
    MODIFY_TABLE = "MODIFY_TABLE"
    SELECT_TABLE = "SELECT_TABLE"
    CREATE_TOPIC = "CREATE_TOPIC"
    PRODUCE_TOPIC = "PRODUCE_TOPIC"
    CONSUME_TOPIC = "CONSUME_TOPIC"
    CREATE_FILESET = "CREATE_FILESET"
    WRITE_FILESET = "WRITE_FILESET"
    READ_FILESET = "READ_FILESET"
    REGISTER_MODEL = "REGISTER_MODEL"
    LINK_MODEL_VERSION = "LINK_MODEL_VERSION"
    USE_MODEL = "USE_MODEL"
    CREATE_TAG = "CREATE_TAG"
    APPLY_TAG = "APPLY_TAG"
    CREATE_POLICY = "CREATE_POLICY"
    APPLY_POLICY = "APPLY_POLICY"
    REGISTER_JOB_TEMPLATE = "REGISTER_JOB_TEMPLATE"
    USE_JOB_TEMPLATE = "USE_JOB_TEMPLATE"
    RUN_JOB = "RUN_JOB"

    @classmethod
    def parse(cls, text: str) -> Privilege:
        """Parse a privilege name; deprecated aliases map to their replacement."""
        key = text.strip().upper().replace(" ", "_").replace("-", "_")
        if key in DEPRECATED_ALIASES:
            return DEPRECATED_ALIASES[key]
        try:
            return cls(key)
        except ValueError:
            raise ModelError(
                f"unknown privilege {text!r}; known: {', '.join(p.value for p in cls)}"
            ) from None

    @property
    def securable_types(self) -> frozenset[T]:
        """The securable types this privilege may be granted on."""
        return SUPPORTED_ON[self]

    def check_grantable_on(self, type_: T) -> None:
        if type_ not in SUPPORTED_ON[self]:
            accepted = ", ".join(t.value for t in T if t in SUPPORTED_ON[self])
            raise ModelError(
                f"privilege {self.value} cannot be granted on a {type_.label}; it is accepted on: {accepted}"
            )


class Condition(_Ordered):
    ALLOW = "ALLOW"
    DENY = "DENY"

    @classmethod
    def parse(cls, text: str) -> Condition:
        try:
            return cls(text.strip().upper())
        except ValueError:
            raise ModelError(f"unknown condition {text!r}; use ALLOW or DENY") from None


P = Privilege

#: Deprecated names still accepted on input (the reference keeps them for compatibility).
DEPRECATED_ALIASES: dict[str, Privilege] = {
    "CREATE_MODEL": P.REGISTER_MODEL,
    "CREATE_MODEL_VERSION": P.LINK_MODEL_VERSION,
}

SUPPORTED_ON: dict[Privilege, frozenset[T]] = {
    P.MANAGE_USERS: frozenset({_M}),
    P.MANAGE_GROUPS: frozenset({_M}),
    P.CREATE_ROLE: frozenset({_M}),
    P.MANAGE_GRANTS: frozenset({_M}),
    P.CREATE_CATALOG: frozenset({_M}),
    P.USE_CATALOG: frozenset({_M, _C}),
    P.CREATE_SCHEMA: frozenset({_M, _C}),
    P.USE_SCHEMA: frozenset({_M, _C, _S}),
    P.CREATE_TABLE: frozenset({_M, _C, _S}),
    P.MODIFY_TABLE: frozenset({_M, _C, _S, T.TABLE}),
    P.SELECT_TABLE: frozenset({_M, _C, _S, T.TABLE}),
    P.CREATE_TOPIC: frozenset({_M, _C, _S}),
    P.PRODUCE_TOPIC: frozenset({_M, _C, _S, T.TOPIC}),
    P.CONSUME_TOPIC: frozenset({_M, _C, _S, T.TOPIC}),
    P.CREATE_FILESET: frozenset({_M, _C, _S}),
    P.WRITE_FILESET: frozenset({_M, _C, _S, T.FILESET}),
    P.READ_FILESET: frozenset({_M, _C, _S, T.FILESET}),
    P.REGISTER_MODEL: frozenset({_M, _C, _S}),
    P.LINK_MODEL_VERSION: frozenset({_M, _C, _S, T.MODEL}),
    P.USE_MODEL: frozenset({_M, _C, _S, T.MODEL}),
    P.CREATE_TAG: frozenset({_M}),
    P.APPLY_TAG: frozenset({_M, T.TAG}),
    P.CREATE_POLICY: frozenset({_M}),
    P.APPLY_POLICY: frozenset({_M, T.POLICY}),
    P.REGISTER_JOB_TEMPLATE: frozenset({_M}),
    P.USE_JOB_TEMPLATE: frozenset({_M, T.JOB_TEMPLATE}),
    P.RUN_JOB: frozenset({_M}),
}

#: Types that only carry ownership: no privilege can be granted on them.
OWNERSHIP_ONLY = frozenset(t for t in T if not any(t in s for s in SUPPORTED_ON.values()))

#: Every type that supports ownership in the reference.
OWNABLE = frozenset(T)
