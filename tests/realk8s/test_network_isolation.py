"""The kit's NetworkPolicy and ResourceQuota of a team namespace on the real API server with config/dev.yaml applied
by the installer's kubectl: the server stores them, a team member cannot change or delete them (RBAC for the quota,
the hyperpod-kit-network-policies guardrail for the policy) but may add ingress policies of its own, the quota
refuses the Service past its limit, and the policy's selectors pick the namespaces they should from the server's
own labels. Whether traffic is dropped is the VPC CNI's on real nodes: no CNI runs here."""

from __future__ import annotations

import pytest
from support.network_policy_model import selects
from support.realk8s.api import Cluster, wait_until

from cdk_app.kubernetes.network_policy import team_network_policy
from cdk_app.kubernetes.team_rbac import team_group
from cdk_app.kubernetes.team_set import team_resource_quota

ALICE = "arn:aws:sts::111122223333:assumed-role/hyperpod-team-john/alice"
JOHN, SMITH = (team_group("john"),), (team_group("smith"),)
NS = "hyperpod-ns-john"
KIT_POLICY, QUOTA = team_network_policy("john"), team_resource_quota("john")


def own_policy(name: str = "allow-tensorboard", **spec: object) -> dict:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"podSelector": {"matchLabels": {"app": "tb"}},
                     "ingress": [{"from": [{"namespaceSelector": {}}], "ports": [{"port": 6006}]}], **spec}}


@pytest.fixture(scope="module")
def dev(start_cluster) -> Cluster:
    """The admission plugin reads policies through an informer: wait until the guardrail acts."""
    cluster = start_cluster("dev")
    wait_until(lambda: cluster.create(own_policy("hyperpod-kit-probe"), user=ALICE, groups=JOHN).status == 403,
               "the hyperpod-kit-network-policies guardrail", timeout=60, interval=0.2)
    return cluster


def test_the_server_holds_the_kits_policy_and_quota_as_written(dev):
    for obj in (KIT_POLICY, QUOTA):
        stored = dev.get(obj)
        assert stored.allowed, stored.message
        assert stored.body["spec"] == obj["spec"]


def test_a_team_member_cannot_change_or_delete_the_kits_network_policy(dev):
    opened = {**KIT_POLICY, "spec": {**KIT_POLICY["spec"], "egress": [{}]}}
    answers = {"update": dev.update(opened, user=ALICE, groups=JOHN),
               "delete": dev.delete(KIT_POLICY, user=ALICE, groups=JOHN),
               "delete-for-real": dev.delete(KIT_POLICY, user=ALICE, groups=JOHN, dry_run=False)}
    assert {verb: (a.status, "hyperpod-kit guardrail kit-network-policy" in a.message) for verb, a in answers.items()} \
        == {verb: (403, True) for verb in answers}
    assert dev.get(KIT_POLICY).body["spec"] == KIT_POLICY["spec"]


def test_a_team_member_may_add_and_remove_ingress_policies_of_its_own(dev):
    mine = own_policy()
    created = dev.create(mine, user=ALICE, groups=JOHN, dry_run=False)
    assert created.allowed, created.message
    assert dev.delete(mine, user=ALICE, groups=JOHN, dry_run=False).allowed


@pytest.mark.parametrize(("policy", "rule"), [
    (own_policy(egress=[{"to": [{"ipBlock": {"cidr": "169.254.169.254/32"}}]}], policyTypes=["Ingress", "Egress"]),
     "network-policy-egress"),
    (own_policy(policyTypes=["Egress"]), "network-policy-egress"),
    (own_policy(egress=[{}]), "network-policy-egress"),
    (own_policy("hyperpod-kit-team-isolation-2"), "kit-network-policy"),
    ({**own_policy(), "metadata": {"generateName": "hyperpod-kit-", "namespace": NS}}, "kit-network-policy"),
])
def test_a_team_member_may_not_write_egress_or_take_the_kits_names(dev, policy, rule):
    answer = dev.create(policy, user=ALICE, groups=JOHN)
    assert (answer.status, f"hyperpod-kit guardrail {rule}" in answer.message) == (403, True), answer.message


def test_another_team_cannot_touch_johns_policies(dev):
    assert not dev.can(ALICE, SMITH, "create", "networkpolicies", group="networking.k8s.io", namespace=NS)
    assert dev.delete(KIT_POLICY, user=ALICE, groups=SMITH).status == 403


def test_the_quota_is_readable_and_not_writable_by_the_team(dev):
    verbs = {v: dev.can(ALICE, JOHN, v, "resourcequotas", namespace=NS, name=QUOTA["metadata"]["name"])
             for v in ("get", "update", "patch", "delete")}
    assert verbs == {"get": True, "update": False, "patch": False, "delete": False}
    raised = {**QUOTA, "spec": {"hard": {**QUOTA["spec"]["hard"], "services": "100000"}}}
    assert dev.update(raised, user=ALICE, groups=JOHN).status == 403
    assert dev.delete(QUOTA, user=ALICE, groups=JOHN).status == 403


def test_the_quota_refuses_the_service_past_its_limit(dev):
    limit = int(QUOTA["spec"]["hard"]["services"])
    wait_until(lambda: dev.get(QUOTA).body.get("status", {}).get("hard"), "the quota's status")

    def service(i: int) -> dict:
        return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": f"s{i}", "namespace": NS},
                "spec": {"clusterIP": "None", "selector": {"app": f"s{i}"}, "ports": [{"port": 80}]}}

    made = [dev.create(service(i), user=ALICE, groups=JOHN, dry_run=False) for i in range(limit)]
    assert [a.message for a in made if not a.allowed] == []
    past = dev.create(service(limit), user=ALICE, groups=JOHN, dry_run=False)
    assert (past.status, "exceeded quota: hyperpod-kit-unqueued-objects" in past.message) == (403, True), past.message
    for i in range(limit):
        dev.delete(service(i), dry_run=False)


def test_the_policys_namespace_selectors_pick_kube_system_and_no_team(dev):
    """Every namespaceSelector of the kit's policy against every namespace's labels as the server sets them; and the
    server's own label selector agrees on kube-system."""
    namespaces = {ns["metadata"]["name"]: ns["metadata"].get("labels", {})
                  for ns in dev.request("GET", "/api/v1/namespaces").body["items"]}
    selectors = [peer["namespaceSelector"] for rule in KIT_POLICY["spec"]["egress"] + KIT_POLICY["spec"]["ingress"]
                 for peer in rule.get("to", rule.get("from", [])) if "namespaceSelector" in peer]
    assert selectors and {name for name, labels in namespaces.items() if any(selects(s, labels) for s in selectors)} \
        == {"kube-system"}
    assert {"hyperpod-ns-john", "hyperpod-ns-smith"} <= set(namespaces)
    (dns,) = selectors
    chosen = dev.request("GET", "/api/v1/namespaces", params={"labelSelector": ",".join(
        f"{k}={v}" for k, v in dns["matchLabels"].items())}).body["items"]
    assert [ns["metadata"]["name"] for ns in chosen] == ["kube-system"]
