"""Fine-grained tests of the governance constructs: SageMakerGovernanceResource (native or API),
TeamAccess and KubernetesManifests."""

from __future__ import annotations

import json

import pytest
from aws_cdk import App, Environment, Stack
from aws_cdk.assertions import Template

from hyperpod_constructs.kubernetes_manifests import KubernetesManifests, KubernetesManifestsProps
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


def test_api_policies_share_one_handler_scoped_to_sagemaker_governance():
    s = stack()
    for name in ("A", "B"):
        SageMakerGovernanceResource(s, name, props=SageMakerGovernanceResourceProps(
            kind="ClusterSchedulerConfig", parameters={**POLICY, "Name": name}, native=False))
    template = Template.from_stack(s)
    template.resource_count_is("Custom::SageMakerClusterSchedulerConfig", 2)
    template.has_resource_properties("Custom::SageMakerClusterSchedulerConfig", {
        "Kind": "ClusterSchedulerConfig", "Region": "us-west-2", "Parameters": {**POLICY, "Name": "A"}})
    handlers = [f for f in template.find_resources("AWS::Lambda::Function").values()
                if f["Properties"].get("Handler") == "index.on_event"]
    assert len(handlers) == 1
    actions = {a for p in template.find_resources("AWS::IAM::Policy").values()
               for st in p["Properties"]["PolicyDocument"]["Statement"]
               for a in (st["Action"] if isinstance(st["Action"], list) else [st["Action"]])}
    assert {"sagemaker:CreateClusterSchedulerConfig", "sagemaker:UpdateComputeQuota"} <= actions
    assert not [a for a in actions if "*" in a]


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


@pytest.mark.parametrize(("team", "principals", "message"), [
    ("Team_A", ("arn:aws:iam::111122223333:role/A",), "DNS label"),
    ("a" * 41, ("arn:aws:iam::111122223333:role/A",), "at most 40"),
    ("team-a", (), "at least one principal"),
])
def test_team_access_bad_props(team, principals, message):
    with pytest.raises(ValueError, match=message):
        TeamAccess(stack(), "Team", props=TeamAccessProps(cluster_name="eks", team=team, principals=principals))


def test_manifests_resource_and_bad_props():
    s = stack()
    manifest = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                "metadata": {"name": "x", "namespace": "hyperpod-ns-a"}, "rules": []}
    KubernetesManifests(s, "M", props=KubernetesManifestsProps(service_token="arn:aws:lambda:us-west-2:111122223333:function:f",
                                                               cluster_name="eks", name="set", manifests=(manifest,)))
    Template.from_stack(s).has_resource_properties("Custom::KubernetesManifests", {
        "Kind": "Manifests", "ClusterName": "eks", "Name": "set", "Manifests": json.dumps([manifest], sort_keys=True)})
    with pytest.raises(ValueError, match="at least one object"):
        KubernetesManifests(stack(), "M", props=KubernetesManifestsProps(service_token="t", cluster_name="eks",
                                                                         name="set", manifests=()))
    with pytest.raises(ValueError, match="apiVersion, kind and metadata.name"):
        KubernetesManifests(stack(), "M", props=KubernetesManifestsProps(service_token="t", cluster_name="eks",
                                                                         name="set", manifests=({"kind": "X"},)))
