"""The policy rules. Each rule reads the config and reports findings at field paths."""

from __future__ import annotations

import difflib
import ipaddress
import re
from collections import Counter
from collections.abc import Callable, Iterable
from fractions import Fraction

from cdk_app.config.model import (
    DEFAULT_HELM_CHART_CONTENT_SHA256,
    DEFAULT_HELM_CHART_DEPENDENCIES,
    DEFAULT_HELM_CHART_REVISION,
    HelmChart,
    KitConfig,
    QuotaEntry,
)
from cdk_app.config.names import (
    DNS1123_LABEL,
    MAX_SAGEMAKER_NAME,
    MAX_TAINTS,
    SAGEMAKER_NAME,
    TRAINING_PLAN_NAME,
    hyperpod_cluster_name,
    label_value_problem,
    lifecycle_bucket_name,
    qualified_name_problem,
)
from cdk_app.config.scalars import exact
from cdk_app.config.yaml_source import PathKey, SourceMap
from cdk_app.governance_types import GOVERNANCE_TYPES, region_offers
from cdk_app.instance_types import CATALOGUE, ONE_THREAD_PER_CORE_FAMILIES, family
from cdk_app.network_zones import EKS_MIN_ZONES, cluster_zone_ids
from cdk_app.validator.batch_rules import check_batch
from cdk_app.validator.capacity import (
    DIMENSIONS,
    Resources,
    cluster_capacity,
    describe,
    per_instances,
    plain_number,
    shared_pool_gap,
    team_reservations,
)
from cdk_app.validator.findings import Finding, Severity, format_path
from cdk_app.validator.kinds import check_kinds, has_cluster
from cdk_app.validator.regions import hyperpod_instance_types, known_regions, region_problem
from cdk_app.validator.stack_limits import check_stack_limits
from hyperpod_constructs.access_entry_keys import admin_entry_key
from hyperpod_constructs.role_trust import TRUST_POLICY_LIMIT, policy_size, trust_policy
from hyperpod_constructs.sagemaker_bucket_name import bucket_name_problem
from hyperpod_constructs.subnet_layout import MAX_ZONE_NUMBER, zone_number
# The installer's layer table, shared with the construct (that module imports no aws_cdk).
from hyperpod_constructs.kubectl_layers import LAYER_MINORS, layer_minor

MAX_TEAM_NAME = 40  # hyperpod-ns-<team>-localqueue must fit a 63-character label value
MAX_PRIORITY_CLASS_NAME = 54  # <name>-priority must fit 63 characters
MAX_PRIORITY_CLASSES = 10
MAX_QUOTA_ENTRIES = 15
MIN_KUBERNETES_MINOR = 30
TOPOLOGY_ADDON_VERSION = (1, 2, 2)

_REGION_WORDS = {
    "northeast": "ne", "northwest": "nw", "southeast": "se", "southwest": "sw",
    "north": "n", "south": "s", "east": "e", "west": "w", "central": "c", "gov": "g",
}


class Reporter:
    """Collects findings, placing each at the line of its field path."""

    def __init__(self, source: SourceMap) -> None:
        self.source = source
        self.findings: list[Finding] = []
        self.suggestions: dict[str, str | None] = {}  # did-you-mean per unknown instance type

    def add(self, severity: Severity, code: str, path: PathKey, message: str, hint: str) -> None:
        where = self.source.locate(path)
        self.findings.append(
            Finding(code, severity, self.source.file, where.line, where.column, format_path(path), message, hint)
        )

    def error(self, code: str, path: PathKey, message: str, hint: str) -> None:
        self.add(Severity.ERROR, code, path, message, hint)

    def warning(self, code: str, path: PathKey, message: str, hint: str) -> None:
        self.add(Severity.WARNING, code, path, message, hint)


Rule = Callable[[KitConfig, Reporter], None]


def _duplicates(names: Iterable[str]) -> set[str]:
    return {name for name, seen in Counter(names).items() if seen > 1}


def _report_repeats(report: Reporter, code: str, items: list[tuple[PathKey, str]], what: str) -> None:
    """Report every repeat after the first of a name, pointing back at the first."""
    first: dict[str, PathKey] = {}
    for path, name in items:
        if name in first:
            report.error(code, path, f"{what} '{name}' is defined twice (first at {format_path(first[name])})",
                         f"each {what} needs a unique name")
        else:
            first[name] = path


def _region_code(region: str) -> str:
    """us-east-1 -> use1, ap-northeast-2 -> apne2: the prefix of the region's AZ ids."""
    parts = region.split("-")
    return parts[0] + "".join(_REGION_WORDS.get(word, word[:1]) for word in parts[1:-1]) + parts[-1]


def _group_zone(config: KitConfig, index: int) -> str:
    return config.hyperpod.instance_groups[index].availability_zone_id or config.availability_zone_ids[0]


def version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"[0-9]+", text.split("-")[0]))


def check_region(config: KitConfig, report: Reporter) -> None:
    problem = region_problem(config.region)
    if problem == "unknown":
        near = difflib.get_close_matches(config.region, known_regions(), n=1, cutoff=0.8)
        report.error("HPK110", ("region",), f"region {config.region!r} does not exist (cfn-lint knows no such region)",
                     (f"did you mean {near[0]}? " if near else "") + "use an AWS region such as us-east-1")
    elif problem == "no-hyperpod" and config.hyperpod is not None:
        report.error("HPK110", ("region",), f"SageMaker HyperPod (AWS::SageMaker::Cluster) is not offered in {config.region}",
                     "pick a region where CloudFormation has AWS::SageMaker::Cluster, e.g. us-east-1 or us-west-2")


# The partition of a region's ARNs (a principal of another partition can never be in the account).
_PARTITIONS = (("cn-", "aws-cn"), ("us-gov-", "aws-us-gov"), ("us-isob-", "aws-iso-b"), ("us-isof-", "aws-iso-f"),
               ("eu-isoe-", "aws-iso-e"), ("us-iso-", "aws-iso"), ("eusc-", "aws-eusc"))
_PRINCIPAL = re.compile(r"arn:(?P<partition>aws[a-z-]*):(?P<service>iam|sts)::(?P<account>[0-9]{12}):"
                        r"(?P<kind>[a-z-]+)(?P<rest>/.*)?")
