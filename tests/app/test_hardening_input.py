"""Bad input is one clear error naming the file (spec, config) or the name, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from pushdown.app.service.spec import load_spec, load_spec_text
from pushdown.app.settings import load_config
from pushdown.errors import ConfigError, ModelError, SpecError
from pushdown.model.securables import ObjectRef
from pushdown.model.text import escaped, lookalike
from tests.fakes import access_control

EMPTY_SPECS = ["", "\n\n  \n", "# only a comment\n# and another\n", "~\n", "null", "{}", "users: []\n"]


@pytest.mark.parametrize("text", EMPTY_SPECS)
def test_an_empty_spec_is_refused_unless_asked_for(tmp_path: Path, text: str) -> None:
    spec = tmp_path / "empty.yaml"
    spec.write_text(text)
    with pytest.raises(SpecError) as info:
        load_spec(spec)
    [problem] = info.value.problems
    assert problem.startswith(f"{spec}: the spec is empty") and "--allow-empty-spec" in problem
    model = load_spec(spec, allow_empty=True)
    assert not (model.users or model.objects or model.roles)


BAD_SPECS = {
    "alias": (b"users: &u [a, b]\ngroups:\n  g: *u\n", "s.yaml:3:6: aliases (*name) are not allowed"),
    "merge key": (
        b"catalogs:\n  c: &c {backend: demo}\n  d:\n    <<: *c\n",
        "aliases (*name) are not allowed",
    ),
    "deep": (b"users: " + b"[" * 1000 + b"]" * 1000 + b"\n", "nested more than 32 levels deep"),
    "deep block": (b"".join(b"  " * i + b"a:\n" for i in range(1000)), "nested more than 32 levels deep"),
    "list key": (
        b"users: [a]\ncatalogs:\n  [x, y]: {backend: demo}\n",
        "s.yaml:3:3: a key in catalogs must be",
    ),
    "map key": (
        b"users: [a]\nroles:\n  ? {a: 1}\n  : {}\n",
        "s.yaml:3:5: a key in roles must be a plain name",
    ),
    "null key": (b"users: [a]\ngroups:\n  ~: [a]\n", "a key in groups must be a plain name, got '~'"),
    "top key": (b"[a]: 1\n", "a key in the spec must be a plain name"),
    "utf-16": ("users: [a]\n".encode("utf-16"), "s.yaml: the spec is UTF-16 (or UTF-32) text"),
    "latin-1": ("users: [café]\n".encode("latin-1"), "s.yaml: the spec is not UTF-8 text (byte 11 is not)"),
    "binary": (bytes(range(256)), "s.yaml: the spec is not UTF-8 text"),
    "nul": (b"users: [a\x00b]\n", "s.yaml:1:10: not valid YAML: character U+0000 is not allowed in YAML"),
    "two documents": (b"users: [a]\n---\nusers: [b]\n", "not valid YAML"),
    "newline in table": (
        b'users: [a]\ncatalogs:\n  c:\n    schemas:\n      s:\n        tables: ["t\\n+ GRANT ALL"]\n',
        "table name 'c.s.t\\n+ GRANT ALL' contains a control character",
    ),
    "NUL in catalog": (b'catalogs:\n  "c\\0": {}\n', "catalog name 'c\\x00' contains a control character"),
    "tab in metalake": (
        b'metalake: "m\\tx"\nusers: [a]\n',
        "metalake name 'm\\tx' contains a control character",
    ),
    "escape in role": (b'roles:\n  "r\\e[2J": {}\n', "role name 'r\\x1b[2J' contains a control character"),
    "bell in group": (b'groups:\n  "g\\a": []\n', "group name 'g\\x07' contains a control character"),
    "newline in grant": (
        b"users: [a]\ncatalogs: {c: {}}\nroles:\n  r:\n    grants:\n"
        b'      - {on: "table c.s.\\"x\\ny\\"", allow: [SELECT_TABLE]}\n',
        "contains a control character",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_SPECS))
def test_bad_specs_are_one_clear_error_naming_the_file(tmp_path: Path, case: str) -> None:
    data, expected = BAD_SPECS[case]
    spec = tmp_path / "s.yaml"
    spec.write_bytes(data)
    with pytest.raises(SpecError) as info:
        load_spec(spec)
    text = "\n".join(info.value.problems)
    assert all(p.startswith(str(spec)) for p in info.value.problems)
    assert expected.replace("s.yaml", str(spec)) in text, text


def test_a_billion_laughs_spec_is_refused_at_once() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    with pytest.raises(SpecError) as info:
        load_spec_text("\n".join(lines) + "\n", "laughs.yaml")
    assert "laughs.yaml:2:" in info.value.problems[0] and "aliases" in info.value.problems[0]


CONFIGS = {
    'port = "abc"': 'backends.m.port = "abc": a port is a whole number from 1 to 65535',
    "port = 42235.5": "backends.m.port = 42235.5: a port is a whole number",
    "port = true": "backends.m.port = true: a port is a whole number",
    "port = 99999": "backends.m.port = 99999: a port is a whole number",
    "port = 0": "backends.m.port = 0: a port is a whole number",
    'connect_timeout = "soon"': 'backends.m.connect_timeout = "soon": a timeout is a positive number',
    "connect_timeout = -1": "backends.m.connect_timeout = -1: a timeout is a positive number",
    "read_timeout = nan": "backends.m.read_timeout = nan: a timeout is a positive number",
    "host = 5": "backends.m.host = 5: must be a non-empty string",
    "password = { env = 5 }": 'backends.m: password must be { env = "VAR" } or { file = "PATH" }',
    'password = { env = "A", file = "B" }': "backends.m: password must be",
}


@pytest.mark.parametrize("line", sorted(CONFIGS))
def test_bad_backend_settings_name_the_file_the_key_and_the_value(tmp_path: Path, line: str) -> None:
    config = tmp_path / "pushdown.toml"
    config.write_text(f'[backends.m]\nkind = "mysql"\n{line}\n')
    with pytest.raises(ConfigError) as info:
        load_config(config)
    assert str(info.value) == f"{config}: {CONFIGS[line]}" or str(info.value).startswith(
        f"{config}: {CONFIGS[line]}"
    )


@pytest.mark.parametrize(
    ("store", "says"),
    [
        ('"missing/p.db"', "lies in a directory that does not exist"),
        ('"sub"', "is a directory, not a store file"),
        ('"notsqlite.db"', "is not an SQLite database, so not a pushdown store"),
        ("5", "must be the path of the store file"),
        ('""', "must be the path of the store file"),
    ],
)
def test_a_store_that_cannot_be_one_is_refused_when_the_config_is_loaded(
    tmp_path: Path, store: str, says: str
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "notsqlite.db").write_text("hello\n")
    config = tmp_path / "pushdown.toml"
    config.write_text(f"store = {store}\n")
    with pytest.raises(ConfigError) as info:
        load_config(config)
    assert str(info.value).startswith(f"{config}: store = {store}") and says in str(info.value)


def test_a_config_that_is_not_utf8_or_too_deep_is_a_config_error(tmp_path: Path) -> None:
    config = tmp_path / "pushdown.toml"
    config.write_bytes(b"\xff\xfe s")
    with pytest.raises(ConfigError, match="not UTF-8 text"):
        load_config(config)
    config.write_text("a = " + "[" * 2000 + "]" * 2000 + "\n")
    with pytest.raises(ConfigError, match="nested too deeply"):
        load_config(config)


@pytest.mark.parametrize("bad", ["a\x00b", "a\nb", "a\rb", "\x1b[31m", "x\x7f"])
def test_control_characters_are_refused_in_every_name(bad: str) -> None:
    ac = access_control()
    ac.add_user("u")
    ac.create_object("catalog c")
    ac.create_object("schema c.s")
    ac.create_role("r")
    attempts = [
        lambda: ac.add_user(bad),
        lambda: ac.add_group(bad),
        lambda: ac.create_role(bad),
        lambda: ac.create_object(ObjectRef.of("catalog", (bad,))),
        lambda: ac.create_object(ObjectRef.of("schema", ("c", bad))),
        lambda: ac.create_object(ObjectRef.of("table", ("c", "s", bad))),
        lambda: ac.create_object(ObjectRef.of("topic", ("c", "s", bad))),
        lambda: ac.grant_privileges("r", ObjectRef.of("table", ("c", "s", bad)), ["SELECT_TABLE"]),
        lambda: ac.set_owner(ObjectRef.of("table", ("c", "s", bad)), "u"),
        lambda: ac.rename_object("schema c.s", bad),
    ]
    before = ac.store.last_seq()
    for attempt in attempts:
        with pytest.raises(ModelError, match="control character"):
            attempt()
    target = load_spec_text("users: [u]\n", allow_empty=False)
    target.metalake = bad
    with pytest.raises(ModelError, match="metalake name"):
        ac.load_model(target)
    assert ac.store.last_seq() == before


def test_the_new_object_sentinel_cannot_collide_with_a_model_name() -> None:
    ac = access_control()
    ac.create_object("catalog c")
    ac.create_object("schema c.s")
    with pytest.raises(ModelError):
        ac.create_object(ObjectRef.of("table", ("c", "s", "\x00new")))


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("p\u0430ypal", "letters from more than one script (CYRILLIC, LATIN)"),
        ("admin\u202e", "bidirectional control character (U+202E)"),
        ("ad\u2066min", "bidirectional control character (U+2066)"),
        ("ad\u200bmin", "zero-width character (U+200B)"),
        ("\ufeffadmin", "zero-width character (U+FEFF)"),
        ("admin", None),
        ("Ελένη", None),
        ("東京タワー", None),
        ("naïve_café", None),
    ],
)
def test_look_alike_names_are_recognised(name: str, why: str | None) -> None:
    found = lookalike(name)
    assert (found is None) if why is None else (found is not None and why in found)


def test_escaped_keeps_one_line_and_shows_hidden_characters() -> None:
    assert escaped("t\n+ GRANT ALL\r\x00\u202e\u200b") == "t\\n+ GRANT ALL\\r\\x00\\u202e\\u200b"
    assert escaped("plain ünïcode") == "plain ünïcode"


def test_the_library_creates_a_named_store_only_when_asked(tmp_path: Path) -> None:
    from pushdown.app.service import AccessControl

    config = tmp_path / "pushdown.toml"
    config.write_text('store = "named.db"\n')
    with pytest.raises(ConfigError, match=r"named\.db does not exist; .*pushdown init"):
        AccessControl.open(str(config))
    assert not (tmp_path / "named.db").exists()
    AccessControl.open(str(config), create_store=True).close()
    assert (tmp_path / "named.db").exists()
    (tmp_path / "pushdown.toml").write_text("[backends]\n")  # no store =: the default store
    AccessControl.open(str(config)).close()
    assert (tmp_path / "pushdown.db").exists()
