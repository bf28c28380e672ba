"""The YAML reader's behaviour that mutation testing of cdk_app/config/yaml_source.py found untested.

Sources of truth: PyYAML's own loader (yaml.load with the C safe loader the reader uses, and the pure Python
composer for node positions), the YAML 1.1 scalar forms it implements, and the limits the reader's messages
state (at most MAX_DEPTH levels, at most MAX_EXPANDED_NODES values after aliases).
"""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction

import pytest
import yaml
from support.paths import ROOT

from cdk_app.config import yaml_source
from cdk_app.config.scalars import ScalarFloat, ScalarInt, exact, yaml12_number
from cdk_app.config.yaml_source import (
    MAX_DEPTH,
    MAX_EXPANDED_NODES,
    MAX_FILE_BYTES,
    ConfigReadError,
    SourceMap,
    parse_yaml,
    read_text,
)
from cdk_app.support.bounded_read import UnreadableInput, read_bounded

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def problem(text: str) -> tuple[str, int, int, str, str]:
    with pytest.raises(ConfigReadError) as caught:
        parse_yaml(text, "f.yaml")
    f = caught.value.finding
    assert (f.file, f.path, f.severity.value) == ("f.yaml", "", "error")
    assert str(caught.value) == f.message
    return f.code, f.line, f.column, f.message, f.hint


def pyyaml_mark(text: str, attribute: str = "problem_mark") -> tuple[int, int]:
    node = yaml.compose(text, Loader=yaml.SafeLoader)
    mark = getattr(node, attribute)
    return mark.line + 1, mark.column + 1


# YAML 1.1 scalar forms: the reader must give what PyYAML gives (dates and `=` aside, which stay text).
SCALARS = [
    "017", "0o17", "0b101", "-0b101", "0x1F", "-0x1f", "+12", "1_000", "190:20:30", "-190:20:30", "0", "-0",
    "1.5", "-1.5e+3", "6.8523015e+5", "190:20:30.15", ".inf", "-.Inf", "yes", "No", "on", "OFF", "~", "null",
    "Null", "", "y", "0x_", "0b_", "09", "1e3", "'017'", '"true"', "!!str 12", "!!int '12'", "!!float 1",
    "! 12", "! true", "!!bool yes", "|\n  x\n", ">\n  y\n",
]


@pytest.mark.parametrize("scalar", SCALARS)
def test_scalars_read_as_pyyaml_reads_them(scalar):
    text = f"key: {scalar}\n"
    data, source = parse_yaml(text, "f.yaml")
    try:
        expected = yaml.load(text, Loader=LOADER)["key"]
    except ValueError:  # PyYAML fails on `0x_`: the reader keeps that text
        expected = scalar
    assert data["key"] == expected or expected != expected  # .nan is not itself
    # A float is a ScalarFloat, and an integer YAML 1.2 reads otherwise a ScalarInt (each keeps its text, for
    # exact sums and for the model's refusal of the ambiguity); every other type is PyYAML's.
    kept = isinstance(expected, float) or type(expected) is int
    assert (type(data["key"]).__mro__[-2:] if kept else type(data["key"])) == (
        (type(expected), object) if kept else type(expected))
    if type(data["key"]) is ScalarInt:
        assert data["key"].text == scalar and yaml12_number(scalar) != expected
    # The written text is kept exactly for what YAML made something other than text.
    written = yaml.compose(text, Loader=yaml.SafeLoader).value[0][1].value  # the scalar's text, tag aside
    assert source.text(("key",)) == (None if isinstance(expected, str) else written)


def test_dates_and_value_keys_stay_text():
    data, source = parse_yaml("a: 2001-12-14\nb: =\nc: <<\n", "f.yaml")
    assert data == {"a": "2001-12-14", "b": "=", "c": "<<"}
    assert source.text(("a",)) is None


def test_floats_keep_their_text():
    data, source = parse_yaml("a: 1.10\nb: !!float 2\n", "f.yaml")
    assert (data["a"], data["a"].text, data["b"], data["b"].text) == (1.1, "1.10", 2.0, "2")
    assert source.text(["a"]) == "1.10"  # a list path is the same path