MAX_IAM_NAME = 64


def partition(region: str) -> str:
    return next((p for prefix, p in _PARTITIONS if region.startswith(prefix)), "aws")


def _principal_problem(arn: str, config: KitConfig, cross_account: bool) -> str | None:
    """Why `arn` may not be a team or admin principal, or None. Only IAM roles and users can be access entries
    and trust-policy principals that name one identity."""
    match = _PRINCIPAL.fullmatch(arn)
    if match is None:
        return "not an IAM role or user ARN"
    kind, rest = match["kind"], match["rest"] or ""
    if match["service"] == "sts":
        return ("an STS session (assumed-role), which ends when the session does; "
                "name the role: arn:aws:iam::<account>:role/<name>")
    if kind == "root":
        return "the account root, which lets every IAM identity of the account in; name a role or user"
    if kind == "group":
        return "an IAM group, which cannot be a principal; name its users or a role"
    if kind not in ("role", "user") or not rest.strip("/"):
        return f"an IAM {kind}, not a role or user"
    if len(rest.rsplit("/", 1)[-1]) > MAX_IAM_NAME:
        return f"the {kind} name is longer than {MAX_IAM_NAME} characters"
    if match["partition"] != partition(config.region):
        return f"partition {match['partition']} is not the one of {config.region} ({partition(config.region)})"
    if match["account"] != config.account and not cross_account:
        return f"account {match['account']} is not the config's account {config.account}"
    return None


def check_principals(config: KitConfig, report: Reporter) -> None:
    """Admins and HyperPod teams (with a cluster), and Batch teams: the same rule for every principal."""
    for i, team in enumerate(config.batch.teams if config.batch is not None else ()):
        for j, arn in enumerate(team.principals):
            why = _principal_problem(arn, config, cross_account=False)
            if why:
                report.error("HPK111", ("batch", "teams", i, "principals", j), f"{arn[:120]!r} cannot act as "
                             f"Batch team '{team.name}': {why}", f"name an IAM role or user of account {config.account}")
    if not has_cluster(config):
        return
    for j, arn in enumerate(config.eks.admin_principals):
        why = _principal_problem(arn, config, cross_account=False)
        if why:
            report.error("HPK111", ("eks", "admin_principals", j), f"{arn[:120]!r} cannot be a cluster administrator: {why}",
                         f"administrators are IAM roles or users of account {config.account} (same account only)")
    _check_admin_entries(config.eks.admin_principals, report)
    for i, team in enumerate(config.teams):
        for j, arn in enumerate(team.principals):
            why = _principal_problem(arn, config, cross_account=team.allow_cross_account)
            if why:
                allow = " or set allow_cross_account: true on the team" if "not the config's account" in why else ""
                report.error("HPK111", ("teams", i, "principals", j), f"{arn[:120]!r} cannot act as team "
                             f"'{team.name}': {why}", f"name an IAM role or user of account {config.account}{allow}")
        size = policy_size(trust_policy(team.principals)) if team.principals else 0
        if size > TRUST_POLICY_LIMIT:
            report.error("HPK170", ("teams", i, "principals"),
                         f"team '{team.name}''s role would have a {size:,}-character trust policy "
                         f"({len(set(team.principals))} principals), over IAM's limit of {TRUST_POLICY_LIMIT:,} characters",
                         "trust fewer principals, e.g. one IAM role the team's people assume (IAM's default quota; each "
                         "principal ARN counts with its quotes and comma)")


def _check_admin_entries(admins: tuple[str, ...], report: Reporter) -> None:
    """Each administrator gets an access entry whose construct id comes from its ARN (admin_entry_key, kept as
    deployed: '/' becomes '-'); two admins with one id cannot both be synthesized. IAM names are unique in an
    account regardless of case and path (IAM CreateRole: "Names are not distinguished by case"), so two ARNs
    naming one role or user name cannot both exist."""
    by_arn: dict[str, int] = {}
    by_key: dict[str, int] = {}
    by_name: dict[tuple[str, str, str], int] = {}
    for j, arn in enumerate(admins):
        path: PathKey = ("eks", "admin_principals", j)
        parts = arn.split(":", 5)
        key, name = admin_entry_key(arn), (parts[4], parts[5].split("/", 1)[0], parts[5].rsplit("/", 1)[-1].lower())
        if arn in by_arn:
            report.error("HPK161", path, f"administrator {arn[:120]!r} is listed twice (first at "
                         f"{format_path(('eks', 'admin_principals', by_arn[arn]))})", "list each administrator once")
        elif key in by_key:
            other = admins[by_key[key]]
            report.error("HPK161", path, f"administrators {other[:120]!r} and {arn[:120]!r} would both get the "
                         f"access entry Admin-{key[:120]} ('/' of a path reads as '-'), which cannot be created twice",
                         "give one of the two an IAM name or path that differs in more than '/' and '-' "
                         "(the entry ids stay as deployed, so no administrator's entry is replaced)")
        elif name in by_name:
            other = admins[by_name[name]]
            report.error("HPK161", path, f"administrators {other[:120]!r} and {arn[:120]!r} name one IAM {name[1]} "
                         f"({name[2]!r}): IAM names are unique in an account regardless of case and path, so at "
                         "most one of these ARNs exists", "keep the ARN that IAM shows for the role or user")
        by_arn.setdefault(arn, j)
        by_key.setdefault(key, j)
        by_name.setdefault(name, j)


def check_environment(config: KitConfig, report: Reporter) -> None:
    minor = int(config.eks.kubernetes_version.split(".")[1])
    if minor < MIN_KUBERNETES_MINOR:
        report.error("HPK101", ("eks", "kubernetes_version"),
                     f"Kubernetes {config.eks.kubernetes_version} is too old for HyperPod task governance",
                     f"use \"1.{MIN_KUBERNETES_MINOR}\" or later")
    zones = config.availability_zone_ids
    _report_repeats(report, "HPK102", [(("availability_zone_ids", i), z) for i, z in enumerate(zones)],
                    "availability zone id")
    prefix = _region_code(config.region)
    if region_problem(config.region) == "unknown":
        return  # HPK110 says so; zone ids cannot be matched against a region that does not exist
    for i, zone in enumerate(zones):
        if zone.split("-az")[0] != prefix:
            report.error("HPK106", ("availability_zone_ids", i),
                         f"availability zone id {zone} is not in region {config.region}",
                         f"ids in {config.region} start with {prefix}-az")


