"""Audit and history: the metalake (create, alter, drop, as Gravitino's API has them) and who
created and last changed each entity."""

from __future__ import annotations

import dataclasses
import json

from pushdown.app.service.base import ChangeResult, MetalakeInfo
from pushdown.app.service.changing import _check, _converge_events
from pushdown.app.service.syncing import Syncing
from pushdown.errors import AlreadyExists, Forbidden, ModelError, NotEmpty, UnknownObject
from pushdown.journal.store import now_iso
from pushdown.model.actor import Audit
from pushdown.model.events import Event, OwnerSet, UserAdded
from pushdown.model.securables import METALAKE
from pushdown.model.state import Model
from pushdown.model.text import check_name


class Metalakes(Syncing):
    """The one metalake a store serves, and the audit of every entity."""

    def metalake(self) -> MetalakeInfo:
        """The metalake this store serves."""
        meta = self.store.get_metas(("metalake", "metalake_comment", "metalake_properties"))
        name = meta.get("metalake")
        props = json.loads(meta.get("metalake_properties") or "{}")
        return MetalakeInfo(
            name or self.model.metalake, meta.get("metalake_comment"), props, name is not None
        )

    def metalake_name(self) -> str | None:
        """The served metalake's name, None until one was created: as a :meth:`reader`
        view read it, else read now (one query)."""
        return self.store.version()[1] if self._seen is None else self._seen[1]

    def create_metalake(
        self, name: str, comment: str | None = None, properties: dict[str, str] | None = None
    ) -> ChangeResult:
        """Create the metalake (service admins only, ``[access] service_admins``): its
        creator is added as a user and becomes its owner. pushdown serves one metalake: a
        store that already has one refuses another."""
        check_name("metalake", name)
        self._refuse_if_followed()
        actor = self.actor
        admins = set(self.access.service_admins) | self.model.service_admins  # config, or a spec's
        if actor is not None and not actor.trusted and actor.user not in admins:
            raise Forbidden(
                actor.user,
                "create_metalake",
                f"metalake {name}",
                "only a service admin ([access] service_admins) may create a metalake",
            )
        current = self.store.get_meta("metalake")
        if current == name:
            raise AlreadyExists(f"metalake {name!r} already exists")
        if current is not None or _holds_anything(self.model):
            raise ModelError(
                f"cannot create metalake {name!r}: this store serves metalake "
                f"{current or self.model.metalake!r} (pushdown serves one metalake per store)"
            )
        creator = None if actor is None or actor.trusted else actor.user

        def build(model: Model) -> list[Event]:
            if creator is None:
                return []
            out: list[Event] = [] if creator in model.users else [UserAdded(creator)]
            return [*out, OwnerSet(METALAKE, creator, None)]

        # checked above (a service admin need not be a user of any metalake yet)
        writer = self if actor is None else self._as(dataclasses.replace(actor, trusted=True))
        result = writer.change(build, metalake=name)
        with self.store.write_lock():
            self.store.set_meta("metalake", name)
            if comment is not None:
                self.store.set_meta("metalake_comment", comment)
            self.store.set_meta("metalake_properties", json.dumps(dict(properties or {}), sort_keys=True))
            self.store.touch_audit("metalake", "", creator, now_iso())
        return result

    def alter_metalake(
        self,
        name: str,
        comment: str | None = None,
        properties: dict[str, str] | None = None,
        new_name: str | None = None,
    ) -> MetalakeInfo:
        """Rename the metalake, set its comment and properties (its owner, as Gravitino's
        ``METALAKE::OWNER``; checked before anything is written). None of them is part of
        what a backend enforces: nothing is pushed."""
        self._refuse_if_followed()
        info = self.metalake()
        if not info.exists or info.name != name:
            raise UnknownObject(f"metalake {name!r} does not exist")
        if new_name is not None:
            check_name("metalake", new_name)
        actor = self.actor
        if actor is not None and not actor.trusted:
            _check(self.model, actor, "alter_metalake", METALAKE)
        if new_name is not None and new_name != name:
            writer = self if actor is None else self._as(dataclasses.replace(actor, trusted=True))
            writer.change(lambda model: [], metalake=new_name)  # checked above
        with self.store.write_lock():
            if comment is None:
                self.store.db.execute("DELETE FROM meta WHERE key = 'metalake_comment'")
            else:
                self.store.set_meta("metalake_comment", comment)
            self.store.set_meta("metalake_properties", json.dumps(dict(properties or {}), sort_keys=True))
            self.store.touch_audit("metalake", "", None if actor is None else actor.user, now_iso())
        return self.metalake()

    def drop_metalake(self, name: str, force: bool = False) -> ChangeResult:
        """Drop the metalake and everything in it (its owner, or the administrator): the
        model becomes empty and every backend revokes what pushdown granted. Without
        ``force`` a metalake that holds anything besides its owner is refused."""
        self._refuse_if_followed()
        info = self.metalake()
        if not info.exists or info.name != name:
            raise UnknownObject(f"metalake {name!r} does not exist")
        model = self.model
        if not force and _holds_anything(model, besides=model.owners.get(METALAKE)):
            raise NotEmpty(f"metalake {name!r} is not empty; drop it with force to remove everything in it")
        result = self.change(
            lambda m: _converge_events(m, Model(metalake=name)), operation="drop_metalake", target=METALAKE
        )
        with self.store.write_lock():
            for key in ("metalake", "metalake_comment", "metalake_properties"):
                self.store.db.execute("DELETE FROM meta WHERE key = ?", (key,))
            self.store.db.execute("DELETE FROM audit WHERE kind = 'metalake'")
        self._refresh()
        return result

    # -- audit ---------------------------------------------------------------------------

    def audit(self, kind: str, name: str) -> Audit | None:
        """Who created an entity and when, who changed it last and when (None: unknown).
        ``kind``: metalake, user, group, role or object (``name``: ``str(ObjectRef)``)."""
        return self.store.audit(kind, "" if kind == "metalake" else name).get(
            "" if kind == "metalake" else name
        )

    def audits(self, kind: str) -> dict[str, Audit]:
        """The audit of every entity of a kind, by name."""
        return self.store.audit(kind)


def _holds_anything(model: Model, besides: str | None = None) -> bool:
    """Whether the model holds anything (users other than ``besides``, groups, roles, objects)."""
    return bool(model.users - {besides} or model.groups or model.roles or model.objects)
