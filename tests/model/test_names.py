"""Dotted names (``pushdown.model.names``) and object references (``pushdown.model.securables``).

Properties: ``parse_name`` inverts ``format_name`` for every non-empty tuple of strings,
``format_name(parse_name(s))`` is canonical, every malformed name raises ``BadName``
naming the input, and ``ObjectRef`` survives ``str``/``ObjectRef.parse`` for every type.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pushdown.errors import ModelError
from pushdown.model.names import BadName, format_name, parse_name, quote_segment
from pushdown.model.securables import DATA_TYPES, FLAT_TYPES, LEAF_TYPES, METALAKE, ObjectRef, SecurableType

FAST = settings(max_examples=200, deadline=None, database=None)

#: characters that matter to the quoting rule, mixed with arbitrary unicode
HOSTILE_CHARS = st.one_of(
    st.sampled_from(list(".`'\" \t\n\u00a0\u3000\u2028\\é漢🙂")),
    st.characters(),
)
segments = st.text(HOSTILE_CHARS, max_size=8)
names = st.lists(segments, min_size=1, max_size=5).map(tuple)
HOSTILE = ("", " ", "a.b", "`", "``", "it`s", " pad ", "'q'", '"dq"', "x y", "é漢🙂", ".", "a`.`b")

T = SecurableType


# -- parse_name / format_name -----------------------------------------------------------


@FAST
@given(names)
def test_parse_inverts_format(t: tuple[str, ...]) -> None:
    assert parse_name(format_name(t)) == t


@FAST
@given(names)
def test_format_is_canonical(t: tuple[str, ...]) -> None:
    text = format_name(t)
    assert format_name(parse_name(text)) == text
    # a segment is quoted exactly when it has to be
    for segment in t:
        bare = segment and "." not in segment and "`" not in segment and segment == segment.strip()
        assert (quote_segment(segment) == segment) == bool(bare)


@FAST
@given(st.text(st.one_of(st.sampled_from(list(".` a")), st.characters()), max_size=12))
def test_any_text_parses_or_raises_badname(text: str) -> None:
    try:
        parsed = parse_name(text)
    except BadName:
        return
    assert isinstance(parsed, tuple) and parsed
    canonical = format_name(parsed)
    assert parse_name(canonical) == parsed
    assert format_name(parse_name(canonical)) == canonical


@pytest.mark.parametrize(
    ("segments", "text"),
    [
        (("sales",), "sales"),
        (("sales", "crm", "orders"), "sales.crm.orders"),
        (("sales", "odd.name", "it`s"), "sales.`odd.name`.`it``s`"),
        (("",), "``"),
        (("", ""), "``.``"),
        ((" x",), "` x`"),
        (("x ",), "`x `"),
        (("a b",), "a b"),
        (("`",), "````"),
        (("'q'", '"d"'), "'q'.\"d\""),
        (("é漢🙂",), "é漢🙂"),
    ],
)
def test_canonical_examples(segments: tuple[str, ...], text: str) -> None:
    assert format_name(segments) == text
    assert parse_name(text) == segments


@pytest.mark.parametrize(
    ("text", "segments"),
    [("`a`.`b`", ("a", "b")), ("`sales`", ("sales",)), ("a.`b`.c", ("a", "b", "c")), ("`a b`", ("a b",))],
)
def test_needless_quotes_parse_to_the_canonical_form(text: str, segments: tuple[str, ...]) -> None:
    assert parse_name(text) == segments
    assert format_name(parse_name(text)) != text


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("`abc", "unterminated backtick"),
        ("a.`bc", "unterminated backtick"),
        ("`a``", "unterminated backtick"),
        ("`", "unterminated backtick"),
        ("a.", "ends with '.'"),
        ("a.b.", "ends with '.'"),
        ("`a`.", "ends with '.'"),
        (".", "empty or space-padded segment"),
        (".a", "empty or space-padded segment"),
        ("a..b", "empty or space-padded segment"),
        (" a", "empty or space-padded segment"),
        ("a .b", "empty or space-padded segment"),
        ("a. b", "empty or space-padded segment"),
        ("`a`b", "expected '.'"),
        ("`a` .b", "expected '.'"),
        ("`a``b`c", "expected '.'"),
        ("a`b`", "expected '.'"),
    ],
)
def test_malformed_names_raise_badname_naming_the_input(text: str, fragment: str) -> None:
    with pytest.raises(BadName) as info:
        parse_name(text)
    message = str(info.value)
    assert fragment in message
    assert repr(text) in message


def test_empty_name_is_rejected() -> None:
    with pytest.raises(BadName, match="empty name"):
        parse_name("")


def test_badname_is_a_model_error() -> None:
    assert issubclass(BadName, ModelError)


# -- ObjectRef --------------------------------------------------------------------------


def _refs_of(kind: SecurableType) -> st.SearchStrategy[ObjectRef]:
    return st.lists(segments, min_size=kind.depth, max_size=kind.depth).map(
        lambda n: ObjectRef(kind, tuple(n))
    )


refs = st.sampled_from(list(SecurableType)).flatmap(_refs_of)


@FAST
@given(refs)
def test_object_ref_str_round_trip(ref: ObjectRef) -> None:
    assert ObjectRef.parse(str(ref)) == ref
    assert ObjectRef.of(ref.type, ref.name) == ref
    assert ObjectRef.of(ref.type.value, ref.names) == ref
    # padding before the type is ignored; after a flat name (a role's) it is part of the name
    assert ObjectRef.parse(f"  {ref}" + ("" if ref.type in FLAT_TYPES else "  ")) == ref


@FAST
@given(st.text(min_size=1))
def test_a_flat_name_is_never_split_or_unquoted(name: str) -> None:
    """A role's name is the key as created: dots, backticks and quotes are part of it."""
    for kind in FLAT_TYPES:
        ref = ObjectRef.of(kind, name)
        assert ref.names == (name,) and ref.name == name
        assert ObjectRef.parse(str(ref)) == ref


