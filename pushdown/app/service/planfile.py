"""Saved plans: ``pushdown plan --out plan.json``, reviewed, then ``pushdown apply plan.json``.

A plan file holds each backend's operations (for the reviewer) and what they were
computed against: the journal position, the spec file's digest when the plan came from
one, and whether it covered everything or only the pending journal. ``apply`` recomputes
every plan and applies it only when it equals the saved one, operation for operation;
otherwise the plan is stale (the model or a server moved) and nothing is applied, as a
saved terraform plan behaves.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pushdown.app.service import AccessControl
from pushdown.errors import Guarded, PushdownError
from pushdown.model.state import Model
from pushdown.reconcile.plan import Plan
from pushdown.reconcile.sync import SyncResult

FORMAT = "pushdown-plan/1"


@dataclass(frozen=True)
class SavedPlan:
    path: str
    seq: int
    pending: bool
    spec: str | None
    spec_sha256: str | None
    allow_empty: bool
    digests: dict[str, str]

    @property
    def names(self) -> list[str]:
        return sorted(self.digests)

    def check_seq(self, seq: int) -> None:
        if seq != self.seq:
            raise Guarded(
                f"plan file {self.path} is stale: the model changed since it was made (journal at "
                f"{seq}, the plan saw {self.seq}); nothing was applied; run plan again"
            )

    def check_spec(self) -> None:
        if self.spec is not None and file_sha256(self.spec) != self.spec_sha256:
            raise Guarded(
                f"plan file {self.path} is stale: spec {self.spec} changed since the plan was made; "
                "nothing was applied; run plan again"
            )

    def check(self, plan: Plan) -> None:
        """Refuse ``plan`` (recomputed now) unless it equals the saved one."""
        saved = self.digests.get(plan.backend)
        if saved is None or _sha(plan.digest()) != saved:
            raise Guarded(
                f"plan file {self.path} is stale for backend {plan.backend}: its server or the model "
                "moved since the plan was made; nothing was applied; run plan again"
            )


def save(
    path: str, results: list[SyncResult], *, seq: int, pending: bool, spec: str | None, allow_empty: bool
) -> None:
    plans = [r.plan for r in results if r.plan is not None]
    data: dict[str, Any] = {
        "format": FORMAT,
        "seq": seq,
        "pending": pending,
        "spec": spec,
        "spec_sha256": None if spec is None else file_sha256(spec),
        "allow_empty_spec": allow_empty,
        "digests": {p.backend: _sha(p.digest()) for p in plans},
        "plans": [p.to_json() for p in plans],
    }
    try:
        Path(path).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as exc:
        raise PushdownError(f"cannot write plan file {path}: {exc.strerror or exc}") from None


def load(path: str) -> SavedPlan:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise PushdownError(f"cannot read plan file {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise PushdownError(f"{path} is not a pushdown plan file (not JSON)") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise PushdownError(f"{path} is not a pushdown plan file (expected format {FORMAT})")
    try:
        digests = {str(k): str(v) for k, v in dict(data["digests"]).items()}
        spec = data.get("spec")
        return SavedPlan(
            path,
            int(data["seq"]),
            bool(data["pending"]),
            None if spec is None else str(spec),
            data.get("spec_sha256"),
            bool(data.get("allow_empty_spec", False)),
            digests,
        )
    except (KeyError, TypeError, ValueError):
        raise PushdownError(f"{path} is not a pushdown plan file (fields missing or malformed)") from None


def file_sha256(path: str) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError as exc:
        raise PushdownError(f"cannot read spec {path}: {exc.strerror or exc}") from None


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def open_saved(path: str, spec: str | None, backends: tuple[str, ...], pending: bool) -> SavedPlan:
    if spec is not None or backends or pending:
        raise PushdownError("a plan file says what to apply: give no --spec, --backend or --pending with it")
    return load(path)


def check_before_recording(ac: AccessControl, saved: SavedPlan, target: Model | None) -> None:
    """Refuse a stale plan file before anything is recorded or applied."""
    saved.check_seq(ac.store.last_seq())
    saved.check_spec()
    unknown = sorted(set(saved.names) - set(ac.backends))
    if unknown:
        raise PushdownError(f"plan file {saved.path} names backend(s) not configured: {', '.join(unknown)}")
    if target is not None:  # the spec is recorded only if its plans are still the saved ones
        _, previews = ac.preview(target, saved.names)
        for result in previews:
            if result.plan is not None:
                saved.check(result.plan)
