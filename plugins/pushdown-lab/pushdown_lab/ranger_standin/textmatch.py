"""String matching as Ranger's resource matchers do it: commons-io wildcards, prefixes, and the
recursive path and URL matches (a policy path matches its whole subtree)."""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = [
    "equals",
    "recursive_wildcard_match",
    "starts",
    "url_recursive_wildcard_match",
    "wildcard_match",
    "wildcard_prefix_match",
]


@lru_cache(maxsize=4096)
def _wildcard_regex(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    parts = [".*" if ch == "*" else "." if ch == "?" else re.escape(ch) for ch in pattern]
    return re.compile("".join(parts), re.DOTALL | (re.IGNORECASE if ignore_case else 0))


def wildcard_match(text: str, pattern: str, ignore_case: bool) -> bool:
    """commons-io FilenameUtils.wildcardMatch: ``*`` any run (``/`` included), ``?`` one char."""
    return _wildcard_regex(pattern, ignore_case).fullmatch(text) is not None


def starts(text: str, prefix: str, ignore_case: bool) -> bool:
    return text.lower().startswith(prefix.lower()) if ignore_case else text.startswith(prefix)


def equals(a: str, b: str, ignore_case: bool) -> bool:
    return a.lower() == b.lower() if ignore_case else a == b


def wildcard_prefix_match(text: str, pattern: str, ignore_case: bool) -> bool:
    """Is ``text`` the start of some value ``pattern`` matches (Ranger's wildcardPrefixMatch)?"""
    return any(wildcard_match(text, pattern[:cut], ignore_case) for cut in range(len(pattern) + 1))


def recursive_wildcard_match(path: str, pattern: str, sep: str, ignore_case: bool) -> bool:
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
                if not equals(element, literal, ignore_case):
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


def url_recursive_wildcard_match(url: str, pattern: str, sep: str, ignore_case: bool) -> bool:
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
