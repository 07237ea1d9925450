"""Fuzzing the spec and config loaders (hypothesis): every input loads or fails cleanly.

Clean failure means :class:`SpecError` / :class:`ConfigError` (on the command line: exit
1 and a message naming the file), never another exception, and the store byte for byte
unchanged.
"""

from __future__ import annotations

import os
import string
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pushdown.app.cli import main
from pushdown.app.service import AccessControl
from pushdown.app.service.spec import load_spec, load_spec_text
from pushdown.app.settings import from_mapping, load_config
from pushdown.errors import ConfigError, PushdownError, SpecError
from pushdown.journal.store import Store

SPEC_WORDS = [
    "metalake", "service_admins", "users", "groups", "catalogs", "roles", "owners", "backend",
    "owner", "schemas", "tables", "topics", "filesets", "models", "grants", "on", "allow", "deny",
    "to", "demo", "alice", "bob", "g", "c", "s", "t", "r", "user alice", "group g", "catalog c",
    "schema c.s", "table c.s.t", "metalake", "USE_CATALOG", "SELECT_TABLE", "USE_SCHEMA",
    "x`y", "a.b", "", "~", "\x00", "\n", "é", "\u202e",
]  # fmt: skip
CONFIG_WORDS = [
    "store", "backends", "kind", "recording", "mysql", "host", "port", "user", "password", "env",
    "file", "catalogs", "connect_timeout", "state", "x", "pushdown.db", ":memory:", "",
]  # fmt: skip

scalars = st.one_of(
    st.sampled_from(SPEC_WORDS),
    st.text(max_size=8),
    st.integers(-3, 70000),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=True),
)
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(SPEC_WORDS) | st.text(max_size=5), inner, max_size=4),
    ),
    max_leaves=25,
)


def _spec_texts() -> st.SearchStrategy[str]:
    dumped = documents.map(lambda d: yaml.safe_dump(d, allow_unicode=True))
    snippets = st.lists(
        st.sampled_from(
            [
                "users: [",
                "]",
                "{",
                "}",
                "- ",
                ": ",
                "&a ",
                "*a",
                "\n  ",
                "\n",
                "? ",
                "!!str ",
                "'",
                '"',
                "#",
                "---",
            ]
        )
        | st.sampled_from(SPEC_WORDS),
        max_size=30,
    ).map("".join)
    return st.one_of(dumped, snippets, st.text(max_size=60))


#: PD_FUZZ_EXAMPLES=5000 for a long run; the default keeps the suite fast.
EXAMPLES = int(os.environ.get("PD_FUZZ_EXAMPLES", "150"))
FUZZ = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@FUZZ
@given(text=_spec_texts())
def test_the_spec_loader_loads_or_raises_spec_error(text: str) -> None:
    try:
        model = load_spec_text(text, "f.yaml", allow_empty=True)
    except SpecError as exc:
        assert exc.problems and all(p.startswith("f.yaml") for p in exc.problems)
        return
    AccessControl(Store(), push=False).load_model(model)  # what loads can be recorded


@FUZZ
@given(data=st.binary(max_size=80) | _spec_texts().map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_the_spec_loader_takes_any_bytes(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "f.yaml"
    path.write_bytes(data)
    try:
        load_spec(path)
    except SpecError as exc:
        assert all(p.startswith(str(path)) for p in exc.problems)


toml_values = st.recursive(
    st.one_of(
        st.sampled_from(CONFIG_WORDS),
        st.text(max_size=6),
        st.integers(-5, 70000),
        st.floats(),
        st.booleans(),
    ),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(CONFIG_WORDS), inner, max_size=4)
    ),
    max_leaves=15,
)


@FUZZ
@given(raw=st.dictionaries(st.sampled_from(CONFIG_WORDS), toml_values, max_size=4))
def test_the_config_checks_any_mapping(tmp_path: Path, raw: dict[str, Any]) -> None:
    try:
        from_mapping(raw, tmp_path, "pushdown.toml")
    except ConfigError as exc:
        assert str(exc).startswith("pushdown.toml: ")


