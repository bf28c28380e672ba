"""The whole app per environment, built in-process with cdk.json's feature flags: cdk-nag verdicts,
pinned logical ids of stateful resources, ordering, outputs and what an everyday edit changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aws_cdk import App, Stack, aws_s3 as s3
from aws_cdk.assertions import Template

from cdk_app.app_builder import build_app
from cdk_app.config.loader import load_config

ROOT = Path(__file__).resolve().parent.parent
CONTEXT = json.loads((ROOT / "cdk.json").read_text())["context"]
ENVIRONMENTS = ("dev", "prod")


def build(config_path: Path, outdir: Path) -> App:
    app = App(context=CONTEXT, outdir=str(outdir))
    build_app(app, load_config(config_path).config)
    return app


def templates(app: App) -> dict[str, Template]:
    return {stack.stack_name: Template.from_stack(stack) for stack in app.node.children if isinstance(stack, Stack)}


@pytest.fixture(scope="module")
def outdirs(tmp_path_factory) -> dict[str, Path]:
    return {env: tmp_path_factory.mktemp(f"app-{env}") for env in ENVIRONMENTS}


@pytest.fixture(scope="module")
def apps(outdirs) -> dict[str, dict[str, Template]]:
    built = {}
    for env in ENVIRONMENTS:
        app = build(ROOT / "config" / f"{env}.yaml", outdirs[env])
        app.synth()  # runs cdk-nag: raises on any finding nobody acknowledged
        built[env] = templates(app)
    return built


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_cdk_nag_has_nothing_unacknowledged(apps, outdirs, env):
    report = json.loads((outdirs[env] / "validation-report.json").read_text())
    assert report["pluginReports"] == []


def test_cdk_nag_is_live_and_fails_the_synth(tmp_path):
    """The same plug-in catches a finding nobody acknowledged: a bucket without TLS enforcement."""
    app = build(ROOT / "config" / "dev.yaml", tmp_path)
    stack = next(s for s in app.node.children if isinstance(s, Stack))
    s3.Bucket(stack, "Unacknowledged")
    with pytest.raises(Exception, match="ValidationFailed"):
        app.synth()
    report = json.loads((tmp_path / "validation-report.json").read_text())
    rules = {v["ruleName"] for r in report["pluginReports"] for v in r["violations"]}
    assert {"AwsSolutions-S1", "AwsSolutions-S10"} <= rules


# Stateful resources: renaming any of these ids makes CloudFormation replace the resource.
PINNED_IDS = {
    "network": {"AWS::EC2::VPC": "NetworkVpcFAC8F4A5"},
    "cluster": {
        "AWS::EKS::Cluster": "EksClusterB2BDED5B",
        "AWS::KMS::Key": "EksSecretsKey89C78FFD",
        "AWS::S3::Bucket": "LifecycleScriptsBucketBB67840B",
        "AWS::SageMaker::Cluster": "HyperPodED6AB1C4",
    },
}


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_stateful_logical_ids_are_pinned(apps, env):
    for stack, pinned in PINNED_IDS.items():
        template = apps[env][f"HyperPod-{env}-{stack}"]
        for resource_type, logical_id in pinned.items():
            assert list(template.find_resources(resource_type)) == [logical_id], (stack, resource_type)


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_hyperpod_cluster_waits_for_chart_scripts_and_permissions(apps, env):
    template = apps[env][f"HyperPod-{env}-cluster"]
    cluster = template.find_resources("AWS::SageMaker::Cluster")["HyperPodED6AB1C4"]
    depends = set(cluster["DependsOn"])
    assert set(template.find_resources("Custom::HyperPodHelmRelease")) <= depends
    assert set(template.find_resources("Custom::LifecycleScripts")) <= depends
    assert any(d.startswith("ExecutionRoleNodePolicy") for d in depends)
    release = next(iter(template.find_resources("Custom::HyperPodHelmRelease").values()))
    assert set(template.find_resources("AWS::EKS::Addon")) <= set(release["DependsOn"])


def test_dev_deep_health_checks_default_by_instance_type(apps):
    [cluster] = apps["dev"]["HyperPod-dev-cluster"].find_resources("AWS::SageMaker::Cluster").values()
    groups = {g["InstanceGroupName"]: g for g in cluster["Properties"]["InstanceGroups"]}
    assert groups["gpu-workers"]["OnStartDeepHealthChecks"] == ["InstanceStress", "InstanceConnectivity"]
    assert "OnStartDeepHealthChecks" not in groups["cpu-workers"]
    assert cluster["Properties"]["ClusterName"] == "hyperpod-dev"


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_cluster_stack_outputs(apps, env):
    outputs = apps[env][f"HyperPod-{env}-cluster"].to_json()["Outputs"]
    assert {"EksClusterName", "EksClusterArn", "HyperPodClusterName", "HyperPodClusterArn", "LifecycleBucketName",
            "ExecutionRoleArn", "KubeconfigCommand", "HelmChartArchiveSha256"} <= set(outputs)


def test_lifecycle_bucket_name_is_per_account_region_environment(apps):
    for env, region in (("dev", "us-east-1"), ("prod", "us-west-2")):
        template = apps[env][f"HyperPod-{env}-cluster"]
        [bucket] = template.find_resources("AWS::S3::Bucket").values()
        account = load_config(ROOT / "config" / f"{env}.yaml").config.account
        assert bucket["Properties"]["BucketName"] == f"sagemaker-hpk-{env}-{account}-{region}"


def test_team_quota_edit_leaves_network_and_cluster_stacks_unchanged(apps, tmp_path):
    """Admins edit quotas every week; that must never touch (let alone replace) the cluster."""
    edited = (ROOT / "config" / "dev.yaml").read_text().replace("      - instance_type: ml.g5.12xlarge\n        count: 3",
                                                                "      - instance_type: ml.g5.12xlarge\n        count: 2")
    assert "count: 2" in edited
    path = tmp_path / "dev.yaml"
    path.write_text(edited)
    after = templates(build(path, tmp_path / "out"))
    for stack in ("HyperPod-dev-network", "HyperPod-dev-cluster"):
        assert after[stack].to_json() == apps["dev"][stack].to_json(), stack


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_no_wildcard_action_in_any_iam_policy(apps, env):
    """Identity policies only: the KMS key policy keeps AWS's default statement that hands the key to IAM."""
    for stack, template in apps[env].items():
        for resource_type in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"):
            for logical_id, policy in template.find_resources(resource_type).items():
                for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
                    actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
                    assert not [a for a in actions if "*" in a], (stack, logical_id, statement)