def check_eks_endpoint(config: KitConfig, report: Reporter) -> None:
    eks = config.eks
    if eks.endpoint_access == "public" and eks.public_access_cidrs:
        report.error("HPK108", ("eks", "endpoint_access"),
                     "with a public-only endpoint, nodes and the Helm installer reach the API through NAT, "
                     "whose addresses public_access_cidrs does not list",
                     "use public_and_private (in-VPC traffic then takes the private endpoint)")
    if eks.endpoint_access == "private" and eks.public_access_cidrs:
        report.warning("HPK109", ("eks", "public_access_cidrs"),
                       "public_access_cidrs has no effect on a private endpoint",
                       "remove it, or use endpoint_access: public_and_private")


def _cidr_problem(text: str) -> str | None:
    """Why `text` is not an IPv4 network in CIDR form, or None."""
    try:
        network = ipaddress.IPv4Network(text, strict=False)
    except ValueError as err:
        return str(err)
    if str(network) != text:
        return f"host bits are set: the network is {network}"
    return None


# EKS: public endpoint access CIDR ranges per cluster (Amazon EKS service quotas; aws/containers-roadmap#2174 and
# #1349 ask AWS to raise the 40).
MAX_PUBLIC_ACCESS_CIDRS = 40


def check_cidrs(config: KitConfig, report: Reporter) -> None:
    if config.network.existing_vpc_id is None:
        why = _cidr_problem(config.network.vpc_cidr)
        if why:
            report.error("HPK015", ("network", "vpc_cidr"), f"vpc_cidr {config.network.vpc_cidr!r} is not a valid network: {why}",
                         "expected an IPv4 CIDR from /16 to /20 with the host bits zero, e.g. 10.192.0.0/16")
    cidrs = config.eks.public_access_cidrs
    if len(cidrs) > MAX_PUBLIC_ACCESS_CIDRS:
        report.error("HPK167", ("eks", "public_access_cidrs", MAX_PUBLIC_ACCESS_CIDRS),
                     f"{len(cidrs)} public_access_cidrs; EKS takes at most {MAX_PUBLIC_ACCESS_CIDRS} per cluster",
                     "merge neighbouring ranges into wider ones, or reach the API through the private endpoint")
    for j, cidr in enumerate(cidrs):
        why = _cidr_problem(cidr)
        if why:
            report.error("HPK015", ("eks", "public_access_cidrs", j), f"{cidr!r} is not a valid network: {why}",
                         "expected an IPv4 CIDR with the host bits zero, e.g. 203.0.113.0/24")


def check_network(config: KitConfig, report: Reporter) -> None:
    network = config.network
    if network.existing_vpc_id is None and len(config.availability_zone_ids) < 2:
        report.error("HPK107", ("availability_zone_ids",),
                     "EKS places its control plane in subnets of at least two availability zones; one is listed",
                     "add a second availability zone id of the region")
    if (network.existing_vpc_id is None) != (not network.existing_subnets):
        missing = "existing_subnets" if network.existing_vpc_id else "existing_vpc_id"
        present = "existing_vpc_id" if network.existing_vpc_id else "existing_subnets"
        report.error("HPK103", ("network", present), f"{present} is set but {missing} is not",
                     "set both to use an existing VPC, or neither to create one")
        return
    if network.existing_vpc_id is None:
        return
    first: dict[str, int] = {}
    for i, subnet in enumerate(network.existing_subnets):
        if subnet.subnet_id not in first:
            first[subnet.subnet_id] = i
            continue
        earlier = network.existing_subnets[first[subnet.subnet_id]]
        where = ("" if earlier.availability_zone_id == subnet.availability_zone_id else
                 f"; there in {earlier.availability_zone_id}, here in {subnet.availability_zone_id}, but a subnet "
                 "lies in exactly one availability zone")
        report.error("HPK165", ("network", "existing_subnets", i, "subnet_id"),
                     f"subnet {subnet.subnet_id} is listed twice (first at network.existing_subnets"
                     f"[{first[subnet.subnet_id]}]{where})",
                     "list each subnet once, with the zone id EC2 shows for it (AvailabilityZoneId)")
    subnet_zones = {s.availability_zone_id for s in network.existing_subnets}
    if len(subnet_zones) < 2:
        report.error("HPK107", ("network", "existing_subnets"),
                     "EKS places its control plane in subnets of at least two availability zones; "
                     f"the existing subnets are all in {', '.join(subnet_zones)}",
                     "add a subnet in a second availability zone")
    for i, subnet in enumerate(network.existing_subnets):
        if subnet.availability_zone_id not in config.availability_zone_ids:
            report.error("HPK105", ("network", "existing_subnets", i, "availability_zone_id"),
                         f"subnet {subnet.subnet_id} is in {subnet.availability_zone_id}, "
                         "which availability_zone_ids does not list",
                         f"list it there or use a subnet in {', '.join(config.availability_zone_ids)}")
    for i, group in enumerate(config.hyperpod.instance_groups):
        zone = _group_zone(config, i)
        if zone not in subnet_zones:
            path: PathKey = ("hyperpod", "instance_groups", i)
            if group.availability_zone_id:
                path += ("availability_zone_id",)
            report.error("HPK104", path,
                         f"instance group '{group.name}' is in {zone} but no existing subnet is",
                         f"add a subnet in {zone} to network.existing_subnets "
                         f"(subnets are in {', '.join(sorted(subnet_zones))})")


