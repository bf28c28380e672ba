"""Waits at deploy time until a Kubernetes Deployment reports Available, through the kit's installer
function (helm_release_handler, Kind "WaitForDeployment"): e.g. Kueue's controller before the cluster
policy and quotas, whose webhooks it serves. Bounded: the resource fails with the Deployment's last
state as the reason. Deleting it does nothing."""

from __future__ import annotations

import re
from dataclasses import dataclass

from aws_cdk import CustomResource, Duration, Stack
from constructs import Construct

from hyperpod_constructs.hyperpod_helm_release import HANDLER_TIMEOUT, SERVICE_TIMEOUT

# The installer answers within its Lambda timeout less a minute; the wait must fit in that.
MAX_WAIT = HANDLER_TIMEOUT.minus(Duration.minutes(2))


@dataclass(frozen=True)
class DeploymentAvailableProps:
    """Props of DeploymentAvailable.

    service_token: the installer's custom resource provider (HyperPodHelmRelease.service_token) - required.
    cluster_name: EKS cluster (the installer's own) - required.
    namespace, name: the Deployment - required.
    timeout: how long to wait. Default 10 minutes (at most 13).
    """

    service_token: str
    cluster_name: str
    namespace: str
    name: str
    timeout: Duration = Duration.minutes(10)


class DeploymentAvailable(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, props: DeploymentAvailableProps) -> None:
        super().__init__(scope, construct_id)
        if not re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", props.namespace):
            raise ValueError(f"namespace must be a Kubernetes namespace name, got {props.namespace!r}")
        if not re.fullmatch(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?", props.name):
            raise ValueError(f"name must be a Kubernetes object name, got {props.name!r}")
        if not 0 < props.timeout.to_seconds() <= MAX_WAIT.to_seconds():
            raise ValueError(f"timeout must be between 1 s and {MAX_WAIT.to_seconds():.0f} s, "
                             f"got {props.timeout.to_seconds():.0f} s")
        self.resource = CustomResource(
            self, "Resource", service_token=props.service_token, resource_type="Custom::DeploymentAvailable",
            service_timeout=SERVICE_TIMEOUT,
            properties={"Kind": "WaitForDeployment", "ClusterName": props.cluster_name,
                        "Region": Stack.of(self).region, "Namespace": props.namespace, "Name": props.name,
                        "TimeoutSeconds": str(int(props.timeout.to_seconds()))},
        )
