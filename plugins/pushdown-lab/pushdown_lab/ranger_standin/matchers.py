"""Ranger's resource matchers: one policy resource (values, isExcludes, isRecursive) against a value.

Follows RangerDefaultResourceMatcher, RangerPathResourceMatcher and RangerURLResourceMatcher:
``*`` and ``?`` wildcards (``*`` alone, or a value of only ``*``, matches anything), case
folding per the resource's ``matcherOptions`` (``ignoreCase`` defaults to true,
``quotedCaseSensitive``), ``{USER}`` / ``{OWNER}`` token replacement (``replaceTokens``),
recursion for paths and URLs, excludes (which flip the result, except when every value is asked
for and the policy does not allow every value), and the ``SELF_OR_PREFIX`` / ``SELF_OR_CHILD``
matching scopes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pushdown_lab.ranger_standin.options import MatcherOptions, Unsupported, replace_tokens
from pushdown_lab.ranger_standin.textmatch import (
    equals,
    recursive_wildcard_match,
    starts,
    url_recursive_wildcard_match,
    wildcard_match,
    wildcard_prefix_match,
)

__all__ = ["ElementMatcher", "MatcherOptions", "Unsupported"]

SELF, PREFIX, CHILD, NONE = "SELF", "PREFIX", "CHILD", "NONE"
SELF_OR_PREFIX, SELF_OR_CHILD = "SELF_OR_PREFIX", "SELF_OR_CHILD"


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
            return equals(resource, value, fold)
        if self.kind == "starts":
            return starts(resource, value, fold)
        if self.kind == "ends":
            return resource.lower().endswith(value.lower()) if fold else resource.endswith(value)
        if self.kind == "wild":
            return wildcard_match(resource, value, fold)
        if self.kind == "rpath":
            bare = value[:-1] if value.endswith(sep) else value
            return equals(resource, bare, fold) or starts(resource, bare + sep, fold)
        if self.kind == "rwild":
            return recursive_wildcard_match(resource, value, sep, fold)
        return url_recursive_wildcard_match(resource, value, sep, fold)

    def prefix_match(self, resource: str, tokens: dict[str, str]) -> bool:
        value, fold = self._expanded(tokens), self._fold(resource)
        if self.kind in ("string", "starts"):
            return starts(value, resource, fold)
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
            return equals(parent, shorter, fold)
        if self.kind == "starts":
            return starts(parent, shorter, fold)
        if self.kind == "ends":
            return parent.lower().endswith(shorter.lower()) if fold else parent.endswith(shorter)
        if self.kind == "rwild":
            return recursive_wildcard_match(parent, shorter, sep, fold)
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
