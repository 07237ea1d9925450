"""docs/dialects.md and docs/hive.md's legacy table are generated from the dialects' data."""

from __future__ import annotations

from pathlib import Path

from pushdown.dialects.tables import BEGIN, document, hive_table

ROOT = Path(__file__).resolve().parents[2]


def test_docs_dialects_md_is_generated_from_the_data() -> None:
    assert (ROOT / "docs" / "dialects.md").read_text() == document(), "run: python scripts/dialect_docs.py"


def test_docs_hive_md_carries_the_generated_legacy_table() -> None:
    text = (ROOT / "docs" / "hive.md").read_text()
    assert BEGIN.format(name="databricks-hms") in text
    assert hive_table() in text, "run: python scripts/dialect_docs.py"
    assert "an owner's rights | `ALL` on each table" not in text  # the old prose table is gone


def test_docs_import_md_documents_both_commands() -> None:
    text = (ROOT / "docs" / "import.md").read_text()
    for words in (
        "pushdown import --dialect",
        "pushdown export --dialect",
        "never wider",
        "explain --dialect cdap",
    ):
        assert words in text