def check_zones(config: KitConfig, report: Reporter) -> None:
    """Zones are append-only: subnets are placed by zone number, the clusters keep their recorded zones.
    Removing or reordering zones of a deployed network cannot be seen offline; CloudFormation refuses to
    remove a subnet the cluster stack still imports, and the retained subnets are never deleted."""
    network = config.network
    if network.existing_vpc_id is None:
        for i, zone in enumerate(config.availability_zone_ids):
            if zone_number(zone) > MAX_ZONE_NUMBER:
                report.error("HPK120", ("availability_zone_ids", i),
                             f"{zone} has no subnet slot in a new VPC: subnets are placed by zone number, "
                             f"az1 to az{MAX_ZONE_NUMBER}",
                             "use another zone, or an existing VPC (network.existing_vpc_id)")
    with_subnet = ({s.availability_zone_id for s in network.existing_subnets} if network.existing_vpc_id
                   else set(config.availability_zone_ids))
    recorded = bool(network.cluster_zone_ids)
    # An existing VPC without subnets is HPK103's: no zone has a subnet, and there is none to name.
    for i, zone in enumerate(cluster_zone_ids(config) if with_subnet else ()):
        if zone not in with_subnet:
            where = "network.existing_subnets has no subnet in it" if network.existing_vpc_id else \
                "availability_zone_ids does not list it"
            path: PathKey = ("network", "cluster_zone_ids", i) if recorded else ("availability_zone_ids", i)
            what = "cluster zone" if recorded else "cluster zone (by default the first two zones)"
            report.error("HPK121", path, f"{what} {zone}: {where}",
                         f"name zones of {', '.join(sorted(with_subnet))} in network.cluster_zone_ids")
    if network.cluster_zone_ids and (len(set(network.cluster_zone_ids)) < EKS_MIN_ZONES
                                     or len(set(network.cluster_zone_ids)) != len(network.cluster_zone_ids)):
        report.error("HPK122", ("network", "cluster_zone_ids"),
                     f"cluster_zone_ids must name at least {EKS_MIN_ZONES} distinct zones (EKS places its control "
                     f"plane in two), got {list(network.cluster_zone_ids)}",
                     "record the zones the clusters were created in (without the key, the first two of "
                     f"availability_zone_ids: {', '.join(config.availability_zone_ids[:EKS_MIN_ZONES])})")


def check_cluster_zones_recorded(config: KitConfig, report: Reporter) -> None:
    """HPK123: without network.cluster_zone_ids the clusters' subnets are the first two zones listed, so
    prepending or reordering availability_zone_ids would replace the HyperPod cluster (create-only VpcConfig)."""
    if not config.network.cluster_zone_ids:
        zones = ", ".join(cluster_zone_ids(config))
        report.warning("HPK123", ("availability_zone_ids",),
                       f"network.cluster_zone_ids is not recorded: the clusters' subnets are the first two zones "
                       f"listed ({zones}), so prepending or reordering zones would replace the HyperPod cluster",
                       f"record network.cluster_zone_ids: [{zones}]")


def check_instance_groups(config: KitConfig, report: Reporter) -> None:
    hyperpod = config.hyperpod
    if hyperpod.cluster_name is not None and not _sagemaker_name(hyperpod.cluster_name):
        report.error("HPK207", ("hyperpod", "cluster_name"), f"cluster name {hyperpod.cluster_name!r} is not allowed",
                     "letters, digits and single hyphens, 1-63 characters, no hyphen at either end")
    groups = hyperpod.instance_groups
    offered = hyperpod_instance_types(config.region)
    for i, group in enumerate(groups):
        base: PathKey = ("hyperpod", "instance_groups", i)
        if not _sagemaker_name(group.name):
            report.error("HPK202", base + ("name",), f"instance group name {group.name!r} is not allowed",
                         "letters, digits and single hyphens, 1-63 characters, no hyphen at either end")
        spec = CATALOGUE.get(group.instance_type)
        if spec is None:
            _unknown_type(report, base + ("instance_type",), group.instance_type)
        elif offered is not None and group.instance_type not in offered:
            family = group.instance_type.rsplit(".", 1)[0] + "."
            alternatives = sorted(t for t in offered if t.startswith(family))
            report.error("HPK210", base + ("instance_type",),
                         f"{group.instance_type} is not offered by HyperPod in {config.region}",
                         f"sizes of this family there: {', '.join(alternatives)}" if alternatives
                         else f"no {family}* sizes in {config.region}; pick another family or region")
        elif group.deep_health_checks and not spec.has_accelerators:
            report.error("HPK204", base + ("deep_health_checks",),
                         f"deep health checks need GPU or Trainium instances; {group.instance_type} has neither",
                         "remove deep_health_checks from this group (or set it to [])")
        for repeated in _duplicates(group.deep_health_checks or ()):
            report.error("HPK206", base + ("deep_health_checks",), f"deep health check {repeated} is listed twice",
                         "list each of InstanceStress, InstanceConnectivity once")
        plan = group.training_plan_arn.partition(":training-plan/")[2] if group.training_plan_arn else None
        if plan is not None and not TRAINING_PLAN_NAME.fullmatch(plan):
            report.error("HPK166", base + ("training_plan_arn",),
                         f"training plan name {plan[:80]!r} in training_plan_arn cannot name a training plan",
                         "a training plan name is 1-64 letters, digits and hyphens, a letter or digit at both ends "
                         "(copy the ARN from `aws sagemaker list-training-plans`)")
        if group.availability_zone_id is not None and group.availability_zone_id not in config.availability_zone_ids:
            report.error("HPK205", base + ("availability_zone_id",),
                         f"{group.availability_zone_id} is not one of the environment's availability zones",
                         f"use one of {', '.join(config.availability_zone_ids)} or add it to availability_zone_ids")
    _report_repeats(report, "HPK203", [(("hyperpod", "instance_groups", i, "name"), g.name)
                                       for i, g in enumerate(groups)], "instance group")


def check_derived_names(config: KitConfig, report: Reporter) -> None:
    """Names the stacks build from the environment, held to the rules of the resources that carry them (an
    explicit hyperpod.cluster_name is HPK207's). The quota and cluster policy names (<environment>-<team>,
    <environment>-policy) always fit when the environment and team names do (tests/test_derived_names.py)."""
    derived = []
    if config.hyperpod.cluster_name is None:
        name = hyperpod_cluster_name(config)
        if not _sagemaker_name(name):
            derived.append(("HyperPod cluster name (AWS::SageMaker::Cluster ClusterName)", name,
                            "a cluster name is 1-63 letters, digits and hyphens, a letter or digit at both ends"))
    bucket = lifecycle_bucket_name(config)
    why = bucket_name_problem(bucket)
    if why:
        derived.append(("lifecycle-scripts bucket name", bucket, why))
    for what, name, why in derived:
        report.error("HPK160", ("environment",), f"environment {config.environment!r} gives the {what} {name!r}, "
                     f"which is not allowed: {why}",
                     "use an environment name that ends with a letter or digit and has no '--'"
                     + (" (or set hyperpod.cluster_name)" if what.startswith("HyperPod") else ""))


