"""The Ranger backend's settings: the core's :class:`~pushdown.reconcile.settings.Settings`,
with Ranger's own two checks (the address of Ranger Admin, a service name); a
:class:`ConfigError` names the key and why, never a raw ``ValueError``, never a credential."""

from __future__ import annotations

import re
import urllib.parse

from pushdown.reconcile.settings import Settings

__all__ = ["SERVICE_NAME", "RangerSettings"]

#: Ranger service names as they may stand in a URL path (the client puts them there unquoted)
SERVICE_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,254}")
_URL = 'the address of Ranger Admin, such as "http://ranger:6080"'


class RangerSettings(Settings):
    """The core's settings reader, with the address of Ranger Admin and service names."""

    def url(self) -> str:
        value = self._get("url", None, True)
        if not isinstance(value, str) or not value or any(not c.isprintable() or c.isspace() for c in value):
            raise self.bad("url", _URL)
        try:
            parts = urllib.parse.urlsplit(value)
            parts.port  # noqa: B018 - raises on a port that is not a number
        except ValueError:
            raise self.bad("url", _URL) from None
        if parts.username is not None or parts.password is not None:
            raise self.bad(
                "url", "must not carry a user or password (set user, and password as a secret reference)"
            )
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
            raise self.bad("url", f"{value!r}: {_URL} (http or https)")
        return value

    def service(self, key: str, default: str) -> str:
        value = self._get(key, default, False)
        if not isinstance(value, str) or not SERVICE_NAME.fullmatch(value):
            raise self.bad(
                key, f"{value!r}: a Ranger service name (letters, digits, _ - and ., not starting with .)"
            )
        return value
