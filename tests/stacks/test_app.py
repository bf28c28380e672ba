"""The whole app per environment, built in-process with cdk.json's feature flags: cdk-nag verdicts,
pinned logical ids of stateful resources, ordering, outputs and what an everyday edit changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aws_cdk import Stack
from aws_cdk import aws_s3 as s3
from aws_cdk.assertions import Template
from support.app_synth import build, templates
from support.paths import ROOT
from support.synthesis import env_assembly

from cdk_app.cli.plan import read_templates
from cdk_app.config.loader import load_config
from cdk_app.config.storage_model import team_file_systems
from cdk_app.validator.report import check_file

ENVIRONMENTS = ("dev", "prod")


@pytest.fixture(scope="module")
def outdirs(tmp_path_factory) -> dict[str, Path]:
    """The CLI's synth of each environment (cdk-nag ran in it: a finding nobody acknowledged fails it), shared
    with test_synth and test_plan."""
    return {env: env_assembly(tmp_path_factory, env) for env in ENVIRONMENTS}


@pytest.fixture(scope="module")
def apps(outdirs) -> dict[str, dict[str, Template]]:
    return {env: {name: Template.from_json(template) for name, template in read_templates(outdirs[env]).items()}
            for env in ENVIRONMENTS}


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_cdk_nag_has_nothing_unacknowledged(apps, outdirs, env):
    report = json.loads((outdirs[env] / "validation-report.json").read_text())
    assert [(r["pluginName"], r["violations"]) for r in report["pluginReports"] if r["violations"]] == []
    assert all(r["conclusion"] == "success" for r in report["pluginReports"])


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
            "ExecutionRoleArn", "KubeconfigCommand", "HelmChartContentSha256"} <= set(outputs)


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


def test_removing_a_team_changes_its_guardrails_but_not_the_cluster_stack(apps, tmp_path):
    """Review finding 3: the guardrails of every team namespace were pinned in the cluster stack, so a team change
    that deployed the governance stack alone applied nothing. A team change is now the governance stack's only."""
    text = (ROOT / "config" / "dev.yaml").read_text()
    start = text.index("  - name: john\n")
    edited = text[:start] + text[text.index("  - name: smith\n"):]
    path = tmp_path / "dev.yaml"
    path.write_text(edited.replace("count: 1\n", "count: 1\n", 1))
    after = templates(build(path, tmp_path / "out"))
    for stack in ("HyperPod-dev-network", "HyperPod-dev-cluster"):
        assert after[stack].to_json() == apps["dev"][stack].to_json(), stack

    def guardrails(template) -> dict:
        return next(r["Properties"]["ManifestsObject"] for r in template.find_resources("Custom::KubernetesManifests").values()
                    if r["Properties"]["Name"] == "guardrails")

    assert guardrails(after["HyperPod-dev-governance"])["Sha256"] != guardrails(apps["dev"]["HyperPod-dev-governance"])["Sha256"]


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_no_wildcard_action_in_any_iam_policy(apps, env):
    """Identity policies only: the KMS key policy keeps AWS's default statement that hands the key to IAM."""
    for stack, template in apps[env].items():
        for resource_type in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"):
            for logical_id, policy in template.find_resources(resource_type).items():
                for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
                    actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
                    assert not [a for a in actions if "*" in a], (stack, logical_id, statement)


def test_deploy_order_chart_cluster_node_addon_policy_quotas(apps, tmp_path):
    """Helm release -> HyperPod cluster (cluster stack) -> a schedulable node -> task governance add-on -> Kueue
    Available -> cluster policy -> quotas."""
    for env in ENVIRONMENTS:
        governance = apps[env][f"HyperPod-{env}-governance"].to_json()["Resources"]
        [addon_id] = [k for k, v in governance.items() if v["Type"] == "AWS::EKS::Addon"
                      and v["Properties"]["AddonName"] == "amazon-sagemaker-hyperpod-taskgovernance"]
        [policy_id] = [k for k, v in governance.items() if v["Type"].endswith("ClusterSchedulerConfig")]
        quotas = [v for v in governance.values() if v["Type"].endswith("ComputeQuota")]
        [wait_id] = [k for k, v in governance.items() if v["Type"] == "Custom::DeploymentAvailable"]
        assert governance[wait_id]["Properties"]["Namespace"] == "kueue-system"
        assert governance[wait_id]["Properties"]["Name"] == "kueue-controller-manager"
        assert addon_id in governance[wait_id]["DependsOn"] and wait_id in governance[policy_id]["DependsOn"]
        [node_id] = [k for k, v in governance.items() if v["Type"] == "Custom::SchedulableNode"]
        assert governance[addon_id]["DependsOn"] == [node_id]
        # Review finding 7: the preserved Kueue objects of a rolled-back stack must not block the next create.
        assert governance[addon_id]["Properties"]["ResolveConflicts"] == "OVERWRITE"
        assert quotas and all(policy_id in q["DependsOn"] for q in quotas)
        # The governance stack reads the HyperPod cluster's ARN from the cluster stack, so it deploys after it.
        policy_cluster = json.dumps(governance[policy_id]["Properties"])
        assert f"HyperPod-{env}-cluster" in policy_cluster and "HyperPod" in policy_cluster