@pytest.mark.parametrize("digits", [4000, 4001, 5000])
def test_long_decimal_integers_are_read_exactly(digits):
    text = "1" + "0" * (digits - 1)
    data, _ = parse_yaml(f"a: {text}\nb: -{text[:2]}_{text[2:]}\n", "f.yaml")
    assert data == {"a": 10 ** (digits - 1), "b": -10 ** (digits - 1)}


def test_a_huge_octal_form_stays_as_yaml_reads_it():
    # `0777...` past the int-string limit: PyYAML's int(value, 8) has no such limit for base 8.
    text = "0" + "7" * 5000
    data, _ = parse_yaml(f"a: {text}\n", "f.yaml")
    assert data["a"] == int(text, 8)


def test_bad_tagged_scalars_are_located_findings():
    code, line, column, message, hint = problem("a: 1\nb:  !!int abc\n")
    assert (code, line, column) == ("HPK002", 2, 5)
    assert message == "cannot read 'abc' as int: invalid literal for int() with base 10: 'abc'"
    assert hint == "quote the value to keep it as text"
    assert problem("a: !!float " + "x" * 50 + "\n")[3].startswith("cannot read '" + "x" * 40 + "' as float: ")
    assert problem("a: !!bool " + "x" * 50 + "\n")[3] == "cannot read '" + "x" * 40 + "' as bool: it is no YAML 1.1 bool"


def at(source: SourceMap, path: tuple) -> tuple[int, int]:
    where = source.locate(path)
    return where.line, where.column


def test_positions_of_keys_and_items_are_pyyaml_s():
    text = "a:\n  - x\n  -   y\n  - {k: 1,  m: [1,   2]}\nb: c\n"
    _, source = parse_yaml(text, "f.yaml")
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    a, b = root.value[0], root.value[1]
    items = a[1].value
    assert at(source, ("a",)) == (a[0].start_mark.line + 1, a[0].start_mark.column + 1)
    assert at(source, ("b",)) == (b[0].start_mark.line + 1, b[0].start_mark.column + 1) == (5, 1)
    for index, item in enumerate(items):
        where = source.locate(("a", index))
        assert (where.line, where.column) == (item.start_mark.line + 1, item.start_mark.column + 1)
    inner = items[2].value[1][1].value[1]
    where = source.locate(("a", 2, "m", 1))
    assert (where.line, where.column) == (inner.start_mark.line + 1, inner.start_mark.column + 1)


def test_a_missing_path_is_located_at_its_nearest_ancestor():
    _, source = parse_yaml("a:\n  b: 1\n", "f.yaml")
    assert (source.locate(("a", "b", "c", 0)).line, source.locate(("a", "b", "c", 0)).column) == (2, 3)
    assert (source.locate(("z",)).line, source.locate(("z",)).column) == (1, 1)
    empty = SourceMap("g.yaml", {})
    assert (empty.locate(("a",)).line, empty.locate(("a",)).column, empty.file) == (1, 1, "g.yaml")
    assert empty.text(("a",)) is None


def test_a_second_document_is_refused_where_it_starts():
    assert problem("a: 1\n\n  \n--- \nb: 2\n")[:4] == (
        "HPK002", 4, 1, "more than one YAML document (a second '---')")
    assert problem("a: 1\n---\nb: 2\n")[4] == "one config per file"
    assert parse_yaml("---\na: 1\n...\n", "f.yaml")[0] == {"a": 1}


def test_a_key_that_is_not_text_is_refused_at_the_key():
    assert problem("a: 1\n? [x]\n: 1\n")[:5] == (
        "HPK002", 2, 3, "a mapping key must be plain text", "write `name: value`")
    assert problem("a: 1\n{x: 1}: 2\n")[1:3] == (2, 1)


