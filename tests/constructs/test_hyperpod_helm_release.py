"""Fine-grained tests of the installer's constructs: HyperPodHelmRelease, KubernetesManifests and
DeploymentAvailable (the deploy-time side is in test_helm_release_handler.py)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from aws_cdk import App, Duration, Environment, Stack
from aws_cdk import aws_eks_v2 as eks
from aws_cdk.assertions import Match, Template
from support.paths import ROOT

from cdk_app.config.loader import load_config
from cdk_app.kubernetes.guardrails import guardrail_manifests
from cdk_app.kubernetes.team_rbac import team_manifests
from cdk_app.stacks.app_builder import build_app
from hyperpod_constructs.deployment_available import DeploymentAvailable, DeploymentAvailableProps
from hyperpod_constructs.helm_release_handler.manifest_content import canonical_json, sha256_hex
from hyperpod_constructs.hyperpod_helm_release import (
    MPI_OPERATOR_TOLERATIONS,
    ChartDependency,
    HyperPodHelmRelease,
    HyperPodHelmReleaseProps,
    component_values,
    release_patches,
    release_values,
)
from hyperpod_constructs.kubernetes_manifests import KubernetesManifests, KubernetesManifestsProps
from hyperpod_constructs.private.kubectl_layers import LAYER_MINORS, layer_minor

REVISION = "a00b22d17ea928a6e39a43bd2efdafe01b1005ea"
CONTENT = "c23c8e64d6aa4531122dc13b9358b58067140ec36a6a4cad4d6592131bf00931"
GUARDRAILS = tuple(guardrail_manifests(load_config(ROOT / "config" / "dev.yaml").config))
NVIDIA = ChartDependency("nvidia-device-plugin",
                            "https://nvidia.github.io/k8s-device-plugin/stable/nvidia-device-plugin-0.16.1.tgz", "a7" * 32)


def build(**change) -> tuple[Template, HyperPodHelmRelease]:
    stack = Stack(App(), "Test", env=Environment(account="111122223333", region="eu-west-1"))
    cluster = eks.Cluster.from_cluster_attributes(stack, "Eks", cluster_name="hyperpod-eks",
                                                  cluster_security_group_id="sg-0cccccccccccccccc")
    props = HyperPodHelmReleaseProps(cluster=cluster, kubernetes_version="1.33", vpc_id="vpc-0123456789abcdef0",
                                     subnet_ids=("subnet-0000000000000000a", "subnet-0000000000000000b"),
                                     revision=REVISION, content_sha256=CONTENT, dependencies=(NVIDIA,),
                                     components={"mlflow": True, "nvidia_device_plugin": False},
                                     gpu_device_isolation=True,
                                     stack_name_prefix="HyperPod-dev-")
    release = HyperPodHelmRelease(stack, "Chart", props=dataclasses.replace(props, **change))
    return Template.from_stack(stack), release


@pytest.fixture(scope="module")
def template() -> Template:
    return build()[0]


RELEASE = {
    "Repository": "aws/sagemaker-hyperpod-cli", "Revision": REVISION, "ContentSha256": CONTENT,
    "Dependencies": json.dumps({NVIDIA.name: {"url": NVIDIA.url, "sha256": NVIDIA.sha256}}, sort_keys=True),
    "ReleaseName": "hyperpod-dependencies", "Namespace": "kube-system",
    "Values": json.dumps({"mlflow": {"enabled": True}, "nvidia-device-plugin": {
        "devicePlugin": {"enabled": False}, "deviceListStrategy": "volume-mounts",
        "securityContext": {"privileged": True}}}, sort_keys=True),
    # With isolation the agent keeps its GPUs (helm_release_handler/chart_patches.py).
    "Patches": json.dumps(["health-monitoring-agent-gpu-reader"]),
}


def test_release_names_the_pins_region_and_values_and_has_a_service_timeout(template):
    template.resource_count_is("Custom::HyperPodHelmRelease", 1)
    template.has_resource_properties("Custom::HyperPodHelmRelease", {
        "ClusterName": "hyperpod-eks", "Region": "eu-west-1", **RELEASE, "ServiceTimeout": "1200"})


def test_the_function_is_built_for_exactly_that_release(template):
    """The handler compares each event with INSTALLER_SCOPE; the construct writes the same values to both."""
    functions = [f for f in template.find_resources("AWS::Lambda::Function").values()
                 if f["Properties"]["Handler"] in ("index.on_event", "index.is_complete")]
    assert sorted(f["Properties"]["Handler"] for f in functions) == ["index.is_complete", "index.on_event"]
    scopes = [json.loads(rendered(f["Properties"]["Environment"]["Variables"]["INSTALLER_SCOPE"])) for f in functions]
    assert scopes[0] == scopes[1]
    assert scopes[0] == {"ClusterName": "hyperpod-eks", "Release": RELEASE,
                     "Stacks": {"Partition": "aws", "Account": "111122223333", "StackPrefix": "HyperPod-dev-"}}


def rendered(value: object) -> str:
    """A template string value as CloudFormation renders it in the aws partition."""
    if isinstance(value, str):
        return value
    separator, parts = value["Fn::Join"]
    return separator.join("aws" if part == {"Ref": "AWS::Partition"} else rendered(part) for part in parts)


def test_installer_may_confirm_events_with_the_kit_s_stacks_only(template):
    """cfn_anchor.py's calls, on HyperPod-dev-* stacks of this account and region; no wildcard action."""
    statements = [statement for policy in template.find_resources("AWS::IAM::Policy").values()
                  for statement in policy["Properties"]["PolicyDocument"]["Statement"]
                  if "cloudformation:DescribeStackResource" in statement["Action"]]
    assert [(s["Action"], s["Effect"], rendered(s["Resource"])) for s in statements] == [
        (["cloudformation:DescribeStackResource", "cloudformation:DescribeStacks"], "Allow",
         "arn:aws:cloudformation:eu-west-1:111122223333:stack/HyperPod-dev-*/*")]


