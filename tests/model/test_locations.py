"""Locations as one comparable value: every form of one path is one location, and what
cannot be compared safely is refused."""

from __future__ import annotations

import pytest

from pushdown.model.locations import Location, inside, locations_of, overlaps, parse

SAME = [
    "/lake/a",
    "/lake/a/",
    "//lake//a",
    "/lake/./a",
    "hdfs://nn:8020/lake/a",
    "hdfs:/lake/a",
    "hdfs:///lake/a/",
]


@pytest.mark.parametrize("text", SAME)
def test_every_form_of_one_hdfs_path_is_one_location(text: str) -> None:
    assert parse(text) == Location("hdfs", ("lake", "a"))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "relative/a",
        "/lake/../a",
        "/lake/%2e%2e/a",
        "/lake/a%2Fb",
        "/lake/a?x=1",
        "/lake/\u2028a",
        "/lake/\x00",
    ],
)
def test_what_cannot_be_compared_safely_is_refused(text: str) -> None:
    assert parse(text) is None


def test_other_stores_are_their_own_and_case_folds_only_for_overlap() -> None:
    web, view = parse("webhdfs://NN/lake/a"), parse("viewfs://c/lake/a")
    assert web is not None and view is not None and web.store == "webhdfs://nn" and web != view
    root, upper = parse("/lake"), parse("/LAKE/a")
    assert root is not None and upper is not None and web is not None
    assert not inside(upper, root) and overlaps(upper, root) and not overlaps(web, root)
    assert inside(parse("/lake/a/b") or root, root) and not inside(parse("/lakehouse") or root, root)


def test_location_values_come_from_every_location_key() -> None:
    props = {
        "Location": "/a",
        "storageLocations": '["/b", "/c"]',
        "pushdown.rest.path": "/d",
        "comment": "/e",
    }
    assert sorted(locations_of(props)) == ["/a", "/b", "/c", "/d"]