def _sagemaker_name(name: str) -> bool:
    return len(name) <= MAX_SAGEMAKER_NAME and SAGEMAKER_NAME.fullmatch(name) is not None


def _check_threads(config: KitConfig, report: Reporter) -> None:
    for i, group in enumerate(config.hyperpod.instance_groups):
        if group.threads_per_core == 2 and family(group.instance_type) in ONE_THREAD_PER_CORE_FAMILIES:
            report.error("HPK212", ("hyperpod", "instance_groups", i, "threads_per_core"),
                         f"{group.instance_type} runs one thread per core (AWS Graviton); 2 is not possible",
                         "remove threads_per_core or set it to 1")


def _check_kubernetes_labels(config: KitConfig, report: Reporter) -> None:
    for i, group in enumerate(config.hyperpod.instance_groups):
        base: PathKey = ("hyperpod", "instance_groups", i)
        for key, value in group.labels.items():
            why = qualified_name_problem(key)
            if why:
                report.error("HPK211", base + ("labels", key), f"label key {key[:80]!r} is not allowed: {why}",
                             "a Kubernetes label key is [prefix/]name, e.g. example.com/team or workload")
            why = label_value_problem(value)
            if why:
                report.error("HPK211", base + ("labels", key), f"label value {value[:80]!r} of {key[:80]!r} is not allowed",
                             f"a Kubernetes label value is {why}")
        _check_taints(group.taints, base, report)


def _check_taints(taints: tuple, base: PathKey, report: Reporter) -> None:
    """Each taint as CloudFormation's ClusterKubernetesTaint takes it, and the list as Kubernetes takes it."""
    if len(taints) > MAX_TAINTS:
        report.error("HPK163", base + ("taints", MAX_TAINTS),
                     f"{len(taints)} taints on one instance group; AWS::SageMaker::Cluster takes at most {MAX_TAINTS}",
                     f"keep at most {MAX_TAINTS} taints (one taint can keep every other workload off the group)")
    first: dict[tuple[str, str], int] = {}
    for j, taint in enumerate(taints):
        why = qualified_name_problem(taint.key)
        if why:
            report.error("HPK211", base + ("taints", j, "key"), f"taint key {taint.key[:80]!r} is not allowed: {why}",
                         "a Kubernetes taint key is [prefix/]name, e.g. nvidia.com/gpu")
        if taint.value == "":
            report.error("HPK162", base + ("taints", j, "value"), f"taint {taint.key[:80]!r} has an empty value, "
                         "which AWS::SageMaker::Cluster refuses (Value: at least 1 character)",
                         "leave value out for a taint without a value (Kubernetes reads both the same)")
        why = label_value_problem(taint.value or "")
        if why:
            report.error("HPK211", base + ("taints", j, "value"), f"taint value {taint.value[:80]!r} is not allowed",
                         f"a Kubernetes taint value is {why}")
        pair = (taint.key, taint.effect)
        if pair in first:
            report.error("HPK164", base + ("taints", j), f"taint {taint.key[:80]!r} with effect {taint.effect} is "
                         f"listed twice (first at {format_path(base + ('taints', first[pair]))}); Kubernetes "
                         "refuses a node whose taints repeat a key and effect pair",
                         "keep one taint per key and effect (its value is the one the taint matches)")
        else:
            first[pair] = j


def check_helm_chart(config: KitConfig, report: Reporter) -> None:
    hyperpod = config.hyperpod
    chart = hyperpod.helm_chart
    content, dependencies = chart.pins()
    if content is None:
        report.error("HPK208", ("hyperpod", "helm_chart"),
                     f"revision {chart.revision[:12]} is not the kit's default, and nothing pins the chart's content",
                     "set hyperpod.helm_chart.content_sha256 (print it with: hyperpod-kit chart-sha256 --revision ...)")
    if dependencies is None:
        report.error("HPK220", ("hyperpod", "helm_chart"),
                     f"revision {chart.revision[:12]} is not the kit's default, and nothing pins its remote dependencies",
                     "set hyperpod.helm_chart.dependencies (hyperpod-kit chart-sha256 prints them; {} if it has none)")
    if chart.revision == DEFAULT_HELM_CHART_REVISION:
        _check_known_pins(chart, report)
    if chart.revision == DEFAULT_HELM_CHART_REVISION and chart.components.inference_operator:
        report.error("HPK222", ("hyperpod", "helm_chart", "components", "inference_operator"),
                     f"the inference operator of chart {chart.revision[:12]} needs six remote charts of its own "
                     "that the kit cannot pin, so the installer refuses it",
                     "install the inference operator as its EKS add-on, and set inference_operator: false")
    too_old = int(config.eks.kubernetes_version.split(".")[1]) < MIN_KUBERNETES_MINOR  # HPK101 says so already
    if not too_old and layer_minor(config.eks.kubernetes_version) is None:
        report.error("HPK221", ("eks", "kubernetes_version"),
                     f"the kit ships no kubectl/helm layer within one minor version of {config.eks.kubernetes_version}",
                     f"use a version from 1.{LAYER_MINORS[0] - 1} to 1.{LAYER_MINORS[-1] + 1}")
    if hyperpod.node_recovery == "Automatic" and not chart.components.health_monitoring_agent:
        report.error("HPK209", ("hyperpod", "helm_chart", "components", "health_monitoring_agent"),
                     "automatic node recovery acts on the faults the health monitoring agent reports",
                     "enable health_monitoring_agent, or set hyperpod.node_recovery: None")


def _check_known_pins(chart: HelmChart, report: Reporter) -> None:
    """At the kit's default revision the right pins are known: a different one is a typo or a tampered chart."""
    base: PathKey = ("hyperpod", "helm_chart")
    if chart.content_sha256 not in (None, DEFAULT_HELM_CHART_CONTENT_SHA256):
        report.error("HPK223", base + ("content_sha256",),
                     f"revision {chart.revision[:12]}'s chart has content digest {DEFAULT_HELM_CHART_CONTENT_SHA256}",
                     "copy the pins hyperpod-kit chart-sha256 prints, or leave content_sha256 out for the default")
    for name, pin in (chart.dependencies or {}).items():
        known = DEFAULT_HELM_CHART_DEPENDENCIES.get(name)
        if known is not None and (pin.url, pin.sha256) != known:
            report.error("HPK223", base + ("dependencies", name),
                         f"revision {chart.revision[:12]} pins {name} as {known[0]} with SHA-256 {known[1]}",
                         "copy the pins hyperpod-kit chart-sha256 prints, or leave dependencies out for the default")