def test_duplicate_keys_name_both_places():
    assert problem("a: 1\nb:\n  c: 1\n  d: 2\n  c: 3\n") == (
        "HPK004", 5, 3, "duplicate key 'c' (first at line 3)", "each key appears once per mapping")
    # The same key in sibling mappings is no duplicate.
    assert parse_yaml("a: {k: 1}\nb: {k: 2}\n", "f.yaml")[0] == {"a": {"k": 1}, "b": {"k": 2}}


def test_aliases_to_no_finished_anchor_are_refused():
    assert problem("a: 1\nb:   *x\n") == ("HPK002", 2, 6, "alias *x refers to no finished anchor",
                                          "define `&name` before using `*name`")
    assert problem("a: &x [1, *x]\n")[1:4] == (1, 11, "alias *x refers to no finished anchor")


def test_aliases_expand_as_pyyaml_expands_them():
    text = "s: &s 1\nm: &m {a: *s, b: [*s]}\nl: &l [*m, *s]\nr: [*l, *m]\n"
    data, source = parse_yaml(text, "f.yaml")
    assert data == yaml.load(text, Loader=LOADER)
    assert source.locate(("r", 1)).line == 4
    root, _ = parse_yaml("&r [1, 2]\n", "f.yaml")
    assert root == [1, 2]


def test_an_alias_as_the_whole_document_is_refused():
    assert problem("*a\n")[0] == "HPK002"


def _expansion(total: int) -> str:
    """A document whose aliases expand to exactly `total` values: a list of 999 numbers (1000 values with
    the list itself), named `total // 1000` times, and `total % 1000` aliases to one number."""
    whole, rest = divmod(total, 1000)
    lines = ["n: &n 0", "l: &l [" + ", ".join(["1"] * 999) + "]"]
    lines.append("x: [" + ", ".join(["*l"] * whole) + "]")
    lines.append("y: [" + ", ".join(["*n"] * rest) + "]")
    return "\n".join(lines) + "\n"


def test_aliases_may_expand_to_exactly_the_stated_limit():
    assert MAX_EXPANDED_NODES == 1_000_000
    data, _ = parse_yaml(_expansion(MAX_EXPANDED_NODES), "f.yaml")
    assert len(data["x"]) == 1000 and len(data["x"][0]) == 999 and data["y"] == []


def test_aliases_past_the_limit_are_refused_at_the_alias():
    code, line, column, message, hint = problem(_expansion(MAX_EXPANDED_NODES + 1))
    assert (code, line, column, message) == ("HPK005", 4, 5, "aliases expand to too many values")
    assert hint == "at most 1000000 values after expanding aliases"


def test_aliases_of_nested_anchors_count_every_value_below():
    # &b holds a list of two aliases to the 1000-value list: 1 + 2 x 1000 values. 499 of those,
    # plus the 2 x 1000 the anchor itself expanded, reach 1_000_501 > the limit; 498 stay under it.
    head = "l: &l [" + ", ".join(["1"] * 999) + "]\nb: &b [*l, *l]\n"
    assert parse_yaml(head + "x: [" + ", ".join(["*b"] * 498) + "]\n", "f.yaml")[0]["x"][0][0][0] == 1
    assert problem(head + "x: [" + ", ".join(["*b"] * 499) + "]\n")[0] == "HPK005"


def _nested(levels: int) -> str:
    return "[" * levels + "]" * levels + "\n"


def test_nesting_to_the_limit_is_read_and_past_it_refused():
    assert MAX_DEPTH == 64
    data, _ = parse_yaml(_nested(MAX_DEPTH), "f.yaml")
    assert data == yaml.load(_nested(MAX_DEPTH), Loader=LOADER)
    # The root and `a` are two levels: the 63rd list is the 65th level.
    deepest = "a:\n  b: " + _nested(MAX_DEPTH - 2)
    assert parse_yaml(deepest, "f.yaml")[0] == yaml.load(deepest, Loader=LOADER)
    assert problem("a:\n" + " " * 2 + "b: " + _nested(MAX_DEPTH - 1)) == (
        "HPK005", 2, 6 + MAX_DEPTH - 2, f"nesting deeper than {MAX_DEPTH} levels",
        "a config nests a few levels at most")


