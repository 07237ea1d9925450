"""Ranger's resource matchers: one policy resource (values, isExcludes, isRecursive) against a value.

Follows RangerDefaultResourceMatcher, RangerPathResourceMatcher and RangerURLResourceMatcher:
``*`` and ``?`` wildcards (``*`` alone, or a value of only ``*``, matches anything), case
folding per the resource's ``matcherOptions`` (``ignoreCase`` defaults to true,
``quotedCaseSensitive``), ``{USER}`` / ``{OWNER}`` token replacement (``replaceTokens``),
recursion for paths and URLs, excludes (which flip the result, except when every value is asked
for and the policy does not allow every value), and the ``SELF_OR_PREFIX`` matching scope.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

__all__ = ["ElementMatcher", "MatcherOptions", "Unsupported", "replace_tokens", "wildcard_match"]

SELF, PREFIX, CHILD, NONE = "SELF", "PREFIX", "CHILD", "NONE"
SELF_OR_PREFIX, SELF_OR_CHILD = "SELF_OR_PREFIX", "SELF_OR_CHILD"


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


@lru_cache(maxsize=4096)
def _wildcard_regex(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    parts = [".*" if ch == "*" else "." if ch == "?" else re.escape(ch) for ch in pattern]
    return re.compile("".join(parts), re.DOTALL | (re.IGNORECASE if ignore_case else 0))


def wildcard_match(text: str, pattern: str, ignore_case: bool) -> bool:
    """commons-io FilenameUtils.wildcardMatch: ``*`` any run (``/`` included), ``?`` one char."""
    return _wildcard_regex(pattern, ignore_case).fullmatch(text) is not None


def _starts(text: str, prefix: str, ignore_case: bool) -> bool:
    return text.lower().startswith(prefix.lower()) if ignore_case else text.startswith(prefix)


def _equals(a: str, b: str, ignore_case: bool) -> bool:
    return a.lower() == b.lower() if ignore_case else a == b


def wildcard_prefix_match(text: str, pattern: str, ignore_case: bool) -> bool:
    """Is ``text`` the start of some value ``pattern`` matches (Ranger's wildcardPrefixMatch)?"""
    return any(wildcard_match(text, pattern[:cut], ignore_case) for cut in range(len(pattern) + 1))


def _recursive_wildcard_match(path: str, pattern: str, sep: str, ignore_case: bool) -> bool:
    """RangerPathResourceMatcher's recursive wildcard match: a policy path matches its subtree."""
    if not path:
        return False
    elements = [e for e in path.split(sep) if e]
    if not elements:
        return wildcard_match(path, pattern, ignore_case)
    wild = [e for e in pattern.split(sep) if e]
    built = sep if path[0] == sep else ""
    by_string = True
    for index, element in enumerate(elements):
        built += element
        if by_string:
            literal = wild[index] if index < len(wild) else None
            if literal is not None and "*" not in literal and "?" not in literal:
                if not _equals(element, literal, ignore_case):
                    return False
            else:
                by_string = False
        if not by_string and wildcard_match(built, pattern, ignore_case):
            return True
        built += sep
    if not by_string:
        return False
    if len(elements) == len(wild):
        return True
    return path.endswith(sep) and len(elements) == len(wild) - 1 and wild[-1] == "*"


def _url_scheme_end(url: str) -> int:
    colon = url.find(":")
    if colon < 0:
        return -1
    idx = colon + 1
    while idx < len(url) and url[idx] == "/":
        idx += 1
    return idx if idx - (colon + 1) >= 2 else -1


def _url_recursive_wildcard_match(url: str, pattern: str, sep: str, ignore_case: bool) -> bool:
    """RangerURLResourceMatcher's recursive wildcard match (scheme kept, path walked level by level)."""
    url = url.strip()
    end = _url_scheme_end(url)
    if not url or re.search(":/{2,}", url) is None or end < 0:
        return False
    scheme, rest = url[:end], url[end:]
    elements = [e for e in rest.split(sep) if e]
    if not elements:
        return wildcard_match(url, pattern, ignore_case)
    built = scheme + (sep if url[0] == sep else "")
    for element in elements:
        built += element
        if wildcard_match(built, pattern, ignore_case):
            return True
        built += sep
    if not url.endswith(sep):
        built = built[:-1]
    return wildcard_match(built, pattern, ignore_case)


@dataclass(frozen=True)
class _Value:
    """One policy value's matcher: ``kind`` is string/starts/ends/wild/rpath/rwild/rurlwild."""

    kind: str
    value: str
    opts: MatcherOptions
    path: bool = False

    def _expanded(self, tokens: dict[str, str]) -> str:
        if "${{" in self.value and self.opts.replace_tokens:
            raise Unsupported("request expressions (${{...}}) in resource values")
        return (
            replace_tokens(self.value, tokens, self.opts) if self.opts.has_token(self.value) else self.value
        )

    def _fold(self, resource: str) -> bool:
        opts = self.opts
        quoted = opts.quoted_case_sensitive and resource[:1] != "" and resource[0] in opts.quote_chars
        return opts.ignore_case and not quoted

    def match(self, resource: str, tokens: dict[str, str]) -> bool:
        value, fold, sep = self._expanded(tokens), self._fold(resource), self.opts.separator
        if self.kind == "string":
            return _equals(resource, value, fold)
        if self.kind == "starts":
            return _starts(resource, value, fold)
        if self.kind == "ends":
            return resource.lower().endswith(value.lower()) if fold else resource.endswith(value)
        if self.kind == "wild":
            return wildcard_match(resource, value, fold)
        if self.kind == "rpath":
            bare = value[:-1] if value.endswith(sep) else value
            return _equals(resource, bare, fold) or _starts(resource, bare + sep, fold)
        if self.kind == "rwild":
            return _recursive_wildcard_match(resource, value, sep, fold)
        return _url_recursive_wildcard_match(resource, value, sep, fold)

    def prefix_match(self, resource: str, tokens: dict[str, str]) -> bool:
        value, fold = self._expanded(tokens), self._fold(resource)
        if self.kind in ("string", "starts"):
            return _starts(value, resource, fold)
        if self.kind == "ends":
            return True
        return wildcard_prefix_match(resource, value, fold)

    def child_match(self, resource: str, tokens: dict[str, str]) -> bool:
        """Is ``resource`` the parent of a path this value matches (path resources only)?"""
        value, fold, sep = self._expanded(tokens), self._fold(resource), self.opts.separator
        if not self.path:
            return False
        if self.kind == "rpath" and value.endswith(sep):
            value = value[:-1]
        cut = value.rfind(sep)
        if cut < 0 or not resource:
            return False
        shorter, parent = value[:cut], resource[:-1] if resource.endswith(sep) else resource
        if self.kind in ("string", "rpath"):
            return _equals(parent, shorter, fold)
        if self.kind == "starts":
            return _starts(parent, shorter, fold)
        if self.kind == "ends":
            return parent.lower().endswith(shorter.lower()) if fold else parent.endswith(shorter)
        if self.kind == "rwild":
            return _recursive_wildcard_match(parent, shorter, sep, fold)
        return wildcard_match(parent, shorter, fold)


def _plain_kind(value: str, wildcard: bool) -> tuple[str, str]:
    """Ranger's getMatcher(): which string matcher a policy value needs (kind, operand)."""
    if not wildcard or ("*" not in value and "?" not in value):
        return "string", value
    if "?" in value:
        return "wild", value
    first, last = value.index("*"), value.rindex("*")
    if value[first : last + 1].strip("*"):
        return "wild", value
    if first == 0:
        return ("any", "") if last == len(value) - 1 else ("ends", value[last + 1 :])
    if last != len(value) - 1:
        return "wild", value
    return "starts", value[:first]


class ElementMatcher:
    """One policy resource (its values, isExcludes, isRecursive) for one resource definition."""

    def __init__(
        self, rdef: dict[str, Any], resource: dict[str, Any], opts: MatcherOptions | None = None
    ) -> None:
        self.opts = opts if opts is not None else MatcherOptions.of(rdef)
        matcher = str(rdef.get("matcher") or "").rsplit(".", 1)[-1]
        self.style = {"RangerPathResourceMatcher": "path", "RangerURLResourceMatcher": "url"}.get(
            matcher, "default"
        )
        if matcher not in (
            "",
            "RangerDefaultResourceMatcher",
            "RangerPathResourceMatcher",
            "RangerURLResourceMatcher",
        ):
            self.unsupported: str | None = f"resource matcher {matcher}"
        else:
            self.unsupported = None
        self.excludes = bool(resource.get("isExcludes"))
        self.recursive = bool(resource.get("isRecursive")) and self.style != "default"
        self.values: list[_Value] = []
        self.match_any = False
        for raw in resource.get("values") or []:
            if not raw:
                continue
            made = self._make(str(raw))
            if made.kind == "any":
                self.values, self.match_any = [], True
                break
            self.values.append(made)
        if not self.values:
            self.match_any = True

    def literals(self) -> set[str] | None:
        """The exact values this resource matches (folded if case is ignored), or None if it
        matches more than a fixed set (wildcards, recursion, tokens, excludes, quoting)."""
        opts = self.opts
        if self.match_any or self.excludes or self.unsupported or opts.quoted_case_sensitive:
            return None
        if any(v.kind != "string" or opts.has_token(v.value) or "${{" in v.value for v in self.values):
            return None
        return {v.value.lower() if opts.ignore_case else v.value for v in self.values}

    def _make(self, value: str) -> _Value:
        opts = self.opts
        if self.recursive:
            if opts.wildcard and value.endswith(opts.separator):
                value += "*"
            if opts.wildcard and value == "*":
                return _Value("any", "", opts)
            if opts.wildcard and ("*" in value or "?" in value):
                return _Value(
                    "rwild" if self.style == "path" else "rurlwild", value, opts, self.style == "path"
                )
            return _Value("rpath", value, opts, self.style == "path")
        kind, operand = _plain_kind(value, opts.wildcard)
        return _Value(kind, operand, opts, self.style == "path")

    def _element_type(self, value: str, scope: str | None, tokens: dict[str, str]) -> str:
        found = NONE
        for matcher in self.values:
            if matcher.match(value, tokens):
                return SELF
            if scope == SELF_OR_PREFIX and matcher.prefix_match(value, tokens):
                found = PREFIX
            elif scope == SELF_OR_CHILD and matcher.child_match(value, tokens):
                found = CHILD
            elif scope not in (None, "SELF", SELF_OR_PREFIX, SELF_OR_CHILD):
                raise Unsupported(f"resource element matching scope {scope}")
        return found

    def is_match(self, value: Any, scope: str | None, tokens: dict[str, str]) -> bool:
        if self.unsupported:
            raise Unsupported(self.unsupported)
        every = value is None or (isinstance(value, str) and value in ("", "*"))
        prefix_scope = scope == SELF_OR_PREFIX
        if self.match_any or (every and not prefix_scope):
            found = SELF if self.match_any else NONE
        else:
            found = NONE
            values = [value] if isinstance(value, str) else list(value or [])
            for one in values:
                kind = self._element_type(str(one), scope, tokens)
                found = kind if kind != NONE else found
                if found == SELF:
                    break
        if self.excludes and not (every and not self.match_any):
            found = SELF if found == NONE else NONE
        return (
            found == SELF or (found == PREFIX and prefix_scope) or (found == CHILD and scope == SELF_OR_CHILD)
        )
