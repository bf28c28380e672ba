"""Team RBAC manifests: valid against the Kubernetes schemas of the cluster's version, and deciding what a
team member may do through an RBAC authorizer that follows the API server's rules (tests/support/rbac_authorizer.py,
itself checked on known cases here), compared with the HyperPod chart's own team role rendered by helm."""

from __future__ import annotations

import copy
import subprocess
import tarfile
from pathlib import Path

import kubernetes_validate
import pytest
import yaml
from support.handlers import layer_binary
from support.paths import ROOT, SUPPORT
from support.rbac_authorizer import Authorizer, Request
from support.team_access_cases import FORBIDDEN, JOHN, NEEDED, NS, OTHER, RULE_CASES

from cdk_app.config.loader import load_config
from cdk_app.kubernetes.team_rbac import team_group, team_manifests

CHART = SUPPORT / "data" / "hyperpod-chart" / "HyperPodHelmChart-a00b22d.tar.gz"


@pytest.mark.parametrize("env", ["dev", "prod"])
def test_every_team_manifest_is_valid_for_the_cluster_version(env):
    config = load_config(ROOT / "config" / f"{env}.yaml").config
    for team in config.teams:
        for manifest in team_manifests(team.name):
            kubernetes_validate.validate(copy.deepcopy(manifest), config.eks.kubernetes_version, strict=True)


def test_an_invalid_manifest_is_caught_by_the_schema_check():
    role = team_manifests("john")[0]
    role["rules"][0]["verbs"] = "get"  # must be a list
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(role, "1.33", strict=True)


# --- the authorizer on cases the Kubernetes RBAC documentation states ------------------------------------

def _objects(rules, *, cluster=False, namespace="a", group="g"):
    kind = "ClusterRole" if cluster else "Role"
    meta = {"name": "r"} if cluster else {"name": "r", "namespace": namespace}
    binding_kind = "ClusterRoleBinding" if cluster else "RoleBinding"
    return [{"kind": kind, "metadata": meta, "rules": rules},
            {"kind": binding_kind, "metadata": dict(meta), "roleRef": {"kind": kind, "name": "r"},
             "subjects": [{"kind": "Group", "name": group}]}]


@pytest.mark.parametrize(("rules", "request_", "allowed"), RULE_CASES)
def test_the_authorizer_follows_kubernetes_rbac(rules, request_, allowed):
    assert Authorizer(_objects(rules)).allows(request_, {"g"}) is allowed
    assert Authorizer(_objects(rules)).allows(request_, {"other"}) is False


def test_a_cluster_role_binding_grants_everywhere_and_a_role_binding_of_a_cluster_role_only_in_its_namespace():
    rules = [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]
    everywhere = Authorizer(_objects(rules, cluster=True))
    assert everywhere.allows(Request("get", "", "secrets", "b", "s"), {"g"})
    role, _ = _objects(rules, cluster=True)
    local = Authorizer([role, {"kind": "RoleBinding", "metadata": {"name": "x", "namespace": "a"},
                               "roleRef": {"kind": "ClusterRole", "name": "r"},
                               "subjects": [{"kind": "Group", "name": "g"}]}])
    assert local.allows(Request("get", "", "secrets", "a", "s"), {"g"})
    assert not local.allows(Request("get", "", "secrets", "b", "s"), {"g"})


# --- what the team's RBAC allows and denies --------------------------------------------------------------

TEAM = Authorizer(team_manifests("john"))


@pytest.mark.parametrize(("verbs", "group", "resource", "namespace", "name"), NEEDED)
def test_the_team_may_do_what_its_workloads_and_tools_need(verbs, group, resource, namespace, name):
    for verb in verbs:
        assert TEAM.allows(Request(verb, group, resource, namespace, name if verb not in ("list", "create") else ""),
                           JOHN), (verb, group, resource)


def test_the_team_reads_its_own_namespace():
    assert TEAM.allows(Request.of("get", "", "namespaces", name=NS), JOHN)
    assert not TEAM.allows(Request.of("get", "", "namespaces", name=OTHER), JOHN)
    assert not TEAM.allows(Request("list", "", "namespaces"), JOHN)  # which namespaces exist: not the team's


@pytest.mark.parametrize("request_", FORBIDDEN)
def test_the_team_may_do_nothing_else(request_):
    assert not TEAM.allows(request_, JOHN)


def test_another_group_gets_nothing():
    for verbs, group, resource, namespace, name in NEEDED:
        assert not TEAM.allows(Request(verbs[0], group, resource, namespace, name), {team_group("smith")})


