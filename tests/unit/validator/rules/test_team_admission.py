"""The config side of the guardrails: teams[].priority_classes, teams[].allowed_capabilities and
cluster_policy.require_priority_class are checked by the validator (each finding at its line), and
`hyperpod-kit job` uses the team's default_priority_class and needs no priority class otherwise."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest
import yaml
from support.bad_configs import BASE  # a valid config with priority classes high, low and teams john, smith
from support.paths import ROOT

from cdk_app.config.loader import load_config
from cdk_app.kubernetes.job_templates import JobRequest, JobSpecError, render
from cdk_app.validator.report import check_file

PRIORITY = "kueue.x-k8s.io/priority-class"


def findings(write_config, text: str) -> list[tuple[str, str, int]]:
    report = check_file(write_config(text))
    return [(f.code, f.path, f.line) for f in report.findings]


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("  - name: smith\n", "  - name: smith\n    priority_classes: [low, urgent]\n",
     [("HPK420", "teams[1].priority_classes[1]", "priority_classes: [low")]),
    ("  - name: smith\n", "  - name: smith\n    priority_classes: [low, low]\n",
     [("HPK421", "teams[1].priority_classes[1]", "priority_classes: [low")]),
    ("  - name: smith\n", "  - name: smith\n    allowed_capabilities: [IPC_LOCK, IPC_LOCK]\n",
     [("HPK421", "teams[1].allowed_capabilities[1]", "allowed_capabilities")]),
    ("  - name: smith\n", "  - name: smith\n    default_priority_class: high\n    priority_classes: [low]\n",
     [("HPK422", "teams[1].default_priority_class", "default_priority_class")]),
    ("      weight: 10\n", "      weight: 10\n  require_priority_class: true\n", []),
    ("  - name: smith\n", "  - name: smith\n    priority_classes: []\n", []),
])
def test_team_admission_settings_are_checked(write_config, old, new, expected):
    text = BASE.replace(old, new, 1)
    assert findings(write_config, text) == [(code, path, line_of(text, key)) for code, path, key in expected]


def test_required_priority_class_needs_classes_and_teams_that_may_use_one(write_config):
    no_classes = BASE.replace("""  priority_classes:
    - name: high
      weight: 90
    - name: low
      weight: 10
""", "  require_priority_class: true\n")
    assert findings(write_config, no_classes) == [
        ("HPK320", "cluster_policy.require_priority_class", line_of(no_classes, "require_priority_class"))]
    locked_out = BASE.replace("      weight: 10\n", "      weight: 10\n  require_priority_class: true\n").replace(
        "  - name: smith\n", "  - name: smith\n    priority_classes: []\n")
    assert findings(write_config, locked_out) == [
        ("HPK423", "teams[1].priority_classes", line_of(locked_out, "priority_classes: []"))]


def test_a_capability_outside_the_documented_set_is_refused_by_the_model(write_config):
    report = check_file(write_config(BASE.replace("  - name: smith\n", "  - name: smith\n    allowed_capabilities: [SYS_ADMIN]\n")))
    assert [(f.code, f.path) for f in report.findings] == [("HPK014", "teams[1].allowed_capabilities[0]")]
    assert "IPC_LOCK" in report.findings[0].hint and "SYS_RESOURCE" in report.findings[0].hint


PROD = load_config(ROOT / "config" / "prod.yaml").config
DEV = load_config(ROOT / "config" / "dev.yaml").config
JOB = JobRequest(team="research-nlp", priority=None, name="ft", image="repo/train:1", command=("python", "t.py"))


def test_job_takes_the_teams_default_priority_class():
    assert render(PROD, JOB)["metadata"]["labels"][PRIORITY] == "experimentation-priority"
    assert render(PROD, dataclasses.replace(JOB, priority="training"))["metadata"]["labels"][PRIORITY] == "training-priority"


def test_job_without_priority_classes_in_the_config_has_no_priority_label():
    manifest = render(DEV, dataclasses.replace(JOB, team="john"))
    assert manifest["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "hyperpod-ns-john-localqueue"}


def test_job_refuses_a_class_the_team_may_not_use_and_a_missing_required_one():
    with pytest.raises(JobSpecError, match="--priority 'inference' is not one of the priority_classes of team research-nlp; "
                                           "classes: fine-tuning, training, experimentation"):
        render(PROD, dataclasses.replace(JOB, priority="inference"))
    no_default = PROD.model_copy(update={"teams": tuple(t.model_copy(update={"default_priority_class": None})
                                                        for t in PROD.teams)})
    with pytest.raises(JobSpecError, match="--priority is required: the config sets cluster_policy.require_priority_class"):
        render(no_default, JOB)


def test_job_command_needs_no_priority_option():
    result = subprocess.run([sys.executable, "-m", "cdk_app", "job", "--config", "config/dev.yaml", "--team", "john",
                             "--name", "j", "--image", "i", "--", "python", "t.py"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert PRIORITY not in yaml.safe_load(result.stdout)["metadata"]["labels"]
