"""Binding model objects to enforcement is administration, not registration.

What a registered object stands for on a backend — which catalog a backend enforces,
which storage location a fileset is, which Kafka topic a topic is — decides what others
may do there. So it is set by configuration, never by a property a caller registers:

- A backend whose configuration names catalogs (``[backends.X] catalogs = [...]``)
  enforces exactly those (:meth:`Backend.enforces`); a catalog's ``backend`` property is
  then ignored. A catalog's ``backend`` property is administration: only the
  administrator's entry points (the CLI, a spec, the plain library, a followed source)
  may set it, and never to bind a catalog that the backend's configuration leaves out.
  A checked caller (REST, the library acting as a user) who registers a catalog naming a
  backend is refused; a catalog whose name a configuration names is registered (or
  renamed to) only by the metalake's owner or a service admin (they hold the metalake;
  the catalog's owner holds what the backend enforces), anyone else is refused.
- A fileset's location must lie inside the roots the configuration gives its catalog
  (``[backends.X] locations = { catalog = ["/lake/c"] }``; ``"*"`` for every catalog
  the backend enforces). Any other checked caller needs roots configured, and its
  location must overlap no other fileset's location (either enclosing the other, ignoring
  case); the metalake's owner and the service admins, like the administrator's entry
  points, may nest locations, and choose them freely where no roots are configured. A
  backend pushes a location outside its catalog's configured roots for nobody
  (:func:`location_of`).
- Any other checked caller's topic must not be one Kafka topic with another (names equal
  but for case, in the same catalog or, when both catalogs are enforced, in another): a
  shared topic gets only what both decide, a revoke of everyone else's.

- A checked caller never registers (or renames an object to) what a backend enforcing
  its catalog says its server holds already (:meth:`Backend.on_server`: a database or
  table nobody registered): the creator would own it, and the backend would give him an
  owner's rights on data that existed before. Like Gravitino's
  ``SchemaAlreadyExistsException``, the registration is refused (:func:`claimed`), unless
  the model gives the caller an owner's rights on it already (he may drop it: he owns its
  catalog, its schema or the metalake; or he is a service admin), so registering gives
  him nothing new. An administrator's entry point (a spec's owner, the CLI) declares any
  such object and its owner. A server that does not answer refuses the registration, and
  so does a catalog whose enforcing backends all cannot tell (Ranger alone: its resources
  are names): a checked caller's schema or table there is refused (:class:`BindingRefused`)
  unless the data's own backend is configured for the catalog too; a topic is refused
  where any backend enforcing its catalog cannot tell (:func:`_untold`).

:func:`check` and :func:`claimed` run on the events of every change, after the caller was
authorized, in the one place every entry point passes (``AccessControl.change``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from pushdown.decide.evaluator import Evaluator
from pushdown.decide.requirements import OPERATIONS
from pushdown.errors import BindingRefused, ExistsOnServer
from pushdown.model import events as ev
from pushdown.model.locations import (
    Location,
    folded,
    inside,
    is_location_key,
    locations_of,
    overlaps,
    parse,
    values_of,
)
from pushdown.model.securables import METALAKE, ObjectRef, SecurableType
from pushdown.model.state import Model

ANY_CATALOG = "*"
#: the catalog property that binds a catalog to a backend (the administrator's)
BACKEND_PROPERTY = "backend"
_WHY = "binding an object to enforcement is administration (the configuration), not registration"


@dataclass(frozen=True)
class Bindings:
    """What the configuration binds: per backend its catalogs, per catalog its roots."""

    catalogs: Mapping[str, frozenset[str]] = field(default_factory=dict)
    roots: Mapping[str, tuple[Location, ...]] = field(default_factory=dict)

    @classmethod
    def of(cls, contexts: Iterable[tuple[str, frozenset[str], Mapping[str, tuple[str, ...]]]]) -> Bindings:
        catalogs: dict[str, frozenset[str]] = {}
        roots: dict[str, list[Location]] = {}
        for name, cats, locations in contexts:
            catalogs[name] = frozenset(cats)
            for catalog, texts in locations.items():
                roots.setdefault(catalog, []).extend(r for r in map(parse, texts) if r is not None)
        return cls(catalogs, {c: tuple(r) for c, r in roots.items()})

    def configured(self, catalog: str) -> list[str]:
        """The backends whose configuration names ``catalog`` (compared case-folded)."""
        folded = catalog.casefold()
        return sorted(b for b, cats in self.catalogs.items() if any(c.casefold() == folded for c in cats))

    def enforcers(self, model: Model, catalog: str) -> frozenset[str]:
        """The backends enforcing ``catalog`` (:meth:`Backend.enforces`): those whose
        configuration names it, and the one its ``backend`` property names when that one's
        configuration names no catalog."""
        named = (model.objects.get(ObjectRef(SecurableType.CATALOG, (catalog,))) or {}).get(BACKEND_PROPERTY)
        return frozenset(
            b for b, cats in self.catalogs.items() if catalog in cats or (not cats and b == named)
        )

    def roots_of(self, catalog: str) -> tuple[Location, ...] | None:
        """The roots configured for ``catalog`` (None: none configured)."""
        if catalog not in self.roots and ANY_CATALOG not in self.roots:
            return None
        return self.roots.get(catalog, ()) + self.roots.get(ANY_CATALOG, ())


def roots_in(locations: Mapping[str, tuple[str, ...]], catalog: str) -> tuple[Location, ...] | None:
    """The roots one backend's configuration gives ``catalog`` (None: none configured)."""
    return Bindings.of([("", frozenset(), locations)]).roots_of(catalog)


