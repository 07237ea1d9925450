"""The service, the middle of the app wing: the library API (:class:`AccessControl` and its
acting views) and what every front-end shares (the store file, specs, saved plans, the
journal's history, the status records, log formats, the launchers one front-end starts
another through). It imports the settings (:mod:`pushdown.app.settings`) and the core,
never a front-end."""

from __future__ import annotations

from pushdown.app.service.base import LEASE_TTL, ChangeResult, MetalakeInfo, ObjectLike
from pushdown.app.service.changes import _with_members
from pushdown.app.service.library import AccessControl

__all__ = ["LEASE_TTL", "AccessControl", "ChangeResult", "MetalakeInfo", "ObjectLike", "_with_members"]
