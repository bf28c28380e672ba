"""Read a config file into plain Python data plus the line and column of every value.

PyYAML's composer recurses per nesting level (the C one can crash the interpreter on deep input), so
the tree is built here from libyaml's event stream with an explicit stack, a depth limit and a budget
for alias expansion. Mapping keys stay the text the admin wrote (YAML 1.1 would turn `on:` into True).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml

from cdk_app.config.scalars import ScalarFloat, ScalarInt, yaml12_number
from cdk_app.findings import Finding, Severity
from cdk_app.support.bounded_read import UnreadableInput, read_bounded

MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_DEPTH = 64
# Values an alias may expand to in total; stops "billion laughs" documents.
MAX_EXPANDED_NODES = 1_000_000
MERGE_KEY = "<<"

PathKey = tuple[str | int, ...]

_Loader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True, slots=True)
class Position:
    line: int  # 1-based
    column: int  # 1-based


class SourceMap:
    """Where each field path of a config sits in its file."""

    def __init__(self, file: str, positions: dict[PathKey, tuple[int, int]],
                 texts: dict[PathKey, str] | None = None) -> None:
        self.file = file
        self._positions = positions  # (line, column), 1-based; a Position is made only for what is asked
        self._texts = texts or {}

    def text(self, path: PathKey) -> str | None:
        """The text an unquoted scalar at `path` was written as, if YAML read it as something other than text."""
        return self._texts.get(tuple(path))

    def locate(self, path: PathKey) -> Position:
        """Position of `path`, or of its nearest ancestor that the file has (a missing key)."""
        for end in range(len(path), -1, -1):
            found = self._positions.get(tuple(path[:end]))
            if found is not None:
                return Position(*found)
        return Position(1, 1)


class ConfigReadError(Exception):
    """The file cannot be turned into data at all; carries the finding to report."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(finding.message)
        self.finding = finding


def _fail(code: str, file: str, message: str, hint: str, line: int = 1, column: int = 1) -> ConfigReadError:
    return ConfigReadError(
        Finding(code=code, severity=Severity.ERROR, file=file, line=line, column=column, path="",
                message=message, hint=hint)
    )


def read_text(path: Path, display_name: str) -> str:
    """The file's text (at most MAX_FILE_BYTES, whatever the file is), or a ConfigReadError saying why not."""
    try:
        data = read_bounded(str(path), MAX_FILE_BYTES)
    except UnreadableInput as err:
        raise _fail(err.code, display_name, err.message, err.hint) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise _fail("HPK001", display_name, f"not UTF-8 text (byte {err.start})",
                    "a config file is UTF-8 YAML text", line=line) from None


class _Frame:
    __slots__ = ("value", "path", "key", "anchor", "size", "key_positions", "merges")

    def __init__(self, value: dict | list, path: PathKey, anchor: str | None) -> None:
        self.value = value
        self.path = path
        self.key: str | None = None
        self.anchor = anchor
        self.size = 1
        self.key_positions: dict[str, tuple[int, int]] = {}
        self.merges: list[Any] = []  # values of `<<` keys, merged when the mapping ends


def _pos(mark: Any) -> tuple[int, int]:
    return mark.line + 1, mark.column + 1


