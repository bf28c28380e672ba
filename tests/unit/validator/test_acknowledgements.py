"""Acknowledged warnings (config `acknowledged_warnings`): a warning an environment keeps on purpose, with its
reason, is printed as acknowledged and passes `validate --strict`; one that matches nothing is HPK031; an error,
an unknown code or an acknowledgement's own code cannot be acknowledged (HPK030). dev.yaml keeps its API open to
0.0.0.0/0 (its one warning, HPK113): the case the acknowledgement was made for."""

from __future__ import annotations

import json

import pytest
from support.cli_runner import invoke
from support.paths import ROOT

from cdk_app.config.loader import load_config
from cdk_app.stacks.stamp import config_digest
from cdk_app.validator.report import check_file

DEV = (ROOT / "config" / "dev.yaml").read_text()
REASON = "deployed before the kit required the list; narrowed once the admins' networks are known"


def dev_with(write_config, acknowledgements: str, edit: tuple[str, str] = ("", "")):
    """dev.yaml with `acknowledgements` (YAML list items) inserted before its closing storage section."""
    text = DEV.replace("\n# Shared storage:", f"\nacknowledged_warnings:\n{acknowledgements}\n# Shared storage:", 1)
    assert "acknowledged_warnings:" in text
    if edit[0]:
        assert edit[0] in text
        text = text.replace(*edit, 1)
    return write_config(text, "dev.yaml")


def test_dev_has_the_one_warning_this_is_about():
    report = check_file(ROOT / "config" / "dev.yaml")
    assert [(f.code, f.path, f.severity.value) for f in report.findings] == [
        ("HPK113", "eks.public_access_cidrs", "warning")]


@pytest.mark.parametrize("path_line", ["    path: eks.public_access_cidrs\n", ""])
def test_an_acknowledged_warning_is_shown_with_its_reason_and_passes_strict(write_config, path_line):
    path = dev_with(write_config, f"  - code: HPK113\n{path_line}    reason: {REASON}\n")
    report = check_file(path)
    assert report.findings == [] and report.warnings == []
    [ack] = report.acknowledged
    assert (ack.finding.code, ack.finding.path, ack.reason, ack.by) == (
        "HPK113", "eks.public_access_cidrs", REASON, "acknowledged_warnings[0]")
    result = invoke("validate", "--strict", str(path))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    shown = next(line for line in lines if line.startswith("acknowledged (acknowledged_warnings[0]): "))
    assert "[HPK113 warning]" in shown and shown.endswith(f"- kept because: {REASON}")
    assert lines[-1] == "valid: 0 error(s), 0 warning(s) (1 acknowledged)"


def test_the_json_report_lists_the_acknowledged_warning_apart(write_config):
    path = dev_with(write_config, f"  - code: HPK113\n    reason: {REASON}\n")
    result = invoke("validate", "--strict", "--format", "json", str(path))
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert document["ok"] is True and document["warnings"] == []
    [ack] = document["acknowledged"]
    assert (ack["code"], ack["path"], ack["reason"], ack["acknowledged_by"]) == (
        "HPK113", "eks.public_access_cidrs", REASON, "acknowledged_warnings[0]")


def test_an_acknowledgement_that_matches_nothing_is_a_warning_so_strict_fails(write_config):
    # The wrong path: the HPK113 warning stays, and the acknowledgement is said to match nothing.
    path = dev_with(write_config, f"  - code: HPK113\n    path: eks.endpoint_access\n    reason: {REASON}\n")
    report = check_file(path)
    assert [(f.code, f.path) for f in report.findings] == [("HPK113", "eks.public_access_cidrs"),
                                                           ("HPK031", "acknowledged_warnings[0]")]
    assert "acknowledges HPK113 at eks.endpoint_access, but validate finds no such warning" in report.findings[1].message
    assert invoke("validate", "--strict", str(path)).exit_code == 1
    assert invoke("validate", str(path)).exit_code == 0  # a warning, as any other


def test_a_fixed_warning_leaves_its_acknowledgement_stale(write_config):
    path = dev_with(write_config, f"  - code: HPK113\n    reason: {REASON}\n",
                    ("public_access_cidrs: [0.0.0.0/0]", "public_access_cidrs: [203.0.113.0/24]"))
    report = check_file(path)
    assert [(f.code, f.path) for f in report.findings] == [("HPK031", "acknowledged_warnings[0]")]
    assert report.acknowledged == []


def test_an_error_cannot_be_acknowledged(write_config):
    # john's ml.g5.12xlarge quota of 9 with smith's 1 is over the 4 instances: HPK501, an error, stays.
    path = dev_with(write_config, f"  - code: HPK501\n    reason: {REASON}\n", ("        count: 3\n", "        count: 9\n"))
    report = check_file(path)
    codes = [(f.code, f.path) for f in report.errors]
    assert ("HPK030", "acknowledged_warnings[0].code") in codes and ("HPK501", "teams[0].quota[0]") in codes
    hpk030 = next(f for f in report.errors if f.code == "HPK030")
    assert "HPK501 is an error" in hpk030.message and "errors cannot be acknowledged" in hpk030.message


@pytest.mark.parametrize("code, says", [("HPK999", "is no finding code of the kit"),
                                        ("HPK031", "is about acknowledgements themselves")])
def test_unknown_codes_and_the_acknowledgement_codes_are_refused(write_config, code, says):
    path = dev_with(write_config, f"  - code: HPK113\n    reason: {REASON}\n  - code: {code}\n    reason: {REASON}\n")
    report = check_file(path)
    assert [(f.code, f.path) for f in report.findings] == [("HPK030", "acknowledged_warnings[1].code")]
    assert says in report.findings[0].message
    assert [a.finding.code for a in report.acknowledged] == ["HPK113"]


@pytest.mark.parametrize("entry, code", [
    ("  - code: HPK113\n    reason: ''\n", "HPK013"),
    ("  - code: HPK113\n    reason: '   '\n", "HPK015"),
    ("  - code: HPK113\n", "HPK011"),  # a reason is required
    ("  - code: hpk113\n    reason: x\n", "HPK015"),
])
def test_an_acknowledgement_needs_a_code_and_a_written_reason(write_config, entry, code):
    report = check_file(dev_with(write_config, entry))
    assert code in [f.code for f in report.errors]
    assert report.acknowledged == []


def test_acknowledgements_change_no_template(write_config):
    """The config digest stamped into the governance template leaves them out: acknowledging a warning is no
    change to deploy."""
    plain = load_config(ROOT / "config" / "dev.yaml").config
    acked = load_config(dev_with(write_config, f"  - code: HPK113\n    reason: {REASON}\n")).config
    assert acked.acknowledged_warnings and config_digest(acked) == config_digest(plain)
