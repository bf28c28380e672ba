"""The instance groups the cluster stack hands to HyperPodCluster: their deep health checks by default (issue 27:
InstanceConnectivity was on for every GPU group, though the HyperPod docs say it "requires at least 2 nodes and is
only supported on instances with multi-node GPU communication capabilities")."""

from __future__ import annotations

import pytest
from support.paths import ROOT

from cdk_app.config.loader import load_config
from cdk_app.config.model import InstanceGroup
from cdk_app.stacks.cluster_stack import instance_group_spec

DEV = load_config(ROOT / "config" / "dev.yaml").config


@pytest.mark.parametrize("instance_type, count, checks", [
    ("ml.g5.12xlarge", 4, ("InstanceStress", "InstanceConnectivity")),   # EFA, several nodes
    ("ml.p5.48xlarge", 1, ("InstanceStress",)),                          # one node
    ("ml.p5.48xlarge", 0, ("InstanceStress",)),                          # scaled to zero
    ("ml.g6.xlarge", 4, ("InstanceStress",)),                            # GPU without EFA
    ("ml.m5.2xlarge", 4, ()),                                            # CPU
])
def test_default_deep_health_checks(instance_type, count, checks):
    group = InstanceGroup(name="g", instance_type=instance_type, count=count)
    assert instance_group_spec(DEV, group).deep_health_checks == checks


def test_a_configured_list_is_written_as_given():
    group = InstanceGroup(name="g", instance_type="ml.g5.12xlarge", count=4, deep_health_checks=())
    assert instance_group_spec(DEV, group).deep_health_checks == ()
