"""Waits at deploy time until the HyperPod cluster has a node that can take pods - Ready, marked Schedulable by
HyperPod's health checks, not cordoned, untainted - through the kit's installer (helm_release_handler, Kind
"WaitForSchedulableNode"). The task-governance add-on goes in after it: with NodeProvisioningMode Continuous
the cluster stack finishes before any node has joined, and Kueue's controller cannot start without one.

The wait spans many invocations (CDK's provider framework calls is_complete every 30 s), bounded by `timeout`;
on a time-out the resource fails with the nodes' states as the reason. Deleting it does nothing."""

from __future__ import annotations

from dataclasses import dataclass, field

from aws_cdk import CustomResource, Duration, Stack
from constructs import Construct

from hyperpod_constructs.private.limits import SCHEDULABLE_NODE_WAIT_MINUTES

# CloudFormation waits at most this for a custom resource (ServiceTimeout's maximum, 3600 s).
SERVICE_TIMEOUT = Duration.hours(1)


@dataclass(frozen=True)
class SchedulableNodeProps:
    """Props of SchedulableNode.

    service_token: the installer's custom resource provider (HyperPodHelmRelease.service_token) - required.
    cluster_name: EKS cluster (the installer's own) - required.
    timeout: how long to wait. Default SCHEDULABLE_NODE_WAIT_MINUTES (55); at most 55 minutes, so that the
        installer's reason reaches CloudFormation before the framework's and CloudFormation's one-hour limits.
    """

    service_token: str
    cluster_name: str
    timeout: Duration = field(default_factory=lambda: Duration.minutes(SCHEDULABLE_NODE_WAIT_MINUTES))


class SchedulableNode(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, props: SchedulableNodeProps) -> None:
        super().__init__(scope, construct_id)
        if not 0 < props.timeout.to_seconds() <= SCHEDULABLE_NODE_WAIT_MINUTES * 60:
            raise ValueError(f"timeout must be between 1 s and {SCHEDULABLE_NODE_WAIT_MINUTES} minutes, "
                             f"got {props.timeout.to_seconds():.0f} s")
        self.resource = CustomResource(
            self, "Resource", service_token=props.service_token, resource_type="Custom::SchedulableNode",
            service_timeout=SERVICE_TIMEOUT,
            properties={"Kind": "WaitForSchedulableNode", "ClusterName": props.cluster_name,
                        "Region": Stack.of(self).region, "TimeoutSeconds": str(int(props.timeout.to_seconds()))},
        )