def test_merge_keys_merge_as_pyyaml_merges():
    text = ("a: &a {x: 1, y: 1}\nb: &b {y: 2, z: 2}\n"
            "c:\n  <<: [*a, *b]\n  x: 3\n"
            "d:\n  w: 0\n  <<: *b\n  <<: *a\n")
    with pytest.raises(ConfigReadError):  # a second `<<` in one mapping is a duplicate key here
        parse_yaml(text, "f.yaml")
    text = text.rsplit("  <<: *a\n", 1)[0]
    data, source = parse_yaml(text, "f.yaml")
    assert data == yaml.load(text, Loader=LOADER)
    assert "<<" not in data["c"]
    # Merged keys are located at the `<<` line; the mapping's own keys where they are written.
    assert [(source.locate(("c", k)).line, source.locate(("c", k)).column) for k in "xyz"] == [(5, 3), (4, 3), (4, 3)]
    assert (source.locate(("d", "y")).line, source.locate(("d", "w")).line) == (8, 7)


def test_a_merge_of_a_non_mapping_is_refused_at_the_merge_key():
    for value in ("1", "[1]", "[{a: 1}, x]"):
        assert problem(f"a: 0\nc:\n  b: 1\n  <<: {value}\n") == (
            "HPK002", 4, 3, "`<<` (a YAML merge key) must name a mapping or a list of mappings",
            "write `<<: *anchor` where &anchor marks a mapping")
        with pytest.raises(yaml.constructor.ConstructorError):
            yaml.load(f"c:\n  <<: {value}\n", Loader=LOADER)


@pytest.mark.parametrize("text", ["a: [1, 2\n", "a: b: c\n", "a:\n  - 1\n b: 2\n", "a: 'x\n", "\t- a\n", "a: @x\n"])
def test_syntax_errors_are_pyyaml_s_located(text):
    with pytest.raises(yaml.MarkedYAMLError) as pyyaml_error:
        yaml.load(text, Loader=LOADER)
    err = pyyaml_error.value
    mark = err.problem_mark or err.context_mark
    line, column = mark.line + 1, mark.column + 1
    lines = text.splitlines()
    if line > len(lines):  # PyYAML marks the end of the stream after the last newline: a line the file lacks
        line, column = len(lines), len(lines[-1]) + 1
    assert problem(text) == ("HPK002", line, column, f"not valid YAML: {err.problem or err.context}",
                             "fix the YAML syntax at this place")


