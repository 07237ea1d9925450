"""Names' characters (``pushdown.model.text``): ``has_control`` refuses exactly the
characters of the refused Unicode categories, on its ASCII shortcut as on the general path."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from pushdown.model.text import REFUSED_CATEGORIES, has_control


def by_category(text: str) -> bool:
    return any(unicodedata.category(ch) in REFUSED_CATEGORIES for ch in text)


def test_every_ascii_character_alone_and_among_others() -> None:
    for code in range(128):
        ch = chr(code)
        for text in (ch, f"ab{ch}cd", f"{ch}x", f"x{ch}"):
            assert has_control(text) == by_category(text), repr(text)
    assert not has_control("")


@settings(max_examples=500, deadline=None, database=None)
@given(st.text(st.one_of(st.characters(max_codepoint=127), st.characters()), max_size=12))
def test_any_text_as_its_characters_categories_say(text: str) -> None:
    assert has_control(text) == by_category(text)
