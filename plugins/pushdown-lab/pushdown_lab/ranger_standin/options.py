"""A resource definition's ``matcherOptions`` (Ranger's defaults) and ``{TOKEN}`` replacement.

``Unsupported`` is raised wherever the stand-in meets a Ranger feature it does not evaluate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["MatcherOptions", "Unsupported", "replace_tokens"]


class Unsupported(Exception):
    """A Ranger feature the engine does not evaluate (the message names it)."""


def _flag(options: dict[str, Any], key: str, default: bool) -> bool:
    value = options.get(key)
    return default if value is None else str(value).strip().lower() == "true"


def _char(options: dict[str, Any], key: str, default: str) -> str:
    value = str(options.get(key) or "")
    return value[0] if value else default


@dataclass(frozen=True)
class MatcherOptions:
    """The ``matcherOptions`` of one resource definition, with Ranger's defaults."""

    ignore_case: bool = True
    quoted_case_sensitive: bool = False
    quote_chars: str = '"'
    wildcard: bool = True
    replace_tokens: bool = True
    start: str = "{"
    end: str = "}"
    escape: str = "\\"
    prefix: str = ""
    separator: str = "/"

    @classmethod
    def of(cls, rdef: dict[str, Any]) -> MatcherOptions:
        opts = rdef.get("matcherOptions") or {}
        return cls(
            ignore_case=_flag(opts, "ignoreCase", True),
            quoted_case_sensitive=_flag(opts, "quotedCaseSensitive", False),
            quote_chars=str(opts.get("quoteChars") or '"'),
            wildcard=_flag(opts, "wildCard", True),
            replace_tokens=_flag(opts, "replaceTokens", True),
            start=_char(opts, "tokenDelimiterStart", "{"),
            end=_char(opts, "tokenDelimiterEnd", "}"),
            escape=_char(opts, "tokenDelimiterEscape", "\\"),
            prefix=str(opts.get("tokenDelimiterPrefix") or ""),
            separator=_char(opts, "pathSeparatorChar", "/"),
        )

    def has_token(self, value: str) -> bool:
        return self.replace_tokens and self.start in value and self.end in value


def replace_tokens(value: str, tokens: dict[str, str], opts: MatcherOptions) -> str:
    """Ranger's StringTokenReplacer: ``{NAME}`` becomes ``tokens[NAME]``; unknown tokens stay."""
    out: list[str] = []
    token: list[str] | None = None
    i = 0
    while i < len(value):
        c = value[i]
        if c == opts.escape:
            i += 1
            if i < len(value):
                c = value[i]
                keep = opts.end if token is not None else opts.start
                target = token if token is not None else out
                if c not in (opts.escape, keep):
                    target.append(opts.escape)
                target.append(c)
            else:
                (token if token is not None else out).append(opts.escape)
        elif token is None:
            if c == opts.start:
                token = []
            else:
                out.append(c)
        elif c == opts.end:
            raw = "".join(token)
            name = raw[len(opts.prefix) :] if raw.startswith(opts.prefix) else None
            if name is not None and name in tokens:
                out.append(tokens[name])
            else:
                out.append(opts.start + raw + opts.end)
            token = None
        else:
            token.append(c)
        i += 1
    if token is not None:
        out.append(opts.start + "".join(token))
    return "".join(out)
