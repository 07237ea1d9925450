"""Reading a spec file: UTF-8 bytes to a bounded YAML node tree, or one clear error.

A spec may not use YAML aliases (a few hundred bytes could otherwise expand to millions
of objects) and may not nest deeper than :data:`MAX_DEPTH`; text that is not UTF-8
(UTF-16, binary) is refused with a message naming the file. Every failure is a
:class:`SpecError`, never a parser traceback.
"""

from __future__ import annotations

import yaml

from pushdown.errors import SpecError

Node = yaml.Node
#: How deeply a spec may nest; the format itself needs 6 levels.
MAX_DEPTH = 32


class _Refused(yaml.composer.ComposerError):
    """Valid YAML that a spec may not use (aliases, deep nesting)."""


class _SpecYAML(yaml.SafeLoader):
    """The safe loader's composer, without aliases and with a bounded depth."""

    depth = 0

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
            raise _Refused(
                None, None, "aliases (*name) are not allowed in a spec; write the value out", mark
            )
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                raise _Refused(None, None, f"nested more than {MAX_DEPTH} levels deep", mark)
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def compose(text: str, path: str) -> Node | None:
    try:
        loader = _SpecYAML(text)
        try:
            return loader.get_single_node()
        finally:
            loader.dispose()
    except yaml.reader.ReaderError as exc:
        line, column = text.count("\n", 0, exc.position) + 1, exc.position - text.rfind("\n", 0, exc.position)
        problem = f"character U+{exc.character:04X} is not allowed in YAML" if isinstance(
            exc.character, int
        ) else "a character YAML does not allow"
        raise SpecError([f"{path}:{line}:{column}: not valid YAML: {problem}"]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else path
        what = "" if isinstance(exc, _Refused) else "not valid YAML: "
        raise SpecError([f"{where}: {what}{getattr(exc, 'problem', None) or exc}"]) from None
    except RecursionError:
        raise SpecError([f"{path}: nested too deeply to be a spec"]) from None


def decode(data: bytes, path: str) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise SpecError([f"{path}: the spec is UTF-16 (or UTF-32) text; save it as UTF-8"])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problem = f"{path}: the spec is not UTF-8 text (byte {exc.start} is not); save it as UTF-8"
        raise SpecError([problem]) from None
