"""Write one entitlement report: rows from the compact form an engine computes, to files,
with counts and a summary.

The report is written into a fresh directory beside ``out`` and moved into place only
when it is complete, so a failed run leaves no half report and the previous report
(``since``, which may be ``out`` itself) stays readable while the new one is written.
"""

from __future__ import annotations

import os
import secrets
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol, runtime_checkable

from pushdown.decide.engine import LOCAL, Engine
from pushdown.decide.inventory import Inventory
from pushdown.errors import PushdownError
from pushdown.model.state import Model
from pushdown.report.files import (
    FORMATS,
    PARQUET_DIR,
    SUMMARY,
    PartWriter,
    is_report,
    read_manifest,
    read_rows,
    write_manifest,
)
from pushdown.report.local import Part, local_rows
from pushdown.report.operations import report_operations
from pushdown.report.summary import render
from pushdown.report.tally import CatalogCount, Changes, Tally, compare

Progress = Callable[[str], None]
EVERY_S = 2.0


@runtime_checkable
class DistributedReport(Protocol):
    """An engine that writes the report itself, where its rows are made (the ``spark``
    plugin's: a Spark job whose executors decide, explain, fan out and write; the driver
    holds counts only). The same columns and rows as the local report, order aside in
    the files' layout (see :mod:`pushdown.report.files`)."""

    def write_report_rows(
        self,
        model: Model,
        operations: Sequence[str],
        inventory: Inventory,
        root: Path,
        formats: tuple[str, ...],
        progress: Progress | None,
    ) -> tuple[Tally, list[str]]:
        """Write the rows into ``root`` (every chosen format); their counts and the files."""
        ...

    def compare_reports(
        self, before: tuple[Path, list[str]], after: tuple[Path, list[str]], changes: Changes
    ) -> Changes:
        """Count the rows one report (directory, its files) has and the other has not,
        per user (only the operations ``changes.only`` names, when it names some)."""
        ...


@dataclass(frozen=True)
class Request:
    out: Path
    formats: tuple[str, ...] = FORMATS
    since: Path | None = None
    #: the engine's name, as the manifest and the summary give it
    engine: str = "local"
    #: the engine (``pushdown.decide.engine``) that computes the compact form, fanned out
    #: to rows here: the core's compiler, or a plugin's (``spark``)
    compiler: Engine = LOCAL
    operations: Sequence[str] | None = None
    force: bool = False
    top: int = 10


@dataclass
class Result:
    out: Path
    tally: Tally
    summary: str
    seconds: float
    changes: Changes | None = None
    files: list[str] = field(default_factory=list)


def parse_formats(text: str) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(f.strip().lower() for f in text.split(",") if f.strip()))
    bad = [f for f in chosen if f not in FORMATS]
    if bad or not chosen:
        given = ", ".join(bad) or "(none)"
        raise PushdownError(f"unknown report format {given}; choose from {', '.join(FORMATS)}")
    return chosen


def check_out(out: Path, force: bool) -> None:
    """Refuse an ``out`` that holds something, unless forced."""
    if out.exists() and not out.is_dir():
        raise PushdownError(f"{out} exists and is not a directory; choose another --out")
    if not out.exists() or not any(out.iterdir()):
        return
    if force:
        if not is_report(out) and (out / PARQUET_DIR).exists():
            raise PushdownError(f"{out / PARQUET_DIR} exists and is not a report's; choose another --out")
        return
    if is_report(out):
        raise PushdownError(
            f"{out} holds a report already; pass --force to replace it, or choose another --out"
        )
    raise PushdownError(
        f"{out} exists and is not a pushdown report; choose another --out "
        "(or pass --force to write the report's files into it)"
    )


