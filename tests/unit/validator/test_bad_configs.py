"""Bad-input catalogue: each broken config must give its code, at its field path, on its line.

Each case edits a valid base config. The expected line is marked in the edited text with `#<`, so
the test checks the line the finding reports against the line that really holds the problem.
"""

from __future__ import annotations

import pytest
from support.bad_configs import BASE, CASES, edit, marked_line

from cdk_app.validator.report import check_file

# Whole files that cannot be read as a config: (case id, content, code, line).
FILE_CASES: list[tuple[str, str | bytes, str, int]] = [
    ("binary", b"\x00\x9f\x92\x96 binary", "HPK001", 1),
    ("latin-1", "environment: dev\nteam: caf\xe9\n".encode("latin-1"), "HPK001", 2),
    ("yaml-syntax", "environment: dev\nteams: [a, b\nregion: x\n", "HPK002", 3),
    ("tab-indentation", "environment: dev\nhyperpod:\n\tinstance_groups: []\n", "HPK002", 3),
    ("two-documents", "environment: dev\n---\nenvironment: prod\n", "HPK002", 2),
    ("python-tag", "environment: !!python/object:os.system ls\n", "HPK002", 1),
    ("empty", "", "HPK003", 1),
    ("comments-only", "# nothing here\n", "HPK003", 1),
    ("a-list", "- environment: dev\n", "HPK003", 1),
    ("a-scalar", "just text\n", "HPK003", 1),
    ("duplicate-key", "environment: dev\nregion: us-east-1\nenvironment: prod\n", "HPK004", 3),
    ("deep-nesting", "a: " + "[" * 200 + "]" * 200 + "\n", "HPK005", 1),
    ("alias-bomb", "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                   + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(7)),
     "HPK005", 6),
]


def test_base_config_is_clean(write_config):
    report = check_file(write_config(BASE))
    assert report.findings == []


def test_catalogue_is_large_enough():
    assert len(CASES) + len(FILE_CASES) >= 40
    assert len({case[0] for case in CASES + FILE_CASES}) == len(CASES) + len(FILE_CASES)


@pytest.mark.parametrize(("text", "code", "path", "severity"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_config(write_config, text, code, path, severity):
    report = check_file(write_config(text), "config/test.yaml")
    expected = (code, path, marked_line(text), severity)
    got = [(f.code, f.path, f.line, f.severity.value) for f in report.findings]
    assert expected in got
    assert not report.unreadable
    assert report.exit_code == (1 if severity == "error" else 0)
    finding = next(f for f in report.findings if (f.code, f.path) == (code, path))
    assert finding.file == "config/test.yaml" and finding.message and finding.hint
    assert finding.render().startswith(f"config/test.yaml:{finding.line}:{finding.column} {path}: ")


@pytest.mark.parametrize(("content", "code", "line"), [c[1:] for c in FILE_CASES], ids=[c[0] for c in FILE_CASES])
def test_unreadable_file(write_config, content, code, line):
    report = check_file(write_config(content), "config/broken.yaml")
    assert [(f.code, f.line) for f in report.findings] == [(code, line)]
    assert report.unreadable and report.exit_code == 2


def test_missing_file_and_directory(tmp_path):
    assert [f.code for f in check_file(tmp_path / "nope.yaml").findings] == ["HPK001"]
    assert [f.code for f in check_file(tmp_path).findings] == ["HPK001"]


def test_misspelt_key_names_the_nearest_key(write_config):
    text = edit("    borrow_limit: 50\n", "    borrow_limit: 50\n    fair_share_wieght: 5\n")
    finding = check_file(write_config(text)).findings[0]
    assert "did you mean 'fair_share_weight'" in finding.hint


def test_float_version_hint_says_how_to_quote(write_config):
    text = edit('kubernetes_version: "1.33"', "kubernetes_version: 1.30")
    finding = check_file(write_config(text)).findings[0]
    assert 'kubernetes_version: "1.30"' in finding.hint