def parse_yaml(text: str, file: str) -> tuple[Any, SourceMap]:
    """Data and source map of a single-document YAML text; ConfigReadError on anything else.

    One pass over the events, dispatched on their exact class; a position is taken only where the source
    map or a message needs one (keys, list items), and plain scalars are resolved once per distinct text."""
    positions: dict[PathKey, tuple[int, int]] = {(): (1, 1)}
    texts: dict[PathKey, str] = {}
    anchors: dict[str, tuple[Any, int]] = {}
    resolved: dict[str, str] = {}  # plain scalar text -> its implicit tag
    stack: list[_Frame] = []
    documents = 0
    root: Any = None
    expanded = 0
    loader = _Loader("")  # used only to resolve and construct plain scalars
    try:
        events = _Loader(text)  # PyYAML's pure Python reader checks every character here already
    except yaml.reader.ReaderError as err:
        raise _bad_character(err, text, file) from None
    try:
        while events.check_event():
            event = events.get_event()
            kind = event.__class__
            if kind is _DOCUMENT_START:
                documents += 1
                if documents > 1:
                    line, column = _pos(event.start_mark)
                    raise _fail("HPK002", file, "more than one YAML document (a second '---')",
                                "one config per file", line, column)
                continue
            if kind is _MAPPING_END or kind is _SEQUENCE_END:
                done = stack.pop()
                if done.merges:
                    _merge(done, positions, file)
                if done.anchor:
                    anchors[done.anchor] = (done.value, done.size)
                if stack:
                    stack[-1].size += done.size
                continue
            if kind not in _NODE_EVENTS:
                continue
            parent = stack[-1] if stack else None
            if parent is None:
                path: PathKey = ()
            else:
                container = parent.value
                if container.__class__ is dict:
                    if parent.key is None:
                        # A scalar in key position of a mapping is a key, not a value.
                        here = _pos(event.start_mark)
                        if kind is not _SCALAR:
                            raise _fail("HPK002", file, "a mapping key must be plain text", "write `name: value`",
                                        *here)
                        if event.tag not in _UNTAGGED_KEY:  # a key stays the text written; a tag would be lost
                            raise _tag_refused(event, "a mapping key", file)
                        key = event.value
                        if key in parent.key_positions:
                            first = parent.key_positions[key]
                            raise _fail("HPK004", file, f"duplicate key '{key}' (first at line {first[0]})",
                                        "each key appears once per mapping", *here)
                        parent.key_positions[key] = here
                        parent.key = key
                        positions[parent.path + (key,)] = here
                        continue
                    path = parent.path + (parent.key,)  # type: ignore[operator]
                else:
                    path = parent.path + (len(container),)
                    positions[path] = _pos(event.start_mark)

            if kind is _SCALAR:
                if event.tag is None or event.tag == "!":
                    value = _plain_or_quoted(loader, event, file, resolved)
                else:
                    value = _scalar(loader, event, file, event.tag)
                if not isinstance(value, str):
                    texts[path] = event.value
                if event.anchor:
                    anchors[event.anchor] = (value, 1)
                if parent is None:
                    root = value
                else:
                    _attach(parent, path, value, 1)
                continue
            if kind is _ALIAS:
                if event.anchor not in anchors:
                    raise _fail("HPK002", file, f"alias *{event.anchor} refers to no finished anchor",
                                "define `&name` before using `*name`", *_pos(event.start_mark))
                value, size = anchors[event.anchor]
                expanded += size
                if expanded > MAX_EXPANDED_NODES:
                    raise _fail("HPK005", file, "aliases expand to too many values",
                                f"at most {MAX_EXPANDED_NODES} values after expanding aliases",
                                *_pos(event.start_mark))
                _attach(parent, path, value, size)
                if parent is None:
                    root = value
                continue
            # Start of a mapping or a sequence.
            if event.tag not in _UNTAGGED:
                raise _tag_refused(event, "a mapping" if kind is _MAPPING_START else "a list", file)
            if len(stack) >= MAX_DEPTH:
                raise _fail("HPK005", file, f"nesting deeper than {MAX_DEPTH} levels",
                            "a config nests a few levels at most", *_pos(event.start_mark))
            container = {} if kind is _MAPPING_START else []
            if parent is None:
                root = container
            else:
                _attach(parent, path, container, 0)
            stack.append(_Frame(container, path, event.anchor))
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        lines = text.splitlines()
        if line > len(lines):  # the end of the stream, after the last newline: point at the end of the last line
            line, column = max(len(lines), 1), len(lines[-1]) + 1 if lines else 1
        problem = err.problem or err.context or "invalid YAML"
        raise _fail("HPK002", file, f"not valid YAML: {problem}", "fix the YAML syntax at this place",
                    line, column) from None
    except yaml.reader.ReaderError as err:  # the only YAMLError without a mark: a character YAML text cannot hold
        raise _bad_character(err, text, file) from None
    finally:
        events.dispose()
    return root, SourceMap(file, positions, texts)


def _bad_character(err: yaml.reader.ReaderError, text: str, file: str) -> ConfigReadError:
    """The finding for a character YAML text cannot hold, at its line and column. libyaml's ReaderError counts
    bytes of the UTF-8 text to it, PyYAML's own (pure Python) reader characters."""
    in_bytes = _Loader is not yaml.SafeLoader
    before = text.encode()[: err.position].decode() if in_bytes else text[: err.position]  # a character's start
    code = err.character  # at most #xFFFF: YAML's printable characters hold all above it
    return _fail("HPK002", file, f"not valid YAML: unacceptable character #x{code:04x}: {err.reason}",
                 f"remove it, or write it as the escape \\u{code:04x} inside double quotes",
                 before.count("\n") + 1, len(before) - before.rfind("\n"))


# Tags that mean "no tag": none written, or YAML's non-specific `!` (the node's natural kind). A scalar with any
# other tag is constructed as that tag says (`!!str 5` is text) or refused when no safe constructor knows the tag
# (`!Policy x`, `!!python/object:...`). A mapping or a list is always read as plain data, so every tag on one is
# refused - silently dropping `!Policy {...}` would read a config other than the one written. A key stays the
# text written, so a tag on it other than `!!str` is refused too.
_UNTAGGED = (None, "!")
_UNTAGGED_KEY = (None, "!", "tag:yaml.org,2002:str")
_SHORTHAND = "tag:yaml.org,2002:"


def _tag_refused(event: Any, what: str, file: str) -> ConfigReadError:
    tag = event.tag
    written = "!!" + tag[len(_SHORTHAND):] if tag.startswith(_SHORTHAND) else tag
    return _fail("HPK002", file, f"YAML tag '{written}' on {what}: the kit reads no tags on mappings, lists "
                 "or keys (it would drop the tag)", "remove the tag", *_pos(event.start_mark))