@pytest.mark.parametrize("kind", list(SecurableType))
@pytest.mark.parametrize("name", HOSTILE)
def test_object_ref_round_trip_every_type(kind: SecurableType, name: str) -> None:
    ref = ObjectRef(kind, (name,) * kind.depth)
    text = str(ref)
    assert text.startswith(kind.value)
    assert ObjectRef.parse(text) == ref
    assert ObjectRef.parse(text.replace(kind.value, kind.value.upper(), 1)) == ref


def test_metalake_is_written_with_its_type_only() -> None:
    assert str(METALAKE) == "metalake"
    assert ObjectRef.parse("metalake") is METALAKE
    assert ObjectRef.of("metalake") is METALAKE
    assert METALAKE.names == () and METALAKE.name == ""


@pytest.mark.parametrize("kind", [t for t in SecurableType if t is not T.METALAKE])
def test_wrong_number_of_segments_is_rejected(kind: SecurableType) -> None:
    for count in {0, kind.depth - 1, kind.depth + 1} - {kind.depth}:
        bad = ("x",) * count
        with pytest.raises(ModelError, match=f"a {kind.label} name has {kind.depth} dotted part"):
            ObjectRef(kind, bad)
        if count and kind not in FLAT_TYPES:  # a flat name with a dot is one name
            with pytest.raises(ModelError, match=kind.label):
                ObjectRef.parse(f"{kind.value} {format_name(bad)}")
            with pytest.raises(ModelError):
                ObjectRef.of(kind, format_name(bad))


def test_dotted_segment_is_one_part_not_two() -> None:
    # "a.b" quoted is one catalog name; unquoted it is a schema name and no catalog
    assert ObjectRef.parse("catalog `a.b`") == ObjectRef(T.CATALOG, ("a.b",))
    with pytest.raises(ModelError):
        ObjectRef.parse("catalog a.b")
    assert ObjectRef.parse("schema a.b") == ObjectRef(T.SCHEMA, ("a", "b"))


def test_metalake_with_segments_is_rejected() -> None:
    with pytest.raises(ModelError):
        ObjectRef(T.METALAKE, ("x",))


@pytest.mark.parametrize("text", ["tabel a.b.c", "", "catalogue x"])
def test_unknown_type_is_rejected(text: str) -> None:
    with pytest.raises(ModelError, match="unknown securable type"):
        ObjectRef.parse(text)


@pytest.mark.parametrize("text", ["table a.b.`c", "schema a.", "catalog ``x"])
def test_bad_name_in_object_ref_raises_badname(text: str) -> None:
    with pytest.raises(BadName):
        ObjectRef.parse(text)


def test_type_spellings() -> None:
    assert SecurableType.parse("Job-Template") is T.JOB_TEMPLATE
    assert SecurableType.parse("jobtemplate") is T.JOB_TEMPLATE
    assert SecurableType.parse(" TABLE ") is T.TABLE
    assert ObjectRef.parse("job_template my job") == ObjectRef(T.JOB_TEMPLATE, ("my job",))  # flat


# -- parent, path, is_within, renamed -----------------------------------------------------