def _toml_lines() -> st.SearchStrategy[str]:
    value = st.sampled_from(['"x"', "1", "99999", "3.5", "true", '{ env = "X" }', "[1, 2]", '""', '"abc"'])
    key = st.sampled_from(CONFIG_WORDS[:13]).filter(bool)
    line = st.one_of(
        st.builds(lambda k, v: f"{k} = {v}", key, value),
        st.sampled_from(
            ["[backends.a]", "[backends.b]", '[backends."x y"]', "[store]", 'kind = "recording"']
        ),
        st.text(alphabet=string.printable, max_size=12),
    )
    return st.lists(line, max_size=8).map("\n".join)


@FUZZ
@given(text=_toml_lines(), junk=st.binary(max_size=8))
def test_the_config_loader_loads_or_raises_config_error(tmp_path: Path, text: str, junk: bytes) -> None:
    path = tmp_path / "pushdown.toml"
    for data in (text.encode(), junk + text.encode()):
        path.write_bytes(data)
        try:
            load_config(path)
        except ConfigError as exc:
            assert str(exc).startswith(str(path))


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli")
    (path / "pushdown.toml").write_text('store = "p.db"\n[backends.demo]\nkind = "recording"\n')
    (path / "ok.yaml").write_text("users: [a]\ncatalogs:\n  c: {backend: demo}\n")
    return path


@settings(max_examples=max(EXAMPLES // 4, 10), deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.binary(max_size=60) | _spec_texts().map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_the_cli_exits_1_naming_the_file_and_leaves_the_store_alone(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, data: bytes
) -> None:
    monkeypatch.chdir(workdir)
    if not (workdir / "p.db").exists():
        assert CliRunner().invoke(main, ["init"]).exit_code == 0
        assert CliRunner().invoke(main, ["apply", "--spec", "ok.yaml"]).exit_code == 0
    (workdir / "fuzz.yaml").write_bytes(data)
    for command in ("plan", "apply"):
        before = (workdir / "p.db").read_bytes()
        result = CliRunner().invoke(main, [command, "--spec", "fuzz.yaml"])
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
        assert result.exit_code in (0, 1, 2)
        if result.exit_code == 1:
            assert result.stderr.startswith("error: fuzz.yaml"), result.stderr
            assert "Traceback" not in result.output
            assert (workdir / "p.db").read_bytes() == before
        if command == "apply" and result.exit_code == 0:  # put the model back for the next example
            assert CliRunner().invoke(main, ["apply", "--spec", "ok.yaml"]).exit_code == 0


def test_errors_are_pushdown_errors() -> None:
    assert issubclass(SpecError, PushdownError) and issubclass(ConfigError, PushdownError)


def _cli_configs() -> st.SearchStrategy[str]:
    value = st.sampled_from(
        ['"recording"', '"nope"', "1", "99999", "true", '"p.db"', '"sub"', '{ env = "X" }']
    )
    key = st.sampled_from(["store", "kind", "port", "host", "connect_timeout", "password", "catalogs"])
    line = st.one_of(
        st.builds(lambda k, v: f"{k} = {v}", key, value),
        st.sampled_from(["[backends.a]", "[backends]", "[x]", "\x00", "= 1"]),
    )
    return st.lists(line, max_size=6).map("\n".join)


@settings(max_examples=max(EXAMPLES // 6, 10), deadline=None, suppress_health_check=list(HealthCheck))
@given(text=_cli_configs())
def test_the_cli_reports_a_bad_config_naming_it(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    where = tmp_path_factory.mktemp("cfg")
    (where / "sub").mkdir()
    (where / "pushdown.toml").write_text(text)
    (where / "ok.yaml").write_text("users: [a]\n")
    before = sorted(p.name for p in where.iterdir())
    result = CliRunner().invoke(
        main, ["--config", str(where / "pushdown.toml"), "plan", "--spec", str(where / "ok.yaml")]
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code in (0, 1, 2)
    if result.exit_code == 1:
        assert result.stderr.startswith("error: ") and "Traceback" not in result.output
    assert sorted(p.name for p in where.iterdir()) == before  # a plan creates nothing