def test_unreadable_bytes_are_refused_with_their_line(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_bytes(b"a: 1\nb: 2\nc: \xff\n")
    with pytest.raises(ConfigReadError) as caught:
        read_text(path, "shown.yaml")
    f = caught.value.finding
    assert (f.code, f.file, f.line, f.column, f.message, f.hint) == (
        "HPK001", "shown.yaml", 3, 1, "not UTF-8 text (byte 13)", "a config file is UTF-8 YAML text")
    path.write_bytes("a: é\n".encode())
    assert read_text(path, "shown.yaml") == "a: é\n"


def test_a_missing_file_names_the_display_name(tmp_path):
    with pytest.raises(ConfigReadError) as caught:
        read_text(tmp_path / "none.yaml", "shown.yaml")
    assert caught.value.finding.file == "shown.yaml" and caught.value.finding.line == 1


# Exact decimal values of the floats the reader returns (cdk_app/config/scalars.py).

@pytest.mark.parametrize("written, value", [
    ("1.1", Fraction(11, 10)), ("14.9", Fraction(149, 10)), ("1e3", None), ("-2.50", Fraction(-5, 2)),
    ("1:30:30.5", Fraction(10861, 2)), ("4.9e-324", Fraction(49, 10) / 10 ** 324),
])
def test_a_yaml_float_s_exact_value_is_its_text(written, value):
    data, _ = parse_yaml(f"a: {written}\n", "f.yaml")
    pyyaml = yaml.load(f"a: {written}\n", Loader=LOADER)["a"]
    assert data["a"] == pyyaml  # YAML 1.1: 1:30:30.5 is sexagesimal, 1*3600 + 30*60 + 30.5
    if value is None:  # `1e3` is text to YAML 1.1 (a float needs a dot)
        assert data["a"] == "1e3"
        return
    assert exact(data["a"]) == value


def test_floats_without_text_and_ints_are_exact_too():
    assert exact(0.1) == Fraction("0.1") and exact(7) == 7 and exact(True) == 1


@pytest.mark.parametrize("number", [float("inf"), float("-inf"), float("nan"), ScalarFloat(float("inf"), ".inf")])
def test_no_exact_value_of_what_is_not_finite(number):
    with pytest.raises(ValueError, match=r"(inf|nan) is not a finite number"):
        exact(number)


def test_past_a_double_s_range_the_text_is_not_expanded():
    # 1e-999999999 is 0.0 as a double; its exact text would be a billion-digit denominator.
    assert exact(ScalarFloat(0.0, "1e-999999999")) == 0
    with pytest.raises(ValueError):
        exact(ScalarFloat(float("inf"), "1e999999999"))


@pytest.mark.parametrize("tag, written", [
    ("bool", "maybe"), ("bool", '""'), ("timestamp", "someday"), ("timestamp", '""'), ("int", '""'), ("float", '""'),
])
def test_an_explicit_tag_over_text_of_another_kind_is_a_located_finding(tag, written):
    # PyYAML's own loader cannot build these values either (it fails with a Python error, not a YAML one).
    text = f"a: 1\nb:  !!{tag} {written}\n"
    with pytest.raises(Exception) as pyyaml_error:
        yaml.load(text, Loader=LOADER)
    assert not isinstance(pyyaml_error.value, yaml.YAMLError)
    node = yaml.compose(text, Loader=yaml.SafeLoader).value[1][1]
    assert problem(text) == ("HPK002", node.start_mark.line + 1, node.start_mark.column + 1,
                             f"cannot read {node.value!r} as {tag}: it is no YAML 1.1 {tag}",
                             "quote the value to keep it as text")


def test_a_config_with_a_bad_explicit_tag_exits_2_not_3(tmp_path):
    # README "Exit codes": 2 for input that cannot be read, 3 only for an internal error.
    path = tmp_path / "c.yaml"
    path.write_text('environment: dev\naccount: "111122223333"\nregion: us-east-1\nobservability:\n'
                    "  enabled: !!bool maybe\n")
    run = subprocess.run([sys.executable, "-m", "cdk_app", "validate", str(path)], cwd=ROOT, capture_output=True,
                         text=True, check=False)
    assert run.returncode == 2, run.stdout + run.stderr
    assert f"{path}:5:12 cannot read 'maybe' as bool: it is no YAML 1.1 bool" in run.stdout


def _node_count(node) -> int:
    """Values in a composed node, as PyYAML's composer builds them (mapping keys are not values)."""
    if isinstance(node, yaml.MappingNode):
        return 1 + sum(_node_count(value) for _, value in node.value)
    if isinstance(node, yaml.SequenceNode):
        return 1 + sum(_node_count(item) for item in node.value)
    return 1


def test_an_anchor_of_nested_containers_counts_each_value_once():
    # &m is a list holding a list of 996 numbers and a mapping of one number: 1000 values, which PyYAML's
    # composer confirms. 1000 aliases to it are exactly the limit; one more value is past it.
    anchored = "m: &m [[" + ", ".join(["1"] * 996) + "], {k: 2}]\n"
    assert _node_count(yaml.compose(anchored, Loader=yaml.SafeLoader).value[0][1]) == 1000
    at_limit = anchored + "n: &n 0\nx: [" + ", ".join(["*m"] * (MAX_EXPANDED_NODES // 1000)) + "]\n"
    data, _ = parse_yaml(at_limit, "f.yaml")
    assert data == yaml.load(at_limit, Loader=LOADER)
    assert problem(at_limit + "y: [*n]\n")[:4] == ("HPK005", 4, 5, "aliases expand to too many values")


@pytest.mark.parametrize("written", ["1__0", "10_", "-1_0__0"])
def test_a_long_integer_with_loose_underscores_is_read_as_pyyaml_reads_it(written):
    # Past Python's int-string limit PyYAML's own int() fails; without the limit it reads the digits alone.
    text = f"a: {written}{'0' * 5000}\n"
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        expected = yaml.load(text, Loader=LOADER)["a"]
    finally:
        sys.set_int_max_str_digits(limit)
    assert parse_yaml(text, "f.yaml")[0]["a"] == expected


BAD_CHARACTERS = ["a: \x07\n", "a: é\nbé: c\x1b\n", "a: b\n\x00", "a: 'x\ufffe'\n", "a: 1\nb: é\nc: d\x07\n"]


@pytest.mark.parametrize("text", BAD_CHARACTERS)
def test_a_character_yaml_cannot_hold_is_located_where_pyyaml_s_reader_finds_it(text):
    # PyYAML's own (pure Python) reader counts characters: the line and column it points at are the truth.
    with pytest.raises(yaml.reader.ReaderError) as caught:
        yaml.load(text, Loader=yaml.SafeLoader)
    err = caught.value
    before = text[: err.position]
    code, line, column, message, hint = problem(text)
    assert (code, line, column) == ("HPK002", before.count("\n") + 1, len(before) - before.rfind("\n"))
    with pytest.raises(yaml.reader.ReaderError) as by_libyaml:  # the loader the reader uses words it
        yaml.load(text, Loader=LOADER)
    assert message == f"not valid YAML: unacceptable character #x{err.character:04x}: {by_libyaml.value.reason}"
    # The escape the hint offers, in double quotes, is read back as that very character.
    escape = hint.rsplit("the escape ", 1)[1].split(" ", 1)[0]
    assert hint == f"remove it, or write it as the escape {escape} inside double quotes"
    assert yaml.safe_load(f'a: "{escape}"')["a"] == chr(err.character)


@pytest.mark.parametrize("text", BAD_CHARACTERS)
def test_without_libyaml_a_bad_character_is_located_the_same(text, monkeypatch):
    # Where PyYAML has no libyaml binding it reads with its pure Python loader, whose reader counts characters
    # and checks them all when it is made (an internal error, exit 3, before this was handled).
    with_libyaml = problem(text)
    monkeypatch.setattr(yaml_source, "_Loader", yaml.SafeLoader)
    without = problem(text)
    assert without[:3] == with_libyaml[:3]
    assert without[3].startswith(with_libyaml[3].rsplit(": ", 1)[0])


@pytest.mark.parametrize("name", ["none.yaml", "folder"])
def test_an_unreadable_file_carries_the_reader_s_code_words_and_hint(tmp_path, name):
    (tmp_path / "folder").mkdir()
    with pytest.raises(UnreadableInput) as by_reader:
        read_bounded(str(tmp_path / name), MAX_FILE_BYTES)
    with pytest.raises(ConfigReadError) as caught:
        read_text(tmp_path / name, "shown.yaml")
    f = caught.value.finding
    assert (f.code, f.message, f.hint) == (by_reader.value.code, by_reader.value.message, by_reader.value.hint)
    assert f.hint


@pytest.mark.parametrize("scalar", ["!!nosuch x", '!!binary "a"'])
def test_a_tag_pyyaml_cannot_construct_is_located_where_pyyaml_says(scalar):
    text = f"a: 1\nb:   {scalar}\n"
    with pytest.raises(yaml.constructor.ConstructorError) as by_pyyaml:
        yaml.load(text, Loader=LOADER)
    mark = by_pyyaml.value.problem_mark
    assert problem(text)[:4] == ("HPK002", mark.line + 1, mark.column + 1,
                                 f"not valid YAML: {by_pyyaml.value.problem}")