def test_native_types_where_the_region_has_them_api_elsewhere(apps):
    dev = apps["dev"]["HyperPod-dev-governance"]
    dev.resource_count_is("AWS::SageMaker::ClusterSchedulerConfig", 1)
    dev.resource_count_is("AWS::SageMaker::ComputeQuota", 2)
    prod = apps["prod"]["HyperPod-prod-governance"]  # us-west-2 lacks the native ClusterSchedulerConfig
    prod.resource_count_is("AWS::SageMaker::ClusterSchedulerConfig", 0)
    prod.resource_count_is("Custom::SageMakerClusterSchedulerConfig", 1)
    prod.resource_count_is("AWS::SageMaker::ComputeQuota", 6)


def test_team_quota_properties_and_shared_pool(apps):
    dev = apps["dev"]["HyperPod-dev-governance"]
    dev.has_resource_properties("AWS::SageMaker::ComputeQuota", {
        "Name": "dev-john", "ActivationState": "Enabled",
        "ComputeQuotaConfig": {"ComputeQuotaResources": [{"InstanceType": "ml.g5.12xlarge", "Count": 3},
                                                         {"InstanceType": "ml.m5.2xlarge", "Count": 1}],
                               "ResourceSharingConfig": {"Strategy": "LendAndBorrow", "BorrowLimit": 50},
                               "PreemptTeamTasks": "LowerPriority"},
        "ComputeQuotaTarget": {"TeamName": "john", "FairShareWeight": 0}})
    dev.has_resource_properties("AWS::SageMaker::ClusterSchedulerConfig", {
        "SchedulerConfig": {"FairShare": "Enabled", "IdleResourceSharing": "Enabled"}})
    prod = load_config(ROOT / "config" / "prod.yaml").config
    pool = prod.shared_pool.name
    apps["prod"]["HyperPod-prod-governance"].has_resource_properties("AWS::SageMaker::ComputeQuota", {
        "Name": f"prod-{pool}", "ComputeQuotaTarget": {"TeamName": pool, "FairShareWeight": prod.shared_pool.fair_share_weight},
        "ComputeQuotaConfig": {"ResourceSharingConfig": {"Strategy": prod.shared_pool.sharing_strategy}}})


def test_team_access_maps_to_the_team_group_only(apps):
    dev = apps["dev"]["HyperPod-dev-governance"]
    for team, principal in (("john", "TeamJohn"), ("smith", "TeamSmith")):
        dev.has_resource_properties("AWS::EKS::AccessEntry", {"KubernetesGroups": [f"hyperpod-team-{team}"],
                                                              "Type": "STANDARD"})
        dev.has_resource_properties("AWS::IAM::Role", {"AssumeRolePolicyDocument": {"Statement": [
            {"Action": "sts:AssumeRole", "Effect": "Allow",
             "Principal": {"AWS": f"arn:aws:iam::111122223333:role/{principal}"}}]}})
    for entry in dev.find_resources("AWS::EKS::AccessEntry").values():
        assert "AccessPolicies" not in entry["Properties"], "team rights come from the namespaced Role only"


