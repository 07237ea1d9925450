"""What the shapes share: Ranger names, the users per item, and which names Ranger can
single out. Pure."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from pushdown.decide.views import View
from pushdown.model.principals import Principal
from pushdown_ranger.facts import Resource
from pushdown_ranger.mapping import WILDCARD_CHARS

Group = tuple[frozenset[str], View]
#: why a name cannot be a Ranger resource value exactly
WHY = (
    "a * or ? (wildcards), a {, } or \\ (Ranger's {USER}/{OWNER} tokens), or a name equal to another "
    "but for case: Hive's resources ignore case"
)
#: characters Ranger gives a meaning in a resource value: wildcards, and the delimiters and
#: escape of its tokens (``{USER}`` in a value matches the requesting user's name)
SPECIAL_CHARS = WILDCARD_CHARS | frozenset("{}\\")


@dataclass(frozen=True)
class Naming:
    """Services and names: which Ranger names pushdown writes."""

    hive_service: str = "hive"
    hdfs_service: str = "hdfs"
    kafka_service: str = "kafka"
    role_prefix: str = "pd_"
    user_role_prefix: str = "pdu_"
    map_principal: Callable[[Principal], str] = field(default=lambda p: p.name, compare=False)

    def role(self, role: str) -> str:
        return self.role_prefix + role

    def user_role(self, user: str) -> str:
        return self.user_role_prefix + self.user(user)

    def user(self, user: str) -> str:
        return self.map_principal(Principal.user(user))

    def group(self, group: str) -> str:
        return self.map_principal(Principal.group(group))

    def ours(self, ranger_role: str) -> bool:
        return ranger_role.startswith((self.role_prefix, self.user_role_prefix))

    @property
    def services(self) -> tuple[str, ...]:
        return (self.hive_service, self.hdfs_service, self.kafka_service)


class Items:
    """Users per (service, resources, access), allowed and denied."""

    def __init__(self) -> None:
        self.allow: dict[tuple[str, tuple[Resource, ...]], dict[str, set[str]]] = {}
        self.deny: dict[tuple[str, tuple[Resource, ...]], dict[str, set[str]]] = {}

    def add(
        self, deny: bool, service: str, res: tuple[Resource, ...], access: str, users: Iterable[str]
    ) -> None:
        table = self.deny if deny else self.allow
        table.setdefault((service, res), {}).setdefault(access, set()).update(users)


def exact(name: str) -> bool:
    """Whether a Ranger resource value ``name`` matches ``name`` alone (but for case)."""
    return bool(name) and not SPECIAL_CHARS.intersection(name)


def inexact(names: list[str]) -> set[str]:
    """Names a Ranger resource value cannot single out: wildcards, or a case-folded twin."""
    folded: dict[str, list[str]] = {}
    for name in names:
        folded.setdefault(name.casefold(), []).append(name)
    twins = {n for same in folded.values() if len(same) > 1 for n in same}
    return twins | {n for n in names if not exact(n)}
