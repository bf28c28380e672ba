"""The Batch stack of config/batch-example.yaml: synthesized by the real CDK CLI offline, clean under
cfn-lint for the environment's region and under cdk-nag, matching its reviewed snapshot; and it exists
only where the config has a batch section, with Batch edits leaving the HyperPod stacks alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.app_synth import build  # the in-process app with cdk.json's feature flags
from support.app_synth import templates as stacks
from support.paths import ROOT
from support.snapshots import normalised  # snapshot masking of test_synth
from support.synthesis import cfn_lint, env_assembly  # the real CLI's synths, shared by the synth tests
from syrupy.extensions.json import JSONSnapshotExtension

from cdk_app.config.loader import load_config

EXAMPLE = ROOT / "config" / "batch-example.yaml"
STACK = "HyperPod-batch-example-batch"


@pytest.fixture(scope="module")
def assembly(tmp_path_factory) -> Path:
    return env_assembly(tmp_path_factory, "batch-example")


def test_synth_writes_the_batch_stack_next_to_the_hyperpod_ones(assembly):
    names = {p.name.removesuffix(".template.json") for p in assembly.glob("*.template.json")}
    assert names == {f"HyperPod-batch-example-{s}" for s in ("network", "cluster", "governance", "batch")}
    # Deleting a job queue ends the jobs in it: the Batch stack is protected like network and cluster.
    artifacts = json.loads((assembly / "manifest.json").read_text())["artifacts"]
    assert artifacts[STACK]["properties"].get("terminationProtection") is True
    template = json.loads((assembly / f"{STACK}.template.json").read_text())
    counts: dict[str, int] = {}
    for resource in template["Resources"].values():
        counts[resource["Type"]] = counts.get(resource["Type"], 0) + 1
    assert {t: counts.get(t) for t in ("AWS::Batch::ServiceEnvironment", "AWS::Batch::JobQueue",
                                       "AWS::Batch::SchedulingPolicy", "AWS::Batch::QuotaShare", "AWS::IAM::Role")} == {
        "AWS::Batch::ServiceEnvironment": 3, "AWS::Batch::JobQueue": 3, "AWS::Batch::SchedulingPolicy": 2,
        "AWS::Batch::QuotaShare": 2, "AWS::IAM::Role": 5}


def test_cfn_lint_is_clean_in_the_environment_region(assembly):
    region = load_config(EXAMPLE).config.region
    templates = sorted(str(p) for p in assembly.glob("*.template.json"))
    result = cfn_lint(templates, region)
    assert result.returncode == 0, result.stdout + result.stderr


def test_batch_template_matches_snapshot(assembly, snapshot):
    """Review a change with `pytest tests/stacks/test_batch_stack.py --snapshot-update` and read the diff."""
    assert normalised(assembly / f"{STACK}.template.json") == snapshot(extension_class=JSONSnapshotExtension)


def test_cdk_nag_has_nothing_unacknowledged(tmp_path):
    build(EXAMPLE, tmp_path).synth()  # raises on any finding nobody acknowledged
    report = json.loads((tmp_path / "validation-report.json").read_text())
    assert [(r["pluginName"], r["violations"]) for r in report["pluginReports"] if r["violations"]] == []


def test_no_batch_stack_without_a_batch_section(tmp_path):
    assert not [name for name in stacks(build(ROOT / "config" / "dev.yaml", tmp_path)) if name.endswith("-batch")]


def test_batch_quota_edit_leaves_the_hyperpod_stacks_unchanged(tmp_path):
    before = stacks(build(EXAMPLE, tmp_path / "before"))
    edited = tmp_path / "batch-example.yaml"
    text = EXAMPLE.read_text()
    assert text.count("          count: 40\n") == 1
    edited.write_text(text.replace("          count: 40\n", "          count: 30\n"))
    after = stacks(build(edited, tmp_path / "after"))
    for name in ("network", "cluster", "governance"):
        stack = f"HyperPod-batch-example-{name}"
        assert after[stack].to_json() == before[stack].to_json(), stack
    shares = {s["Properties"]["QuotaShareName"]: s["Properties"]["CapacityLimits"]
              for s in after[STACK].find_resources("AWS::Batch::QuotaShare").values()}
    assert shares["ProdExp2"] == [{"CapacityUnit": "ml.p4d.24xlarge", "MaxCapacity": 30}]


def test_team_roles_are_one_json_output(assembly):
    """One output, whatever the number of teams (per-team outputs would hit CloudFormation's 200 and, named
    after team names, could collide); queue names are the config's, so they need none."""
    outputs = json.loads((assembly / f"{STACK}.template.json").read_text())["Outputs"]
    assert list(outputs) == ["BatchTeamRoleArns"]
    keys = [p for p in outputs["BatchTeamRoleArns"]["Value"]["Fn::Join"][1] if isinstance(p, str)]
    assert [k.strip('{}",:') for k in keys[:-1]] == ["ProdExp1", "ProdExp2", "production", "exploration", "sweeps"]