def test_the_guardrails_travel_as_an_asset_the_installer_alone_may_read(tmp_path):
    """The governance stack's Guardrails resource names an asset of the cloud assembly whose bytes are the app's
    guardrails (SHA-256 in the event), in the bucket the cluster stack's installer may read; the cluster stack
    holds no guardrail content, so a team change does not touch it (review finding 3)."""
    context = json.loads((ROOT / "cdk.json").read_text())["context"]
    app = App(context=context, outdir=str(tmp_path))
    config = load_config(ROOT / "config" / "dev.yaml").config
    build_app(app, config)
    assembly = app.synth()
    stacks = {stack.stack_name: Template.from_stack(stack) for stack in app.node.children if isinstance(stack, Stack)}
    [guardrails] = [r["Properties"] for r in stacks["HyperPod-dev-governance"].find_resources(
        "Custom::KubernetesManifests").values() if r["Properties"]["Name"] == "guardrails"]
    reference = guardrails["ManifestsObject"]
    assert "Manifests" not in guardrails
    content = canonical_json(guardrail_manifests(config))
    assert reference["Sha256"] == sha256_hex(content)
    # What `cdk deploy` publishes: the stack's asset manifest, source file -> bucket and key.
    published = json.loads((Path(assembly.directory) / "HyperPod-dev-governance.assets.json").read_text())["files"]
    [entry] = [entry for entry in published.values()
               if [d["objectKey"] for d in entry["destinations"].values()] == [reference["Key"]]]
    assert (Path(assembly.directory) / entry["source"]["path"]).read_bytes() == content
    [destination] = entry["destinations"].values()
    bucket = destination["bucketName"].replace("${AWS::AccountId}", "111122223333").replace("${AWS::Region}", "us-east-1")
    assert reference["Bucket"] == bucket
    reads = [st for p in stacks["HyperPod-dev-cluster"].find_resources("AWS::IAM::Policy").values()
             for st in p["Properties"]["PolicyDocument"]["Statement"] if st["Action"] == "s3:GetObject"]
    assert f"arn:aws:s3:::{bucket}/*" in [rendered(st["Resource"]) for st in reads]
    assert "hyperpod-kit-" not in json.dumps(stacks["HyperPod-dev-cluster"].to_json())


