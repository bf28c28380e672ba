"""`validate --live` against botocore's Stubber, which checks every request against the real SageMaker
and EKS models: paginated listings, drift, quotas made outside the kit, and each error path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import boto3
import pytest
from botocore.stub import Stubber
from support.paths import ROOT

from cdk_app.cli.live import LiveAccessError, compare, gather
from cdk_app.config.loader import load_config

LOADED = load_config(ROOT / "config" / "dev.yaml")
CONFIG = LOADED.config
ARN = "arn:aws:sagemaker:us-east-1:111122223333:cluster/abcdefghijkl"
NOW = datetime(2026, 11, 21, tzinfo=UTC)


def clients():
    kw = {"region_name": "us-east-1", "aws_access_key_id": "x", "aws_secret_access_key": "x"}
    return boto3.client("sagemaker", **kw), boto3.client("eks", **kw)


SUBNETS = ["subnet-0a1b2c3d4e5f60001", "subnet-0a1b2c3d4e5f60002"]


def cluster(gpu_count=4, name="hyperpod-dev"):
    return {"ClusterArn": ARN, "ClusterName": name, "ClusterStatus": "InService",
            "VpcConfig": {"SecurityGroupIds": ["sg-0a1b2c3d4e5f60001"], "Subnets": SUBNETS},
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


def stub_account(sm, eks, *, gpu_count=4, quotas_pages, policy_fair_share="Enabled", addon="v1.6.0-eksbuild.1",
                 name="hyperpod-dev"):
    s, e = Stubber(sm), Stubber(eks)
    s.add_response("describe_cluster", cluster(gpu_count, name), {"ClusterName": name})
    s.add_response("list_cluster_nodes", {"ClusterNodeSummaries": [node("gpu-workers", i=1)], "NextToken": "n2"},
                   {"ClusterName": name})
    s.add_response("list_cluster_nodes", {"ClusterNodeSummaries": [node("gpu-workers", "Failure", 2)]},
                   {"ClusterName": name, "NextToken": "n2"})
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


def test_a_renamed_instance_group_is_an_error_naming_the_deployed_group_and_its_nodes():
    """Before: only 'gpu-x does not exist on the deployed cluster (deploy the cluster stack)', a warning."""
    loaded = load_config_text(DEV_TEXT.replace("- name: gpu-workers", "- name: gpu-x"))
    sm, eks = clients()
    stub_account(sm, eks, quotas_pages=IN_SYNC)
    result = compare(loaded.config, loaded.source, gather(loaded.config, sm, eks))
    found = [f for f in result.findings if f.code == "HPK602"]
    deleted, = [f for f in found if f.severity.value == "error"]
    assert "instance group 'gpu-workers' (4 x ml.g5.12xlarge nodes) is not in the config: a deploy deletes it" \
        in deleted.message
    created, = [f for f in found if f.severity.value == "warning"]
    assert "a rename deletes the old group's nodes" in created.hint and "deploy the cluster stack" not in created.hint


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


IN_SYNC = [[quota("dev-john", "john", "ml.g5.12xlarge", 3), quota("dev-smith", "smith", "ml.g5.12xlarge", 1)]]


def shape_account(*, deployed_name="hyperpod-dev", zones=("use1-az4", "use1-az6"), cidr="10.192.0.0/16",
                  version="1.33", stack_exists=True):
    """The account as gather reads it with the create-only checks: the cluster stack's outputs first,
    then the cluster under the name they give, then its subnets, VPC and EKS version (real models)."""
    kw = {"region_name": "us-east-1", "aws_access_key_id": "x", "aws_secret_access_key": "x"}
    sm, eks = clients()
    cfn, ec2 = boto3.client("cloudformation", **kw), boto3.client("ec2", **kw)
    c, n = Stubber(cfn), Stubber(ec2)
    if stack_exists:
        c.add_response("describe_stacks", {"Stacks": [{
            "StackName": "HyperPod-dev-cluster", "CreationTime": NOW, "StackStatus": "UPDATE_COMPLETE",
            "Outputs": [{"OutputKey": "HyperPodClusterName", "OutputValue": deployed_name},
                        {"OutputKey": "EksClusterName", "OutputValue": "eks-dev"}]}]},
            {"StackName": "HyperPod-dev-cluster"})
    else:
        c.add_client_error("describe_stacks", service_error_code="ValidationError",
                           service_message="Stack with id HyperPod-dev-cluster does not exist",
                           expected_params={"StackName": "HyperPod-dev-cluster"})
    _, e = stub_account(sm, eks, quotas_pages=IN_SYNC, name=deployed_name)
    n.add_response("describe_subnets", {"Subnets": [
        {"SubnetId": subnet, "VpcId": "vpc-0a1b2c3d4e5f60001", "AvailabilityZoneId": zone, "CidrBlock": "10.192.0.0/20"}
        for subnet, zone in zip(SUBNETS, zones)]}, {"SubnetIds": SUBNETS})
    n.add_response("describe_vpcs", {"Vpcs": [{"VpcId": "vpc-0a1b2c3d4e5f60001", "CidrBlock": cidr}]},
                   {"VpcIds": ["vpc-0a1b2c3d4e5f60001"]})
    e.add_response("describe_cluster", {"cluster": {"name": "eks-dev", "version": version}}, {"name": "eks-dev"})
    c.activate()
    n.activate()
    return sm, eks, cfn, ec2


def shape_findings(config_text=None, **account):
    loaded = LOADED if config_text is None else load_config_text(config_text)
    state = gather(loaded.config, *shape_account(**account))
    return {f.code: f for f in compare(loaded.config, loaded.source, state).findings}


def load_config_text(text):
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "dev.yaml"
        path.write_text(text)
        return load_config(path)


DEV_TEXT = (ROOT / "config" / "dev.yaml").read_text()


def test_no_create_only_change_no_finding():
    assert shape_findings() == {}
    assert shape_findings(stack_exists=False) == {}  # first deploy: the name comes from the config


def test_renamed_cluster_is_refused_naming_the_property_and_the_deployed_name():
    found = shape_findings(deployed_name="hyperpod-dev-old")
    assert list(found) == ["HPK607"]
    assert "the deployed HyperPod cluster is 'hyperpod-dev-old', the config names 'hyperpod-dev': ClusterName is " \
           "create-only (AWS::SageMaker::Cluster)" in found["HPK607"].message
    assert found["HPK607"].hint.startswith("set hyperpod.cluster_name: hyperpod-dev-old")


def test_new_vpc_cidr_is_refused():
    found = shape_findings(DEV_TEXT.replace("vpc_cidr: 10.192.0.0/16", "vpc_cidr: 10.200.0.0/16"))
    assert list(found) == ["HPK608"]
    assert found["HPK608"].path == "network.vpc_cidr" and found["HPK608"].line == DEV_TEXT.splitlines().index(
        "  vpc_cidr: 10.192.0.0/16") + 1
    assert "CidrBlock is create-only (AWS::EC2::VPC)" in found["HPK608"].message
    assert "VpcConfig" in found["HPK608"].message


def test_cluster_zones_are_compared_with_cluster_zone_ids_in_order():
    """The HyperPod cluster's VpcConfig (create-only) is built from network.cluster_zone_ids, in order."""
    found = shape_findings(zones=("use1-az4", "use1-az2"))
    assert list(found) == ["HPK609"] and found["HPK609"].path == "network.cluster_zone_ids"
    assert "subnets are in use1-az4, use1-az2, the config makes them use1-az4, use1-az6" in found["HPK609"].message
    assert found["HPK609"].hint == "record network.cluster_zone_ids: [use1-az4, use1-az2] (in this order)"
    assert list(shape_findings(zones=("use1-az6", "use1-az4"))) == ["HPK609"]  # reordered


