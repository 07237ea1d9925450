"""The model source's record in the store (``pushdown status``, ``pushdown pull``): what the
last read did, when, and why it was not used. Written by the source's follower, read by the
CLI: shared, so it sits in the service."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace

from pushdown.journal.store import Store

META_KEY = "source_status"


@dataclass
class SourceStatus:
    """What the store records about the source (``pushdown status``); times are time.time()."""

    source: str
    last_attempt: float | None = None
    last_good: float | None = None
    last_change: float | None = None
    changed: dict[str, int] = field(default_factory=dict)
    #: the first few changes of the last change, in words (``pushdown log`` has them all)
    examples: list[str] = field(default_factory=list)
    last_error: str | None = None
    last_error_at: float | None = None
    error_kind: str | None = None
    notes: list[str] = field(default_factory=list)
    size: dict[str, int] = field(default_factory=dict)
    fingerprint: str | None = None
    seq: int | None = None
    reads: int = 0
    calls: int = 0
    seconds: float = 0.0

    @property
    def failing(self) -> bool:
        return self.last_error_at is not None and (self.last_good or 0.0) < self.last_error_at


def load_status(store: Store, source: str) -> SourceStatus:
    raw = store.get_meta(META_KEY)
    if raw is None:
        return SourceStatus(source)
    try:
        data = json.loads(raw)
        known = {k: v for k, v in data.items() if k in SourceStatus.__dataclass_fields__}
        return replace(SourceStatus(**known), source=source)
    except (ValueError, TypeError):
        return SourceStatus(source)


def save_status(store: Store, status: SourceStatus) -> None:
    with store.write_lock():
        store.set_meta(META_KEY, json.dumps(asdict(status), sort_keys=True))


@dataclass(frozen=True)
class PollResult:
    ok: bool
    changes: int = 0
    summary: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    kind: str | None = None
    notes: tuple[str, ...] = ()
    reads: int = 0
    calls: int = 0
    seconds: float = 0.0
    unchanged: bool = False


def _words(changed: Mapping[str, int]) -> str:
    return ", ".join(f"{n} × {what}" for what, n in sorted(changed.items())) or "nothing"


def describe_change(changed: Mapping[str, int]) -> str:
    return _words(changed)