_BY_LOWER_CASE = {name.lower(): name for name in CATALOGUE}
# Distinct unknown types that get a fuzzy did-you-mean; beyond this, suggestions stop, so that a file of many
# thousands of unknown types is still checked in linear time (each fuzzy match compares with the catalogue).
MAX_FUZZY_SUGGESTIONS = 50


def _unknown_type(report: Reporter, path: PathKey, instance_type: str) -> None:
    near = _suggestions(report, instance_type)
    lead = f"did you mean {near}? " if near else ""
    report.error("HPK201", path, f"{instance_type[:80]!r} is not a SageMaker HyperPod instance type",
                 f"{lead}HyperPod types look like ml.p5.48xlarge (see the instance catalogue)")


def _suggestions(report: Reporter, instance_type: str) -> str | None:
    cache = report.suggestions
    if instance_type not in cache:
        exact_case = _BY_LOWER_CASE.get(instance_type.strip().lower())
        if exact_case is not None or len(cache) >= MAX_FUZZY_SUGGESTIONS:
            cache[instance_type] = exact_case
        else:
            near = difflib.get_close_matches(instance_type.lower()[:40], _BY_LOWER_CASE, n=1, cutoff=0.8)
            cache[instance_type] = _BY_LOWER_CASE[near[0]] if near else None
    return cache[instance_type]


def check_cluster_policy(config: KitConfig, report: Reporter) -> None:
    classes = config.cluster_policy.priority_classes
    base: PathKey = ("cluster_policy", "priority_classes")
    if len(classes) > MAX_PRIORITY_CLASSES:
        report.error("HPK302", base + (MAX_PRIORITY_CLASSES,), f"{len(classes)} priority classes are defined",
                     f"at most {MAX_PRIORITY_CLASSES}")
    for i, cls in enumerate(classes):
        if len(cls.name) > MAX_PRIORITY_CLASS_NAME or not DNS1123_LABEL.fullmatch(cls.name):
            report.error("HPK301", base + (i, "name"), f"priority class name {cls.name!r} is not allowed",
                         f"lower-case letters, digits and inner hyphens, at most {MAX_PRIORITY_CLASS_NAME} characters")
    _report_repeats(report, "HPK303", [(base + (i, "name"), c.name) for i, c in enumerate(classes)],
                    "priority class")
    first_with: dict[int, str] = {}
    for i, cls in enumerate(classes):
        if cls.weight in first_with:
            report.warning("HPK304", base + (i, "weight"),
                           f"'{cls.name}' has the same weight {cls.weight} as '{first_with[cls.weight]}'",
                           "give each class its own weight so their order is defined")
        else:
            first_with[cls.weight] = cls.name
    if config.cluster_policy.require_priority_class and not classes:
        report.error("HPK320", ("cluster_policy", "require_priority_class"),
                     "require_priority_class would refuse every workload: the cluster policy has no priority classes",
                     "define priority_classes, or set require_priority_class: false")
    version = version_tuple(config.task_governance.addon_version)
    if version < TOPOLOGY_ADDON_VERSION:
        report.warning("HPK305", ("task_governance", "addon_version"),
                       f"add-on {config.task_governance.addon_version} has no topology-aware scheduling",
                       "use v1.2.2-eksbuild.1 or later (the kit's default is the current version)")
    if version[:2] == (1, 3):
        report.warning("HPK306", ("task_governance", "addon_version"),
                       f"add-on {config.task_governance.addon_version} cannot be updated in place to v1.5 or later",
                       "install v1.4 or later now, or plan to delete and recreate the add-on (README: upgrading)")


def check_governance_types(config: KitConfig, report: Reporter) -> None:
    """The recorded type per governance resource, against what CloudFormation offers in the region
    (cfn-lint's provider data). Changing a recorded type of a deployed environment cannot be seen
    offline; CloudFormation refuses it (a new type under the same logical id)."""
    if region_problem(config.region) is not None:
        return  # HPK110 names the region; every type would be "not offered" there too
    recorded = config.task_governance.cloudformation_types
    for key, (_, cfn_type) in GOVERNANCE_TYPES.items():
        path: PathKey = ("task_governance", "cloudformation_types", key)
        choice, offered = getattr(recorded, key), region_offers(config, key)
        if choice == "native" and not offered:
            report.error("HPK310", path, f"{cfn_type} is not a CloudFormation type in {config.region}",
                         f"use {key}: api (a custom resource calling the SageMaker API)")
        elif choice == "api" and offered:
            report.warning("HPK311", path,
                           f"{config.region} now offers {cfn_type}, but this environment records api",
                           "for a deployed environment keep the value it was deployed with (CloudFormation refuses "
                           "a type change under the same logical id; `hyperpod-kit plan` shows it); to move, see "
                           "README 'Things to know before editing'")
        elif choice is None:
            default = "native" if offered else "api"
            report.warning("HPK312", ("task_governance",),
                           f"task_governance.cloudformation_types.{key} is not recorded; the kit uses {default} "
                           f"from the region data of the installed cfn-lint, which an upgrade may change",
                           f"record it: task_governance.cloudformation_types.{key}: {default}")


def check_observability(config: KitConfig, report: Reporter) -> None:
    obs = config.observability
    if obs.enabled and obs.kueue_metrics and obs.addon_version and version_tuple(obs.addon_version) < (2, 4, 0):
        report.error("HPK307", ("observability", "addon_version"),
                     f"amazon-cloudwatch-observability {obs.addon_version} cannot collect Kueue metrics",
                     "use v2.4.0-eksbuild.1 or later, or set kueue_metrics: false")


