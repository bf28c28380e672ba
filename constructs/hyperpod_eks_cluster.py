"""The EKS cluster that orchestrates a HyperPod cluster: API_AND_CONFIG_MAP authentication (HyperPod
creates its own access entries), every control-plane log type, secrets encrypted with a KMS key of
its own, administrator access entries and the core add-ons, the VPC CNI with Kubernetes NetworkPolicy
enforcement on.

The cluster has no node groups: HyperPod instance groups are its nodes. CoreDNS therefore reports
degraded until the first HyperPod node joins; that is expected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_eks_v2 as eks
from aws_cdk import aws_kms as kms
from constructs import Construct

from hyperpod_constructs.imported_network import import_vpc_subnets
from hyperpod_constructs.nag_acknowledgements import acknowledge, managed_policy
from hyperpod_constructs.private.access_entry_keys import admin_entry_key
from hyperpod_constructs.private.limits import ANYWHERE_IPV4, MIN_KUBERNETES_MINOR
from hyperpod_constructs.protection import retain
from hyperpod_constructs.service_trust import restrict_service_trust

CORE_ADDONS = ("vpc-cni", "kube-proxy", "coredns", "eks-pod-identity-agent")
# The VPC CNI enforces NetworkPolicies only with this configuration value; it starts the network policy agent
# in every aws-node pod (VPC CNI 1.14 or later, Linux kernel 5.10+, BPF file system mounted; EKS user guide,
# "Limit pod traffic with Kubernetes network policies"). ConfigurationValues is updated in place
# (AWS::EKS::Addon's create-only properties are ClusterName, AddonName, NamespaceConfig). Namespaces without a
# NetworkPolicy stay open (the default "standard" enforcing mode).
ADDON_CONFIGURATION = {"vpc-cni": {"enableNetworkPolicy": "true"}}
MIN_NETWORK_POLICY_CNI = (1, 14)
EndpointAccessName = Literal["public", "private", "public_and_private"]


@dataclass(frozen=True)
class HyperPodEksClusterProps:
    """Props of HyperPodEksCluster.

    kubernetes_version: "1.30" or later - required.
    vpc_id: VPC of the cluster - required.
    subnet_ids: control-plane subnets, in at least two availability zones - required.
    availability_zone_ids: zone of each subnet, same order as subnet_ids - required.
    security_group_id: extra security group of the control plane. HyperPod nodes carry the same
        group, so it must allow all traffic from itself - required.
    endpoint_access: who reaches the API endpoint. Default private (from inside the VPC only).
    public_access_cidrs: CIDRs allowed to reach a public endpoint; required for one (anywhere is
        ("0.0.0.0/0",), never implied; a public-only endpoint takes only that). Default: none.
    admin_principals: IAM role or user ARNs given AmazonEKSClusterAdminPolicy. Default: none.
    addon_versions: version per core add-on; vpc-cni v1.14 or later (network policies). Default: EKS picks the
        default for the Kubernetes version.
    """

    kubernetes_version: str
    vpc_id: str
    subnet_ids: tuple[str, ...]
    availability_zone_ids: tuple[str, ...]
    security_group_id: str
    endpoint_access: EndpointAccessName = "private"
    public_access_cidrs: tuple[str, ...] = ()
    admin_principals: tuple[str, ...] = ()
    addon_versions: dict[str, str] = field(default_factory=dict)


class HyperPodEksCluster(Construct):
    """EKS cluster (aws_eks_v2), its secrets key, admin access entries and core add-ons."""

    def __init__(self, scope: Construct, construct_id: str, *, props: HyperPodEksClusterProps) -> None:
        super().__init__(scope, construct_id)
        _validate(props)

        self.secrets_key = kms.Key(self, "SecretsKey", enable_key_rotation=True,
                                   description=f"Envelope encryption of Kubernetes secrets ({self.node.path})")
        vpc, subnets = import_vpc_subnets(self, props.vpc_id, props.subnet_ids, props.availability_zone_ids)
        self.cluster = eks.Cluster(
            self, "Cluster",
            version=eks.KubernetesVersion.of(props.kubernetes_version),
            vpc=vpc,
            vpc_subnets=[subnets],
            security_group=ec2.SecurityGroup.from_security_group_id(self, "ControlPlaneSecurityGroup",
                                                                    props.security_group_id, mutable=False),
            endpoint_access=_endpoint_access(props.endpoint_access, props.public_access_cidrs),
            cluster_logging=list(eks.ClusterLoggingTypes),
            secrets_encryption_key=self.secrets_key,
            # HyperPod instance groups are the nodes; no node group, no Auto Mode.
            default_capacity_type=eks.DefaultCapacityType.NODEGROUP,
            default_capacity=0,
            # The core add-ons below are EKS-managed; self-managed copies would conflict with them.
            bootstrap_self_managed_addons=False,
        )
        restrict_service_trust(self.cluster.role)
        acknowledge(self.cluster.role, {managed_policy("AmazonEKSClusterPolicy"):
                                        "the EKS cluster service role needs the AWS managed AmazonEKSClusterPolicy; "
                                        "EKS documents no narrower replacement"})
        # HyperPod needs API or API_AND_CONFIG_MAP; the latter also keeps aws-auth for existing tooling.
        cfn_cluster = self.cluster.node.default_child
        cfn_cluster.add_property_override("AccessConfig.AuthenticationMode", "API_AND_CONFIG_MAP")
        # The cluster and the key its secrets are encrypted with outlive the stack (aws_eks_v2 writes
        # AWS::EKS::Cluster itself, so the policies go on that resource).
        retain(cfn_cluster, self.secrets_key.node.default_child)

        admin = eks.AccessPolicy.from_access_policy_name("AmazonEKSClusterAdminPolicy",
                                                         access_scope_type=eks.AccessScopeType.CLUSTER)
        # Keyed by the principal, not its list position: removing one admin must not re-create another's
        # entry (EKS allows one entry per principal, and CloudFormation creates the new one first).
        for principal in props.admin_principals:
            eks.AccessEntry(self, f"Admin-{admin_entry_key(principal)}", cluster=self.cluster, principal=principal,
                            access_policies=[admin])
        self.addons = {
            name: eks.Addon(self, f"Addon-{name}", cluster=self.cluster, addon_name=name,
                            addon_version=props.addon_versions.get(name), preserve_on_delete=True,
                            configuration_values=ADDON_CONFIGURATION.get(name))
            for name in CORE_ADDONS
        }
        self.cluster_name = self.cluster.cluster_name
        self.cluster_arn = self.cluster.cluster_arn


def _validate(props: HyperPodEksClusterProps) -> None:
    match = re.fullmatch(r"1\.([0-9]+)", props.kubernetes_version)
    if match is None or int(match.group(1)) < MIN_KUBERNETES_MINOR:
        raise ValueError(f"kubernetes_version must be 1.{MIN_KUBERNETES_MINOR} or later, got {props.kubernetes_version!r}")
    if len(props.subnet_ids) != len(props.availability_zone_ids):
        raise ValueError("subnet_ids and availability_zone_ids must have the same length")
    if len(set(props.availability_zone_ids)) < 2:
        raise ValueError("EKS needs subnets in at least two availability zones, "
                         f"got {sorted(set(props.availability_zone_ids))}")
    if props.public_access_cidrs and props.endpoint_access == "private":
        raise ValueError("public_access_cidrs needs endpoint_access public or public_and_private")
    if not props.public_access_cidrs and props.endpoint_access != "private":
        raise ValueError(f"endpoint_access {props.endpoint_access} needs public_access_cidrs: who may reach the API")
    if props.endpoint_access == "public" and props.public_access_cidrs not in ((), (ANYWHERE_IPV4,)):
        raise ValueError("a public-only endpoint cannot be restricted (nodes reach it through NAT); "
                         "use public_and_private with public_access_cidrs")
    unknown = set(props.addon_versions) - set(CORE_ADDONS)
    if unknown:
        raise ValueError(f"addon_versions names unknown add-ons {sorted(unknown)}; core add-ons are {list(CORE_ADDONS)}")
    cni = re.match(r"v([0-9]+)\.([0-9]+)\.", props.addon_versions.get("vpc-cni", "v1.14."))
    if cni is None or (int(cni.group(1)), int(cni.group(2))) < MIN_NETWORK_POLICY_CNI:
        raise ValueError(f"addon_versions vpc-cni {props.addon_versions['vpc-cni']!r}: network policy enforcement "
                         "needs v1.14 or later (such as v1.19.2-eksbuild.1)")


def _endpoint_access(kind: EndpointAccessName, cidrs: tuple[str, ...]) -> eks.EndpointAccess:
    if kind == "private":
        return eks.EndpointAccess.PRIVATE
    base = eks.EndpointAccess.PUBLIC if kind == "public" else eks.EndpointAccess.PUBLIC_AND_PRIVATE
    # Anywhere is the CDK's (and EKS's) default, written as no PublicAccessCidrs: a cluster deployed when the
    # kit defaulted to it keeps its template when the config spells it out.
    return base if cidrs == (ANYWHERE_IPV4,) else base.only_from(*cidrs)
