"""The kit's NodePools (cdk_app/kubernetes/autoscaling.py, one per autoscaled instance type) as the real API server judges them, under Karpenter's own
NodePool CRD (kubernetes-sigs/karpenter v1.0.0, the first v1 API, then v1.14.1; tests/support/data/README.md): created
with strict field validation, so an unknown field, a wrong type or a broken CEL rule of the CRD is refused. The
HyperpodNodeClass CRD is HyperPod's own and not published; its object is checked in the fast tier only."""

from __future__ import annotations

import copy

import pytest
import yaml
from support.crd_schemas import DATA
from support.realk8s.environment import kubectl_apply, wait_established

from cdk_app.config.loader import load_config
from cdk_app.kubernetes.autoscaling import autoscaling_manifests

AUTOSCALED = """
    - name: gpu-auto
      instance_type: ml.g5.12xlarge
      fallback_instance_types: [ml.g5.24xlarge]
      count: 0
      max_count: 4
"""


@pytest.fixture(scope="module")
def node_pool(tmp_path_factory):
    from support.paths import ROOT
    text = (ROOT / "config" / "dev.yaml").read_text()
    text = text.replace("  node_recovery: Automatic\n", "  node_recovery: Automatic\n  autoscaling: true\n")
    text = text.replace("        workload: cpu\n", "        workload: cpu\n" + AUTOSCALED.lstrip("\n"), 1)
    text = text.replace("      - instance_type: ml.g5.12xlarge\n        count: 3", "      - instance_type: ml.g5.12xlarge\n        count: 5", 1)
    path = tmp_path_factory.mktemp("autoscaling") / "dev.yaml"
    path.write_text(text)
    _, *pools = autoscaling_manifests(load_config(path).config)
    # A pool per type the flexible group may run: g5.12xlarge gets the quotas' (and borrowers') nodes beyond the 4
    # fixed ones, up to max_count 4; g5.24xlarge, which no team holds, none.
    assert [(p["metadata"]["name"], p["spec"]["limits"]["nvidia.com/gpu"]) for p in pools] == [
        ("hyperpod-kit-autoscaling-ml.g5.12xlarge", "16"), ("hyperpod-kit-autoscaling-ml.g5.24xlarge", "0")]
    return pools


@pytest.fixture(scope="module")
def server(start_cluster):
    return start_cluster("dev")


# In this order: the second apply updates the CRD the first installed.
@pytest.mark.parametrize("tag", ["v1.0.0", "v1.14.1"])
def test_the_api_server_admits_the_kits_node_pools_under_karpenters_crd(server, k8s_bin, node_pool, tag):
    crd = yaml.safe_load((DATA / f"karpenter.sh_nodepools-{tag}.yaml").read_text())
    kubectl_apply(k8s_bin / "kubectl", server.admin_kubeconfig, [crd])
    wait_established(k8s_bin / "kubectl", server.admin_kubeconfig, [crd])
    server.resource("karpenter.sh/v1", "NodePool", refresh=True)
    for pool in node_pool:
        answer = server.create(pool)
        assert answer.allowed and not answer.warnings, (answer.status, answer.message, answer.warnings)
    # The same server refuses a near miss: the verdict above is the CRD's, not a server that accepts anything.
    bad = copy.deepcopy(node_pool[0])
    bad["spec"]["disruption"]["consolidateAfter"] = "soon"
    assert server.create(bad).status == 422