def check_teams(config: KitConfig, report: Reporter) -> None:
    class_names = {c.name for c in config.cluster_policy.priority_classes}
    names: list[tuple[PathKey, str]] = []
    for i, team in enumerate(config.teams):
        base: PathKey = ("teams", i)
        names.append((base + ("name",), team.name))
        if len(team.name) > MAX_TEAM_NAME or not DNS1123_LABEL.fullmatch(team.name):
            report.error("HPK401", base + ("name",), f"team name {team.name!r} is not allowed",
                         f"lower-case letters, digits and inner hyphens, at most {MAX_TEAM_NAME} characters "
                         "(it becomes namespace hyperpod-ns-<team>)")
        if team.borrow_limit is not None and team.sharing_strategy != "LendAndBorrow":
            report.error("HPK403", base + ("borrow_limit",),
                         f"borrow_limit has no effect with sharing_strategy {team.sharing_strategy}",
                         "remove borrow_limit, or set sharing_strategy: LendAndBorrow")
        if len(team.quota) > MAX_QUOTA_ENTRIES:
            report.error("HPK404", base + ("quota", MAX_QUOTA_ENTRIES),
                         f"team '{team.name}' has {len(team.quota)} quota entries",
                         f"at most {MAX_QUOTA_ENTRIES} per team")
        if team.default_priority_class is not None and team.default_priority_class not in class_names:
            known = ", ".join(sorted(class_names)) or "none are defined"
            report.error("HPK409", base + ("default_priority_class",),
                         f"priority class '{team.default_priority_class}' is not in cluster_policy.priority_classes",
                         f"use one of: {known}")
        _check_team_admission(config, i, report)
        _check_quota_entries(team.quota, base, report)
    if config.shared_pool is not None:
        pool_name = config.shared_pool.name
        names.append((("shared_pool", "name"), pool_name))
        if len(pool_name) > MAX_TEAM_NAME or not DNS1123_LABEL.fullmatch(pool_name):
            report.error("HPK401", ("shared_pool", "name"), f"shared pool name {pool_name!r} is not allowed",
                         f"lower-case letters, digits and inner hyphens, at most {MAX_TEAM_NAME} characters")
    _report_repeats(report, "HPK402", names, "team")
    for i, team in enumerate(config.teams):
        if not team.quota:
            borrows = team.sharing_strategy == "LendAndBorrow"
            report.warning("HPK411", ("teams", i, "name"), f"team '{team.name}' has no quota",
                           "its jobs run only on idle compute it borrows; give it a quota" if borrows else
                           f"with sharing_strategy {team.sharing_strategy} it never borrows, so its jobs never run: "
                           "give it a quota")


def _check_team_admission(config: KitConfig, index: int, report: Reporter) -> None:
    """The team's priority classes and capabilities, which its admission guardrails enforce."""
    team, base = config.teams[index], ("teams", index)
    class_names = [c.name for c in config.cluster_policy.priority_classes]
    allowed = class_names if team.priority_classes is None else list(team.priority_classes)
    for j, name in enumerate(team.priority_classes or ()):
        if name not in class_names:
            report.error("HPK420", base + ("priority_classes", j),
                         f"priority class '{name}' is not in cluster_policy.priority_classes",
                         f"use one of: {', '.join(class_names) or 'none are defined'}")
    for field, what in (("priority_classes", "priority class"), ("allowed_capabilities", "capability")):
        _report_repeats(report, "HPK421", [(base + (field, j), v) for j, v in enumerate(getattr(team, field) or ())],
                        what)
    default = team.default_priority_class
    if default is not None and default in class_names and default not in allowed:
        # Suggest only classes that exist (an undefined one is HPK420's), each once (a repeat is HPK421's).
        usable = [name for name in dict.fromkeys(allowed) if name in class_names]
        report.error("HPK422", base + ("default_priority_class",),
                     f"default priority class '{default}' is not one of the team's priority_classes",
                     f"use one of: {', '.join(usable) or 'none'}, or add it to priority_classes")
    if config.cluster_policy.require_priority_class and class_names and not allowed:
        report.error("HPK423", base + ("priority_classes",),
                     f"team '{team.name}' may use no priority class, but cluster_policy.require_priority_class "
                     "refuses workloads without one", "list at least one class of the cluster policy")


def _check_quota_entries(entries: tuple, base: PathKey, report: Reporter) -> None:
    seen: dict[str, int] = {}
    for j, entry in enumerate(entries):
        path = base + ("quota", j)
        if entry.instance_type in seen:
            report.error("HPK405", path + ("instance_type",),
                         f"{entry.instance_type} already has a quota entry ({format_path(base + ('quota', seen[entry.instance_type]))})",
                         "merge the two entries into one")
        else:
            seen[entry.instance_type] = j
        spec = CATALOGUE.get(entry.instance_type)
        if spec is None:
            _unknown_type(report, path + ("instance_type",), entry.instance_type)
            continue
        given = {d: getattr(entry, d) for d in ("count", "accelerators", "vcpu", "memory_gib")
                 if getattr(entry, d) is not None}
        if not given:
            report.error("HPK406", path, f"quota entry for {entry.instance_type} gives no amount",
                         "give count, accelerators, or vcpu/memory_gib")
            continue
        if entry.accelerators is not None and not spec.has_accelerators:
            report.error("HPK407", path + ("accelerators",),
                         f"{entry.instance_type} has no accelerators",
                         "give count or vcpu/memory_gib for CPU instance types")
            continue
        if spec.has_accelerators and entry.count is None and entry.accelerators is None:
            written = " and ".join(d for d in ("vcpu", "memory_gib") if d in given)
            report.warning("HPK412", path,
                           f"this entry of {written} reserves no {entry.instance_type} accelerators: SageMaker sets "
                           "them to 0 for an entry without accelerators or count, and a borrow limit is a percentage "
                           "of the quota, so the team's jobs can use none of them",
                           "add accelerators (vCPU and memory left out are then filled in the instance's ratio) "
                           "or give count; keep it as it is only for CPU-only work on these nodes")
        if entry.count is not None and len(given) > 1:
            whole = per_instances(spec, Fraction(entry.count))
            for dim, value in given.items():
                if dim != "count" and exact(value) != getattr(whole, dim):
                    report.error("HPK408", path + (dim,),
                                 f"{dim} {plain_number(exact(value))} disagrees with count {entry.count} "
                                 f"({describe(getattr(whole, dim), dim)} on {entry.instance_type})",
                                 "give count alone, or leave count out")