def location_of(model: Model, obj: ObjectRef, locations: Mapping[str, tuple[str, ...]]) -> str:
    """A fileset's ``location`` as a backend may push it: ``""`` (nothing pushed) when the
    configuration gives its catalog roots and the location is not inside one of them
    (a registration that reached the model another way: an old store, a source)."""
    text = (model.objects.get(obj) or {}).get("location", "")
    roots = roots_in(locations, obj.names[0])
    if roots is None or not text:
        return text
    loc = parse(text)
    return text if loc is not None and any(inside(loc, r) for r in roots) else ""


def check(
    model: Model, events: list[ev.Event], bindings: Bindings, *, administrator: bool, user: str | None = None
) -> None:
    """Refuse (:class:`BindingRefused`) a change whose events bind objects to enforcement
    in a way only configuration may; ``administrator``: an administrator's entry point;
    ``user``: the checked caller otherwise."""
    holder = administrator or (user is not None and _holds_metalake(model, user))
    seen: dict[ObjectRef, list[Location]] = {}
    for event in events:
        if isinstance(event, ev.ObjectCreated):
            props = dict(event.properties)
            obj = event.object
            if not administrator:
                _unbound(obj, props)
            if obj.type is SecurableType.CATALOG:
                _catalog(obj.names[0], props, bindings, administrator, holder)
            elif obj.type is SecurableType.FILESET:
                seen[obj] = _fileset(model, obj, props, bindings, holder, seen)
            elif obj.type is SecurableType.TOPIC and not holder:
                _topic(model, obj, obj, bindings)
        elif isinstance(event, ev.ObjectRenamed) and not administrator:
            new = event.new_object
            if new.type is SecurableType.CATALOG:
                _catalog(new.names[0], {}, bindings, administrator, holder)
            elif new.type is SecurableType.TOPIC and not holder:
                _topic(model, new, event.object, bindings)


def _unbound(obj: ObjectRef, props: Mapping[str, str]) -> None:
    """A checked caller names no backend, on any object (only a catalog's binds today)."""
    named = [k for k in props if k.strip().casefold() == BACKEND_PROPERTY]
    if named:
        raise BindingRefused(
            f"{obj}: property {named[0]!r} is refused: which backend enforces a catalog is set by "
            f"the configuration ([backends.NAME] catalogs = [...]); {_WHY}"
        )


