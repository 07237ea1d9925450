"""The ``[backends]`` tables: each backend's kind and settings, checked, and its secrets.

Secrets never sit in the file and never come from the command line: a secret setting
is written as a reference, ``password = { env = "VAR" }`` or
``password = { file = "/run/secrets/x" }``, and resolved only when a backend asks
for it. A literal value under a secret-looking key is refused, and :func:`redact`
is what every display of settings goes through.
"""

from __future__ import annotations

import json
import math
import os
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pushdown.errors import ConfigError
from pushdown.model.locations import parse as parse_location

SECRET_WORDS = ("password", "passwd", "secret", "token", "credential", "private_key")


def is_secret_key(key: str) -> bool:
    return any(word in key.lower() for word in SECRET_WORDS)


@dataclass(frozen=True)
class BackendConfig:
    name: str
    kind: str
    settings: Mapping[str, Any]
    catalogs: frozenset[str] = frozenset()
    #: catalog (or "*") -> the storage roots its filesets' locations must lie in
    locations: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def secret(self, key: str) -> str | None:
        return resolve_secret(self.name, key, self.settings.get(key))


def resolve_secret(backend: str, key: str, ref: Any) -> str | None:
    """The secret a reference points to; errors say where it comes from, never what it is."""
    if ref is None:
        return None
    _check_secret_ref(f"backend {backend}", key, ref)
    if "env" in ref:
        value = os.environ.get(str(ref["env"]))
        if value is None:
            raise ConfigError(f"backend {backend}: environment variable {ref['env']} (for {key}) is not set")
        return value
    try:
        return Path(str(ref["file"])).read_text(encoding="utf-8").rstrip("\n")
    except OSError as exc:
        raise ConfigError(
            f"backend {backend}: cannot read {key} file {ref['file']}: {exc.strerror}"
        ) from None
    except UnicodeDecodeError:
        raise ConfigError(f"backend {backend}: {key} file {ref['file']} is not UTF-8 text") from None


def _check_secret_ref(where: str, key: str, ref: Any) -> None:
    if (
        not isinstance(ref, Mapping)
        or len(ref) != 1
        or set(ref) - {"env", "file"}
        or not all(isinstance(v, str) and v for v in ref.values())
    ):
        raise ConfigError(f'{where}: {key} must be {{ env = "VAR" }} or {{ file = "PATH" }}')


def redact(settings: Mapping[str, Any]) -> dict[str, Any]:
    """Settings safe to show: secret references say where they come from, not what they are."""
    out: dict[str, Any] = {}
    for key, value in settings.items():
        if is_secret_key(key):
            out[key] = "<from env>" if isinstance(value, Mapping) and "env" in value else "<secret>"
        else:
            out[key] = value
    return out


def _toml(value: Any) -> str:
    """A value as it would be written in the file (for error messages)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, int | float):
        return repr(value)
    return f"a {type(value).__name__}"


def _check_port(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 65535:
        return "a port is a whole number from 1 to 65535"
    return None


def _check_seconds(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "a timeout is a positive number of seconds"
    if not math.isfinite(value) or value <= 0:
        return "a timeout is a positive number of seconds"
    return None


def _check_text(value: Any) -> str | None:
    if not isinstance(value, str) or not value or _has_control(value):
        return "must be a non-empty string without control characters"
    return None


def _has_control(text: str) -> bool:
    return any(unicodedata.category(ch) == "Cc" for ch in text)


#: Settings checked when the file is loaded, before anything is written.
CHECKS = {"port": _check_port, "host": _check_text, "user": _check_text, "unix_socket": _check_text}


def _check_setting(where: str, key: str, value: Any) -> None:
    check = _check_seconds if key.endswith("timeout") else CHECKS.get(key)
    why = check(value) if check is not None else None
    if why is not None:
        raise ConfigError(f"{where}.{key} = {_toml(value)}: {why}")


def _backend(name: str, raw: Any, base: Path, source: str) -> BackendConfig:
    where = f"{source}: backends.{json.dumps(name) if _has_control(name) or not name else name}"
    if not name or _has_control(name):
        raise ConfigError(f"{where}: a backend name must be non-empty, without control characters")
    if not isinstance(raw, Mapping) or not isinstance(raw.get("kind"), str):
        raise ConfigError(f'{where}: needs a table with kind = "..."')
    settings = {k: v for k, v in raw.items() if k not in ("kind", "catalogs", "locations")}
    for key, value in settings.items():
        if is_secret_key(key) and not isinstance(value, Mapping):
            raise ConfigError(
                f"{where}: {key} must not be written in the file; "
                f'use {key} = {{ env = "VAR" }} or {key} = {{ file = "PATH" }}'
            )
        if is_secret_key(key):
            _check_secret_ref(where, key, value)
        else:
            _check_setting(where, key, value)
    if isinstance(settings.get("state"), str):
        settings["state"] = str(base / settings["state"])
    catalogs = raw.get("catalogs", [])
    if not isinstance(catalogs, list) or any(_check_text(c) is not None for c in catalogs):
        raise ConfigError(f"{where}: catalogs must be a list of catalog names")
    locations = _locations(where, raw.get("locations", {}))
    return BackendConfig(name, str(raw["kind"]), settings, frozenset(catalogs), locations)


def _locations(where: str, raw: Any) -> dict[str, tuple[str, ...]]:
    """``locations = { catalog = ["/lake/c", "hdfs://nn/lake/d"] }`` ("*": every catalog)."""
    shape = f'{where}.locations: a table of catalog = ["/absolute/path", ...] (or "*" = [...])'
    if not isinstance(raw, Mapping):
        raise ConfigError(shape)
    out: dict[str, tuple[str, ...]] = {}
    for catalog, roots in raw.items():
        if _check_text(catalog) is not None or not isinstance(roots, list):
            raise ConfigError(shape)
        for root in roots:
            if not isinstance(root, str) or parse_location(root) is None:
                raise ConfigError(
                    f"{where}.locations.{catalog}: {_toml(root)} is not an absolute path or URI "
                    "without '..', query or control characters"
                )
        out[str(catalog)] = tuple(roots)
    return out