def test_the_completion_check_runs_like_the_installer_within_the_waiter_s_hour(template):
    """is_complete needs kubectl (the layer), the VPC and the cluster-admin role, and a Lambda budget above the
    handler's 60 s safety margin; CDK's waiter stops at its one-hour maximum."""
    functions = {f["Properties"]["Handler"]: f["Properties"] for f in template.find_resources("AWS::Lambda::Function").values()}
    on_event, complete = functions["index.on_event"], functions["index.is_complete"]
    for key in ("Layers", "VpcConfig", "Role", "Runtime"):
        assert complete[key] == on_event[key]
    assert complete["Timeout"] == 180
    [machine] = template.find_resources("AWS::StepFunctions::StateMachine").values()
    definition = json.dumps(machine["Properties"]["DefinitionString"])
    assert '\\"IntervalSeconds\\":30' in definition and '\\"MaxAttempts\\":120' in definition


def test_installer_has_its_own_group_with_https_egress_only(template):
    groups = template.find_resources("AWS::EC2::SecurityGroup")
    [(group_id, group)] = groups.items()
    assert group["Properties"]["SecurityGroupEgress"] == [
        {"CidrIp": "0.0.0.0/0", "Description": "HTTPS to AWS APIs and chart sources", "FromPort": 443,
         "IpProtocol": "tcp", "ToPort": 443}]
    assert "SecurityGroupIngress" not in group["Properties"]
    template.has_resource_properties("AWS::Lambda::Function", {
        "Handler": "index.on_event", "Runtime": "python3.14", "Timeout": 900,
        "VpcConfig": {"SubnetIds": ["subnet-0000000000000000a", "subnet-0000000000000000b"],
                      "SecurityGroupIds": [{"Fn::GetAtt": [group_id, "GroupId"]}]},
    })
    # The cluster security group (on the API endpoint's interfaces) lets it in on 443, nothing else.
    [(ingress_id, ingress)] = template.find_resources("AWS::EC2::SecurityGroupIngress").items()
    assert ingress["Properties"] == {
        "GroupId": "sg-0cccccccccccccccc", "SourceSecurityGroupId": {"Fn::GetAtt": [group_id, "GroupId"]},
        "IpProtocol": "tcp", "FromPort": 443, "ToPort": 443,
        "Description": "hyperpod-kit chart installer to the Kubernetes API"}
    [release] = template.find_resources("Custom::HyperPodHelmRelease").values()
    assert ingress_id in release["DependsOn"]  # the first helm call needs the rule


@pytest.mark.parametrize(("version", "minor"), [("1.32", 33), ("1.33", 33), ("1.34", 34), ("1.35", 35), ("1.36", 35)])
def test_the_layer_is_within_one_minor_of_the_cluster(version, minor):
    assert layer_minor(version) == minor
    template, _ = build(kubernetes_version=version)
    [layer] = template.find_resources("AWS::Lambda::LayerVersion").values()
    # The layer package describes its own kubectl version.
    assert layer["Properties"]["Description"].startswith(f"/opt/kubectl/kubectl 1.{minor}.")


@pytest.mark.parametrize("version", ["1.30", "1.31", "1.37"])
def test_a_version_without_a_layer_is_refused(version):
    assert layer_minor(version) is None
    with pytest.raises(ValueError, match=f"no kubectl layer within one minor version of Kubernetes {version}; "
                                         f"the kit ships layers for 1.{LAYER_MINORS[0]}"):
        build(kubernetes_version=version)


def test_installer_role_is_cluster_admin_and_the_release_waits_for_it(template):
    entries = template.find_resources("AWS::EKS::AccessEntry")
    [(entry_id, entry)] = entries.items()
    assert entry["Properties"]["AccessPolicies"][0]["AccessScope"] == {"Type": "cluster"}
    assert entry["Properties"]["AccessPolicies"][0]["PolicyArn"]["Fn::Join"][1][-1].endswith("AmazonEKSClusterAdminPolicy")
    [release] = template.find_resources("Custom::HyperPodHelmRelease").values()
    assert entry_id in release["DependsOn"]


