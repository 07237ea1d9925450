"""Reading a backend's settings: one vocabulary, one kind of error.

Settings arrive from ``pushdown.toml`` (typed by TOML), from the environment or from a
library caller's dictionary (often text). Every backend reads them through
:class:`Settings`, so ``port = "abc"`` is the same clear :class:`ConfigError` naming the
backend, the key and what is expected, whoever passed it, and never a bare
``ValueError`` from deep inside a client library::

    s = Settings.of(context)
    port = s.whole("port", 3306, low=1, high=65535)
    timeout = s.seconds("connect_timeout", 5.0)
    own_all = s.flag("manage_foreign_grants")
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from pushdown.errors import ConfigError

_TRUE, _FALSE = ("true", "yes", "on", "1"), ("false", "no", "off", "0")


class _Context(Protocol):
    name: str
    settings: Mapping[str, Any]


@dataclass(frozen=True)
class Settings:
    """The settings of backend ``backend``, read and checked one key at a time."""

    backend: str
    values: Mapping[str, Any]

    @classmethod
    def of(cls, context: _Context) -> Settings:
        return cls(context.name, context.settings)

    def bad(self, key: str, why: str) -> ConfigError:
        """The error for setting ``key``: what was given and what is expected."""
        return ConfigError(f"backend {self.backend}: setting {key!r}: {why}")

    def _get(self, key: str, default: Any, required: bool) -> Any:
        if key in self.values:
            return self.values[key]
        if required:
            raise ConfigError(f"backend {self.backend}: setting {key!r} is required")
        return default

    def text(self, key: str, default: str | None = None, *, required: bool = False) -> str:
        """A non-empty string without control characters."""
        value = self._get(key, default, required or default is None)
        if not isinstance(value, str) or not value or any(not c.isprintable() for c in value):
            raise self.bad(key, f"{value!r}: a non-empty string without control characters")
        return value

    def optional_text(self, key: str) -> str | None:
        """:meth:`text`, or ``None`` when the key is not set."""
        return self.text(key) if key in self.values else None

    def flag(self, key: str, default: bool = False) -> bool:
        """TOML ``true``/``false``, or the words yes/no, on/off, 1/0 (any case)."""
        value = self._get(key, default, False)
        if isinstance(value, bool):
            return value
        word = str(value).strip().lower()
        if word in _TRUE or word in _FALSE:
            return word in _TRUE
        raise self.bad(key, f"{value!r}: true or false")

    def whole(self, key: str, default: int, *, low: int = 0, high: int = 2**31 - 1) -> int:
        """A whole number from ``low`` to ``high`` (an integer, or its digits as text)."""
        value = self._get(key, default, False)
        number: int | None = None
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        elif isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
            number = int(value.strip())
        if number is None or not low <= number <= high:
            raise self.bad(key, f"{value!r}: a whole number from {low} to {high}")
        return number

    def port(self, key: str = "port", default: int = 0) -> int:
        """A TCP port, 1 to 65535 (a socket would silently wrap a larger one)."""
        return self.whole(key, default, low=1, high=65535)

    def seconds(self, key: str, default: float, *, low: float = 0.0, strict: bool = True) -> float:
        """A finite number of seconds above ``low`` (or from it, when not ``strict``)."""
        value = self._get(key, default, False)
        number: float | None = None
        if isinstance(value, int | float) and not isinstance(value, bool):
            number = float(value)
        elif isinstance(value, str):
            try:
                number = float(value.strip())
            except ValueError:
                number = None
        below = number is not None and (number < low or (strict and number == low))
        if number is None or not math.isfinite(number) or below or number >= 10**6:
            what = f"above {low:g}" if strict else f"from {low:g}"
            raise self.bad(key, f"{value!r}: a number of seconds {what}")
        return number

    def choice(self, key: str, default: str, allowed: tuple[str, ...]) -> str:
        """One of ``allowed``."""
        value = self._get(key, default, False)
        if value not in allowed:
            raise self.bad(key, f"{value!r}: one of {', '.join(repr(a) for a in allowed)}")
        return str(value)