# --- against the HyperPod chart's team role --------------------------------------------------------------

def _chart_team_role(tmp_path: Path) -> list[dict]:
    """The chart's team-role-and-bindings sub-chart rendered by the layer's helm for team john."""
    with tarfile.open(CHART) as archive:
        archive.extractall(tmp_path, filter="data")
    chart = next(tmp_path.rglob("charts/team-role-and-bindings"))
    helm = layer_binary("helm/helm", tmp_path / "bin")
    out = subprocess.run([str(helm), "template", "t", str(chart), "--set", "computeQuotaTarget.targetId=john"],
                         check=True, capture_output=True, text=True).stdout
    return [doc for doc in yaml.safe_load_all(out) if doc]


# Where the kit's team RBAC and the chart's differ (README "What a team can and cannot do" says why).
ONLY_CHART = {
    ("create", "", "pods", NS), ("get", "", "serviceaccounts", NS), ("create", "", "secrets", NS),
    ("get", "", "secrets", NS), ("patch", "kueue.x-k8s.io", "workloads", NS),
    ("get", "kueue.x-k8s.io", "resourceflavors", ""), ("get", "apiextensions.k8s.io", "customresourcedefinitions", NS),
    ("get", "", "pods/status", NS), ("get", "kueue.x-k8s.io", "workloads/status", NS),
    ("get", "kubeflow.org", "pytorchjobs/status", NS),
}
ONLY_KIT = {
    ("create", "kubeflow.org", "mpijobs", NS), ("create", "", "services", NS), ("create", "apps", "deployments", NS),
    ("patch", "kubeflow.org", "pytorchjobs", NS), ("patch", "", "configmaps", NS),
    ("list", "", "configmaps", NS), ("get", "", "events", NS), ("create", "", "pods/exec", NS),
    ("create", "", "pods/portforward", NS), ("get", "kueue.x-k8s.io", "localqueues", NS),
}
PROBES = ONLY_CHART | ONLY_KIT | {
    ("create", "batch", "jobs", NS), ("create", "kubeflow.org", "pytorchjobs", NS), ("get", "", "pods/log", NS),
    ("get", "kueue.x-k8s.io", "workloads", NS), ("list", "", "nodes", ""), ("create", "", "namespaces", ""),
}


def test_differences_from_the_chart_team_role_are_the_documented_ones(tmp_path):
    chart_objects = _chart_team_role(tmp_path)
    assert {o["kind"] for o in chart_objects} == {"Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"}
    chart, kit = Authorizer(chart_objects), Authorizer(team_manifests("john"))
    chart_group = {"hyperpod-ns-john-namespace-level-group"}
    decided = {probe: (chart.allows(Request(*probe, "x"), chart_group), kit.allows(Request(*probe, "x"), JOHN))
               for probe in PROBES}
    assert {p for p, (c, k) in decided.items() if c and not k} == ONLY_CHART
    assert {p for p, (c, k) in decided.items() if k and not c} == ONLY_KIT
    # Both read the team's ClusterQueue by name and the namespace; neither lists nodes cluster-wide
    # (the chart's Role names nodes, which a namespaced Role cannot grant).
    queue = Request("get", "kueue.x-k8s.io", "clusterqueues", "", "hyperpod-ns-john-clusterqueue")
    assert chart.allows(queue, chart_group) and kit.allows(queue, JOHN)
    assert not chart.allows(Request("list", "", "nodes"), chart_group)


# Kinds that hold pod templates (core/batch/apps and the two training operators the chart installs).
POD_HOLDING = [("", "pods"), ("", "replicationcontrollers"), ("batch", "jobs"), ("batch", "cronjobs"),
               ("apps", "deployments"), ("apps", "statefulsets"), ("apps", "replicasets"), ("apps", "daemonsets"),
               ("kubeflow.org", "pytorchjobs"), ("kubeflow.org", "mpijobs")]


def test_every_kind_with_pods_the_team_may_create_or_update_is_checked_by_the_guardrails():
    from cdk_app.kubernetes.guardrails.kinds import WORKLOAD_KINDS

    guarded = {(k.group, k.resource) for k in WORKLOAD_KINDS}
    writable = {(g, r) for g, r in POD_HOLDING for verb in ("create", "update", "patch")
                if TEAM.allows(Request(verb, g, r, NS, "x" if verb != "create" else ""), JOHN)}
    assert writable == {("batch", "jobs"), ("apps", "deployments"), ("kubeflow.org", "pytorchjobs"),
                        ("kubeflow.org", "mpijobs")}
    assert writable <= guarded
