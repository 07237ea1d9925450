"""Dotted names whose segments may themselves hold dots, quotes or backticks.

Quoting rule (the same one MySQL uses for identifiers): a segment is written bare
when it is non-empty and holds no ``.``, no backtick and no leading or trailing
white space; otherwise it is wrapped in backticks and every backtick inside it is
doubled. ``format_name(parse_name(s))`` is canonical and ``parse_name`` inverts
``format_name`` for every tuple of strings.

    >>> format_name(("sales", "odd.name", "it`s"))
    'sales.`odd.name`.`it``s`'
    >>> parse_name('sales.`odd.name`.`it``s`')
    ('sales', 'odd.name', 'it`s')
"""

from __future__ import annotations

from pushdown.errors import ModelError


class BadName(ModelError):
    """A dotted name that cannot be parsed; the message says where."""


def _needs_quotes(segment: str) -> bool:
    return not segment or "." in segment or "`" in segment or segment != segment.strip()


def quote_segment(segment: str) -> str:
    if not _needs_quotes(segment):
        return segment
    return "`" + segment.replace("`", "``") + "`"


def format_name(segments: tuple[str, ...]) -> str:
    return ".".join(quote_segment(s) for s in segments)


def _read_quoted(text: str, start: int) -> tuple[str, int]:
    """Read a backtick-quoted segment starting at ``text[start] == '`'``."""
    out: list[str] = []
    i = start + 1
    while i < len(text):
        ch = text[i]
        if ch == "`":
            if text[i + 1 : i + 2] == "`":
                out.append("`")
                i += 2
                continue
            return "".join(out), i + 1
        out.append(ch)
        i += 1
    raise BadName(f"unterminated backtick in name {text!r} (opened at offset {start})")


def parse_name(text: str) -> tuple[str, ...]:
    """Split a dotted name into its segments, honouring backtick quoting."""
    if "`" not in text:  # fast path: nothing quoted; anything odd falls through to the checks below
        plain = text.split(".")
        if all(seg and seg == seg.strip() for seg in plain):
            return tuple(plain)
    if not text:
        raise BadName("empty name")
    segments: list[str] = []
    i = 0
    while True:
        if text[i : i + 1] == "`":
            segment, i = _read_quoted(text, i)
        else:
            end = i
            while end < len(text) and text[end] not in ".`":
                end += 1
            segment, i = text[i:end], end
            if not segment or segment != segment.strip():
                raise BadName(
                    f"empty or space-padded segment in name {text!r} at offset {i}; "
                    "wrap such a segment in backticks"
                )
        segments.append(segment)
        if i == len(text):
            return tuple(segments)
        if text[i] != ".":
            raise BadName(f"expected '.' after a segment in name {text!r} at offset {i}")
        i += 1
        if i == len(text):
            raise BadName(f"name {text!r} ends with '.'")
