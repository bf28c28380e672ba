"""Team RBAC manifests: valid against the Kubernetes schemas of the cluster's version, namespaced,
and granting exactly what a team needs."""

from __future__ import annotations

import copy

import kubernetes_validate
import pytest

from cdk_app.config.loader import load_config
from cdk_app.team_rbac import team_group, team_manifests
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


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


def test_role_is_namespaced_and_grants_only_what_teams_need():
    role, binding = team_manifests("team-a")
    assert {role["kind"], binding["kind"]} == {"Role", "RoleBinding"}
    assert role["metadata"]["namespace"] == binding["metadata"]["namespace"] == "hyperpod-ns-team-a"
    grants = {(group, resource): tuple(rule["verbs"]) for rule in role["rules"]
              for group in rule["apiGroups"] for resource in rule["resources"]}
    write = ("get", "list", "watch", "create", "update", "patch", "delete")
    read = ("get", "list", "watch")
    assert grants == {("batch", "jobs"): write, ("kubeflow.org", "pytorchjobs"): write,
                      ("", "pods"): read, ("", "pods/log"): read, ("", "events"): read,
                      ("kueue.x-k8s.io", "workloads"): read, ("kueue.x-k8s.io", "localqueues"): read}
    assert binding["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": team_group("team-a")}]
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
