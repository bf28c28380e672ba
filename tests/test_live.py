"""`validate --live` against botocore's Stubber, which checks every request against the real SageMaker
and EKS models: paginated listings, drift, quotas made outside the kit, and each error path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import boto3
import pytest
from botocore.stub import Stubber

from cdk_app.config.loader import load_config
from cdk_app.live import LiveAccessError, compare, gather

ROOT = Path(__file__).resolve().parent.parent
LOADED = load_config(ROOT / "config" / "dev.yaml")
CONFIG = LOADED.config
ARN = "arn:aws:sagemaker:us-east-1:111122223333:cluster/abcdefghijkl"
NOW = datetime(2026, 11, 21, tzinfo=timezone.utc)


def clients():
    kw = {"region_name": "us-east-1", "aws_access_key_id": "x", "aws_secret_access_key": "x"}
    return boto3.client("sagemaker", **kw), boto3.client("eks", **kw)


def cluster(gpu_count=4):
    return {"ClusterArn": ARN, "ClusterName": "hyperpod-dev", "ClusterStatus": "InService",
            "InstanceGroups": [
                {"InstanceGroupName": "gpu-workers", "InstanceType": "ml.g5.12xlarge", "CurrentCount": gpu_count,
                 "TargetCount": 4},
                {"InstanceGroupName": "cpu-workers", "InstanceType": "ml.m5.2xlarge", "CurrentCount": 2, "TargetCount": 2}],
            "Orchestrator": {"Eks": {"ClusterArn": "arn:aws:eks:us-east-1:111122223333:cluster/eks-dev"}}}


def quota(name, team, itype, count):
    return {"ComputeQuotaArn": f"arn:aws:sagemaker:us-east-1:111122223333:compute-quota/{name[:12]:0<12}",
            "ComputeQuotaId": f"{name[:12]:0<12}", "Name": name, "Status": "Created", "CreationTime": NOW,
            "ComputeQuotaTarget": {"TeamName": team},
            "ComputeQuotaConfig": {"ComputeQuotaResources": [{"InstanceType": itype, "Count": count}]}}


def node(group, status="Running", i=0):
    return {"InstanceGroupName": group, "InstanceId": f"i-{i:017d}", "InstanceType": "ml.g5.12xlarge",
            "LaunchTime": NOW, "InstanceStatus": {"Status": status}}


def stub_account(sm, eks, *, gpu_count=4, quotas_pages, policy_fair_share="Enabled", addon="v1.6.0-eksbuild.1"):
    s, e = Stubber(sm), Stubber(eks)
    s.add_response("describe_cluster", cluster(gpu_count), {"ClusterName": "hyperpod-dev"})
    s.add_response("list_cluster_nodes", {"ClusterNodeSummaries": [node("gpu-workers", i=1)], "NextToken": "n2"},
                   {"ClusterName": "hyperpod-dev"})
    s.add_response("list_cluster_nodes", {"ClusterNodeSummaries": [node("gpu-workers", "Failure", 2)]},
                   {"ClusterName": "hyperpod-dev", "NextToken": "n2"})
    for index, page in enumerate(quotas_pages):
        response = {"ComputeQuotaSummaries": page}
        if index + 1 < len(quotas_pages):
            response["NextToken"] = f"q{index + 1}"
        params = {"ClusterArn": ARN, **({"NextToken": f"q{index}"} if index else {})}
        s.add_response("list_compute_quotas", response, params)
    s.add_response("list_cluster_scheduler_configs", {"ClusterSchedulerConfigSummaries": [{
        "ClusterSchedulerConfigArn": "arn:aws:sagemaker:us-east-1:111122223333:cluster-scheduler-config/policy000001",
        "ClusterSchedulerConfigId": "policy000001", "Name": "dev-policy", "CreationTime": NOW, "Status": "Created"}]},
        {"ClusterArn": ARN})
    s.add_response("describe_cluster_scheduler_config", {
        "ClusterSchedulerConfigArn": "arn:aws:sagemaker:us-east-1:111122223333:cluster-scheduler-config/policy000001",
        "ClusterSchedulerConfigId": "policy000001", "Name": "dev-policy", "ClusterSchedulerConfigVersion": 1,
        "Status": "Created", "CreationTime": NOW,
        "SchedulerConfig": {"FairShare": policy_fair_share, "IdleResourceSharing": "Enabled"}},
        {"ClusterSchedulerConfigId": "policy000001"})
    e.add_response("describe_addon", {"addon": {"addonName": "amazon-sagemaker-hyperpod-taskgovernance",
                                                "addonVersion": addon}},
                   {"clusterName": "eks-dev", "addonName": "amazon-sagemaker-hyperpod-taskgovernance"})
    s.activate()
    e.activate()
    return s, e


def codes(result):
    return sorted(f.code for f in result.findings)


def test_in_sync_account_reports_nothing_and_reads_every_page():
    sm, eks = clients()
    s, e = stub_account(sm, eks, quotas_pages=[[quota("dev-john", "john", "ml.g5.12xlarge", 3)],
                                               [quota("dev-smith", "smith", "ml.g5.12xlarge", 1)]])
    state = gather(CONFIG, sm, eks)
    s.assert_no_pending_responses()
    e.assert_no_pending_responses()
    result = compare(CONFIG, LOADED.source, state)
    assert codes(result) == []
    assert result.section["reserved"]["ml.g5.12xlarge"]["count"] == 4
    assert result.section["instance_groups"][0]["unhealthy_nodes"] == 1


def test_drift_and_quotas_made_outside_the_kit():
    sm, eks = clients()
    stub_account(sm, eks, gpu_count=3, policy_fair_share="Disabled", addon="v1.5.0-eksbuild.1",
                 quotas_pages=[[quota("dev-john", "john", "ml.g5.12xlarge", 3), quota("console-made", "ops", "ml.g5.12xlarge", 1)]])
    result = compare(CONFIG, LOADED.source, gather(CONFIG, sm, eks))
    assert codes(result) == ["HPK601", "HPK602", "HPK603", "HPK604", "HPK605"]
    by_code = {f.code: f for f in result.findings}
    assert "'console-made' (team ops) was made outside the kit and reserves 33% of ml.g5.12xlarge" in by_code["HPK601"].message
    assert by_code["HPK602"].path == "hyperpod.instance_groups[0].count" and by_code["HPK602"].line > 1
    assert "reserve 4 instances of ml.g5.12xlarge but it has 3 running" in by_code["HPK603"].message
    assert "FairShare is Disabled" in by_code["HPK604"].message
    assert by_code["HPK605"].path == "task_governance.addon_version"


@pytest.mark.parametrize(("code", "operation", "message"), [
    ("AccessDeniedException", "describe_cluster", "not allowed to call sagemaker:DescribeCluster"),
    ("ThrottlingException", "describe_cluster", "sagemaker:DescribeCluster was throttled 6 times"),
    ("ResourceNotFound", "describe_cluster", "HyperPod cluster 'hyperpod-dev' not found in 111122223333/us-east-1"),
])
def test_account_errors_are_named(code, operation, message):
    sm, eks = clients()
    s = Stubber(sm)
    s.add_client_error(operation, service_error_code=code, expected_params={"ClusterName": "hyperpod-dev"})
    s.activate()
    with pytest.raises(LiveAccessError, match=message):
        gather(CONFIG, sm, eks)


def test_permission_missing_on_a_later_call_names_that_action():
    sm, eks = clients()
    s = Stubber(sm)
    s.add_response("describe_cluster", cluster(), {"ClusterName": "hyperpod-dev"})
    s.add_client_error("list_cluster_nodes", service_error_code="AccessDeniedException",
                       expected_params={"ClusterName": "hyperpod-dev"})
    s.activate()
    with pytest.raises(LiveAccessError, match="sagemaker:ListClusterNodes"):
        gather(CONFIG, sm, eks)


def test_cli_without_credentials_reports_and_exits_2():
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_CONFIG_FILE="/nonexistent", AWS_SHARED_CREDENTIALS_FILE="/nonexistent",
               AWS_EC2_METADATA_DISABLED="true")
    result = subprocess.run([sys.executable, "-m", "cdk_app", "validate", "config/dev.yaml", "--live", "--format", "json"],
                            cwd=ROOT, capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 2, result.stderr
    document = json.loads(result.stdout)
    assert "no AWS credentials" in document["live"][0]["error"]
    assert any(e["code"] == "HPK606" for e in document["errors"])
    assert "Traceback" not in result.stderr
