"""The machinery every backend shares: its settings, what a scope reaches on a server
that enforces one catalog, and the snapshot's fingerprint."""

from __future__ import annotations

import pytest

from pushdown.errors import ConfigError
from pushdown.model.securables import METALAKE, ObjectRef
from pushdown.reconcile.backend import BackendContext, fingerprint
from pushdown.reconcile.reach import Reach, one_catalog, reach_of, scope_reach
from pushdown.reconcile.scope import Region, Resolved
from pushdown.reconcile.settings import Settings


def settings(**values: object) -> Settings:
    return Settings.of(BackendContext("b1", values))


@pytest.mark.parametrize("given", ["abc", -1, 70000, True, 3.5, "", " 12x"])
def test_a_bad_port_is_a_clear_configuration_error_whoever_passes_it(given: object) -> None:
    with pytest.raises(ConfigError, match=r"backend b1: setting 'port': .* a whole number from 1 to 65535"):
        settings(port=given).port()


def test_settings_accept_toml_values_and_their_text() -> None:
    s = settings(port="3307", n=5, flag="Yes", off=False, t="2.5", name="x")
    assert s.port() == 3307 and s.whole("n", 0, low=1, high=9) == 5
    assert s.flag("flag") is True and s.flag("off", True) is False and s.flag("missing") is False
    assert s.seconds("t", 1.0) == 2.5 and s.seconds("missing", 1.0) == 1.0
    assert s.text("name") == "x" and s.optional_text("missing") is None
    assert s.choice("missing", "on", ("on", "off")) == "on"


@pytest.mark.parametrize(
    ("key", "value", "call"),
    [
        ("flag", "maybe", lambda s: s.flag("flag")),
        ("t", float("nan"), lambda s: s.seconds("t", 1.0)),
        ("t", 0, lambda s: s.seconds("t", 1.0)),
        ("t", "soon", lambda s: s.seconds("t", 1.0)),
        ("name", "a\nb", lambda s: s.text("name")),
        ("mode", "sideways", lambda s: s.choice("mode", "on", ("on", "off"))),
    ],
)
def test_each_bad_setting_names_the_backend_the_key_and_the_value(key: str, value: object, call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match=rf"backend b1: setting '{key}': "):
        call(settings(**{key: value}))


def test_a_required_setting_that_is_missing_says_so() -> None:
    with pytest.raises(ConfigError, match="setting 'user' is required"):
        settings().text("user")


C, OTHER = "c", "d"
S, T = ObjectRef.parse("schema c.s"), ObjectRef.parse("table c.s.t")


def test_a_scope_reaches_databases_and_tables_of_the_enforced_catalog_only() -> None:
    assert reach_of([T], C).databases == {"s": frozenset({"t"})}
    assert reach_of([T], C, tables=False).databases == {"s": None}
    assert reach_of([S, T], C).databases == {"s": None}
    assert reach_of([ObjectRef.parse("table d.s.t")], C).databases == {}
    assert reach_of(None, C).databases is None


@pytest.mark.parametrize("root", [METALAKE, ObjectRef.parse("catalog c"), ObjectRef.parse("catalog d")])
def test_the_metalake_or_any_catalog_reaches_every_database(root: ObjectRef) -> None:
    """A catalog's event may move which catalog the server enforces: read everything."""
    assert reach_of([root], C) == Reach.everything()


def test_regions_are_united_and_a_reach_answers_for_a_table() -> None:
    other = ObjectRef.parse("table c.s.u")
    scope = Resolved((Region(frozenset({"u"}), frozenset({T})), Region(None, frozenset({other}))))
    reach = scope_reach(scope, C)
    assert reach.databases == {"s": frozenset({"t", "u"})}
    assert reach.covers("s", "t") and reach.covers("s") and not reach.covers("s", "v")
    assert not reach.covers("x")
    assert Reach.everything().covers("x", "y") and Reach.everything().names is None


def test_one_server_enforces_one_catalog() -> None:
    assert one_catalog("b1", "metastore", []) is None
    assert one_catalog("b1", "metastore", ["c"]) == "c"
    with pytest.raises(ConfigError, match="one metastore enforces one catalog, but c, d name it"):
        one_catalog("b1", "metastore", ["d", "c"])


def test_a_fingerprint_depends_on_what_was_read_not_on_its_order() -> None:
    assert fingerprint(["a", "b"], ["f"]) == fingerprint(["b", "a"], ["f"])
    assert fingerprint(["a"]) != fingerprint(["a"], ["f"]) != fingerprint(["b"], ["f"])