def test_team_rbac_is_applied_after_the_team_quota(apps):
    dev = apps["dev"]["HyperPod-dev-governance"].to_json()["Resources"]
    for team in ("john", "smith"):
        [(rbac_id, rbac)] = [(k, v) for k, v in dev.items() if v["Type"] == "Custom::KubernetesManifests"
                             and f'"team-{team}"' in json.dumps(v["Properties"]["Name"])]
        [quota_id] = [k for k, v in dev.items() if v["Type"] == "AWS::SageMaker::ComputeQuota"
                      and v["Properties"]["ComputeQuotaTarget"]["TeamName"] == team]
        assert quota_id in rbac["DependsOn"]
        manifests = json.loads(rbac["Properties"]["Manifests"])
        dev_config = load_config(ROOT / "config" / "dev.yaml").config
        claims = {"PersistentVolumeClaim"} if team_file_systems(dev_config.storage, team) else set()
        assert {m["kind"] for m in manifests} == {"Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding",
                                                  "NetworkPolicy", "ResourceQuota", *claims}
        # Namespaced objects go to the team's namespace; the cluster-scoped ones read only the team's own.
        assert {m["metadata"].get("namespace") for m in manifests} == {f"hyperpod-ns-{team}", None}


def test_observability_addon_collects_kueue_metrics(apps):
    dev = apps["dev"]["HyperPod-dev-governance"]
    [addon] = [v for v in dev.find_resources("AWS::EKS::Addon").values()
               if v["Properties"]["AddonName"] == "amazon-cloudwatch-observability"]
    values = json.loads(addon["Properties"]["ConfigurationValues"])
    assert values["agent"]["config"]["logs"]["metrics_collected"]["kubernetes"] == {
        "enhanced_container_insights": True, "kueue_container_insights": True}
    assert addon["Properties"]["PodIdentityAssociations"][0]["ServiceAccount"] == "cloudwatch-agent"


# What AWS documents for each service's role trust (constructs/service_trust.py has the sources): a condition
# on a key a service does not send would stop it from assuming the role.
DOCUMENTED_TRUST = {
    "eks.amazonaws.com": {"aws:SourceAccount"}, "states.amazonaws.com": {"aws:SourceAccount"},
    "vpc-flow-logs.amazonaws.com": {"aws:SourceAccount", "aws:SourceArn"},
    "pods.eks.amazonaws.com": {"aws:RequestTag/eks-cluster-name", "aws:RequestTag/kubernetes-namespace",
                               "aws:RequestTag/kubernetes-service-account"},
    "sagemaker.amazonaws.com": set(), "lambda.amazonaws.com": set(),
}


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_every_service_trust_carries_exactly_the_conditions_aws_documents(apps, env):
    """Review finding 2: no AWS page says HyperPod (or Lambda) sends aws:SourceAccount, and AWS's HyperPod templates
    leave it off; where a service documents a key, the trust checks it against this account. Every role of every
    stack, CDK's own framework roles too."""
    account = load_config(ROOT / "config" / f"{env}.yaml").config.account
    checked = set()
    for stack, template in apps[env].items():
        for logical_id, role in template.find_resources("AWS::IAM::Role").items():
            for statement in role["Properties"]["AssumeRolePolicyDocument"]["Statement"]:
                services = statement["Principal"].get("Service")
                if services is None:
                    continue
                [service] = services if isinstance(services, list) else [services]
                condition = statement.get("Condition", {})
                keys = {key for operator in condition.values() for key in operator}
                assert keys == DOCUMENTED_TRUST[service], (stack, logical_id)
                if "aws:SourceAccount" in keys:
                    assert condition["StringEquals"]["aws:SourceAccount"] == account, (stack, logical_id)
                source_arn = condition.get("ArnLike", {}).get("aws:SourceArn")
                assert source_arn is None or f":{account}:" in json.dumps(source_arn), (stack, logical_id)
                checked.add(service)
    assert checked == set(DOCUMENTED_TRUST)


SCHEMAS = Path(__import__("cfnlint").__file__).parent / "data" / "schemas"


def create_only(resource_type: str) -> list[tuple[str, ...]]:
    """CloudFormation's createOnlyProperties of a type (cfn-lint's copy of the resource schema), as key paths."""
    providers = json.loads((SCHEMAS / "providers" / "us-east-1.json").read_text())
    schema = json.loads((SCHEMAS / "resources" / f"{providers[resource_type]}.json").read_text())
    return [tuple(p.split("/")[2:]) for p in schema["createOnlyProperties"]]


def dig(properties: dict, path: tuple[str, ...]):
    for key in path:
        if not isinstance(properties, dict) or key not in properties:
            return None
        properties = properties[key]
    return properties


def edited_dev(tmp_path: Path, *edits: tuple[str, str]) -> dict[str, Template]:
    text = (ROOT / "config" / "dev.yaml").read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    path = tmp_path / "dev.yaml"
    path.write_text(text)
    assert check_file(path).exit_code == 0, [f.render() for f in check_file(path).findings]
    return templates(build(path, tmp_path / "out"))


