"""The facts the Unity Catalog backend keeps: one privilege of one principal on one
securable, as the permissions API lists it (``GET /permissions/{type}/{full_name}``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pushdown.errors import ConfigError


@dataclass(frozen=True, order=True)
class UCGrant:
    """``privilege`` (Unity Catalog's spelling: ``USE CATALOG``, ``SELECT``…) granted to
    ``principal`` on securable ``securable`` (``catalog``, ``schema``, ``table``) named
    ``name`` (its full dotted name, in the server's lower case)."""

    securable: str
    name: str
    principal: str
    privilege: str

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.securable, self.name, self.principal, self.privilege)

    @property
    def target(self) -> tuple[str, str]:
        """The securable a PATCH names."""
        return (self.securable, self.name)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "uc_grant",
            "securable": self.securable,
            "name": self.name,
            "principal": self.principal,
            "privilege": self.privilege,
        }

    def __str__(self) -> str:
        return f"GRANT {self.privilege} ON {self.securable.upper()} {self.name} TO {self.principal}"


def fact_from_json(data: Mapping[str, Any]) -> UCGrant:
    if data.get("kind") != "uc_grant":
        raise ConfigError(f"not a Unity Catalog grant in a saved plan: {dict(data)!r}")
    return UCGrant(str(data["securable"]), str(data["name"]), str(data["principal"]), str(data["privilege"]))
