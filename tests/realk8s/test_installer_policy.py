"""The installer's manifest policy (constructs/helm_release_handler/manifest_policy.py) against the real API
server: whatever team Role it would apply is a valid object there, and - bound to the team's group for real -
gives the team none of the rights that hand out more rights, as the API server's own RBAC decides them."""

from __future__ import annotations

from itertools import product

import pytest
from support.realk8s.api import Cluster, wait_until
from support.realk8s.environment import namespace

from cdk_app.kubernetes.team_rbac import team_group
from hyperpod_constructs.helm_release_handler.manifest_policy import manifest_refusal

# A team namespace no other Role grants anything in, so every right the member has comes from the probe.
NAMESPACE, TEAM = "hyperpod-ns-probe", "probe"
MEMBER = "arn:aws:sts::111122223333:assumed-role/hyperpod-team-probe/bob"
RBAC = "rbac.authorization.k8s.io"
# (api group, resource) candidates for a team Role's rule: the kit's own, and the ones that escalate.
RESOURCES = [("", "pods"), ("", "pods/exec"), ("", "pods/log"), ("", "configmaps"), ("", "services"),
             ("batch", "jobs"), ("", "secrets"), ("", "serviceaccounts"), ("", "serviceaccounts/token"),
             ("", "pods/attach"), ("", "pods/ephemeralcontainers"), ("", "pods/proxy"), ("", "nodes"),
             (RBAC, "roles"), (RBAC, "rolebindings"), ("", "*"), ("*", "pods")]
VERBS = ["get", "create", "patch", "escalate", "bind", "impersonate", "*"]
# What no team may be able to do in its namespace, whatever Role the installer applies.
ESCALATIONS = [("get", "", "secrets", None), ("list", "", "secrets", None), ("create", RBAC, "rolebindings", None),
               ("bind", RBAC, "roles", None), ("escalate", RBAC, "roles", None), ("impersonate", "", "users", None),
               ("impersonate", "", "groups", None), ("create", "", "serviceaccounts", "token"),
               ("create", "", "pods", "attach"), ("patch", "", "pods", "ephemeralcontainers"),
               ("create", "", "pods", "proxy"), ("get", "", "nodes", None)]


def _role(group: str, resource: str, verb: str) -> dict:
    return {"apiVersion": f"{RBAC}/v1", "kind": "Role", "metadata": {"name": "hyperpod-kit-probe", "namespace": NAMESPACE},
            "rules": [{"apiGroups": [group], "resources": [resource], "verbs": [verb]}]}


BINDING = {"apiVersion": f"{RBAC}/v1", "kind": "RoleBinding",
           "metadata": {"name": "hyperpod-kit-probe", "namespace": NAMESPACE},
           "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "hyperpod-kit-probe"},
           "subjects": [{"apiGroup": RBAC, "kind": "Group", "name": team_group(TEAM)}]}
ADMITTED = [(g, r, v) for (g, r), v in product(RESOURCES, VERBS) if manifest_refusal(_role(g, r, v)) is None]


@pytest.fixture(scope="module")
def dev(start_cluster) -> Cluster:
    cluster = start_cluster("dev")
    assert cluster.create(namespace(NAMESPACE), dry_run=False).allowed
    assert manifest_refusal(BINDING) is None
    assert cluster.create(BINDING, dry_run=False).allowed
    return cluster


def _can(cluster: Cluster, verb: str, group: str, resource: str, sub: str | None) -> bool:
    return cluster.can(MEMBER, (team_group(TEAM),), verb, resource.split("/")[0], group=group, namespace=NAMESPACE,
                       subresource=sub if sub else (resource.split("/")[1] if "/" in resource else None))


def test_the_corpus_holds_admitted_and_refused_roles():
    refused = len(RESOURCES) * len(VERBS) - len(ADMITTED)
    assert len(ADMITTED) >= 10 and refused >= 40


@pytest.mark.parametrize(("group", "resource", "verb"), ADMITTED, ids=lambda x: str(x))
def test_a_role_the_installer_applies_is_valid_and_hands_out_no_rights(dev, group, resource, verb):
    role = _role(group, resource, verb)
    created = dev.create(role, dry_run=False)
    assert created.allowed, created.message
    try:
        granted = verb if verb != "*" else "get"
        wait_until(lambda: _can(dev, granted, group, resource, None), "the probe Role")
        leaks = [e for e in ESCALATIONS if _can(dev, e[0], e[1], e[2], e[3])]
        assert leaks == []
    finally:
        assert dev.delete(role, dry_run=False).allowed
        wait_until(lambda: not _can(dev, verb if verb != "*" else "get", group, resource, None), "the probe Role's removal")