CAT = ObjectRef(T.CATALOG, ("c",))
SCH = ObjectRef(T.SCHEMA, ("c", "s"))
TAB = ObjectRef(T.TABLE, ("c", "s", "t"))
#: a schema whose one segment looks like the table's last two: must not be confused
DOTTED_SCH = ObjectRef(T.SCHEMA, ("c", "s.t"))


def test_parents_and_paths() -> None:
    assert TAB.parent == SCH and SCH.parent == CAT and CAT.parent is METALAKE and METALAKE.parent is None
    assert TAB.path == (METALAKE, CAT, SCH, TAB)
    assert METALAKE.path == (METALAKE,)
    for kind in LEAF_TYPES:
        leaf = ObjectRef(kind, ("c", "s", "x"))
        assert leaf.parent == SCH
        assert leaf.ancestor(T.CATALOG) == CAT and leaf.catalog == "c"
    for kind in set(SecurableType) - DATA_TYPES - {T.METALAKE}:
        ref = ObjectRef(kind, ("c",))
        assert ref.parent is METALAKE
        assert ref.path == (METALAKE, ref)
        assert ref.catalog is None
        assert ref.ancestor(T.CATALOG) is None


def test_is_within() -> None:
    for node in TAB.path:
        assert TAB.is_within(node)
    assert not SCH.is_within(TAB)
    assert not CAT.is_within(SCH)
    assert not TAB.is_within(ObjectRef(T.SCHEMA, ("c", "s2")))
    assert not TAB.is_within(ObjectRef(T.CATALOG, ("d",)))
    # same segments, different type: not an ancestor
    assert not ObjectRef(T.ROLE, ("c",)).is_within(CAT)
    assert not CAT.is_within(ObjectRef(T.ROLE, ("c",)))
    assert not ObjectRef(T.TOPIC, ("c", "s", "t")).is_within(TAB)
    # structural, not string prefix
    assert not TAB.is_within(DOTTED_SCH)
    assert not ObjectRef(T.TABLE, ("c", "s.t", "x")).is_within(SCH)
    assert ObjectRef(T.TABLE, ("c", "s.t", "x")).is_within(DOTTED_SCH)


def test_renamed() -> None:
    new_cat = ObjectRef(T.CATALOG, ("d",))
    assert TAB.renamed(CAT, new_cat) == ObjectRef(T.TABLE, ("d", "s", "t"))
    assert SCH.renamed(CAT, new_cat) == ObjectRef(T.SCHEMA, ("d", "s"))
    assert CAT.renamed(CAT, new_cat) == new_cat
    new_sch = ObjectRef(T.SCHEMA, ("c", "`odd.`"))
    assert TAB.renamed(SCH, new_sch) == ObjectRef(T.TABLE, ("c", "`odd.`", "t"))
    assert TAB.renamed(TAB, ObjectRef(T.TABLE, ("c", "s", "u"))) == ObjectRef(T.TABLE, ("c", "s", "u"))
    # objects outside the renamed subtree stay
    for other in (METALAKE, ObjectRef(T.ROLE, ("c",)), ObjectRef(T.SCHEMA, ("c2", "s"))):
        assert other.renamed(CAT, new_cat) == other
    assert DOTTED_SCH.renamed(CAT, new_cat) == ObjectRef(T.SCHEMA, ("d", "s.t"))
    assert DOTTED_SCH.renamed(SCH, new_sch) == DOTTED_SCH
    assert ObjectRef(T.TABLE, ("c", "s.t", "x")).renamed(SCH, new_sch) == ObjectRef(
        T.TABLE, ("c", "s.t", "x")
    )
    assert ObjectRef(T.TOPIC, ("c", "s", "t")).renamed(TAB, ObjectRef(T.TABLE, ("c", "s", "u"))) == (
        ObjectRef(T.TOPIC, ("c", "s", "t"))
    )


leaf_refs = st.tuples(st.sampled_from(sorted(LEAF_TYPES)), segments, segments, segments).map(
    lambda a: ObjectRef(a[0], (a[1], a[2], a[3]))
)


@FAST
@given(leaf_refs, segments, st.integers(min_value=1, max_value=3))
def test_renaming_an_ancestor_keeps_type_and_suffix(leaf: ObjectRef, new_last: str, depth: int) -> None:
    old = leaf.path[depth]
    new = ObjectRef(old.type, (*old.names[:-1], new_last))
    moved = leaf.renamed(old, new)
    assert moved.type is leaf.type
    assert moved.names == (*new.names, *leaf.names[depth:])
    assert moved.is_within(new)
    assert ObjectRef.parse(str(moved)) == moved
    # the ancestors above the renamed one are unchanged
    assert moved.path[:depth] == leaf.path[:depth]
