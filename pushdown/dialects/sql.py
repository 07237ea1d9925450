"""Reading a dialect's GRANT / DENY / REVOKE / ALTER … OWNER TO statements (and SHOW GRANTS output).

Identifiers may be quoted with backticks (a dot inside quotes is part of the name, a
doubled backtick is one backtick). ``--`` starts a comment to the end of the line;
statements end at ``;`` or at the end of the text. A statement the reader does not
understand is an error naming its line, never skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pushdown.dialects.data import ALL, Dialect
from pushdown.dialects.evaluate import DGrant, Obj
from pushdown.dialects.lexer import DialectError, Token, statements, tokenize

__all__ = ["DialectError", "Script", "read", "show_grants"]


@dataclass
class Script:
    """What a script leaves behind: the grants in force and the owners it set."""

    grants: set[DGrant] = field(default_factory=set)
    owners: dict[Obj, str] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)  # principal -> user / group / role


class _Reader:
    def __init__(self, dialect: Dialect, tokens: list[Token], line: int) -> None:
        self.d, self.toks, self.i, self.line = dialect, tokens, 0, line

    def fail(self, message: str) -> DialectError:
        return DialectError(f"line {self.line}: {message}")

    def peek(self, k: int = 0) -> Token | None:
        return self.toks[self.i + k] if self.i + k < len(self.toks) else None

    def take(self, *words: str) -> bool:
        for k, w in enumerate(words):
            tok = self.peek(k)
            if tok is None or tok.word != w:
                return False
        self.i += len(words)
        return True

    def expect(self, word: str) -> None:
        if not self.take(word):
            got = self.peek()
            raise self.fail(f"expected {word}, got {got.text if got else 'the end'}")

    def privileges(self) -> list[str]:
        out: list[str] = []
        words: list[str] = []
        while (tok := self.peek()) is not None and tok.word not in ("ON", ""):
            self.i += 1
            if tok.text == ",":
                out.append(" ".join(words))
                words = []
            else:
                words.append(tok.word)
        out.append(" ".join(words))
        if not all(out):
            raise self.fail("a privilege list has an empty entry")
        return out

    def name(self) -> tuple[str, ...]:
        parts: list[str] = []
        while True:
            tok = self.peek()
            if tok is None or (not tok.quoted and not re.match(r"[A-Za-z0-9_$@\-]", tok.text)):
                raise self.fail("expected a name")
            parts.append(tok.text)
            self.i += 1
            if not self.take("."):
                return tuple(parts)


def _privilege(r: _Reader, text: str, types: frozenset[str]) -> str:
    d = r.d
    shown = "/".join(sorted(types))
    for cand in (
        text,
        text.replace("_", " "),
        text.replace(" ", "_"),
        *(f"{text} {t}" for t in sorted(types)),
    ):
        if cand in (ALL, "ALL") and ALL in d.privileges:
            cand = ALL
        if cand in d.privileges:
            if not any(d.grantable(cand, t) for t in types):
                raise r.fail(f"{cand} cannot be granted on {shown} in {d.title}")
            return cand
    raise r.fail(f"unknown {d.title} privilege {text!r}")


def _securable(r: _Reader) -> tuple[str, tuple[str, ...], str]:
    d = r.d
    if d.all_objects and r.take("ALL"):
        tok = r.peek()
        if tok is None or tok.word not in d.all_objects:
            raise r.fail(f"ALL must be followed by one of {', '.join(sorted(d.all_objects))}")
        r.i += 1
        r.expect("IN")
        type_, names, _ = _securable(r)
        return type_, names, tok.word
    if d.name == "databricks-hms" and r.take("DATABASE"):
        return "SCHEMA", _full(r, "SCHEMA", r.name()), ""
    for type_ in sorted(d.securables, key=len, reverse=True):
        words = type_.split()
        if r.take(*words):
            return type_, _named(r, type_), ""
    if d.name == "databricks-hms":  # [ TABLE ] table_name
        return "TABLE", _full(r, "TABLE", r.name()), ""
    got = r.peek()
    raise r.fail(f"unknown {d.title} securable {got.text if got else '(none)'!r}")


def _named(r: _Reader, type_: str) -> tuple[str, ...]:
    if type_ in ("METASTORE", "ANY FILE", "INSTANCE", "ANONYMOUS FUNCTION"):
        return ()
    following = r.peek()
    if (
        type_ == "CATALOG"
        and r.d.default_catalog
        and (following is None or following.word in ("TO", "FROM", "OWNER"))
    ):
        return (r.d.default_catalog,)
    return _full(r, type_, r.name())


def _full(r: _Reader, type_: str, names: tuple[str, ...]) -> tuple[str, ...]:
    depth = {"CATALOG": 1, "WORKSPACE": 1, "SCHEMA": 2}.get(type_, 3)
    if r.d.securables.get(type_) is None or (
        type_ not in ("CATALOG", "WORKSPACE", "SCHEMA") and r.d.securables.get(type_) != "SCHEMA"
    ):
        return names  # outside the catalog.schema.object tree: as written
    if len(names) == depth - 1 and r.d.default_catalog:
        names = (r.d.default_catalog, *names)
    if len(names) != depth:
        raise r.fail(f"a {type_} name has {depth} part(s) here, got {'.'.join(names)!r}")
    return names


def _principal(r: _Reader, script: Script) -> str:
    kind = "user"
    for word in ("USER", "ROLE") if r.d.name == "singdata" else ():  # Singdata's syntax says which
        if r.take(word):
            kind = word.lower()
    tok = r.peek()
    if tok is None:
        raise r.fail("expected a principal")
    r.i += 1
    script.kinds.setdefault(tok.text, kind)
    return tok.text


def read(dialect: Dialect, text: str, script: Script | None = None) -> Script:
    """Apply every statement of ``text`` in order; an unknown statement is an error.
    Text whose first line is a SHOW GRANTS header is read as SHOW GRANTS output."""
    script = script or Script()
    if _grants_header(text) is not None:
        return show_grants(dialect, text, script)
    for line, body in statements(text):
        _statement(_Reader(dialect, tokenize(body, line), line), script)
    return script


_COLUMNS = {
    "principal": "principal",
    "actiontype": "action",
    "action_type": "action",
    "privilege": "action",
    "objecttype": "type",
    "object_type": "type",
    "objectkey": "key",
    "object_key": "key",
}


def _cells(line: str) -> list[str]:
    body = line.strip().strip("|")
    parts = body.split("|") if "|" in body else re.split(r"\t|\s{2,}", body)
    return [p.strip() for p in parts]


def _grants_header(text: str) -> list[str] | None:
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    names = [_COLUMNS.get(c.lower().replace(" ", "_"), "") for c in _cells(first)]
    return names if {"principal", "action", "type", "key"} <= set(names) else None


def show_grants(dialect: Dialect, text: str, script: Script | None = None) -> Script:
    """Read ``SHOW GRANTS`` output: a header (Principal, ActionType, ObjectType, ObjectKey,
    in any order, separated by ``|``, tabs or two spaces) and one grant a row; an action
    ``DENIED_<privilege>`` is a DENY. A row that cannot be read is an error naming its line."""
    script = script or Script()
    columns = _grants_header(text) or []
    rows = [(n, ln) for n, ln in enumerate(text.splitlines(), 1) if ln.strip()][1:]
    for number, line in rows:
        if set(line.strip()) <= set("-+| "):
            continue
        cells = _cells(line)
        if len(cells) != len(columns):
            raise DialectError(f"line {number}: expected {len(columns)} columns, got {len(cells)}")
        row = dict(zip(columns, cells, strict=True))
        action, verb = row["action"], "GRANT"
        if action.upper().startswith(("DENIED_", "DENIED ")):
            verb, action = "DENY", action[len("DENIED_") :]
        who = "`" + row["principal"].replace("`", "``") + "`"
        stmt = f"{verb} {action} ON {row['type']} {row['key']} TO {who}"
        _statement(_Reader(dialect, tokenize(stmt, number), number), script)
    return script


def _statement(r: _Reader, script: Script) -> None:
    verb = r.peek()
    word = verb.word if verb else ""
    r.i += 1
    if word == "ALTER":
        return _owner(r, script)
    if word not in ("GRANT", "DENY", "REVOKE") or (word == "DENY" and not r.d.has_deny):
        raise r.fail(f"{r.d.title} has no statement {verb.text if verb else ''!r} that this reader knows")
    names = r.privileges()
    r.expect("ON")
    type_, obj, scope = _securable(r)
    r.expect("FROM" if word == "REVOKE" else "TO")
    who = _principal(r, script)
    option = r.d.grant_option and word == "GRANT" and r.take("WITH", "GRANT", "OPTION")
    if r.peek() is not None:
        raise r.fail(f"unexpected {r.peek().text!r} after the principal")  # type: ignore[union-attr]
    for name in names:
        priv = _privilege(r, name, r.d.all_objects[scope] if scope else frozenset({type_}))
        g = DGrant(who, priv, type_, obj, word == "DENY", option, scope)
        if word == "REVOKE":
            _revoke(r.d, script, g)
        else:
            script.grants.add(g)


def _revoke(d: Dialect, script: Script, g: DGrant) -> None:
    def same(h: DGrant) -> bool:
        if (h.principal, h.type, h.names, h.scope) != (g.principal, g.type, g.names, g.scope):
            return False
        return h.privilege == g.privilege or (g.privilege == ALL and d.revoke_all_removes_each)

    script.grants -= {h for h in script.grants if same(h)}


def _owner(r: _Reader, script: Script) -> None:
    type_, obj, scope = _securable(r)
    if scope:
        raise r.fail("an owner is set on one object, not on ALL of a kind")
    r.expect("OWNER")
    r.expect("TO")
    script.owners[(type_, obj)] = _principal(r, script)
    if r.peek() is not None:
        raise r.fail(f"unexpected {r.peek().text!r} after the owner")  # type: ignore[union-attr]