def test_a_cluster_zone_dropped_but_still_listed_in_availability_zones_is_refused():
    text = DEV_TEXT.replace("availability_zone_ids: [use1-az4, use1-az6]",
                            "availability_zone_ids: [use1-az4, use1-az6, use1-az2]").replace(
        "cluster_zone_ids: [use1-az4, use1-az6]", "cluster_zone_ids: [use1-az4, use1-az2]")
    found = shape_findings(text)
    assert list(found) == ["HPK609"]
    assert shape_findings(text.replace("cluster_zone_ids: [use1-az4, use1-az2]",
                                       "cluster_zone_ids: [use1-az4, use1-az6]")) == {}  # zone appended


def test_unrecorded_cluster_zones_follow_the_first_two_zones():
    text = DEV_TEXT.replace("  cluster_zone_ids: [use1-az4, use1-az6]\n", "").replace(
        "availability_zone_ids: [use1-az4, use1-az6]", "availability_zone_ids: [use1-az2, use1-az4, use1-az6]")
    found = shape_findings(text)
    assert list(found) == ["HPK609"] and found["HPK609"].path == "availability_zone_ids"
    assert "not recorded" in found["HPK609"].message


@pytest.mark.parametrize(("deployed", "message"), [
    ("1.34", "EKS cannot downgrade"), ("1.31", "EKS upgrades one minor version at a time"),
])
def test_kubernetes_version_eks_cannot_move_to(deployed, message):
    found = shape_findings(version=deployed)
    assert list(found) == ["HPK610"]
    assert message in found["HPK610"].message and found["HPK610"].path == "eks.kubernetes_version"
    assert shape_findings(version="1.32") == {}  # one minor up is an ordinary upgrade


def test_the_docs_list_every_action_live_needs():
    from cdk_app.cli.live import ACTIONS

    page = (ROOT / "docs" / "how-to" / "check-live.md").read_text()
    policy = json.loads(page[page.index('{\n  "Version"'):].split("\n```", 1)[0])
    assert sorted(policy["Statement"][0]["Action"]) == sorted(ACTIONS)


