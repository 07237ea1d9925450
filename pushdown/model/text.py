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


#: Control characters, line and paragraph separators (U+2028, U+2029: a line break to
#: anything that splits lines the Unicode way), and lone UTF-16 surrogates (no UTF-8 exists).
REFUSED_CATEGORIES = frozenset({"Cc", "Zl", "Zp", "Cs"})
#: The longest name, in characters: Gravitino's own (``VARCHAR(128)`` for every metalake,
#: catalog, schema, table, user, group and role name in its store, schema-1.3.0).
MAX_NAME = 128


def has_control(text: str) -> bool:
    """True when ``text`` holds a control character, a line separator or a lone surrogate."""
    if text.isascii():  # the only refused ASCII are the controls (Cc), the ones not printable
        return not text.isprintable()
    return any(unicodedata.category(ch) in REFUSED_CATEGORIES for ch in text)


def too_long(text: str) -> bool:
    return len(text) > MAX_NAME


def check_name(kind: str, name: object) -> None:
    """Refuse an empty name, a name longer than :data:`MAX_NAME`, or one with a control
    character (the message shows it escaped)."""
    if not isinstance(name, str) or not name:
        raise ModelError(f"a {kind} name must be a non-empty string, got {name!r}")
    if too_long(name):
        raise ModelError(f"a {kind} name may hold at most {MAX_NAME} characters, this one has {len(name)}")
    if has_control(name):
        raise ModelError(f"{kind} name {name!r} contains a control character; names may not")


def _hidden(ch: str) -> bool:
    return ch in BIDI or ch in ZERO_WIDTH or unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs")


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