def the(template: Template, resource_type: str) -> dict:
    [resource] = template.find_resources(resource_type).values()
    return resource["Properties"]


APPEND_ZONE = ("availability_zone_ids: [use1-az4, use1-az6]", "availability_zone_ids: [use1-az4, use1-az6, use1-az1]")
GROUP_IN_NEW_ZONE = ("    - name: cpu-workers\n", "    - name: cpu-az1\n      instance_type: ml.m5.2xlarge\n      count: 1\n"
                     "      availability_zone_id: use1-az1\n    - name: cpu-workers\n")


def test_appending_a_zone_leaves_the_eks_and_hyperpod_clusters_untouched(apps, tmp_path):
    """Zones are append-only: a new zone (and a group in it) adds subnets, touches no existing one, and leaves
    every create-only property of both clusters - as CloudFormation's schemas list them - as it was."""
    before = apps["dev"]
    after = edited_dev(tmp_path, APPEND_ZONE, GROUP_IN_NEW_ZONE)
    cluster_before, cluster_after = before["HyperPod-dev-cluster"], after["HyperPod-dev-cluster"]
    assert the(cluster_after, "AWS::EKS::Cluster") == the(cluster_before, "AWS::EKS::Cluster")
    hyperpod_before, hyperpod_after = (the(cluster_before, "AWS::SageMaker::Cluster"),
                                       the(cluster_after, "AWS::SageMaker::Cluster"))
    paths = create_only("AWS::SageMaker::Cluster")
    assert ("VpcConfig",) in paths
    for path in paths:
        assert dig(hyperpod_after, path) == dig(hyperpod_before, path), path
    groups = {g["InstanceGroupName"]: g for g in hyperpod_after["InstanceGroups"]}
    assert len(groups["cpu-az1"]["OverrideVpcConfig"]["Subnets"]) == 1
    assert groups["cpu-az1"]["OverrideVpcConfig"]["Subnets"] != hyperpod_after["VpcConfig"]["Subnets"][:1]
    # Network: every resource that was there is as it was, but the S3 endpoint, which gains a route table.
    network_before = before["HyperPod-dev-network"].to_json()["Resources"]
    network_after = after["HyperPod-dev-network"].to_json()["Resources"]
    unchanged = {k: v for k, v in network_before.items() if v["Type"] != "AWS::EC2::VPCEndpoint"}
    assert {k: network_after[k] for k in unchanged} == unchanged
    [endpoint] = [v for v in network_after.values() if v["Type"] == "AWS::EC2::VPCEndpoint"]
    assert len(endpoint["Properties"]["RouteTableIds"]) == 3


def test_reordering_zones_changes_nothing(apps, tmp_path):
    after = edited_dev(tmp_path, ("availability_zone_ids: [use1-az4, use1-az6]", "availability_zone_ids: [use1-az6, use1-az4]"))
    for stack in ("HyperPod-dev-network", "HyperPod-dev-cluster"):
        assert after[stack].to_json() == apps["dev"][stack].to_json(), stack


def test_a_cfn_lint_upgrade_adding_the_native_type_changes_no_recorded_environment(apps, tmp_path, monkeypatch):
    """prod records cluster_policy: api in us-west-2. If a newer cfn-lint listed the native type there, the
    template must stay as it is (a new type under the same logical id is refused by CloudFormation)."""
    import cdk_app.domain.governance_types as governance_types
    real = governance_types.cloudformation_types
    upgraded = lambda region: real(region) | {"AWS::SageMaker::ClusterSchedulerConfig", "AWS::SageMaker::ComputeQuota"}
    monkeypatch.setattr(governance_types, "cloudformation_types", upgraded)
    after = templates(build(ROOT / "config" / "prod.yaml", tmp_path / "out"))
    # (The shared synth is the CLI's, which app.py stamps with the config digest; this one is not stamped.)
    unstamped = {k: v for k, v in apps["prod"]["HyperPod-prod-governance"].to_json().items() if k != "Metadata"}
    assert after["HyperPod-prod-governance"].to_json() == unstamped
    # Without the record the same upgrade would flip the type, so nothing is built from the region data: the
    # validator refuses the config (HPK312, which app.py treats as every error) and the stacks cannot use it.
    text = (ROOT / "config" / "prod.yaml").read_text()
    unrecorded = text.replace("    cluster_policy: api\n", "")
    assert unrecorded != text
    (tmp_path / "prod.yaml").write_text(unrecorded)
    config = load_config(tmp_path / "prod.yaml").config
    assert governance_types.derived_type(config, "cluster_policy") == "native"
    monkeypatch.setattr(governance_types, "cloudformation_types", real)
    assert governance_types.derived_type(config, "cluster_policy") == "api"
    assert [f.code for f in check_file(tmp_path / "prod.yaml").errors] == ["HPK312"]
    with pytest.raises(ValueError, match="cluster_policy is not recorded"):
        build(tmp_path / "prod.yaml", tmp_path / "unrecorded")


