"""What a name may hold, and how output shows one that could still mislead a reader.

Control characters (Unicode category Cc: NUL, newline, escape…) are refused in every
name the model holds: a newline in a table name could print extra lines in a plan that
look like real operations, and the core reserves a NUL-prefixed segment for "an object
that does not exist yet". Look-alike names — letters from more than one script,
bidirectional overrides, zero-width characters — are legal, but :func:`lookalike` says
why they deserve a warning, and :func:`escaped` is how output prints any text that may
hold such characters.
"""

from __future__ import annotations

import unicodedata

from pushdown.errors import ModelError

BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\ufeff")
#: Scripts written together in one language (Japanese, Korean): mixing them is not suspicious.
EAST_ASIAN = frozenset({"CJK", "HIRAGANA", "KATAKANA", "KATAKANA-HIRAGANA", "HANGUL"})


def has_control(text: str) -> bool:
    return any(unicodedata.category(ch) == "Cc" for ch in text)


def check_name(kind: str, name: object) -> None:
    """Refuse an empty name, or one with a control character (the message shows it escaped)."""
    if not isinstance(name, str) or not name:
        raise ModelError(f"a {kind} name must be a non-empty string, got {name!r}")
    if has_control(name):
        raise ModelError(f"{kind} name {name!r} contains a control character; names may not")


def _hidden(ch: str) -> bool:
    return ch in BIDI or ch in ZERO_WIDTH or unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")


def escaped(text: str) -> str:
    """``text`` with every invisible or line-moving character written as an escape (\\n, \\u202e)."""
    if not any(_hidden(ch) for ch in text):
        return text
    return "".join(_escape(ch) if _hidden(ch) else ch for ch in text)


def _escape(ch: str) -> str:
    if ch in "\n\r\t":
        return repr(ch)[1:-1]
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _scripts(text: str) -> set[str]:
    found = set()
    for ch in text:
        if unicodedata.category(ch).startswith("L"):
            script = unicodedata.name(ch, "UNKNOWN").split(" ")[0]
            found.add("CJK" if script in EAST_ASIAN else script)
    return found


def invisible(text: str) -> str | None:
    """Why ``text`` may not be what it looks like (hidden characters), or None."""
    for ch in text:
        if ch in BIDI:
            return f"a bidirectional control character (U+{ord(ch):04X}) that can reorder what is shown"
        if ch in ZERO_WIDTH:
            return f"a zero-width character (U+{ord(ch):04X})"
        if _hidden(ch):
            return f"an invisible character (U+{ord(ch):04X})"
    return None


def lookalike(name: str) -> str | None:
    """Why a name may be mistaken for another (hidden characters, mixed scripts), or None."""
    why = invisible(name)
    if why is not None:
        return why
    scripts = _scripts(name)
    if len(scripts) > 1:
        return f"letters from more than one script ({', '.join(sorted(scripts))})"
    return None
