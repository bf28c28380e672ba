"""Batch-only environments (a Batch-only environment deploys no EKS): config/batch-only-example.yaml
and seed 004's scenarios have a batch section and no hyperpod section. The real CDK CLI synthesizes the Batch
stack alone, clean under cfn-lint (the region's data) and cdk-nag; validate shows the Batch verdict; commands
that need a HyperPod cluster say there is none (exit 2); `validate --live` reads Batch only, through botocore's
Stubber (the real batch model), and an unreadable account is exit 2 while findings stay exit 1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import boto3
import pytest
from botocore.stub import Stubber
from click.testing import CliRunner
from support.app_synth import build, templates
from support.batch_stubs import PREFIX, stub
from support.paths import ROOT, SUPPORT
from support.snapshots import normalised
from support.synthesis import env_assembly
from syrupy.extensions.json import JSONSnapshotExtension

from cdk_app.cli import main as cli
from cdk_app.config.loader import load_config
from cdk_app.stacks.layout import stack_costs, stack_suffixes
from cdk_app.validator.report import check_file

EXAMPLE = ROOT / "config" / "batch-only-example.yaml"
STACK = "HyperPod-batch-only-example-batch"
SEED_004 = sorted((SUPPORT / "scenarios").glob("s10_batch_*.yaml"))


@pytest.fixture(scope="module")
def assembly(tmp_path_factory) -> Path:
    return env_assembly(tmp_path_factory, "batch-only-example")


@pytest.mark.synth
def test_synth_writes_the_batch_stack_alone(assembly):
    assert sorted(p.name for p in assembly.glob("*.template.json")) == [f"{STACK}.template.json"]
    template = json.loads((assembly / f"{STACK}.template.json").read_text())
    types = {r["Type"] for r in template["Resources"].values()}
    assert not {t for t in types if t.startswith(("AWS::EKS::", "AWS::EC2::", "AWS::SageMaker::"))}
    assert list(template["Outputs"]) == ["BatchTeamRoleArns"]
    # The config digest lives in the Batch stack when there is no governance stack (plan --current reads it).
    assert "hyperpod-kit:config-sha256" in template["Metadata"]


@pytest.mark.synth
def test_cfn_lint_is_clean_in_the_environment_region(assembly):
    region = load_config(EXAMPLE).config.region
    result = subprocess.run([str(Path(sys.executable).parent / "cfn-lint"), "--regions", region, "--ignore-checks",
                             "W3005", "--", str(assembly / f"{STACK}.template.json")], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.synth
def test_batch_only_template_matches_snapshot(assembly, snapshot):
    """Review a change with `pytest tests/stacks/test_batch_only.py --snapshot-update` and read the diff."""
    assert normalised(assembly / f"{STACK}.template.json") == snapshot(extension_class=JSONSnapshotExtension)


def test_cdk_nag_has_nothing_unacknowledged(tmp_path):
    build(EXAMPLE, tmp_path).synth()  # raises on any finding nobody acknowledged
    report = json.loads((tmp_path / "validation-report.json").read_text())
    assert [(r["pluginName"], r["violations"]) for r in report["pluginReports"] if r["violations"]] == []


@pytest.mark.parametrize("path", [EXAMPLE, *SEED_004], ids=lambda p: p.stem)
def test_the_app_builds_what_the_layout_says_and_only_the_batch_stack(tmp_path, path):
    config = load_config(path).config
    assert config.hyperpod is None and config.batch is not None
    assert stack_suffixes(config) == ("batch",) and set(stack_costs(config)) == {"batch"}
    assert list(templates(build(path, tmp_path))) == [f"HyperPod-{config.environment}-batch"]


def test_one_output_holds_every_team_role_as_json(tmp_path):
    template = templates(build(EXAMPLE, tmp_path))[STACK].to_json()
    [output] = template["Outputs"].values()
    parts = output["Value"]["Fn::Join"][1]
    text = "".join(p if isinstance(p, str) else '"ARN"' for p in parts).replace('""ARN""', '"ARN"')
    roles = {logical for logical, r in template["Resources"].items() if r["Type"] == "AWS::IAM::Role"}
    assert json.loads(text) == {t: "ARN" for t in ("ProdExp1", "ProdExp2", "production", "exploration", "sweeps")}
    assert {p["Fn::GetAtt"][0] for p in parts if isinstance(p, dict)} == roles


def test_team_names_that_once_collided_as_output_ids_now_synthesize(tmp_path):
    """ProdExp1 and prod-exp1 both made output id BatchTeamRoleProdExp1 (HPK410); one JSON output has no ids."""
    text = EXAMPLE.read_text().replace("    - name: ProdExp2\n", "    - name: prod-exp1\n")
    path = tmp_path / "batch-only-example.yaml"
    path.write_text(text)
    assert check_file(path).findings == []
    output = templates(build(path, tmp_path / "out"))[STACK].to_json()["Outputs"]["BatchTeamRoleArns"]
    assert '"prod-exp1":"' in "".join(p for p in output["Value"]["Fn::Join"][1] if isinstance(p, str))


def test_validate_shows_the_batch_verdict_like_the_hyperpod_one(tmp_path):
    result = CliRunner().invoke(cli.main, ["validate", str(scenario("s10_batch_quota_shares.yaml"))])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert any(line.split() == ["p4d", "ml.p4d.24xlarge", "100/100"] for line in lines)
    # The seed's split and the most each share reaches while the other is idle (unlimited borrow).
    assert "ProdExp1 60 -> 100 ml.p4d.24xlarge (LendAndBorrow); ProdExp2 40 -> 100 ml.p4d.24xlarge" in result.output
    over = scenario("s10_batch_quota_shares.yaml").read_text().replace("count: 40", "count: 41")
    (tmp_path / "over.yaml").write_text(over)
    result = CliRunner().invoke(cli.main, ["validate", str(tmp_path / "over.yaml")])
    assert result.exit_code == 1 and any(line.split() == ["p4d", "ml.p4d.24xlarge", "101/100", "!"]
                                         for line in result.output.splitlines())


def test_validate_json_has_the_documented_batch_keys():
    result = CliRunner().invoke(cli.main, ["validate", "--format", "json", str(EXAMPLE),
                                           str(scenario("s10_batch_fifo_and_fair_share.yaml"))])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["capacity"] == doc["reach"] == []  # no HyperPod cluster
    rows = {(r["environment"], r["service_environment"], r["unit"]): (r["capacity"], r["quota_shares"])
            for r in doc["batch_capacity"]}
    assert rows[("batch-only-example", "p4d", "ml.p4d.24xlarge")] == (100, 100)
    assert rows[("batch-only-example", "g6", "NUM_INSTANCES")] == (8, None)  # no quota-share queue on it
    queues = {(r["environment"], r["queue"]): r for r in doc["batch_queues"]}
    fair = queues[("s10q", "ml-g6-12xlarge-queue")]
    assert (fair["scheduling"], fair["priority"]) == ("fair_share", 1)
    assert [(s["share_identifier"], s["weight_factor"]) for s in fair["shares"]] == [
        ("HIGHPRI", 1.0), ("MIDPRI", 3.0), ("LOWPRI", 5.0)]
    assert queues[("s10q", "ml-c5-xlarge-queue")]["shares"] == []
    quota = queues[("batch-only-example", "prod-p4d")]["shares"]
    assert [(s["team"], s["unit"], s["quota"], s["reach"], s["strategy"]) for s in quota] == [
        ("ProdExp1", "ml.p4d.24xlarge", 60, 100, "LendAndBorrow"), ("ProdExp2", "ml.p4d.24xlarge", 40, 100, "LendAndBorrow")]
    documented = (ROOT / "docs" / "reference" / "output-formats.md").read_text()
    for key in ("batch_capacity", "batch_queues", "quota_shares", "share_identifier", "weight_factor", "reach"):
        assert f"`{key}`" in documented, key


def scenario(name: str) -> Path:
    return SUPPORT / "scenarios" / name


def test_job_needs_a_hyperpod_cluster_and_says_so():
    result = CliRunner().invoke(cli.main, ["job", "--config", str(EXAMPLE), "--team", "ProdExp1", "--name", "a",
                                           "--image", "i:1", "--", "python", "train.py"])
    assert result.exit_code == 1  # a well-formed job this environment refuses on its merits: a finding
    assert "has no HyperPod cluster" in result.output and "batch-job" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_chart_pins_need_a_hyperpod_section():
    result = CliRunner().invoke(cli.main, ["chart-sha256", "--config", str(EXAMPLE)])
    assert result.exit_code == 2 and "no HyperPod cluster" in result.output


def test_batch_job_works_in_a_batch_only_environment():
    result = CliRunner().invoke(cli.main, ["batch-job", "--config", str(EXAMPLE), "--team", "ProdExp1", "--name", "e",
                                           "--image", "train:1", "--instance-type", "ml.p4d.24xlarge",
                                           "--instance-count", "15", "--priority", "90", "--output-s3", "s3://models/e"])
    assert result.exit_code == 0, result.output
    request = json.loads(result.output)
    assert (request["jobQueue"], request["quotaShareName"], request["schedulingPriority"]) == ("prod-p4d", "ProdExp1", 90)


def live(monkeypatch, batch, *files: Path) -> SimpleNamespace:
    """`validate --live --format json` with every AWS client the stubbed Batch client: a HyperPod read would
    fail the Stubber (no response queued), so the run proves that a Batch-only environment reads Batch only."""
    monkeypatch.setattr(boto3.session, "Session", lambda **kwargs: SimpleNamespace(
        client=lambda service, config=None: batch if service == "batch" else pytest.fail(f"read {service}")))
    result = CliRunner().invoke(cli.main, ["validate", "--live", "--format", "json", *map(str, files)])
    return SimpleNamespace(code=result.exit_code, doc=json.loads(result.stdout), stderr=result.stderr)


def batch_client():
    return boto3.client("batch", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")


def test_live_in_a_batch_only_environment_reads_batch_only_and_passes_in_sync(monkeypatch):
    batch = batch_client()
    s = stub(batch)  # the same batch section as config/batch-example.yaml
    result = live(monkeypatch, batch, EXAMPLE)
    s.assert_no_pending_responses()
    assert result.code == 0, result.doc
    [section] = result.doc["live"]
    assert section["hyperpod"] is None and "error" not in section["batch"]
    assert "no HyperPod cluster" in result.stderr


@pytest.mark.parametrize(("error", "said"), [
    ("AccessDeniedException", "not allowed to call batch:DescribeServiceEnvironments"),
    ("ThrottlingException", "batch:DescribeServiceEnvironments was throttled"),
])
def test_live_batch_read_errors_exit_2_with_the_reason(monkeypatch, error, said):
    batch = batch_client()
    s = Stubber(batch)
    s.add_client_error("describe_service_environments", service_error_code=error,
                       expected_params={"serviceEnvironments": ["p4d", "g6", "cpu"]})
    s.activate()
    result = live(monkeypatch, batch, EXAMPLE)
    assert result.code == 2
    assert said in result.doc["live"][0]["batch"]["error"]
    assert [e["code"] for e in result.doc["errors"]] == ["HPK606"]


def test_live_batch_findings_stay_exit_1(monkeypatch):
    batch = batch_client()
    s = stub(batch, fifo_policy=f"{PREFIX}:scheduling-policy/cpu-fair-share")  # the FIFO queue deployed fair-share
    result = live(monkeypatch, batch, EXAMPLE)
    s.assert_no_pending_responses()
    assert result.code == 1
    assert [(e["code"], e["path"]) for e in result.doc["errors"]] == [("HPK716", "batch.queues[2].scheduling")]


def test_live_without_credentials_exits_2_naming_them():
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_CONFIG_FILE="/nonexistent", AWS_SHARED_CREDENTIALS_FILE="/nonexistent",
               AWS_EC2_METADATA_DISABLED="true")
    result = subprocess.run([sys.executable, "-m", "cdk_app", "validate", str(EXAMPLE), "--live", "--format", "json"],
                            cwd=ROOT, capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 2, result.stderr
    assert "no AWS credentials" in json.loads(result.stdout)["live"][0]["batch"]["error"]
    assert "Traceback" not in result.stderr


@pytest.mark.synth
def test_plan_works_for_a_batch_only_synth(assembly):
    """plan --current reads the config digest from the Batch stack (there is no governance stack)."""
    result = CliRunner().invoke(cli.main, ["plan", str(EXAMPLE), "--baseline", str(assembly), "--current", str(assembly)])
    assert result.exit_code == 0, result.output