# Stateful: cfn-lint's own list of types that hold data (AdditionalSpecs/StatefulResources.json), plus what a
# running cluster cannot lose though CloudFormation does not call it stateful: the HyperPod cluster (its nodes
# and their jobs), the EKS cluster (every Kubernetes object), the VPC and its subnets (the nodes' interfaces;
# subnet CIDRs are create-only) and the NAT addresses (other systems may allow-list them).
KIT_STATEFUL = {"AWS::SageMaker::Cluster", "AWS::EKS::Cluster", "AWS::EC2::VPC", "AWS::EC2::Subnet", "AWS::EC2::EIP"}
CFN_LINT_STATEFUL = set(json.loads((SCHEMAS.parent / "AdditionalSpecs" / "StatefulResources.json").read_text())
                        ["ResourceTypes"])
RETAINED = {"Retain", "RetainExceptOnCreate"}


def handler_log_groups(resources: dict) -> set[str]:
    """Log groups of the kit's custom-resource functions: operational logs that go with their functions (their
    retention still applies while the stack lives); the one exception to cfn-lint's AWS::Logs::LogGroup."""
    return {f["Properties"]["LoggingConfig"]["LogGroup"]["Ref"] for f in resources.values()
            if f["Type"] == "AWS::Lambda::Function" and "LoggingConfig" in f["Properties"]}


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_every_stateful_resource_is_retained(apps, env):
    found = set()
    for stack, template in apps[env].items():
        resources = template.to_json()["Resources"]
        exempt = handler_log_groups(resources)
        for logical_id, resource in resources.items():
            if resource["Type"] not in KIT_STATEFUL | CFN_LINT_STATEFUL or logical_id in exempt:
                continue
            found.add(resource["Type"])
            assert resource.get("DeletionPolicy") in RETAINED, (stack, logical_id, resource.get("DeletionPolicy"))
            assert resource.get("UpdateReplacePolicy") == "Retain", (stack, logical_id)
    assert KIT_STATEFUL | {"AWS::KMS::Key", "AWS::S3::Bucket", "AWS::Logs::LogGroup"} <= found


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_add_ons_the_cluster_runs_on_are_preserved_on_delete(apps, env):
    """Deleting a stack removes the add-on object, not the software: Kueue (task governance) and the VPC CNI,
    kube-proxy, CoreDNS and the pod identity agent keep running on the retained cluster."""
    addons = {a["Properties"]["AddonName"]: a["Properties"] for template in apps[env].values()
              for a in template.find_resources("AWS::EKS::Addon").values()}
    for name in ("amazon-sagemaker-hyperpod-taskgovernance", "vpc-cni", "kube-proxy", "coredns", "eks-pod-identity-agent"):
        assert addons[name].get("PreserveOnDelete") is True, name
    # The HyperPod dependency chart likewise: no `helm uninstall` when the cluster stack is deleted (the cluster
    # stays); only the rollback of the create that installed it (RetainExceptOnCreate) uninstalls.
    [release] = [r for template in apps[env].values()
                 for r in template.find_resources("Custom::HyperPodHelmRelease").values()]
    assert (release.get("DeletionPolicy"), release.get("UpdateReplacePolicy")) == ("RetainExceptOnCreate", "Retain")


def test_network_cluster_and_batch_stacks_have_termination_protection(outdirs, apps):
    for env in ENVIRONMENTS:
        manifest = json.loads((outdirs[env] / "manifest.json").read_text())["artifacts"]
        stacks = {name: artifact for name, artifact in manifest.items() if artifact.get("type") == "aws:cloudformation:stack"}
        protected = {name for name, artifact in stacks.items() if artifact["properties"].get("terminationProtection")}
        assert protected == {f"HyperPod-{env}-{s}" for s in ("network", "cluster", "storage", "batch")} & set(stacks)
