"""Writing a dialect's statements: GRANT / DENY / ALTER … OWNER TO, names quoted where needed."""

from __future__ import annotations

import re
from collections import defaultdict

from pushdown.dialects.data import Dialect
from pushdown.dialects.evaluate import DGrant
from pushdown.dialects.exporting import Exported

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def ident(text: str) -> str:
    return text if _PLAIN.match(text) else "`" + text.replace("`", "``") + "`"


def name(names: tuple[str, ...]) -> str:
    return ".".join(ident(n) for n in names)


def securable(g: DGrant) -> str:
    on = f"ALL {g.scope} IN {g.type}" if g.scope else g.type
    return f"{on} {name(g.names)}".rstrip()


def principal(d: Dialect, who: str, kind: str) -> str:
    if d.name == "singdata":
        return f"{'ROLE' if kind == 'role' else 'USER'} {ident(who)}"
    return "`" + who.replace("`", "``") + "`"


def statements(d: Dialect, out: Exported) -> list[str]:
    lines = [f"-- exported for {d.title} (reference {d.reference}); never wider than the model"]
    lines += [f"-- {c}" for c in out.comments]
    grouped: dict[tuple[bool, bool, str, tuple[str, ...], str, str], list[str]] = defaultdict(list)
    for g in sorted(out.grants):
        grouped[(g.deny, g.grant_option, g.type, g.names, g.scope, g.principal)].append(g.privilege)
    for (deny, option, type_, names, scope, who), privs in sorted(grouped.items()):
        g = DGrant(who, "", type_, names, deny, option, scope)
        verb = "DENY" if deny else "GRANT"
        tail = " WITH GRANT OPTION" if option else ""
        who_s = principal(d, who, out.kinds.get(who, "user"))
        lines.append(f"{verb} {', '.join(sorted(privs))} ON {securable(g)} TO {who_s}{tail};")
    for (type_, names), owner in sorted(out.owners.items()):
        lines.append(f"ALTER {type_} {name(names)} OWNER TO {principal(d, owner, 'user')};")
    if d.name == "databricks-hms":
        lines.append("-- the model grants no access to the file system: nobody holds ANY FILE")
        for who in sorted(out.kinds):
            lines.append(f"REVOKE ALL PRIVILEGES ON ANY FILE FROM {principal(d, who, 'user')};")
    return lines
