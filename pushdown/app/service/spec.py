"""Grants as code: load a YAML spec into a model, with one message per problem.

Every problem names the file, the line and column, and the offending value; a spec
with any problem yields no model at all. The format is documented in
``docs/spec.md``; ``examples/demo.yaml`` is a complete example.

A spec that describes an empty model is an error unless asked for (``allow_empty``):
applying it would remove everything pushdown manages. What the YAML itself may hold
(UTF-8, no aliases, bounded nesting) is checked by :mod:`pushdown.app.service.spec_yaml`.

Longer than ~250 lines: one loader walks the spec's one grammar, every section beside its
messages; split, each part would need the others' node positions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from pushdown.app.service.spec_yaml import compose, decode
from pushdown.errors import ModelError, SpecError
from pushdown.model import changes as ch
from pushdown.model.events import Event
from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.model.text import check_name

Node = yaml.Node
TOP_KEYS = {"metalake", "service_admins", "users", "groups", "catalogs", "roles", "owners"}
LEAF_KEYS = {"tables": "table", "topics": "topic", "filesets": "fileset", "models": "model"}


@dataclass
class _Loader:
    path: str
    model: Model = field(default_factory=Model)
    problems: list[str] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)

    def problem(self, node: Node, message: str) -> None:
        mark = node.start_mark
        self.problems.append(f"{self.path}:{mark.line + 1}:{mark.column + 1}: {message}")

    def do(self, node: Node, change: Callable[..., list[Event]], *args: Any) -> bool:
        try:
            events = change(self.model, *args)
        except ModelError as exc:
            self.problem(node, str(exc))
            return False
        for event in events:
            self.model.apply(event)
        self.events += events
        return True

    # -- node helpers ----------------------------------------------------------------

    def mapping(self, node: Node, what: str) -> list[tuple[Node, Node]]:
        if isinstance(node, yaml.ScalarNode) and node.value in ("", "~", "null"):
            return []
        if not isinstance(node, yaml.MappingNode):
            self.problem(node, f"{what} must be a mapping, got {_show(node)}")
            return []
        pairs: list[tuple[Node, Node]] = []
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value != "" and not key.tag.endswith(":null"):
                pairs.append((key, value))
            else:
                self.problem(key, f"a key in {what} must be a plain name, got {_show(key)}")
        return pairs

    def sequence(self, node: Node, what: str) -> list[Node]:
        if isinstance(node, yaml.ScalarNode) and node.value in ("", "~", "null"):
            return []
        if not isinstance(node, yaml.SequenceNode):
            self.problem(node, f"{what} must be a list, got {_show(node)}")
            return []
        return list(node.value)

    def text(self, node: Node, what: str) -> str | None:
        if not isinstance(node, yaml.ScalarNode) or node.value == "":
            self.problem(node, f"{what} must be a non-empty string, got {_show(node)}")
            return None
        return str(node.value)

    def keys(self, pairs: list[tuple[Node, Node]], allowed: set[str], what: str) -> dict[str, Node]:
        out: dict[str, Node] = {}
        for key, value in pairs:
            if key.value not in allowed:
                self.problem(
                    key, f"unknown key {key.value!r} in {what}; allowed: {', '.join(sorted(allowed))}"
                )
            elif key.value in out:
                self.problem(key, f"duplicate key {key.value!r} in {what}")
            else:
                out[key.value] = value
        return out

    def named(self, node: Node, kind: str, name: str) -> bool:
        try:
            check_name(kind, name)
        except ModelError as exc:
            self.problem(node, str(exc))
            return False
        return True

    # -- sections --------------------------------------------------------------------

    def load(self, root: Node) -> None:
        top = self.keys(self.mapping(root, "the spec"), TOP_KEYS, "the spec")
        if "metalake" in top:
            name = self.text(top["metalake"], "metalake")
            if name is not None and self.named(top["metalake"], "metalake", name):
                self.model.metalake = name
        for node in self.sequence(top.get("users", _EMPTY), "users"):
            name = self.text(node, "a user name")
            if name is not None:
                self.do(node, ch.add_user, name)
        self.groups(top.get("groups", _EMPTY))
        admins = [
            (n, self.text(n, "a service admin"))
            for n in self.sequence(top.get("service_admins", _EMPTY), "service_admins")
        ]
        names = [name for _, name in admins if name is not None]
        if names:
            self.do(admins[0][0], ch.set_service_admins, names)
        for key, value in self.mapping(top.get("catalogs", _EMPTY), "catalogs"):
            self.catalog(key, value)
        for key, value in self.mapping(top.get("roles", _EMPTY), "roles"):
            self.role(key, value)
        for key, value in self.mapping(top.get("owners", _EMPTY), "owners"):
            self.owner(key, value)

    def groups(self, node: Node) -> None:
        for key, value in self.mapping(node, "groups"):
            members = [self.text(n, "a member name") for n in self.sequence(value, f"members of {key.value}")]
            self.do(key, ch.add_group, key.value, [m for m in members if m is not None])

    def catalog(self, key: Node, value: Node) -> None:
        spec = self.keys(
            self.mapping(value, f"catalog {key.value}"),
            {"backend", "owner", "schemas"},
            f"catalog {key.value}",
        )
        obj = ObjectRef(SecurableType.CATALOG, (str(key.value),))
        props = {}
        if "backend" in spec:
            backend = self.text(spec["backend"], "backend")
            if backend:
                props["backend"] = backend
        if not self.do(key, ch.create_object, obj, None, props):
            return
        self.owned(spec.get("owner"), obj)
        for skey, svalue in self.mapping(spec.get("schemas", _EMPTY), f"schemas of {obj}"):
            self.schema(obj, skey, svalue)

    def schema(self, catalog: ObjectRef, key: Node, value: Node) -> None:
        obj = ObjectRef(SecurableType.SCHEMA, (*catalog.names, str(key.value)))
        spec = self.keys(self.mapping(value, str(obj)), {"owner", *LEAF_KEYS}, str(obj))
        if not self.do(key, ch.create_object, obj):
            return
        self.owned(spec.get("owner"), obj)
        for section, type_name in LEAF_KEYS.items():
            for leaf, owner in self.leaves(spec.get(section, _EMPTY), f"{section} of {obj}"):
                child = ObjectRef.of(type_name, (*obj.names, str(leaf.value)))
                if self.do(leaf, ch.create_object, child):
                    self.owned(owner, child)

    def leaves(self, node: Node, what: str) -> list[tuple[Node, Node | None]]:
        """A list of names, or a mapping of name -> {owner: user}."""
        if isinstance(node, yaml.SequenceNode):
            return [(n, None) for n in node.value if self.text(n, what) is not None]
        out: list[tuple[Node, Node | None]] = []
        for key, value in self.mapping(node, what):
            spec = self.keys(self.mapping(value, str(key.value)), {"owner"}, str(key.value))
            out.append((key, spec.get("owner")))
        return out

    def owned(self, node: Node | None, obj: ObjectRef) -> None:
        if node is not None:
            owner = self.text(node, f"owner of {obj}")
            if owner is not None:
                self.do(node, ch.set_owner, obj, owner)

    def role(self, key: Node, value: Node) -> None:
        name = str(key.value)
        spec = self.keys(self.mapping(value, f"role {name}"), {"owner", "grants", "to"}, f"role {name}")
        if not self.do(key, ch.create_role, name):
            return
        self.owned(spec.get("owner"), ObjectRef.of("role", (name,)))
        for grant in self.sequence(spec.get("grants", _EMPTY), f"grants of role {name}"):
            self.grant(name, grant)
        for node in self.sequence(spec.get("to", _EMPTY), f"holders of role {name}"):
            text = self.text(node, "a holder ('user NAME' or 'group NAME')")
            if text is None:
                continue
            try:
                principal = Principal.parse(text)
            except ValueError:
                self.problem(node, f"holder {text!r} must read 'user NAME' or 'group NAME'")
                continue
            self.do(node, ch.grant_role, name, principal)

    def grant(self, role: str, node: Node) -> None:
        spec = self.keys(self.mapping(node, "a grant"), {"on", "allow", "deny"}, "a grant")
        if "on" not in spec:
            self.problem(node, "a grant needs 'on: TYPE NAME' (e.g. 'on: schema sales.crm')")
            return
        obj = self.object(spec["on"])
        if obj is None:
            return
        if "allow" not in spec and "deny" not in spec:
            self.problem(node, f"a grant on {obj} needs 'allow:' or 'deny:' with a list of privileges")
        for cond in (Condition.ALLOW, Condition.DENY):
            for pnode in self.sequence(spec.get(cond.value.lower(), _EMPTY), f"{cond.value.lower()} list"):
                privilege = self.text(pnode, "a privilege")
                if privilege is not None:
                    self.do(pnode, ch.grant_privileges, role, obj, [privilege], cond)

    def object(self, node: Node) -> ObjectRef | None:
        text = self.text(node, "an object ('TYPE NAME')")
        if text is None:
            return None
        try:
            return ObjectRef.parse(text)
        except ModelError as exc:
            self.problem(node, f"bad object {text!r}: {exc}")
            return None

    def owner(self, key: Node, value: Node) -> None:
        obj = self.object(key)
        if obj is not None:
            self.owned(value, obj)


_EMPTY = yaml.ScalarNode("tag:yaml.org,2002:null", "")


def _show(node: Node) -> str:
    if isinstance(node, yaml.ScalarNode):
        return repr(node.value)
    return "a list" if isinstance(node, yaml.SequenceNode) else "a mapping"


def _empty(model: Model) -> bool:
    return not (model.users or model.groups or model.roles or model.objects or model.owners)


def load_spec_text(text: str, path: str = "<spec>", *, allow_empty: bool = False) -> Model:
    """Parse a spec; raise :class:`SpecError` listing every problem, else return the model.

    A spec that describes an empty model (no users, groups, roles or catalogs: an empty
    file, only comments, ``~``, ``{}``) is refused unless ``allow_empty``."""
    root = compose(text.removeprefix("\ufeff"), path)
    loader = _Loader(path)
    if root is not None:
        loader.load(root)
    if loader.problems:
        raise SpecError(loader.problems)
    if _empty(loader.model) and not allow_empty:
        raise SpecError(
            [
                f"{path}: the spec is empty (no users, groups, roles or catalogs): applying it "
                "would remove everything pushdown manages; if that is what you want, say so with "
                "--allow-empty-spec (allow_empty=True in the library)"
            ]
        )
    return loader.model


def load_spec(path: str | Path, *, allow_empty: bool = False) -> Model:
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise SpecError([f"{p}: cannot read the spec: {exc.strerror}"]) from None
    return load_spec_text(decode(data, str(p)), str(p), allow_empty=allow_empty)
