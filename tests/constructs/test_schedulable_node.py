"""SchedulableNode: the governance stack's wait for a HyperPod node that can take pods."""

from __future__ import annotations

import pytest
from aws_cdk import App, Duration, Environment, Stack
from aws_cdk.assertions import Template

from hyperpod_constructs.private.limits import SCHEDULABLE_NODE_WAIT_MINUTES
from hyperpod_constructs.schedulable_node import SchedulableNode, SchedulableNodeProps

TOKEN = "arn:aws:lambda:eu-west-1:111122223333:function:x"


def test_the_wait_is_the_installer_s_node_kind_within_cloudformation_s_hour():
    stack = Stack(App(), "Gov", env=Environment(account="111122223333", region="eu-west-1"))
    SchedulableNode(stack, "Node", props=SchedulableNodeProps(service_token=TOKEN, cluster_name="hyperpod-eks"))
    Template.from_stack(stack).has_resource_properties("Custom::SchedulableNode", {
        "ServiceToken": TOKEN, "Kind": "WaitForSchedulableNode", "ClusterName": "hyperpod-eks", "Region": "eu-west-1",
        "TimeoutSeconds": str(SCHEDULABLE_NODE_WAIT_MINUTES * 60), "ServiceTimeout": "3600"})


@pytest.mark.parametrize("timeout", [Duration.seconds(0), Duration.minutes(SCHEDULABLE_NODE_WAIT_MINUTES + 1)])
def test_a_wait_beyond_the_installer_s_bound_is_refused(timeout):
    with pytest.raises(ValueError, match="timeout must be between 1 s and 55 minutes"):
        SchedulableNode(Stack(App(), "Gov"), "Node", props=SchedulableNodeProps(
            service_token=TOKEN, cluster_name="c", timeout=timeout))