def test_installer_may_describe_only_its_cluster(template):
    template.has_resource_properties("AWS::IAM::Policy", {"PolicyDocument": {"Statement": Match.array_with([
        Match.object_like({"Action": "eks:DescribeCluster", "Resource": Match.any_value()})])}})


def test_component_values_nest_chart_keys():
    assert component_values({"efa_device_plugin": True, "job_auto_restart": False}) == {
        "aws-efa-k8s-device-plugin": {"devicePlugin": {"enabled": True}}, "job-auto-restart": {"enabled": False}}


def test_without_gpu_device_isolation_the_release_names_no_patch():
    """No Patches key at all: releases deployed before patches existed keep their properties (no update)."""
    off, _ = build(gpu_device_isolation=False)
    [release] = off.find_resources("Custom::HyperPodHelmRelease").values()
    assert "Patches" not in release["Properties"]


def test_gpu_device_isolation_sets_the_device_plugins_strategy_next_to_the_toggles():
    """On (RELEASE above) adds the strategy; off, the default, leaves the device plugin as the chart has it."""
    assert release_values({"nvidia_device_plugin": True}, gpu_device_isolation=True) == {"nvidia-device-plugin": {
        "devicePlugin": {"enabled": True}, "deviceListStrategy": "volume-mounts", "securityContext": {"privileged": True}}}
    assert release_values({"nvidia_device_plugin": True}, gpu_device_isolation=False) == {
        "nvidia-device-plugin": {"devicePlugin": {"enabled": True}}}
    off, _ = build(gpu_device_isolation=False)
    assert HyperPodHelmReleaseProps.__dataclass_fields__["gpu_device_isolation"].default is False
    off.has_resource_properties("Custom::HyperPodHelmRelease", {"Values": json.dumps(
        {"mlflow": {"enabled": True}, "nvidia-device-plugin": {"devicePlugin": {"enabled": False}}}, sort_keys=True)})