def _holds_metalake(model: Model, user: str) -> bool:
    return user in model.service_admins or model.owners.get(METALAKE) == user


def _catalog(
    catalog: str, props: Mapping[str, str], bindings: Bindings, administrator: bool, holder: bool
) -> None:
    if not administrator:
        if bindings.configured(catalog) and not holder:
            raise BindingRefused(
                f"catalog {catalog}: the configuration binds this name to a backend; only the "
                f"metalake's owner or a service admin registers it ({_WHY})"
            )
        return
    backend = props.get(BACKEND_PROPERTY)
    cats = bindings.catalogs.get(backend or "", frozenset())
    if backend is not None and cats and catalog not in cats:
        raise BindingRefused(
            f"catalog {catalog}: backend {backend} enforces exactly the catalogs its configuration "
            f"names ({', '.join(sorted(cats))}); add {catalog} there instead of naming the backend"
        )


def _fileset(
    model: Model,
    obj: ObjectRef,
    props: Mapping[str, str],
    bindings: Bindings,
    administrator: bool,
    seen: Mapping[ObjectRef, list[Location]],
) -> list[Location]:
    texts = locations_of(props)
    roots = bindings.roots_of(obj.names[0])
    out: list[Location] = []
    for text in texts:
        loc = parse(text)
        if loc is None:
            if administrator and roots is None:
                continue
            raise BindingRefused(
                f"{obj}: location {text!r} is refused: an absolute path or hdfs:// URI without "
                "'..', query or control characters"
            )
        if roots is None and not administrator:
            raise BindingRefused(
                f"{obj}: location {text!r} is refused: the configuration gives catalog {obj.names[0]} no "
                f"storage locations ([backends.NAME] locations = {{ {obj.names[0]} = [...] }}); {_WHY}"
            )
        if roots is not None and not any(inside(loc, r) for r in roots):
            raise BindingRefused(
                f"{obj}: location {text!r} lies outside the locations the configuration gives catalog "
                f"{obj.names[0]} ({', '.join(str(r) for r in roots) or 'none'})"
            )
        if not administrator and _overlapping(model, obj, loc, seen):
            raise BindingRefused(
                f"{obj}: location {text!r} is refused: it encloses or lies inside another "
                "registered object's location"
            )
        out.append(loc)
    return out


def _overlapping(
    model: Model, obj: ObjectRef, loc: Location, seen: Mapping[ObjectRef, list[Location]]
) -> bool:
    store, mine = loc.store.casefold(), tuple(p.casefold() for p in loc.parts)
    for other, props in model.objects.items():
        if other.type is SecurableType.FILESET and other != obj:
            for key, text in props.items():
                if is_location_key(key):
                    for value in values_of(text):
                        theirs = folded(value)
                        if theirs is not None and theirs[0] == store and _prefix(mine, theirs[1]):
                            return True
    return any(overlaps(loc, t) for other, ts in seen.items() if other != obj for t in ts)


