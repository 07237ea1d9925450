"""A backend on a stand-in, for the backend's tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pushdown_lab.ranger_standin import Standin

from pushdown.model.principals import Principal
from pushdown.reconcile.backend import BackendContext
from pushdown_ranger.backend import RangerBackend
from tests.builders import Builder

SERVICES = ("hive", "hdfs", "kafka")


def backend_for(
    standin: Standin,
    map_principal: Callable[[Principal], str] | None = None,
    *,
    mapping_stable: bool = False,
    **settings: Any,
) -> RangerBackend:
    """``mapping_stable``: the principal mapping is known to be kept (as when no plugin
    implements the mapping hook); by default it may have changed since the last sync."""
    for service in SERVICES:
        if service not in standin.store.services:
            standin.create_service(service, service)
    user, password = standin.auth
    values = {"url": standin.url, "user": user, "backoff": 0.01, **settings}
    extra: dict[str, Any] = {} if map_principal is None else {"map_principal": map_principal}
    if mapping_stable:
        extra["mapping_stable"] = lambda: True
    context = BackendContext(
        "rg", values, secret=lambda key: password if key == "password" else None, **extra
    )
    return RangerBackend(context)


def sales() -> Builder:
    return (
        Builder()
        .users("alice", "bob", "carol")
        .group("analysts", "alice")
        .catalog("sales", backend="rg")
        .schema("sales.crm")
        .table("sales.crm.orders")
        .table("sales.crm.leads")
        .role("reader", users=["bob"], groups=["analysts"])
        .allow("reader", "catalog sales", "USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE")
    )
