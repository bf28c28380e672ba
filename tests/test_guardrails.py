"""Admission guardrail objects: valid against the Kubernetes schemas of the cluster's version, named for
the installer's allow-list, bound to every team namespace and the shared pool's and nothing else, and
applied by the governance stack before any team is granted anything."""

from __future__ import annotations

import copy
from pathlib import Path

import kubernetes_validate
import pytest
from aws_cdk import App, Environment
from aws_cdk.assertions import Template

from cdk_app.config.loader import load_config
from cdk_app.config.model import KitConfig
from cdk_app.guardrails import (
    BASELINE_CAPABILITIES,
    EXTRA_CAPABILITIES,
    NAME_PREFIX,
    WORKLOAD_KINDS,
    guardrail_manifests,
)
from cdk_app.stacks.governance_stack import GovernanceStack

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = {env: load_config(ROOT / "config" / f"{env}.yaml").config for env in ("dev", "prod")}


@pytest.mark.parametrize("env", CONFIGS)
def test_every_object_is_valid_for_the_cluster_version(env):
    config = CONFIGS[env]
    manifests = guardrail_manifests(config)
    assert [m["kind"] for m in manifests].count("ValidatingAdmissionPolicy") == 2
    for manifest in manifests:
        kubernetes_validate.validate(copy.deepcopy(manifest), config.eks.kubernetes_version, strict=True)


@pytest.mark.parametrize(("path", "value"), [
    (("spec", "validationActions"), "Deny"),  # must be a list
    (("spec", "matchResources", "namespaceSelectr"), {}),  # unknown field
])
def test_a_broken_binding_is_caught_by_the_schema_check(path, value):
    binding = copy.deepcopy(guardrail_manifests(CONFIGS["dev"])[-1])
    target = binding
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(binding, "1.33", strict=True)


def test_a_broken_policy_is_caught_by_the_schema_check():
    policy = copy.deepcopy(guardrail_manifests(CONFIGS["dev"])[0])
    policy["spec"]["validations"][0].pop("expression")  # required
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(policy, "1.33", strict=True)


@pytest.mark.parametrize("env", CONFIGS)
def test_bindings_select_exactly_the_team_namespaces_by_their_name_label(env):
    config = CONFIGS[env]
    expected = {f"hyperpod-ns-{t.name}" for t in config.teams}
    if config.shared_pool is not None:
        expected.add(f"hyperpod-ns-{config.shared_pool.name}")
    manifests = guardrail_manifests(config)
    policies = {m["metadata"]["name"] for m in manifests if m["kind"] == "ValidatingAdmissionPolicy"}
    bindings = [m for m in manifests if m["kind"] == "ValidatingAdmissionPolicyBinding"]
    assert {b["spec"]["policyName"] for b in bindings} == policies
    for binding in bindings:
        (selector,) = binding["spec"]["matchResources"]["namespaceSelector"]["matchExpressions"]
        assert selector == {"key": "kubernetes.io/metadata.name", "operator": "In", "values": sorted(expected)}
        assert "Deny" in binding["spec"]["validationActions"]
    assert all(m["metadata"]["name"].startswith(NAME_PREFIX) for m in manifests)
    assert all(m["apiVersion"] == "admissionregistration.k8s.io/v1" for m in manifests)


def test_policies_match_every_workload_kind_and_fail_closed():
    pod_security, queue = guardrail_manifests(CONFIGS["prod"])[:2]
    matched = {(g, r) for rule in pod_security["spec"]["matchConstraints"]["resourceRules"]
               for g in rule["apiGroups"] for r in rule["resources"]}
    assert matched == {(k.group, k.resource) for k in WORKLOAD_KINDS} | {("", "pods/ephemeralcontainers")}
    queued = {(g, r) for rule in queue["spec"]["matchConstraints"]["resourceRules"]
              for g in rule["apiGroups"] for r in rule["resources"]}
    assert queued == {("batch", "jobs"), ("kubeflow.org", "pytorchjobs"), ("kubeflow.org", "mpijobs")}
    assert pod_security["spec"]["failurePolicy"] == queue["spec"]["failurePolicy"] == "Fail"


def test_capability_allow_list_is_the_baseline_set_plus_what_a_team_is_given():
    assert set(BASELINE_CAPABILITIES) == {"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
                                          "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"}
    assert not set(EXTRA_CAPABILITIES) & set(BASELINE_CAPABILITIES)
    variables = {v["name"]: v["expression"] for v in guardrail_manifests(CONFIGS["prod"])[0]["spec"]["variables"]}
    assert '"hyperpod-ns-research-nlp": ["IPC_LOCK"]' in variables["capabilities"]
    assert '"hyperpod-ns-inference": []' in variables["capabilities"]


def governance_template(config: KitConfig) -> Template:
    """The governance stack of a config, as the app builds it, with stand-ins for the cluster stack's outputs."""
    stack = GovernanceStack(App(), "Governance", config=config, eks_cluster_name="eks",
                            hyperpod_cluster_arn=f"arn:aws:sagemaker:{config.region}:{config.account}:cluster/abcdef123456",
                            installer_service_token=f"arn:aws:lambda:{config.region}:{config.account}:function:i",
                            env=Environment(account=config.account, region=config.region))
    return Template.from_stack(stack)


@pytest.fixture(scope="module")
def governance() -> dict[str, dict]:
    return {env: governance_template(config).to_json() for env, config in CONFIGS.items()}


@pytest.mark.parametrize("env", CONFIGS)
def test_guardrails_apply_before_any_team_is_granted_anything(governance, env):
    resources = governance[env]["Resources"]
    (guardrails,) = [k for k, r in resources.items()
                     if r["Type"] == "Custom::KubernetesManifests" and r["Properties"]["Name"] == "guardrails"]
    rbac = [r for r in resources.values()
            if r["Type"] == "Custom::KubernetesManifests" and r["Properties"]["Name"].startswith("team-")]
    access = [r for r in resources.values() if r["Type"] == "AWS::EKS::AccessEntry"]
    assert len(rbac) == len(CONFIGS[env].teams) and access
    for resource in rbac + access:
        assert guardrails in resource.get("DependsOn", []), resource


def test_a_config_without_team_namespaces_has_no_guardrails():
    bare = CONFIGS["dev"].model_copy(update={"teams": (), "shared_pool": None})
    assert guardrail_manifests(bare) == []
    governance_template(bare).resource_count_is("Custom::KubernetesManifests", 0)
