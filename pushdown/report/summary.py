"""The report's short human summary (SUMMARY.md, also printed): counts per catalog, the
users with the widest access, and what changed since the previous report."""

from __future__ import annotations

from collections.abc import Sequence

from pushdown.report.tally import Changes, Tally


def _cell(text: str) -> str:
    """A table cell: pipes and line breaks would break the table."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("\r", " ")


def render(
    tally: Tally,
    *,
    metalake: str,
    engine: str,
    created: str,
    operations: Sequence[str],
    top: int,
    changes: Changes | None,
) -> str:
    lines = [
        f"# Entitlement report of metalake {_cell(metalake)}",
        "",
        f"Made {created} by the {engine} engine: {tally.rows} row(s), one per user, object,"
        f" operation and reason; {len(tally.users)} user(s) with some access;"
        f" {len(operations)} operation(s) (report.json lists them).",
        "",
        "## Per catalog",
        "",
        "| catalog | rows | users | objects |",
        "| --- | ---: | ---: | ---: |",
    ]
    for name, count in sorted(tally.catalogs.items()):
        lines.append(f"| {_cell(name)} | {count.rows} | {count.user_count} | {count.object_count} |")
    lines += [
        "",
        f"## Widest access (top {top})",
        "",
        "| user | (object, operation) pairs allowed | rows | catalogs |",
        "| --- | ---: | ---: | ---: |",
    ]
    for user, width in tally.widest(top):
        lines.append(f"| {_cell(user)} | {width.access} | {width.rows} | {len(width.catalogs)} |")
    if changes is not None:
        lines += _changes(changes, top)
    return "\n".join(lines) + "\n"


def _changes(changes: Changes, top: int) -> list[str]:
    lines = [
        "",
        f"## Changes since {_cell(changes.previous)} (made {changes.previous_created})",
        "",
        f"{changes.added} row(s) added, {changes.removed} removed; {len(changes.by_user)} user(s) changed.",
    ]
    if changes.only is not None:
        lines += [
            "",
            f"The two reports cover different operations: compared on the {len(changes.only)}"
            " both cover (report.json lists them).",
        ]
    if not changes.by_user:
        return lines
    lines += ["", "| user | rows added | rows removed |", "| --- | ---: | ---: |"]
    for user, added, removed in changes.busiest(top):
        lines.append(f"| {_cell(user)} | {added} | {removed} |")
    more = len(changes.by_user) - top
    if more > 0:
        lines += ["", f"… and {more} more user(s); report.json lists them all."]
    return lines