_DOCUMENT_START = yaml.DocumentStartEvent
_MAPPING_START, _MAPPING_END = yaml.MappingStartEvent, yaml.MappingEndEvent
_SEQUENCE_START, _SEQUENCE_END = yaml.SequenceStartEvent, yaml.SequenceEndEvent
_SCALAR, _ALIAS = yaml.ScalarEvent, yaml.AliasEvent
_NODE_EVENTS = frozenset({_SCALAR, _MAPPING_START, _SEQUENCE_START, _ALIAS})


def _attach(parent: _Frame | None, path: PathKey, value: Any, size: int) -> None:
    if parent is None:
        return
    if isinstance(parent.value, dict):
        if path[-1] == MERGE_KEY:
            parent.merges.append(value)
        else:
            parent.value[path[-1]] = value  # type: ignore[index]
        parent.key = None
    else:
        parent.value.append(value)
    parent.size += size


def _merge(frame: _Frame, positions: dict[PathKey, tuple[int, int]], file: str) -> None:
    """YAML merge keys: `<<: *base` (or a list of them) adds the keys the mapping does not set itself.
    With a list, an earlier mapping wins over a later one. Merged keys are located at the `<<` line."""
    where = frame.key_positions[MERGE_KEY]
    target: dict = frame.value  # type: ignore[assignment]
    for value in frame.merges:
        sources = value if isinstance(value, list) else [value]
        for source in sources:
            if not isinstance(source, dict):
                raise _fail("HPK002", file, "`<<` (a YAML merge key) must name a mapping or a list of mappings",
                            "write `<<: *anchor` where &anchor marks a mapping", *where)
            for key, item in source.items():
                if key not in target:
                    target[key] = item
                    positions.setdefault(frame.path + (key,), where)


# Implicit YAML 1.1 types that would turn text into something else (and sometimes crash doing it):
# dates stay the text the admin typed; `=` and a `<<` value are text too.
_TEXT_TAGS = ("tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:value", "tag:yaml.org,2002:merge")
_STR_TAG = "tag:yaml.org,2002:str"
_DECIMAL_DIGITS = re.compile(r"[-+]?[0-9][0-9_]*")


def _plain_or_quoted(loader: Any, event: yaml.ScalarEvent, file: str, resolved: dict[str, str]) -> Any:
    """An untagged scalar: quoted and block scalars are text; a plain one gets its implicit type."""
    text = event.value
    if not event.implicit[0]:
        return text  # what loader.resolve gives every scalar that is not plain: text
    tag = resolved.get(text)
    if tag is None:
        tag = resolved[text] = loader.resolve(yaml.ScalarNode, text, event.implicit)
    if tag == _STR_TAG or tag in _TEXT_TAGS:
        return text
    if tag == "tag:yaml.org,2002:int":
        return _integer(loader, event, tag)
    return _scalar(loader, event, file, tag)


def _scalar(loader: Any, event: yaml.ScalarEvent, file: str, tag: str) -> Any:
    text = event.value
    node = yaml.ScalarNode(tag, text, event.start_mark, event.end_mark, event.style)
    kind = tag.rsplit(":", 1)[-1]
    try:
        value = loader.construct_object(node, deep=True)
    except (ValueError, OverflowError, TypeError) as err:
        raise _fail("HPK002", file, f"cannot read {text[:40]!r} as {kind}: {err}",
                    "quote the value to keep it as text", *_pos(event.start_mark)) from None
    except (KeyError, IndexError, AttributeError):
        # How PyYAML's constructors fail on an explicit tag over text of another kind: `!!bool maybe`,
        # `!!int ""`, `!!timestamp x`. Their own words (`'NoneType' object ...`) would not help the admin.
        raise _fail("HPK002", file, f"cannot read {text[:40]!r} as {kind}: it is no YAML 1.1 {kind}",
                    "quote the value to keep it as text", *_pos(event.start_mark)) from None
    if isinstance(value, float):
        return ScalarFloat(value, text)
    return value


def _integer(loader: Any, event: yaml.ScalarEvent, tag: str) -> Any:
    """A YAML 1.1 integer; longer than Python's int-string limit it is read through Decimal, and a form that
    only looks like an integer (`0x_`) stays text."""
    if event.value.isascii() and event.value.isdigit() and (event.value == "0" or event.value[0] != "0"):
        return int(Decimal(event.value)) if len(event.value) > 4000 else int(event.value)  # plain decimal
    node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
    try:
        value = loader.construct_object(node, deep=True)
    except ValueError:
        if _DECIMAL_DIGITS.fullmatch(event.value):
            value = int(Decimal(event.value.replace("_", "")))
        else:
            return event.value
    # A form YAML 1.2 reads as another number or as text keeps its text: the loader refuses it in a number field.
    return value if yaml12_number(event.value) == value else ScalarInt(value, event.value)
