"""The NetworkPolicy and ResourceQuota of a team namespace: valid objects, and - by NetworkPolicy semantics
(tests/support/network_policy_model.py) - which peers a team's pod reaches and is reached by. Enforcement is the VPC
CNI's on real nodes; nothing here runs a CNI."""

from __future__ import annotations

import copy

import kubernetes_validate
import pytest
from support.network_policy_model import Endpoint, allowed, selects

from cdk_app.kubernetes.network_policy import team_network_policy
from cdk_app.kubernetes.team_set import team_resource_quota, team_set

POLICIES = [team_network_policy("john"), team_network_policy("smith")]


def pod(namespace: str, ip: str, **labels: str) -> Endpoint:
    return Endpoint(ip, namespace, labels, {"kubernetes.io/metadata.name": namespace})


JOHN_0 = pod("hyperpod-ns-john", "10.1.0.10", **{"training.kubeflow.org/job-name": "fsdp"})
JOHN_ETCD = pod("hyperpod-ns-john", "10.1.0.11", app="fsdp-etcd")
SMITH = pod("hyperpod-ns-smith", "10.1.0.20")
COREDNS = pod("kube-system", "10.1.0.2", **{"k8s-app": "kube-dns"})
KUBE_PROXY_LIKE = pod("kube-system", "10.1.0.3", **{"k8s-app": "other"})
OPERATOR = pod("kubeflow", "10.1.0.4")  # a namespace without any NetworkPolicy
IMDS = Endpoint("169.254.169.254")
POD_IDENTITY = Endpoint("169.254.170.23")  # EKS Pod Identity agent (link-local, on the node)
API_SERVICE = Endpoint("172.20.0.1")  # the kubernetes Service's ClusterIP
API_ENI = Endpoint("10.1.200.5")  # the control plane's ENI in the VPC
S3 = Endpoint("52.216.0.1")

CASES = [  # (source, destination, port, protocol, allowed, why)
    (JOHN_0, JOHN_ETCD, 2379, "TCP", True, "etcd rendezvous inside the namespace"),
    (JOHN_ETCD, JOHN_0, 29400, "TCP", True, "c10d store inside the namespace"),
    (JOHN_0, JOHN_ETCD, 40000, "TCP", True, "NCCL bootstrap: every port inside the namespace"),
    (SMITH, JOHN_0, 29400, "TCP", False, "another team's pod to the c10d store"),
    (JOHN_0, SMITH, 2379, "TCP", False, "to another team's pod"),
    (OPERATOR, JOHN_0, 8080, "TCP", False, "a pod of a namespace without policies to a team's pod"),
    (JOHN_0, COREDNS, 53, "UDP", True, "DNS"),
    (JOHN_0, COREDNS, 53, "TCP", True, "DNS over TCP"),
    (JOHN_0, IMDS, 80, "TCP", False, "instance metadata"),
    (JOHN_0, POD_IDENTITY, 80, "TCP", True, "EKS Pod Identity credentials"),
    (JOHN_0, API_SERVICE, 443, "TCP", True, "the API server's Service"),
    (JOHN_0, API_ENI, 443, "TCP", True, "the API server's endpoint"),
    (JOHN_0, S3, 443, "TCP", True, "AWS endpoints and the internet"),
    (JOHN_0, KUBE_PROXY_LIKE, 10256, "TCP", True, "kube-system pods have no policy here: open, as before"),
]


@pytest.mark.parametrize(("source", "destination", "port", "protocol", "expected", "why"), CASES,
                         ids=[c[-1] for c in CASES])
def test_which_peers_a_team_pod_reaches(source, destination, port, protocol, expected, why):
    assert allowed(POLICIES, source, destination, port, protocol) is expected, why


def test_the_model_can_tell_an_open_namespace_from_an_isolated_one():
    assert allowed([], SMITH, JOHN_0, 29400)
    assert allowed([team_network_policy("smith")], SMITH, JOHN_0, 29400)  # john without its policy is open
    assert selects({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["x"]}]}, {"a": "y"})


@pytest.mark.parametrize("team", ["john", "a", "t" * 40])
def test_the_team_set_is_valid_and_ends_with_the_policy_and_quota(team):
    objects = team_set(team)
    assert [o["kind"] for o in objects[-2:]] == ["NetworkPolicy", "ResourceQuota"]
    for manifest in objects:
        kubernetes_validate.validate(copy.deepcopy(manifest), "1.33", strict=True)
    assert {o["metadata"]["namespace"] for o in objects[-2:]} == {f"hyperpod-ns-{team}"}


def test_the_quota_caps_what_kueue_does_not_queue_and_no_compute():
    hard = team_resource_quota("john")["spec"]["hard"]
    # NodePort and LoadBalancer are refused by the services guardrail, which names the field.
    assert "services.nodeports" not in hard and "services.loadbalancers" not in hard
    assert {"count/deployments.apps", "services", "configmaps"} <= set(hard)
    assert not [k for k in hard if k.startswith(("requests.", "limits.", "cpu", "memory", "pods"))]
