"""The configuration file (TOML): where the store lives and how to reach each backend.

Secrets never sit in the file and never come from the command line: a secret setting
is written as a reference, ``password = { env = "VAR" }`` or
``password = { file = "/run/secrets/x" }``, and resolved only when a backend asks
for it. A literal value under a secret-looking key is refused, and :func:`redact`
is what every display of settings goes through.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pushdown.errors import ConfigError

SECRET_WORDS = ("password", "passwd", "secret", "token", "credential", "private_key")
DEFAULT_CONFIG = "pushdown.toml"
DEFAULT_STORE = "pushdown.db"

#: The embedded default: the example's "demo" backend records decisions in a JSON file.
EMBEDDED: dict[str, Any] = {
    "store": DEFAULT_STORE,
    "backends": {"demo": {"kind": "recording", "state": "pushdown-demo-state.json"}},
}


def is_secret_key(key: str) -> bool:
    return any(word in key.lower() for word in SECRET_WORDS)


@dataclass(frozen=True)
class BackendConfig:
    name: str
    kind: str
    settings: Mapping[str, Any]
    catalogs: frozenset[str] = frozenset()

    def secret(self, key: str) -> str | None:
        return resolve_secret(self.name, key, self.settings.get(key))


@dataclass(frozen=True)
class Config:
    store: str = DEFAULT_STORE
    backends: Mapping[str, BackendConfig] = field(default_factory=dict)
    source: str = "embedded defaults"


def resolve_secret(backend: str, key: str, ref: Any) -> str | None:
    if ref is None:
        return None
    if not isinstance(ref, Mapping) or set(ref) - {"env", "file"} or len(ref) != 1:
        raise ConfigError(f'backend {backend}: {key} must be {{ env = "VAR" }} or {{ file = "PATH" }}')
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


def redact(settings: Mapping[str, Any]) -> dict[str, Any]:
    """Settings safe to show: secret references say where they come from, not what they are."""
    out: dict[str, Any] = {}
    for key, value in settings.items():
        if is_secret_key(key):
            out[key] = "<from env>" if isinstance(value, Mapping) and "env" in value else "<secret>"
        else:
            out[key] = value
    return out


def _backend(name: str, raw: Any, base: Path) -> BackendConfig:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("kind"), str):
        raise ConfigError(f'backend {name}: needs a table with kind = "..."')
    settings = {k: v for k, v in raw.items() if k not in ("kind", "catalogs")}
    for key, value in settings.items():
        if is_secret_key(key) and not isinstance(value, Mapping):
            raise ConfigError(
                f"backend {name}: {key} must not be written in the file; "
                f'use {key} = {{ env = "VAR" }} or {key} = {{ file = "PATH" }}'
            )
    if isinstance(settings.get("state"), str):
        settings["state"] = str(base / settings["state"])
    catalogs = raw.get("catalogs", [])
    if not isinstance(catalogs, list) or not all(isinstance(c, str) for c in catalogs):
        raise ConfigError(f"backend {name}: catalogs must be a list of catalog names")
    return BackendConfig(name, str(raw["kind"]), settings, frozenset(catalogs))


def from_mapping(raw: Mapping[str, Any], base: Path, source: str) -> Config:
    unknown = set(raw) - {"store", "backends"}
    if unknown:
        raise ConfigError(
            f"{source}: unknown setting(s) {', '.join(sorted(unknown))}; known: store, backends"
        )
    store = str(raw.get("store", DEFAULT_STORE))
    if store != ":memory:":
        store = str(base / store)
    backends = raw.get("backends", {})
    if not isinstance(backends, Mapping):
        raise ConfigError(f"{source}: [backends] must be a table of backend tables")
    return Config(store, {n: _backend(n, b, base) for n, b in backends.items()}, source)


def load_config(path: str | Path | None = None) -> Config:
    """Read ``path``, else ``./pushdown.toml`` if present, else the embedded defaults."""
    if path is None:
        default = Path(DEFAULT_CONFIG)
        if not default.exists():
            return from_mapping(EMBEDDED, Path.cwd(), "embedded defaults")
        path = default
    p = Path(path)
    try:
        raw = tomllib.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read the config: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: not valid TOML: {exc}") from None
    return from_mapping(raw, p.parent.resolve(), str(p))
