"""Kubernetes objects applied to an EKS cluster at deploy time by the kit's installer function
(helm_release_handler, Kind "Manifests"): server-side apply on create and update, objects an update
leaves out are deleted, all of them are deleted with the resource. The installer accepts only what the
kit writes: Role and RoleBinding of a team in hyperpod-ns-<team>, and ValidatingAdmissionPolicy /
ValidatingAdmissionPolicyBinding named hyperpod-kit-* (helm_release_handler/manifest_policy.py); this
construct refuses anything else at synth, with the installer's reason. A set whose content the installer
pins (HyperPodHelmReleaseProps.pinned_manifests: the guardrails) must be given here with exactly that content."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from aws_cdk import CustomResource, Stack
from constructs import Construct

from hyperpod_constructs.helm_release_handler.manifest_policy import manifest_refusal
from hyperpod_constructs.hyperpod_helm_release import SERVICE_TIMEOUT


@dataclass(frozen=True)
class KubernetesManifestsProps:
    """Props of KubernetesManifests.

    service_token: the installer's custom resource provider (HyperPodHelmRelease.service_token) - required.
    cluster_name: EKS cluster to apply to (the installer's own) - required.
    name: name of this set, unique in the cluster - required.
    manifests: Kubernetes objects, each with apiVersion, kind and metadata.name - required, at least one.
    region: the cluster's Region - default: the stack's (a caller making hundreds of sets passes it, which
        saves a jsii call per set).
    """

    service_token: str
    cluster_name: str
    name: str
    manifests: tuple[dict[str, Any], ...]
    region: str | None = None


class KubernetesManifests(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, props: KubernetesManifestsProps) -> None:
        super().__init__(scope, construct_id)
        if not props.manifests:
            raise ValueError("manifests must hold at least one object")
        for manifest in props.manifests:
            if not {"apiVersion", "kind"} <= set(manifest) or not manifest.get("metadata", {}).get("name"):
                raise ValueError(f"each manifest needs apiVersion, kind and metadata.name, got {manifest!r}")
        refusals = [reason for reason in map(manifest_refusal, props.manifests) if reason]
        if refusals:
            raise ValueError("the installer would refuse these manifests: " + "; ".join(refusals))
        self.resource = CustomResource(
            self, "Resource", service_token=props.service_token, resource_type="Custom::KubernetesManifests",
            service_timeout=SERVICE_TIMEOUT,
            properties={"Kind": "Manifests", "ClusterName": props.cluster_name, "Region": props.region or Stack.of(self).region,
                        "Name": props.name,
                        # Compact: at hundreds of teams these strings are most of the template bytes.
                        "Manifests": json.dumps(list(props.manifests), sort_keys=True, separators=(",", ":"))},
        )