def _prefix(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def _topic(model: Model, obj: ObjectRef, before: ObjectRef, bindings: Bindings) -> None:
    """Refuse a topic that would be one Kafka topic with another: one of the same name but
    for case in the same catalog, or, when a backend enforces this one, in any other
    catalog a backend enforces (their Kafka services may be one). Topics of a catalog no
    backend enforces are nobody's Kafka topic, so a caller learns nothing here about them."""
    folded = obj.names[-1].casefold()
    mine = bindings.enforcers(model, obj.names[0])
    shared: dict[str, bool] = {}

    def one_service(catalog: str) -> bool:
        # two enforced catalogs may share one Kafka service even through two backends (each
        # names its service; they may name the same): only a catalog no backend enforces
        # is surely another topic
        if catalog not in shared:
            shared[catalog] = catalog == obj.names[0] or bool(mine and bindings.enforcers(model, catalog))
        return shared[catalog]

    for other in model.objects:
        alike = other.type is SecurableType.TOPIC and other.names[-1].casefold() == folded
        if alike and other not in (obj, before) and one_service(other.names[0]):
            raise BindingRefused(
                f"{obj}: a topic named {obj.names[-1]!r} but for case is registered already; on Kafka "
                "they would be one topic, which only an administrator may register twice"
            )


#: what a backend's server holds as data: the objects whose registration is refused when no
#: backend enforcing the catalog can tell whether its server holds them already (a Kafka
#: topic too: Ranger's Kafka service cannot tell; a fileset's location is bound by the
#: roots its catalog's configuration gives, above)
_DATA = frozenset({SecurableType.SCHEMA, SecurableType.TABLE, SecurableType.TOPIC})

#: the kinds a backend's ``False`` answers for: the others' ``False`` says only that its
#: server holds no such kind (a topic: no backend here reads Kafka), not that it is absent
_TOLD = frozenset({SecurableType.SCHEMA, SecurableType.TABLE})


def _untold(obj: ObjectRef, answers: Sequence[bool | None]) -> bool:
    """Whether no backend can say ``obj`` is absent: every answer ``None``; for a kind no
    backend reads (a topic), any ``None`` (a backend enforcing it cannot tell)."""
    if obj.type in _TOLD:
        return all(a is None for a in answers)
    return any(a is None for a in answers)


#: one backend asked about server objects: its name, the catalogs it enforces, the question
Server = tuple[str, frozenset[str], Callable[[ObjectRef], "bool | None"]]


def claimed(model: Model, events: list[ev.Event], servers: Iterable[Server], user: str | None) -> None:
    """Refuse (:class:`ExistsOnServer`) checked caller ``user``'s change that registers an
    object, or renames one to a name, that a backend enforcing its catalog holds on its
    server already (registered by nobody: the model's own objects never reach here as
    new), unless the model gives ``user`` an owner's rights on it already."""
    asked = list(servers)
    for event in events:
        if isinstance(event, ev.ObjectCreated):
            obj = event.object
        elif isinstance(event, ev.ObjectRenamed):
            obj = event.new_object
        else:
            continue
        if obj.type.depth < 2 or _owns_already(model, user, obj):
            continue  # catalogs are check's; roles, tags: no server's; the owner gains nothing
        enforcing = [
            (backend, on_server) for backend, catalogs, on_server in asked if obj.names[0] in catalogs
        ]
        answers = []
        for backend, on_server in enforcing:
            answer = on_server(obj)
            if answer:
                raise ExistsOnServer(
                    f"{obj} already exists on the server of backend {backend}, and nobody registered it: "
                    "its creator would become the owner of data that existed before; an administrator "
                    "declares it (a spec or the CLI), with its owner"
                )
            answers.append(answer)
        if obj.type in _DATA and answers and _untold(obj, answers):
            raise BindingRefused(
                f"{obj}: no backend enforcing catalog {obj.names[0]!r} can tell whether its server holds "
                f"this {obj.type.value} already (backends {', '.join(b for b, _ in enforcing)} cannot), "
                "so its creator could become the owner of data that existed "
                "before; an administrator declares it (a spec or the CLI), with its owner, or configures "
                "the data's own backend (the metastore's, the database's) for the catalog too"
            )


def _owns_already(model: Model, user: str | None, obj: ObjectRef) -> bool:
    """The model gives ``user`` an owner's rights on ``obj`` before it is registered: a
    service admin or the metalake's owner, or one who may drop it (an enclosing object's
    owner): registering it gives him nothing he did not hold."""
    if user is None:
        return False
    if _holds_metalake(model, user):
        return True
    drop = f"drop_{obj.type.value}"
    return drop in OPERATIONS and Evaluator(model).authorize(user, drop, obj, explain=False).allowed
