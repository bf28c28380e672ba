"""Kubernetes objects applied to an EKS cluster at deploy time by the kit's installer function
(helm_release_handler, Kind "Manifests"): server-side apply on create and update, objects an update
leaves out are deleted, all of them are deleted with the resource. The installer accepts only what the
kit writes: Role and RoleBinding of a team in hyperpod-ns-<team>, and ValidatingAdmissionPolicy /
ValidatingAdmissionPolicyBinding named hyperpod-kit-* in the set named "guardrails"
(helm_release_handler/manifest_policy.py); this construct refuses anything else at synth, with the installer's
reason.

A small set without admission objects travels in the event. The others go as an S3 asset (the content's canonical
JSON, published with the stack's other assets) that the event names with its SHA-256: CloudFormation invokes the
installer asynchronously with old and new properties, and the guardrails of a few hundred teams would outgrow that
payload; the installer also takes admission objects from the asset bucket only. Deploy-time values (tokens, such
as a file system's DNS name) are resolved in the event only, so a set holding them must travel inline."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aws_cdk import CustomResource, Stack, Token
from aws_cdk import aws_s3_assets as s3_assets
from constructs import Construct

from hyperpod_constructs.helm_release_handler.manifest_content import canonical_json, sha256_hex
from hyperpod_constructs.helm_release_handler.manifest_policy import ADMISSION_API, manifest_refusal
from hyperpod_constructs.hyperpod_helm_release import SERVICE_TIMEOUT

# Content up to this size travels in the event: old and new properties of an update stay far below Lambda's
# 256 KB asynchronous payload.
INLINE_BYTES = 16 * 1024


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
        content = canonical_json(list(props.manifests))
        self.asset: s3_assets.Asset | None = None
        if len(content) <= INLINE_BYTES and all(m["apiVersion"] != ADMISSION_API for m in props.manifests):
            # Compact: at hundreds of teams these strings are most of the template bytes.
            carried: dict[str, Any] = {"Manifests": content.decode()}
        else:
            if Token.is_unresolved(content.decode()):
                raise ValueError(f"manifests {props.name!r} hold deploy-time values but are {len(content)} bytes, over "
                                 f"the {INLINE_BYTES} that travel in the event (an asset is published before deploy)")
            self.asset = _content_asset(self, content)
            carried = {"ManifestsObject": {"Bucket": self.asset.s3_bucket_name, "Key": self.asset.s3_object_key,
                                           "Sha256": sha256_hex(content)}}
        self.resource = CustomResource(
            self, "Resource", service_token=props.service_token, resource_type="Custom::KubernetesManifests",
            service_timeout=SERVICE_TIMEOUT,
            properties={"Kind": "Manifests", "ClusterName": props.cluster_name, "Region": props.region or Stack.of(self).region,
                        "Name": props.name, **carried},
        )


def _content_asset(scope: Construct, content: bytes) -> s3_assets.Asset:
    """The content as a file asset. CDK copies the file into the cloud assembly at synth, so a temporary
    folder is enough (as CDK's own Source.jsonData does for S3 deployments)."""
    folder = Path(tempfile.mkdtemp(prefix="hyperpod-kit-manifests-"))
    path = folder / "manifests.json"
    path.write_bytes(content)
    return s3_assets.Asset(scope, "Content", path=str(path))