def check_capacity(config: KitConfig, report: Reporter) -> None:
    capacity = cluster_capacity(config)
    totals: dict[str, Resources] = {}
    contributors: dict[str, list[tuple[str, Resources, PathKey, QuotaEntry]]] = {}
    for i, team in enumerate(config.teams):
        first: dict[str, int] = {}
        for j, entry in enumerate(team.quota):
            first.setdefault(entry.instance_type, j)
        for itype, reserved in team_reservations(team).items():
            totals[itype] = totals.get(itype, Resources()) + reserved
            j = first[itype]
            contributors.setdefault(itype, []).append((team.name, reserved, ("teams", i, "quota", j), team.quota[j]))
    for itype, entries in contributors.items():
        cap = capacity.get(itype, Resources())
        over = totals[itype].exceeding(cap)
        if over:
            _report_over(report, itype, over, totals[itype], cap, entries, present=itype in capacity)
        elif itype not in capacity:  # quota entries of zero on a type the cluster lacks
            for _, _, path, _ in entries:
                report.warning("HPK502", path + ("instance_type",),
                               f"the cluster has no {itype} instances, so this quota can never be used",
                               f"add an instance group of {itype} or remove the entry "
                               f"(the cluster has {', '.join(sorted(capacity)) or 'no known types'})")
    if config.shared_pool is not None:
        _check_shared_pool(config, capacity, totals, report)
    else:
        _check_idle(config, capacity, totals, report)


def _unit(entry: QuotaEntry, over: list[str]) -> str:
    """The dimension to talk about for an entry: the one the admin wrote it in, if that one is over."""
    written = [d for d in ("count", "accelerators", "vcpu", "memory_gib") if getattr(entry, d) is not None]
    return next((d for d in written if d in over), over[0])


def _report_over(report: Reporter, itype: str, over: list[str], total: Resources, cap: Resources,
                 entries: list[tuple[str, Resources, PathKey, QuotaEntry]], present: bool) -> None:
    """One finding at each entry that reserves some of the type, naming every team's share in the entry's unit."""
    for _, reserved, path, entry in entries:
        if reserved.is_zero():
            continue
        dim = _unit(entry, over)
        shares = ", ".join(f"{name} {_amount(getattr(res, dim))}" for name, res, _, _ in entries)
        has = f"{describe(getattr(cap, dim), dim)}" if present else f"no {itype} instance group"
        report.error("HPK501", path,
                     f"teams reserve {describe(getattr(total, dim), dim)} of {itype} but the cluster has {has} "
                     f"(shares: {shares}; this entry {describe(getattr(reserved, dim), dim)})",
                     f"lower the quotas by {describe(getattr(total, dim) - getattr(cap, dim), dim)} "
                     f"or add {itype} capacity")


def _amount(value: Fraction) -> str:
    return describe(value, "count").split(" ")[0]


def _check_shared_pool(config: KitConfig, capacity: dict[str, Resources], totals: dict[str, Resources],
                       report: Reporter) -> None:
    gaps = shared_pool_gap(capacity, totals)
    negative = sorted(t for t, gap in gaps.items() if any(getattr(gap, d) < 0 for d in DIMENSIONS))
    for itype in negative:
        dim = next(d for d in DIMENSIONS if getattr(gaps[itype], d) < 0)
        report.error("HPK504", ("shared_pool",),
                     f"the shared pool's {itype} quota would be {describe(getattr(gaps[itype], dim), dim)}",
                     "the other teams reserve more than the cluster has: lower their quotas first")
    if not negative and all(gap.is_zero() for gap in gaps.values()):
        report.warning("HPK505", ("shared_pool",), "the shared pool would hold nothing",
                       "the other teams reserve all capacity: lower their quotas or remove shared_pool")


def _check_idle(config: KitConfig, capacity: dict[str, Resources], totals: dict[str, Resources],
                report: Reporter) -> None:
    unreserved = {t for t, cap in capacity.items() if cap.count > 0 and totals.get(t, Resources()).is_zero()}
    for i, group in enumerate(config.hyperpod.instance_groups):
        if group.instance_type in unreserved and group.count > 0:
            report.warning("HPK503", ("hyperpod", "instance_groups", i, "instance_type"),
                           f"no team has a quota on {group.instance_type} and there is no shared pool, so no "
                           f"team's job can use the {group.count} instance(s) of group '{group.name}'",
                           f"give a team a quota on {group.instance_type}, or add a shared_pool")
    borrowers = [t.name for t in config.teams if t.sharing_strategy == "LendAndBorrow" and t.enabled]
    sharing_off = config.cluster_policy.idle_resource_sharing == "Disabled"
    if not sharing_off and borrowers:
        return
    why = ("idle_resource_sharing is Disabled" if sharing_off else "no enabled team uses LendAndBorrow")
    for itype, cap in sorted(capacity.items()):
        free = cap.count - totals.get(itype, Resources()).count
        if free > 0 and itype not in unreserved:
            path: PathKey = ("cluster_policy", "idle_resource_sharing") if sharing_off else ("teams",)
            report.warning("HPK503", path,
                           f"{describe(free, 'count')} of {itype} are reserved by no team and {why}, "
                           "so no team can use them",
                           "give the capacity to teams, add a shared_pool, or let teams borrow")


# The HyperPod cluster and what runs on it (EKS, network, task governance, HyperPod teams): only when the
# environment has one (cdk_app.validator.kinds); a Batch-only environment skips them.
HYPERPOD_RULES: tuple[Rule, ...] = (
    check_cidrs,
    _check_threads,
    _check_kubernetes_labels,
    check_environment,
    check_derived_names,
    check_eks_endpoint,
    check_network,
    check_zones,
    check_cluster_zones_recorded,
    check_instance_groups,
    check_helm_chart,
    check_cluster_policy,
    check_governance_types,
    check_observability,
    check_teams,
    check_capacity,
)


def check_hyperpod(config: KitConfig, report: Reporter) -> None:
    if has_cluster(config):
        for rule in HYPERPOD_RULES:
            rule(config, report)


RULES: tuple[Rule, ...] = (
    check_kinds,
    check_region,
    check_principals,
    check_hyperpod,
    check_batch,
    check_stack_limits,
)
