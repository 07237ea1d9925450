"""The Ranger backend's settings, each checked: a :class:`ConfigError` names the key and why."""

from __future__ import annotations

import math
import re
import urllib.parse

from pushdown.errors import ConfigError
from pushdown.reconcile.backend import BackendContext

__all__ = ["SERVICE_NAME", "Checked"]


#: Ranger service names as they may stand in a URL path (the client puts them there unquoted)
SERVICE_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,254}")


class Checked:
    """The backend's settings, each checked: a :class:`ConfigError` names the key and why
    (never a raw ``ValueError``; never a credential)."""

    def __init__(self, context: BackendContext) -> None:
        self.name = context.name
        self.context = context

    def _bad(self, key: str, why: str) -> ConfigError:
        return ConfigError(f"backend {self.name}: {key}: {why}")

    def url(self) -> str:
        value = self.context.setting("url", required=True)
        if not isinstance(value, str) or not value or any(not c.isprintable() or c.isspace() for c in value):
            raise self._bad("url", 'the address of Ranger Admin, such as "http://ranger:6080"')
        try:
            parts = urllib.parse.urlsplit(value)
            parts.port  # noqa: B018 - raises on a port that is not a number
        except ValueError:
            raise self._bad("url", 'the address of Ranger Admin, such as "http://ranger:6080"') from None
        if parts.username is not None or parts.password is not None:
            raise self._bad(
                "url", "must not carry a user or password (set user, and password as a secret reference)"
            )
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
            raise self._bad(
                "url", f'{value!r}: the address of Ranger Admin, such as "http://ranger:6080" (http or https)'
            )
        return value

    def text(self, key: str, default: str) -> str:
        value = self.context.setting(key, default)
        if not isinstance(value, str) or not value or any(not c.isprintable() for c in value):
            raise self._bad(key, f"{value!r}: must be a non-empty string without control characters")
        return value

    def service(self, key: str, default: str) -> str:
        value = self.context.setting(key, default)
        if not isinstance(value, str) or not SERVICE_NAME.fullmatch(value):
            raise self._bad(
                key, f"{value!r}: a Ranger service name (letters, digits, _ - and ., not starting with .)"
            )
        return value

    def number(self, key: str, default: float, *, low: float, strict: bool = False) -> float:
        value = self.context.setting(key, default)
        ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
        if not ok or value < low or (strict and value == low):
            raise self._bad(key, f"{value!r}: a {'positive' if strict else 'non-negative'} number of seconds")
        return float(value)

    def choice(self, key: str, default: str, allowed: tuple[str, ...]) -> str:
        value = self.context.setting(key, default)
        if value not in allowed:
            raise self._bad(key, f"{value!r}: one of {', '.join(repr(a) for a in allowed)}")
        return str(value)

    def whole(self, key: str, default: int, low: int, high: int) -> int:
        value = self.context.setting(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self._bad(key, f"{value!r}: a whole number from {low} to {high}")
        return value
