"""Splitting a dialect's text into statements and tokens, quote-aware.

Identifiers may be quoted with backticks (a dot or ``;`` inside quotes is part of the
name, a doubled backtick is one backtick); ``--`` starts a comment to the end of the line;
statements end at ``;`` or at the end of the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pushdown.errors import ModelError


class DialectError(ModelError):
    """A statement that cannot be read; the message names its line."""


@dataclass(frozen=True)
class Token:
    text: str
    quoted: bool

    @property
    def word(self) -> str:
        return "" if self.quoted else self.text.upper()


_TOKEN = re.compile(r"\s*(?:(`(?:[^`]|``)*`)|(\"(?:[^\"]|\"\")*\")|([A-Za-z0-9_$@\-]+)|([.,*()]))")


def tokenize(text: str, line: int) -> list[Token]:
    out: list[Token] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise DialectError(f"line {line}: cannot read {text[pos:].strip()[:40]!r}")
        quoted = m.group(1) or m.group(2)
        if quoted:
            q = quoted[0]
            out.append(Token(quoted[1:-1].replace(q + q, q), True))
        else:
            out.append(Token(m.group(3) or m.group(4), False))
        pos = m.end()
    return out


def statements(text: str) -> list[tuple[int, str]]:
    """Split on ``;`` outside quotes, dropping comments; each with its first line's number."""
    out: list[tuple[int, str]] = []
    buf: list[str] = []
    start = 0
    quote = ""
    line = 1
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            quote = "" if ch == quote else quote
        elif ch in '`"':
            quote = ch
        elif text.startswith("--", i):
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        elif ch == ";":
            _flush(out, buf, start)
            i += 1
            continue
        if ch == "\n":
            line += 1
        elif not buf and not ch.isspace():
            start = line
        if buf or not ch.isspace():
            buf.append(ch)
        i += 1
    if quote:
        raise DialectError(f"line {start}: unterminated quote")
    _flush(out, buf, start)
    return out


def _flush(out: list[tuple[int, str]], buf: list[str], start: int) -> None:
    body = "".join(buf).strip()
    if body:
        out.append((start, body))
    buf.clear()
