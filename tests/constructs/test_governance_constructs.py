"""Fine-grained tests of the governance constructs: SageMakerGovernanceResource (native or API),
TeamAccess and KubernetesManifests."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from aws_cdk import App, CfnResource, Environment, Stack
from aws_cdk.assertions import Template
from support.paths import ROOT

from cdk_app.domain.resource_schemas import action_resource_types, handler_permissions, resource_type_arn_formats
from hyperpod_constructs.helm_release_handler.manifest_content import canonical_json, sha256_hex
from hyperpod_constructs.helm_release_handler.manifest_policy import kit_lustre_volume
from hyperpod_constructs.kubernetes_manifests import INLINE_BYTES, KubernetesManifests, KubernetesManifestsProps
from hyperpod_constructs.sagemaker_governance_permissions import HANDLER_PERMISSIONS
from hyperpod_constructs.sagemaker_governance_resource import (
    SageMakerGovernanceResource,
    SageMakerGovernanceResourceProps,
)
from hyperpod_constructs.team_access import TeamAccess, TeamAccessProps

POLICY = {"Name": "dev-policy", "ClusterArn": "arn:aws:sagemaker:us-west-2:111122223333:cluster/abcdefghijkl",
          "SchedulerConfig": {"FairShare": "Enabled"}}


def stack() -> Stack:
    return Stack(App(), "Test", env=Environment(account="111122223333", region="us-west-2"))


def test_native_policy_is_the_cloudformation_type():
    s = stack()
    SageMakerGovernanceResource(s, "Policy", props=SageMakerGovernanceResourceProps(
        kind="ClusterSchedulerConfig", parameters=POLICY, native=True))
    template = Template.from_stack(s)
    template.has_resource_properties("AWS::SageMaker::ClusterSchedulerConfig", POLICY)
    template.resource_count_is("AWS::Lambda::Function", 0)


EKS_NAME = "eks-prod"


def statements(template: Template) -> list[dict]:
    return [st for p in template.find_resources("AWS::IAM::Policy").values()
            for st in p["Properties"]["PolicyDocument"]["Statement"]]


def as_list(value) -> list:
    return value if isinstance(value, list) else [value]


def api_stack(*kinds: str) -> tuple[Stack, Template]:
    s = stack()
    for index, kind in enumerate(kinds):
        parameters = POLICY if kind == "ClusterSchedulerConfig" else QUOTA
        SageMakerGovernanceResource(s, f"R{index}", props=SageMakerGovernanceResourceProps(
            kind=kind, parameters={**parameters, "Name": f"r{index}"}, native=False, eks_cluster_name=EKS_NAME))
    return s, Template.from_stack(s)


QUOTA = {"Name": "dev-a", "ClusterArn": POLICY["ClusterArn"], "ComputeQuotaConfig": {"ComputeQuotaResources": []},
         "ComputeQuotaTarget": {"TeamName": "a"}}


def test_api_policies_share_one_handler_with_a_completion_check_and_a_service_timeout():
    _, template = api_stack("ClusterSchedulerConfig", "ClusterSchedulerConfig")
    template.resource_count_is("Custom::SageMakerClusterSchedulerConfig", 2)
    template.has_resource_properties("Custom::SageMakerClusterSchedulerConfig", {
        "Kind": "ClusterSchedulerConfig", "Region": "us-west-2", "Parameters": {**POLICY, "Name": "r0"},
        "ServiceTimeout": "2400"})
    handlers = sorted(f["Properties"]["Handler"] for f in template.find_resources("AWS::Lambda::Function").values()
                      if f["Properties"].get("Handler", "").startswith("index."))
    assert handlers == ["index.is_complete", "index.on_event"]
    # Both confirm each event with CloudFormation, for this stack only (test_python_handler_provider.py).
    assert all(f["Properties"]["Environment"]["Variables"] == {"CFN_ANCHOR_STACK_ID": {"Ref": "AWS::StackId"}}
               for f in template.find_resources("AWS::Lambda::Function").values()
               if f["Properties"].get("Handler", "").startswith("index."))
    machine, = template.find_resources("AWS::StepFunctions::StateMachine").values()
    definition = json.dumps(machine["Properties"]["DefinitionString"])
    # The waiter polls every 10 s for 30 minutes, well inside the 40-minute ServiceTimeout.
    assert '\\"IntervalSeconds\\":10,\\"MaxAttempts\\":180' in definition
    timeouts = {r["Properties"]["ServiceTimeout"] for r in
                template.find_resources("Custom::SageMakerClusterSchedulerConfig").values()}
    assert timeouts == {"2400"} and 10 * 180 < 2400


@pytest.mark.parametrize("kinds", [("ClusterSchedulerConfig",), ("ComputeQuota",), ("ClusterSchedulerConfig", "ComputeQuota")])
def test_api_role_holds_exactly_cloudformations_handler_permissions(kinds):
    """The source of truth is CloudFormation's own schema (cfn-lint's copy), all five handlers."""
    _, template = api_stack(*kinds)
    wanted = {a for kind in kinds for perms in handler_permissions(f"AWS::SageMaker::{kind}").values() for a in perms}
    granted = {a for st in statements(template) for a in as_list(st["Action"])
               if a.split(":")[0] in ("sagemaker", "eks")}
    assert granted == wanted
    assert not [a for st in statements(template) for a in as_list(st["Action"]) if "*" in a]


def test_the_data_module_matches_the_installed_schemas():
    for kind, handlers in HANDLER_PERMISSIONS.items():
        assert handlers == handler_permissions(f"AWS::SageMaker::{kind}"), (
            f"cfn-lint's AWS::SageMaker::{kind} handlers changed; update constructs/sagemaker_governance_permissions.py "
            f"to {handler_permissions(f'AWS::SageMaker::{kind}')}")


def test_each_action_is_scoped_to_a_resource_type_iam_gives_it():
    """Every granted resource matches an ARN format of one of the action's resource types (cfn-lint's IAM
    data); '*' only where the action has none; EKS on this cluster only; SageMaker on this account's
    policies, quotas and the one HyperPod cluster."""
    s, template = api_stack("ClusterSchedulerConfig", "ComputeQuota")
    for st in statements(template):
        for action in as_list(st["Action"]):
            service = action.split(":")[0]
            if service not in ("sagemaker", "eks"):
                continue
            types = action_resource_types(action)
            assert types is not None, action
            for resource in as_list(st["Resource"]):
                arn = s.resolve(resource)
                if isinstance(arn, dict):  # Fn::Join of the partition and the literal rest
                    arn = "".join(p if isinstance(p, str) else "aws" for p in arn["Fn::Join"][1])
                if arn == "*":
                    assert types == (), f"{action} accepts {types}, granted on *"
                    continue
                formats = [f for t in types for f in resource_type_arn_formats(service, t)]
                pattern = [f.replace("${Partition}", "aws").replace("${Region}", "us-west-2")
                           .replace("${Account}", "111122223333") for f in formats]
                assert any(re.fullmatch(p, arn) for p in pattern), f"{action} on {arn}, IAM allows {formats}"
                if service == "eks":
                    assert f"/{EKS_NAME}" in arn


def test_api_resources_need_the_eks_cluster_and_one_pair_of_clusters_per_stack():
    with pytest.raises(ValueError, match="eks_cluster_name is required when native is False"):
        SageMakerGovernanceResource(stack(), "R", props=SageMakerGovernanceResourceProps(
            kind="ClusterSchedulerConfig", parameters=POLICY, native=False))
    s = stack()
    SageMakerGovernanceResource(s, "A", props=SageMakerGovernanceResourceProps(
        kind="ClusterSchedulerConfig", parameters=POLICY, native=False, eks_cluster_name=EKS_NAME))
    with pytest.raises(ValueError, match="must name the same HyperPod and EKS clusters"):
        SageMakerGovernanceResource(s, "B", props=SageMakerGovernanceResourceProps(
            kind="ComputeQuota", parameters=QUOTA, native=False, eks_cluster_name="other"))


@pytest.mark.parametrize(("kind", "parameters", "message"), [
    ("Cluster", POLICY, "kind must be one of"),
    ("ComputeQuota", {"Name": "x"}, "ComputeQuota parameters lack \\['ClusterArn', 'ComputeQuotaConfig', 'ComputeQuotaTarget'\\]"),
])
def test_governance_resource_bad_props(kind, parameters, message):
    with pytest.raises(ValueError, match=message):
        SageMakerGovernanceResource(stack(), "R", props=SageMakerGovernanceResourceProps(
            kind=kind, parameters=parameters, native=True))


def test_team_access_role_and_group_entry():
    s = stack()
    TeamAccess(s, "Team", props=TeamAccessProps(cluster_name="eks", team="team-a",
                                                principals=("arn:aws:iam::111122223333:role/A",)))
    template = Template.from_stack(s)
    template.has_resource_properties("AWS::EKS::AccessEntry", {"ClusterName": "eks", "Type": "STANDARD",
                                                               "KubernetesGroups": ["hyperpod-team-team-a"]})


@pytest.mark.parametrize("principals", [("arn:aws:iam::111122223333:role/A",),
                                        ("arn:aws:iam::444455556666:role/C", "arn:aws:iam::111122223333:role/A",
                                         "arn:aws:iam::111122223333:user/b")])
def test_team_role_is_what_the_l2_role_writes_under_the_same_logical_id(principals):
    """TeamAccess writes its role as an L1 (one jsii call); CDK's own iam.Role at the same path is the truth,
    so a deployed team role keeps its logical id and properties (no replacement)."""
    from aws_cdk import aws_iam as iam
    from constructs import Construct

    flags = json.loads((ROOT / "cdk.json").read_text())["context"]
    ours, theirs = (Stack(App(context=flags), "Test", env=Environment(account="111122223333", region="us-west-2"))
                    for _ in range(2))
    TeamAccess(ours, "Team-x", props=TeamAccessProps(cluster_name="eks", team="x", principals=principals))
    iam.Role(Construct(theirs, "Team-x"), "Role", assumed_by=iam.CompositePrincipal(*map(iam.ArnPrincipal, principals)),
             description="Submits jobs as team x in hyperpod-ns-x")
    roles = [Template.from_stack(s).find_resources("AWS::IAM::Role") for s in (ours, theirs)]
    assert roles[0] == roles[1] and len(roles[0]) == 1


@pytest.mark.parametrize(("team", "principals", "message"), [
    ("Team_A", ("arn:aws:iam::111122223333:role/A",), "DNS label"),
    ("a" * 41, ("arn:aws:iam::111122223333:role/A",), "at most 40"),
    ("team-a", (), "at least one principal"),
])
def test_team_access_bad_props(team, principals, message):
    with pytest.raises(ValueError, match=message):
        TeamAccess(stack(), "Team", props=TeamAccessProps(cluster_name="eks", team=team, principals=principals))


def test_manifests_region_given_is_written_as_given():
    s = stack()
    manifest = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                "metadata": {"name": "x", "namespace": "hyperpod-ns-a"}, "rules": []}
    KubernetesManifests(s, "M", props=KubernetesManifestsProps(service_token="t", cluster_name="eks", name="set",
                                                               manifests=(manifest,), region="eu-west-1"))
    Template.from_stack(s).has_resource_properties("Custom::KubernetesManifests", {"Region": "eu-west-1"})


@pytest.mark.parametrize("scopes", [1, 2])
def test_quota_type_unknown_to_cdks_builtin_check_is_acknowledged_for_every_quota(tmp_path, scopes):
    """CDK's own template check (on by default in App) reports AWS::SageMaker::ComputeQuota as an unknown type
    (F3006); the construct acknowledges it once per scope, which must cover every quota in it, in each scope."""
    app = App(outdir=str(tmp_path))
    for i in range(scopes):
        s = Stack(app, f"S{i}", env=Environment(account="111122223333", region="us-west-2"))
        for team in ("a", "b"):
            SageMakerGovernanceResource(s, f"Quota-{team}", props=SageMakerGovernanceResourceProps(
                kind="ComputeQuota", native=True, parameters={
                    "Name": team, "ClusterArn": "arn", "ComputeQuotaConfig": {}, "ComputeQuotaTarget": {}}))
    app.synth()
    violations, suppressed = cdk_check_report(tmp_path)
    assert violations == [] and suppressed == [f"S{i}/Quota-{t}/Resource" for i in range(scopes) for t in "ab"]
    # The control: an unacknowledged quota-typed resource is reported by the same check.
    control = App(outdir=str(tmp_path / "control"))
    CfnResource(Stack(control, "C"), "Q", type="AWS::SageMaker::ComputeQuota", properties={"Name": "q"})
    control.synth()
    assert cdk_check_report(tmp_path / "control") == (["C/Q"], [])


def cdk_check_report(outdir: Path) -> tuple[list[str], list[str]]:
    """Construct paths of CDK's CloudFormation check's F3006 violations and acknowledged (suppressed) ones."""
    [report] = [r for r in json.loads((outdir / "validation-report.json").read_text())["pluginReports"]
                if r["pluginName"] == "CloudFormation Validate"]

    def paths(kind: str) -> list[str]:
        return sorted(c["constructPath"] for v in report.get(kind, []) if v["ruleName"] == "F3006"
                      for c in v["violatingConstructs"])
    return paths("violations"), paths("suppressedViolations")


def test_manifests_resource_and_bad_props():
    s = stack()
    manifest = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                "metadata": {"name": "x", "namespace": "hyperpod-ns-a"}, "rules": []}
    KubernetesManifests(s, "M", props=KubernetesManifestsProps(service_token="arn:aws:lambda:us-west-2:111122223333:function:f",
                                                               cluster_name="eks", name="set", manifests=(manifest,)))
    template = Template.from_stack(s)
    template.has_resource_properties("Custom::KubernetesManifests", {"Kind": "Manifests", "ClusterName": "eks",
                                                                     "Name": "set", "Region": "us-west-2"})
    [resource] = template.find_resources("Custom::KubernetesManifests").values()
    # The installer reads the objects back with json.loads; the string itself is compact (template bytes).
    text = resource["Properties"]["Manifests"]
    assert json.loads(text) == [manifest] and text == json.dumps([manifest], sort_keys=True, separators=(",", ":"))
    with pytest.raises(ValueError, match="at least one object"):
        KubernetesManifests(stack(), "M", props=KubernetesManifestsProps(service_token="t", cluster_name="eks",
                                                                         name="set", manifests=()))
    with pytest.raises(ValueError, match="apiVersion, kind and metadata.name"):
        KubernetesManifests(stack(), "M", props=KubernetesManifestsProps(service_token="t", cluster_name="eks",
                                                                         name="set", manifests=({"kind": "X"},)))


def _carried(manifests: tuple[dict, ...]) -> dict:
    s = stack()
    KubernetesManifests(s, "M", props=KubernetesManifestsProps(service_token="t", cluster_name="eks", name="set",
                                                               manifests=manifests))
    [resource] = Template.from_stack(s).find_resources("Custom::KubernetesManifests").values()
    return resource["Properties"]


def test_admission_objects_and_large_sets_travel_as_an_asset_small_team_sets_in_the_event():
    """Lambda's asynchronous payload (256 KB) holds an update's old and new properties; the installer takes
    admission objects from the asset bucket only."""
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "hyperpod-team-a", "namespace": "hyperpod-ns-a"}, "rules": []}
    assert set(_carried((role,))) >= {"Manifests"}
    many = tuple({**role, "metadata": {**role["metadata"], "name": f"hyperpod-team-a-{i:04d}"}}
                 for i in range(INLINE_BYTES // 100))
    policy = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
              "metadata": {"name": "hyperpod-kit-pods"}, "spec": {"failurePolicy": "Fail", "validations": [
                  {"expression": "true"}]}}
    for manifests in (many, (policy,)):
        properties = _carried(manifests)
        assert "Manifests" not in properties
        assert properties["ManifestsObject"]["Sha256"] == sha256_hex(canonical_json(list(manifests)))
        assert re.fullmatch(r"[0-9a-f]{64}\.json", properties["ManifestsObject"]["Key"])


def test_manifests_with_deploy_time_values_travel_inline_or_are_refused():
    """A token in the content resolves in the event (CloudFormation fills it in); an asset is published before
    deploy, with the token's placeholder text in it, so such a set over the inline size is refused at synth."""
    s = stack()
    dns = CfnResource(s, "Fs", type="AWS::FSx::FileSystem").get_att("DNSName").to_string()
    volume = kit_lustre_volume("hyperpod-ns-a", "data", "fs-0123456789abcdef0", dns, "abcdefgh", 1200)
    KubernetesManifests(s, "M", props=KubernetesManifestsProps(service_token="t", cluster_name="eks", name="storage",
                                                               manifests=(volume,)))
    [resource] = Template.from_stack(s).find_resources("Custom::KubernetesManifests").values()
    assert "Fn::Join" in resource["Properties"]["Manifests"]  # resolved by CloudFormation at deploy
    many = tuple(kit_lustre_volume("hyperpod-ns-a", f"c{i}", "fs-0123456789abcdef0", dns, "abcdefgh", 1200)
                 for i in range(40))
    assert len(canonical_json(list(many))) > INLINE_BYTES
    with pytest.raises(ValueError, match="deploy-time values"):
        KubernetesManifests(stack(), "M", props=KubernetesManifestsProps(service_token="t", cluster_name="eks",
                                                                         name="storage", manifests=many))