def _autoscaled_dev():
    groups = tuple(g.model_copy(update={"count": 0, "max_count": 4}) if g.name == "gpu-workers" else g
                   for g in CONFIG.hyperpod.instance_groups)
    return CONFIG.model_copy(update={"hyperpod": CONFIG.hyperpod.model_copy(update={"autoscaling": True,
                                                                                   "instance_groups": groups})})


@pytest.mark.parametrize(("running", "expected"), [(0, []), (1, []), (4, []), (5, ["HPK602"])])
def test_an_autoscaled_group_counts_up_to_its_max_count(running, expected):
    # Karpenter scales gpu-workers between 0 and 4: fewer nodes running is as the config says, and the quotas on
    # the 4 it may hold are not over capacity; more than max_count is drift.
    config = _autoscaled_dev()
    sm, eks = clients()
    stub_account(sm, eks, gpu_count=running, quotas_pages=[[quota("dev-john", "john", "ml.g5.12xlarge", 3)],
                                                          [quota("dev-smith", "smith", "ml.g5.12xlarge", 1)]])
    result = compare(config, LOADED.source, gather(config, sm, eks))
    assert codes(result) == expected
    if expected:
        assert result.findings[0].path == "hyperpod.instance_groups[0].max_count"


def test_live_partition_quotas_against_the_running_nodes_geometry():
    """A deployed p5 group whose nodes carry nvidia.com/mig.config all-1g.10gb (DescribeCluster's
    KubernetesConfig.CurrentLabels) gives 56 mig-1g.10gb per node; quotas of 57 are over, and its 8 GPUs are no
    whole ones any more."""
    from cdk_app.cli.live import LiveState

    groups = [{"InstanceGroupName": "mig", "InstanceType": "ml.p5.48xlarge", "CurrentCount": 1, "TargetCount": 1,
               "KubernetesConfig": {"CurrentLabels": {"nvidia.com/mig.config": "all-1g.10gb"}}}]
    Stubber(clients()[0]).add_response("describe_cluster", {**cluster(), "InstanceGroups": groups},
                                       {"ClusterName": "hyperpod-dev"})  # the shape is the model's
    partitions = [quota("dev-john", "john", "ml.p5.48xlarge", 0), quota("dev-smith", "smith", "ml.p5.48xlarge", 0)]
    for q, count in zip(partitions, (50, 7), strict=True):
        q["ComputeQuotaConfig"]["ComputeQuotaResources"] = [
            {"InstanceType": "ml.p5.48xlarge", "AcceleratorPartition": {"Type": "mig-1g.10gb", "Count": count}}]
    state = LiveState("hyperpod-dev", ARN, groups, {}, partitions, None, None)
    result = compare(CONFIG, LOADED.source, state)
    # (and over in vCPU too: partitions alone fill vCPU and memory in their share of the instance)
    [over] = [f for f in result.findings if f.code == "HPK603" and "partitions" in f.message]
    assert over.message == ("quotas on the deployed cluster reserve 57 mig-1g.10gb partitions of ml.p5.48xlarge but "
                            "its running nodes' nvidia.com/mig.config geometry gives 56")
    assert result.section["capacity"]["ml.p5.48xlarge"]["accelerators"] == 0
    partitions[0]["ComputeQuotaConfig"]["ComputeQuotaResources"][0]["AcceleratorPartition"]["Count"] = 49
    assert "HPK603" not in codes(compare(CONFIG, LOADED.source, state))


def test_the_live_capacity_leaves_the_system_groups_nodes_out():
    """prod's two tainted system nodes (ml.m7i.2xlarge, hyperpod.system_instance_group) run, but no team pod may
    use them: a live quota on that type is over the deployed capacity, as validate says of the config."""
    from cdk_app.cli.live import LiveState

    prod = load_config(ROOT / "config" / "prod.yaml")
    groups = [{"InstanceGroupName": g.name, "InstanceType": g.instance_type, "CurrentCount": g.count,
               "TargetCount": g.count} for g in prod.config.hyperpod.instance_groups]
    Stubber(clients()[0]).add_response("describe_cluster", {**cluster(), "InstanceGroups": groups},
                                       {"ClusterName": "hyperpod-dev"})  # the shape is the model's
    state = LiveState("hyperpod-prod", ARN, groups, {}, [quota("ops-pool", "ops", "ml.m7i.2xlarge", 1)], None, None)
    result = compare(prod.config, prod.source, state)
    assert "ml.m7i.2xlarge" not in result.section["capacity"]
    assert result.section["capacity"]["ml.m7i.4xlarge"]["count"] == 2
    assert any(f.code == "HPK603" and "ml.m7i.2xlarge" in f.message for f in result.findings)
