"""A team member on the real API server with config/dev.yaml applied, as EKS maps the team's IAM role to its
group (here: impersonation of the group): what RBAC lets them do, decided by SubjectAccessReview - and the
hand-written authorizer of the fast tier agrees on every request - and what `hyperpod-kit job` writes, created
(dry run) by the member through RBAC, the CRDs of the pinned chart and the guardrails, with nothing pruned."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from support.cli_runner import run
from support.paths import ROOT
from support.rbac_authorizer import Authorizer, Request
from support.realk8s.api import Cluster, wait_until
from support.realk8s.environment import namespace
from support.team_access_cases import FORBIDDEN, JOHN, NEEDED, NS, OTHER, RULE_CASES

from cdk_app.config.loader import load_config
from cdk_app.kubernetes.team_rbac import team_group, team_manifests

ALICE = "arn:aws:sts::111122223333:assumed-role/hyperpod-team-john/alice"
DEV = load_config(ROOT / "config" / "dev.yaml").config
MODEL = Authorizer([m for team in DEV.teams for m in team_manifests(team.name)])


@pytest.fixture(scope="module")
def dev(start_cluster) -> Cluster:
    return start_cluster("dev")


def _split(resource: str) -> tuple[str, str | None]:
    base, _, sub = resource.partition("/")
    return base, sub or None


def _server_allows(cluster: Cluster, request: Request, groups: set[str]) -> bool:
    resource, sub = _split(request.resource)
    return cluster.can(ALICE, tuple(sorted(groups)), request.verb, resource, group=request.group,
                       namespace=request.namespace or None, name=request.name or None, subresource=sub)


def _needed() -> list[Request]:
    return [Request(verb, group, resource, namespace, name if verb not in ("list", "create") else "")
            for verbs, group, resource, namespace, name in NEEDED for verb in verbs]


def test_the_api_server_lets_the_team_do_what_its_workloads_need_and_the_model_agrees(dev):
    wrong = [(r, "server denies") for r in _needed() if not _server_allows(dev, r, JOHN)]
    wrong += [(r, "model denies") for r in _needed() if not MODEL.allows(r, JOHN)]
    assert wrong == []


def test_the_api_server_refuses_everything_else_and_the_model_agrees(dev):
    wrong = [(r, "server allows") for r in FORBIDDEN if _server_allows(dev, r, JOHN)]
    wrong += [(r, "model allows") for r in FORBIDDEN if MODEL.allows(r, JOHN)]
    assert wrong == []


def test_another_teams_group_gets_nothing_of_johns(dev):
    smith = {team_group("smith")}
    assert [r for r in _needed() if r.namespace == NS and _server_allows(dev, r, smith)] == []


def _job(*args: str, team: str = "john", config: str = "config/dev.yaml") -> list[dict[str, Any]]:
    done = run("job", "--config", config, "--team", team, "--name", "fsdp", "--image", "repo/train:1", *args,
               "--", "python", "train.py")
    assert done.returncode == 0, done.stderr
    return list(yaml.safe_load_all(done.stdout))


JOBS = {
    "pytorchjob": (),
    "pytorchjob-elastic-etcd": ("--nodes", "2", "--min-nodes", "1", "--max-nodes", "4", "--rdzv-backend", "etcd"),
    "pytorchjob-elastic-c10d": ("--nodes", "2", "--min-nodes", "1", "--max-nodes", "4"),
    "mpijob": ("--kind", "mpijob", "--nodes", "2"),
    "job": ("--kind", "job"),
    "walkthrough": ("--nodes", "2", "--min-nodes", "1", "--max-nodes", "4", "--rdzv-backend", "etcd",
                    "--accelerators", "4", "--efa", "1", "--shm", "64Gi", "--scratch", "500Gi:/local"),
}


def _missing(sent: Any, kept: Any, path: str = "") -> list[str]:
    """Paths of what was sent but is not in what the API server returns (pruned or rewritten)."""
    if isinstance(sent, dict):
        if not isinstance(kept, dict):
            return [path]
        return [p for key, value in sent.items() for p in _missing(value, kept.get(key, _ABSENT), f"{path}.{key}")]
    if isinstance(sent, list):
        if not isinstance(kept, list) or len(kept) != len(sent):
            return [path]
        return [p for i, (a, b) in enumerate(zip(sent, kept, strict=True)) for p in _missing(a, b, f"{path}[{i}]")]
    # Core kinds store resource quantities in canonical string form (4 -> "4").
    same = sent == kept or (isinstance(sent, int | float) and not isinstance(sent, bool) and str(sent) == kept)
    return [] if same else [path]


_ABSENT = object()


@pytest.mark.parametrize("variant", JOBS)
def test_what_job_writes_is_created_by_the_member_with_nothing_pruned(dev, variant):
    """Through the team's RBAC, the chart's CRDs (structural schemas prune unknown fields), core validation
    and the guardrails; the object the API server returns (defaults applied) still holds every field sent."""
    for obj in _job(*JOBS[variant]):
        answer = dev.create(obj, user=ALICE, groups=tuple(JOHN))
        assert answer.allowed, (obj["kind"], answer.status, answer.message)
        assert _missing(obj, answer.body) == [], obj["kind"]


@pytest.fixture(scope="module")
def prod(start_cluster) -> Cluster:
    return start_cluster("prod")


@pytest.mark.parametrize("variant", JOBS)
def test_what_job_writes_for_a_prod_team_with_a_priority_class_is_created_with_nothing_pruned(prod, variant):
    """config/prod.yaml: priority classes, a team allowed IPC_LOCK, p5 nodes with EFA."""
    args = ("--priority", "training", *JOBS[variant])
    if variant in ("pytorchjob", "walkthrough"):
        args += ("--efa", "all")
    member = ("hyperpod-team-research-nlp",)
    for obj in _job(*args, team="research-nlp", config="config/prod.yaml"):
        answer = prod.create(obj, user=ALICE, groups=member)
        assert answer.allowed, (obj["kind"], answer.status, answer.message)
        assert _missing(obj, answer.body) == [], obj["kind"]


def test_the_member_cannot_create_in_or_read_another_teams_namespace(dev):
    for obj in _job():
        foreign = {**obj, "metadata": {**obj["metadata"], "namespace": OTHER}}
        answer = dev.create(foreign, user=ALICE, groups=tuple(JOHN))
        assert answer.status == 403 and "cannot create" in answer.message, answer.message
    listing = dev.request("GET", f"/api/v1/namespaces/{OTHER}/pods", user=ALICE, groups=tuple(JOHN))
    assert listing.status == 403 and "cannot list resource \"pods\"" in listing.message


def test_the_authorizer_of_the_fast_tier_decides_the_documented_cases_as_the_api_server(start_cluster):
    """Each case's rules as a Role in namespace a, bound to a group of its own; the real API server's answer
    (SubjectAccessReview) is the case's, and so the fast tier's authorizer is right to hold it."""
    cluster = start_cluster("dev")
    for name in ("a", "b"):
        assert cluster.create(namespace(name), dry_run=False).allowed
    probe = [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]
    for i, (rules, _, _) in enumerate([*RULE_CASES, (probe, None, None)]):
        role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                "metadata": {"name": f"r{i}", "namespace": "a"}, "rules": rules}
        binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                   "metadata": {"name": f"r{i}", "namespace": "a"},
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": f"r{i}"},
                   "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": f"g{i}"}]}
        assert cluster.create(role, dry_run=False).allowed and cluster.create(binding, dry_run=False).allowed
    # Roles and bindings reach the authorizer in the order they were made: once the last one acts, all do.
    last = len(RULE_CASES)
    wait_until(lambda: cluster.can(ALICE, (f"g{last}",), "get", "configmaps", namespace="a", name="x"), "the Roles")
    wrong = []
    for i, (_, request, allowed) in enumerate(RULE_CASES):
        if _server_allows(cluster, request, {f"g{i}"}) is not allowed:
            wrong.append((i, request, allowed))
        if _server_allows(cluster, request, {"other"}):
            wrong.append((i, request, "allowed for another group"))
    assert wrong == []