def write_report(
    model: Model,
    request: Request,
    progress: Progress | None = None,
    inventory: Inventory | None = None,
) -> Result:
    started = time.monotonic()
    check_out(request.out, request.force)
    previous = read_manifest(request.since) if request.since is not None else None
    if previous is not None and previous.get("metalake") != model.metalake:
        raise PushdownError(
            f"{request.since} is a report of metalake {previous.get('metalake')!r}, not of "
            f"{model.metalake!r}; --since compares reports of one metalake"
        )
    operations = report_operations(request.operations)
    created = datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    parent = request.out.absolute().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        partial = _fresh_dir(parent, f".{request.out.name}.partial-")
    except OSError as exc:
        raise PushdownError(f"cannot write the report to {request.out}: {exc.strerror or exc}") from None
    try:
        distributed = request.compiler if isinstance(request.compiler, DistributedReport) else None
        if distributed is not None:
            held = inventory if inventory is not None else Inventory.of(model.objects)
            tally, files = distributed.write_report_rows(
                model, operations, held, partial, request.formats, progress
            )
        else:
            parts = local_rows(model, operations, inventory, progress, compiler=request.compiler)
            tally, files = _write_rows(request, parts, partial, progress)
        manifest = {
            "created": created,
            "engine": request.engine,
            "metalake": model.metalake,
            "operations": list(operations),
            "files": files,
            **tally.to_json(),
        }
        write_manifest(partial, manifest)
        changes = None
        if request.since is not None and previous is not None:
            if progress is not None:
                progress(f"comparing with the previous report in {request.since}")
            since = Changes(str(request.since), str(previous.get("created", "?")))
            before, after = read_rows(request.since), read_rows(partial)
            theirs = previous.get("operations")
            if isinstance(theirs, list) and set(theirs) != set(operations):
                # reports of other operations: compare the rows of the ones both cover,
                # not an operation's every row as added or removed
                both = frozenset(theirs) & frozenset(operations)
                since.only = tuple(op for op in operations if op in both)
                before = (r for r in before if r[4] in both)
                after = (r for r in after if r[4] in both)
            if distributed is not None:  # compared where the rows are, never on the driver
                listed = previous.get("files")
                theirs_files = [str(f) for f in listed] if isinstance(listed, list) else []
                changes = distributed.compare_reports((request.since, theirs_files), (partial, files), since)
            else:
                changes = compare(before, after, since)
            write_manifest(partial, {**manifest, "since": changes.to_json()})
        summary = render(
            tally,
            metalake=model.metalake,
            engine=request.engine,
            created=created,
            operations=operations,
            top=request.top,
            changes=changes,
        )
        (partial / SUMMARY).write_text(summary, encoding="utf-8")
        _into_place(partial, request.out)
    except OSError as exc:
        shutil.rmtree(partial, ignore_errors=True)
        raise PushdownError(f"cannot write the report to {request.out}: {exc.strerror or exc}") from None
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return Result(request.out, tally, summary, time.monotonic() - started, changes, files)


def _write_rows(
    request: Request, parts: Iterator[Part], root: Path, progress: Progress | None
) -> tuple[Tally, list[str]]:
    tally = Tally()
    writer = PartWriter(root, request.formats)
    started = last = time.monotonic()
    try:
        for part in parts:
            for batch in part.batches:
                writer.write(part.catalog, batch)
                tally.add(batch)
                now = time.monotonic()
                if progress is not None and now - last >= EVERY_S:
                    rate = tally.rows / max(now - started, 1e-9)
                    progress(f"catalog {part.catalog}: {tally.rows} row(s) written ({rate:,.0f} rows/s)")
                    last = now
            tally.catalogs.setdefault(part.catalog, CatalogCount())  # counted when no one has access
            writer.end_catalog()
    finally:
        writer.close()
    return tally, writer.files


def _fresh_dir(parent: Path, prefix: str) -> Path:
    """A new directory in ``parent``, with the mode a plain ``mkdir`` gives (the umask's:
    the reviewers who read reports can open it), unlike ``mkdtemp``'s owner-only one."""
    while True:
        path = parent / f"{prefix}{secrets.token_hex(6)}"
        try:
            path.mkdir()
        except FileExistsError:
            continue
        return path


def _into_place(partial: Path, out: Path) -> None:
    """Move the finished report to ``out``: replacing a report, or beside a forced dir's files."""
    if out.exists() and (is_report(out) or not any(out.iterdir())):
        shutil.rmtree(out) if is_report(out) else out.rmdir()
    if not out.exists():
        os.replace(partial, out)
        return
    for item in partial.iterdir():  # --force into a directory that is not a report
        target = out / item.name
        if target.is_dir():
            shutil.rmtree(target)
        os.replace(item, target)
    partial.rmdir()
