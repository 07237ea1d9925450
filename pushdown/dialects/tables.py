"""The comparison tables of docs/dialects.md (and docs/hive.md's legacy table), from the data.

``python scripts/dialect_docs.py`` rewrites them; a test fails when the docs differ.
"""

from __future__ import annotations

from pushdown.dialects.cdap import OPERATIONS as CDAP_OPERATIONS
from pushdown.dialects.data import COMMON_OPERATIONS, Dialect, Need
from pushdown.dialects.registry import DIALECTS, SQL_DIALECTS

BEGIN = "<!-- BEGIN generated: {name} (python scripts/dialect_docs.py) -->"
END = "<!-- END generated: {name} -->"

_GRAVITINO = {
    "inheritance": "downward from the metalake, catalog and schema",
    "deny": "yes; DENY wins",
    "all": "none (each privilege is granted by name)",
    "owner": "the owner of an object may do everything on it and below it, and manage its grants",
    "gates": "USE_CATALOG on the catalog and USE_SCHEMA on the schema (ownership passes them)",
    "grant option": "none: MANAGE_GRANTS on the metalake, or ownership",
}


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _need(need: Need) -> str:
    where = "the object" if need.at == "target" else f"the {need.at.lower()}"
    return f"{' or '.join(need.privileges)} on {where}"


_ALL = {
    "expands": "every applicable privilege, expanded at check time; not ownership",
    "independent": "a privilege point of its own allowing every operation on the object; "
    "revoking it keeps the ones granted one by one",
}


def _inheritance(d: Dialect) -> str:
    if d.inherits_from:
        return ", ".join(sorted(d.inherits_from)) + " grants reach everything below"
    return "none (but ALL … IN a parent: current and future objects)" if d.all_objects else "none"


def _all_privileges(d: Dialect) -> str:
    revoke = "; REVOKE ALL also revokes the ones granted one by one" if d.revoke_all_removes_each else ""
    return _ALL[d.all_privileges] + revoke


def _owners(d: Dialect) -> str:
    held = "every privilege on the object itself" if d.owner_has_all else "not described"
    below = ", ".join(sorted(d.owner_manages_below)).lower()
    return held + (f"; manage grants below a {below}" if below else "")


def semantics(d: Dialect) -> list[str]:
    securables = ", ".join(f"{t} ({p})" if p else t for t, p in d.securables.items())
    rows = [
        (
            "securables (parent)",
            securables,
            "metalake, catalog, schema, table / topic / fileset / model; role, tag, …",
        ),
        ("inheritance", _inheritance(d), _GRAVITINO["inheritance"]),
        ("DENY", "yes; DENY wins and is inherited" if d.has_deny else "no", _GRAVITINO["deny"]),
        ("ALL PRIVILEGES", _all_privileges(d), _GRAVITINO["all"]),
        ("owners", _owners(d), _GRAVITINO["owner"]),
        ("gates", "; ".join(d.gates) or "none", _GRAVITINO["gates"]),
        ("grant option", "WITH GRANT OPTION" if d.grant_option else "none", _GRAVITINO["grant option"]),
    ]
    out = [f"| | {d.title} | Gravitino (the model) |", "| --- | --- | --- |"]
    out += [f"| {a} | {_cell(b)} | {_cell(c)} |" for a, b, c in rows]
    return out


def privileges(d: Dialect) -> list[str]:
    out = ["| privilege | granted on |", "| --- | --- |"]
    out += [f"| {p} | {', '.join(sorted(on))} |" for p, on in sorted(d.privileges.items())]
    return out


def mappings(d: Dialect) -> list[str]:
    out = ["| privilege | on | the model | exact? | why |", "| --- | --- | --- | --- | --- |"]
    for m in d.mappings:
        model = ", ".join(m.model) or "(left out)"
        exact = "yes" if m.exact else "no: narrower"
        out.append(f"| {m.privilege} | {m.on} | {model} | {exact} | {_cell(m.note)} |")
    return out


def translation(d: Dialect) -> list[str]:
    """What import and export actually do: the translation data itself."""
    t = d.translation
    out = ["| import: an ALLOW of | on | gives the model |", "| --- | --- | --- |"]
    out += [f"| {p} | {form} | {', '.join(v)} |" for (p, form), v in t.allow.items()]
    for need, form, v in t.combos:
        out.append(f"| {' + '.join(sorted(need))} (together) | {form} | {', '.join(v)} |")
    if t.deny:
        out += ["", "| import: a DENY of | on | denies in the model |", "| --- | --- | --- |"]
        out += [f"| {p} | {form} | {', '.join(v)} |" for (p, form), v in t.deny.items()]
    out += ["", "| export: the model's | on | becomes |", "| --- | --- | --- |"]
    out += [f"| {p} | {type_} | {', '.join(v)} on {form} |" for (p, type_), (form, v) in t.export.items()]
    return out


def operations(d: Dialect) -> list[str]:
    out = ["| operation | needs (all of) | the model's operation |", "| --- | --- | --- |"]
    for op, needs in d.operations.items():
        out.append(f"| {op} | {'; '.join(_need(n) for n in needs)} | {COMMON_OPERATIONS.get(op, '—')} |")
    return out


def cdap_operations() -> list[str]:
    out = ["| entity operation | required privileges |", "| --- | --- |"]
    out += [f"| {op} | {'; '.join(_need(n) for n in needs)} |" for op, needs in CDAP_OPERATIONS.items()]
    return out


def section(d: Dialect) -> list[str]:
    lines = [f"## {d.title}", "", f"Reference {d.reference}; `--dialect {d.name}`.", "", *semantics(d), ""]
    lines += ["### Privileges", "", *privileges(d), "", "### Against the model", "", *mappings(d), ""]
    if d.translation.allow:
        lines += ["### Import and export, exactly", "", *translation(d), ""]
    if d.name == "cdap":
        lines += ["### Operations", "", *cdap_operations(), ""]
    else:
        lines += ["### Operations compared", "", *operations(d), ""]
    lines += [f"- {note}" for note in d.notes]
    return [*lines, ""]


def document() -> str:
    head = [
        "# Dialects: the seeds' privilege models against Gravitino's",
        "",
        "Generated from `pushdown/dialects/` by `python scripts/dialect_docs.py`; a test fails when",
        "this file differs from the data. Each dialect's evaluator (`pushdown/dialects/evaluate.py`)",
        "decides from the same data, and `tests/dialects/test_documents.py` checks it on each",
        "reference document's own statements and examples. Import (`pushdown import --dialect`) and",
        "export (`pushdown export --dialect`) follow the *against the model* tables: never wider,",
        "narrower where the dialect and the model differ (see docs/import.md).",
        "",
        f"Statements are read and written for {', '.join(f'`{n}`' for n in SQL_DIALECTS)}; CDAP has a",
        "table of operations, evaluated over the model's objects (`pushdown export --dialect cdap`,",
        "`pushdown explain --dialect cdap USER OPERATION ENTITY`).",
        "",
    ]
    body = [line for d in DIALECTS.values() for line in section(d)]
    return "\n".join(head + body).rstrip() + "\n"


def hive_table() -> str:
    d = DIALECTS["databricks-hms"]
    lines = [BEGIN.format(name=d.name), *mappings(d), "", *semantics(d), END.format(name=d.name)]
    return "\n".join(lines)


def replace_hive_table(text: str) -> str:
    begin, end = BEGIN.format(name="databricks-hms"), END.format(name="databricks-hms")
    if begin not in text:
        return text
    head, _, rest = text.partition(begin)
    _, _, tail = rest.partition(end)
    return head + hive_table() + tail