def test_a_node_selector_places_both_operators_and_patches_the_training_operator():
    """The two operators get the selector and tolerations through their sub-charts' values; the MPI operator keeps the
    chart's own toleration (a list value replaces the chart's); the training operator's template needs its patch."""
    system = {"key": "CriticalAddonsOnly", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
    placed, _ = build(gpu_device_isolation=False, controller_node_selector={"node-role": "system"},
                      controller_tolerations=(system,))
    placed.has_resource_properties("Custom::HyperPodHelmRelease", {
        "Values": json.dumps({"mlflow": {"enabled": True}, "nvidia-device-plugin": {"devicePlugin": {"enabled": False}},
                              "training-operators": {"nodeSelector": {"node-role": "system"}, "tolerations": [system]},
                              "mpi-operator": {"mpiOperator": {"nodeSelector": {"node-role": "system"},
                                                               "tolerations": [*MPI_OPERATOR_TOLERATIONS, system]}}},
                             sort_keys=True),
        "Patches": json.dumps(["training-operator-placement"])})
    assert release_patches(True, {"node-role": "system"}) == ("health-monitoring-agent-gpu-reader",
                                                             "training-operator-placement")
    assert HyperPodHelmReleaseProps.__dataclass_fields__["controller_tolerations"].default == ()


def test_mig_partitions_set_the_device_plugins_mig_strategy_and_default_off():
    """The device plugin's MIG strategy (rendered by the pinned chart in tests/handlers) only with partitions."""
    assert release_values({"nvidia_device_plugin": True}, False, mig_partitions=True) == {"nvidia-device-plugin": {
        "devicePlugin": {"enabled": True}, "migStrategy": "mixed"}}
    assert HyperPodHelmReleaseProps.__dataclass_fields__["mig_partitions"].default is False
    on, _ = build(mig_partitions=True)
    [release] = on.find_resources("Custom::HyperPodHelmRelease").values()
    assert json.loads(release["Properties"]["Values"])["nvidia-device-plugin"]["migStrategy"] == "mixed"


@pytest.mark.parametrize(("change", "message"), [
    ({"revision": "main"}, "revision must be a full 40-hex commit id, got 'main'"),
    ({"content_sha256": ""}, "content_sha256 must be 64 lower-case hex digits"),
    ({"dependencies": (dataclasses.replace(NVIDIA, sha256="xyz"),)}, "dependency nvidia-device-plugin: sha256 must be"),
    ({"dependencies": (dataclasses.replace(NVIDIA, url="http://x/y.tgz"),)}, "url must be an https URL of a .tgz"),
    ({"dependencies": (NVIDIA, NVIDIA)}, "pins a name twice"),
    ({"repository": "not a repo"}, "repository must be a GitHub owner/name"),
    ({"release_name": "Hyperpod_Deps"}, "release_name must be a Helm release name"),
    ({"release_name": "-x"}, "release_name must be a Helm release name"),
    ({"namespace": "--all-namespaces"}, "namespace must be a Kubernetes namespace name"),
    ({"subnet_ids": ()}, "at least one subnet"),
    ({"components": {"kuberay": True}}, "unknown components \\['kuberay'\\]"),
    ({"controller_tolerations": ({"key": "CriticalAddonsOnly", "operator": "Exists"},)},
     "controller_tolerations without controller_node_selector"),
    ({"stack_name_prefix": "HyperPod-dev"}, "stack_name_prefix must be a stack name prefix ending in '-'"),
    ({"stack_name_prefix": "*-"}, "stack_name_prefix must be a stack name prefix"),
])
def test_bad_props_raise(change, message):
    with pytest.raises(ValueError, match=message):
        build(**change)


def test_manifests_and_deployment_waits_have_a_service_timeout():
    stack = Stack(App(), "Gov", env=Environment(account="111122223333", region="eu-west-1"))
    KubernetesManifests(stack, "Rbac", props=KubernetesManifestsProps(
        service_token="arn:aws:lambda:eu-west-1:111122223333:function:x", cluster_name="hyperpod-eks", name="team-a",
        manifests=tuple(team_manifests("a"))))
    DeploymentAvailable(stack, "Kueue", props=DeploymentAvailableProps(
        service_token="arn:aws:lambda:eu-west-1:111122223333:function:x", cluster_name="hyperpod-eks",
        namespace="kueue-system", name="kueue-controller-manager"))
    template = Template.from_stack(stack)
    template.has_resource_properties("Custom::KubernetesManifests", {"Kind": "Manifests", "ServiceTimeout": "1200"})
    template.has_resource_properties("Custom::DeploymentAvailable", {
        "Kind": "WaitForDeployment", "ClusterName": "hyperpod-eks", "Region": "eu-west-1",
        "Namespace": "kueue-system", "Name": "kueue-controller-manager", "TimeoutSeconds": "600", "ServiceTimeout": "1200"})


@pytest.mark.parametrize(("change", "message"), [
    ({"namespace": "-n"}, "namespace must be a Kubernetes namespace name"),
    ({"name": "Kueue"}, "name must be a Kubernetes object name"),
    ({"timeout": Duration.minutes(14)}, "timeout must be between 1 s and 780 s"),
])
def test_bad_deployment_wait_props_raise(change, message):
    stack = Stack(App(), "Gov")
    props = DeploymentAvailableProps(service_token="arn:x", cluster_name="c", namespace="kueue-system",
                                     name="kueue-controller-manager")
    with pytest.raises(ValueError, match=message):
        DeploymentAvailable(stack, "Kueue", props=dataclasses.replace(props, **change))


def test_manifests_the_installer_would_refuse_fail_the_synth():
    stack = Stack(App(), "Gov", env=Environment(account="111122223333", region="eu-west-1"))
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "kube-system"}}
    with pytest.raises(ValueError, match="the installer would refuse these manifests: v1 ConfigMap 'x' is not an "
                                         "object the kit writes"):
        KubernetesManifests(stack, "Rbac", props=KubernetesManifestsProps(
            service_token="arn:x", cluster_name="hyperpod-eks", name="team-a", manifests=(config_map,)))

