"""Validate a config text and read its findings; cfn-lint's region data for the rules that use it.

Each rule test checks a limit on both sides of its edge, with the edge taken from a source the kit did not
write: botocore's SageMaker and IAM service models (name lengths, list sizes) and Kubernetes' 63-character label
limit for the names the kit derives (namespace hyperpod-ns-<team>, LocalQueue hyperpod-ns-<team>-localqueue,
PriorityClass <name>-priority). Codes and wording are the README's finding table. The base config
(tests/support/adversarial/base.yaml) is valid and gives no finding."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from pathlib import Path

import botocore.session
import cfnlint

from cdk_app.validator.report import check_file
from support.paths import SUPPORT

BASE = (SUPPORT / "adversarial" / "base.yaml").read_text()


def run(write_config, *edits: tuple[str, str], now: datetime | None = None):
    """The findings of the base config with `edits`, dates judged against `now` (the clock's when None)."""
    text = BASE
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return check_file(write_config(text), now=now)


# --- HPK310-HPK312: governance resource types against cfn-lint's region data ----------------------------------
PROVIDERS = Path(cfnlint.__file__).parent / "data" / "schemas" / "providers"


def offered_in(region: str) -> set[str]:
    return set(json.loads((PROVIDERS / f"{region}.json").read_text()))


# What the rule tests share: the API models' limits, the findings as (code, path), and edits of the base config.
SAGEMAKER = botocore.session.get_session().get_service_model("sagemaker")

IAM = botocore.session.get_session().get_service_model("iam")

JOHN_M5 = "      - instance_type: ml.m5.2xlarge\n        count: 1\n    principals:"  # john's second quota entry

K8S_LABEL = 63  # Kubernetes: a label value and a DNS-1123 label are at most 63 characters

def limit(model, shape: str) -> int:
    return model.shape_for(shape).metadata["max"]

def codes(report) -> list[tuple[str, str]]:
    return sorted((f.code, f.path) for f in report.findings)

# --- HPK503: capacity no team can use while it is idle ----------------------------------------------------------
# john reserves 1 of the 4 g5 instead of 3, so two g5 are reserved by nobody. Whether another team can use it
# depends on idle sharing (the API's IdleResourceSharing values are Enabled and Disabled) and on a team that
# borrows (LendAndBorrow).
JOHN_ONE_G5 = ("      - instance_type: ml.g5.12xlarge\n        count: 3\n",
               "      - instance_type: ml.g5.12xlarge\n        count: 1\n")

IDLE_ENUM = SAGEMAKER.shape_for("IdleResourceSharing").enum

# --- Findings word for word (messages are part of the contract) ------------------------------------------------
JOHN = "  - name: john\n"

ZONES = "availability_zone_ids: [use1-az4, use1-az6]\n"

CLUSTER_ZONES = "  cluster_zone_ids: [use1-az4, use1-az6]\n"

EXISTING_VPC = ("  existing_vpc_id: vpc-0123456789abcdef0\n  existing_subnets:\n"
                "    - {{subnet_id: subnet-0123456789abcdef0, availability_zone_id: use1-az4}}\n"
                "    - {{subnet_id: subnet-0123456789abcdef1, availability_zone_id: {}}}\n")

CONTENT = "    content_sha256: c23c8e64d6aa4531122dc13b9358b58067140ec36a6a4cad4d6592131bf00931\n"

# The packaged remote dependency the default revision's chart names, as its repository serves it.
NVIDIA_TGZ = SUPPORT / "data" / "hyperpod-chart" / "nvidia-device-plugin-0.16.1.tgz"

NVIDIA_URL = "https://nvidia.github.io/k8s-device-plugin/stable/nvidia-device-plugin-0.16.1.tgz"

WORD_FOR_WORD = [
    ("team-admission",
     [(JOHN, JOHN + "    priority_classes: [high, mid, high]\n    allowed_capabilities: [IPC_LOCK, IPC_LOCK]\n"
                    "    default_priority_class: low\n")],
     [("HPK420", "error", "teams[0].priority_classes[1]",
       "priority class 'mid' is not in cluster_policy.priority_classes", "use one of: high, low"),
      ("HPK421", "error", "teams[0].priority_classes[2]",
       "priority class 'high' is defined twice (first at teams[0].priority_classes[0])",
       "each priority class needs a unique name"),
      ("HPK421", "error", "teams[0].allowed_capabilities[1]",
       "capability 'IPC_LOCK' is defined twice (first at teams[0].allowed_capabilities[0])",
       "each capability needs a unique name"),
      ("HPK422", "error", "teams[0].default_priority_class",
       "default priority class 'low' is not one of the team's priority_classes",
       "use one of: high, or add it to priority_classes")]),
    ("team-without-classes-under-a-required-class",
     [(JOHN, JOHN + "    priority_classes: []\n"), ("cluster_policy:\n", "cluster_policy:\n  require_priority_class: true\n")],
     [("HPK423", "error", "teams[0].priority_classes",
       "team 'john' may use no priority class, but cluster_policy.require_priority_class refuses workloads "
       "without one", "list at least one class of the cluster policy")]),
    ("default-class-of-no-policy-class",
     [(JOHN, JOHN + "    default_priority_class: mid\n")],
     [("HPK409", "error", "teams[0].default_priority_class",
       "priority class 'mid' is not in cluster_policy.priority_classes", "use one of: high, low")]),
    ("wrong-content-digest-at-the-default-revision",
     [(CONTENT, "    content_sha256: '" + "a" * 64 + "'\n")],
     [("HPK223", "error", "hyperpod.helm_chart.content_sha256",
       "revision a00b22d17ea9's chart has content digest "
       "c23c8e64d6aa4531122dc13b9358b58067140ec36a6a4cad4d6592131bf00931",
       "copy the pins hyperpod-kit chart-sha256 prints, or leave content_sha256 out for the default")]),
    ("old-observability-add-on-with-kueue-metrics",
     [("task_governance:\n", "observability:\n  addon_version: v2.3.9-eksbuild.1\ntask_governance:\n")],
     [("HPK307", "error", "observability.addon_version",
       "amazon-cloudwatch-observability v2.3.9-eksbuild.1 cannot collect Kueue metrics",
       "use v2.4.0-eksbuild.1 or later, or set kueue_metrics: false")]),
    ("cluster-zones-not-recorded", [("  cluster_zone_ids: [use1-az4, use1-az6]\n", "")],
     [("HPK123", "warning", "availability_zone_ids",
       "network.cluster_zone_ids is not recorded: the clusters' subnets are the first two zones listed "
       "(use1-az4, use1-az6), so prepending or reordering zones would replace the HyperPod cluster",
       "record network.cluster_zone_ids: [use1-az4, use1-az6]")]),
    ("required-class-without-classes",
     [("cluster_policy:\n  priority_classes:\n    - name: high\n      weight: 90\n    - name: low\n      weight: 10\n",
       "cluster_policy:\n  require_priority_class: true\n")],
     [("HPK320", "error", "cluster_policy.require_priority_class",
       "require_priority_class would refuse every workload: the cluster policy has no priority classes",
       "define priority_classes, or set require_priority_class: false")]),
    # ml.m5.2xlarge: no accelerator, 8 vCPU, 32 GiB (EC2's published figures).
    ("accelerators-on-a-cpu-type", [(JOHN_M5, JOHN_M5.replace("count: 1", "accelerators: 1"))],
     [("HPK407", "error", "teams[0].quota[1].accelerators", "ml.m5.2xlarge has no accelerators",
       "give count or vcpu/memory_gib for CPU instance types")]),
    ("entry-without-amount", [(JOHN_M5, JOHN_M5.replace("        count: 1\n", ""))],
     [("HPK406", "error", "teams[0].quota[1]", "quota entry for ml.m5.2xlarge gives no amount",
       "give count, accelerators, or vcpu/memory_gib")]),
    ("vcpu-disagrees-with-count", [(JOHN_M5, JOHN_M5.replace("count: 1", "count: 1\n        vcpu: 9\n        memory_gib: 32"))],
     [("HPK408", "error", "teams[0].quota[1].vcpu", "vcpu 9 disagrees with count 1 (8 vCPU on ml.m5.2xlarge)",
       "give count alone, or leave count out")]),
    ("type-twice-in-a-quota", [(JOHN_M5, JOHN_M5.replace("    principals:", "      - instance_type: ml.m5.2xlarge\n"
                                                                          "        count: 0\n    principals:"))],
     [("HPK405", "error", "teams[0].quota[2].instance_type",
       "ml.m5.2xlarge already has a quota entry (teams[0].quota[1])", "merge the two entries into one")]),
    ("misspelt-type", [(JOHN_M5, JOHN_M5.replace("2xlarge", "2xlarg"))],
     [("HPK201", "error", "teams[0].quota[1].instance_type", "'ml.m5.2xlarg' is not a SageMaker HyperPod instance type",
       "did you mean ml.m5.2xlarge? `hyperpod-kit instances` lists the HyperPod types, e.g. ml.p5.48xlarge (docs/reference/instance-catalogue.md)")]),
    ("recorded-cluster-zone-not-listed", [(CLUSTER_ZONES, "  cluster_zone_ids: [use1-az4, use1-az1]\n")],
     [("HPK121", "error", "network.cluster_zone_ids[1]", "cluster zone use1-az1: availability_zone_ids does not list it",
       "name zones of use1-az4, use1-az6 in network.cluster_zone_ids")]),
    ("recorded-cluster-zone-without-existing-subnet",
     [(ZONES, "availability_zone_ids: [use1-az4, use1-az6, use1-az1]\n"),
      ("  vpc_cidr: 10.192.0.0/16\n" + CLUSTER_ZONES, EXISTING_VPC.format("use1-az6") + "  cluster_zone_ids: [use1-az4, use1-az1]\n")],
     [("HPK121", "error", "network.cluster_zone_ids[1]",
       "cluster zone use1-az1: network.existing_subnets has no subnet in it",
       "name zones of use1-az4, use1-az6 in network.cluster_zone_ids")]),
    ("default-cluster-zone-without-existing-subnet",
     [(ZONES, "availability_zone_ids: [use1-az4, use1-az6, use1-az1]\n"),
      ("  vpc_cidr: 10.192.0.0/16\n" + CLUSTER_ZONES, EXISTING_VPC.format("use1-az1"))],
     [("HPK123", "warning", "availability_zone_ids",
       "network.cluster_zone_ids is not recorded: the clusters' subnets are the first two zones listed "
       "(use1-az4, use1-az6), so prepending or reordering zones would replace the HyperPod cluster",
       "record network.cluster_zone_ids: [use1-az4, use1-az6]"),
      ("HPK121", "error", "availability_zone_ids[1]",
       "cluster zone (by default the first two zones) use1-az6: network.existing_subnets has no subnet in it",
       "name zones of use1-az1, use1-az4 in network.cluster_zone_ids")]),
    ("existing-subnets-without-vpc",
     [("  vpc_cidr: 10.192.0.0/16\n", "  existing_subnets:\n"
       "    - {subnet_id: subnet-0123456789abcdef0, availability_zone_id: use1-az4}\n")],
     [("HPK103", "error", "network.existing_subnets", "existing_subnets is set but existing_vpc_id is not",
       "set both to use an existing VPC, or neither to create one")]),
    ("existing-vpc-without-subnets", [("  vpc_cidr: 10.192.0.0/16\n", "  existing_vpc_id: vpc-0123456789abcdef0\n")],
     [("HPK103", "error", "network.existing_vpc_id", "existing_vpc_id is set but existing_subnets is not",
       "set both to use an existing VPC, or neither to create one")]),
    # IAM ARNs name the resource type in lower case: role/, user/ (IAM identifiers, "IAM ARNs").
    ("principal-with-a-capitalised-type",
     [("      - arn:aws:iam::111122223333:role/TeamJohn\n", "      - arn:aws:iam::111122223333:Role/TeamJohn\n")],
     [("HPK111", "error", "teams[0].principals[0]",
       "'arn:aws:iam::111122223333:Role/TeamJohn' cannot act as team 'john': not an IAM role or user ARN",
       "name an IAM role or user of account 111122223333")]),
    # The cluster's only groups are of unknown types (HPK201), so its capacity holds no type at all.
    ("quota-on-a-cluster-of-unknown-types",
     [("      instance_type: ml.g5.12xlarge\n      count: 4\n", "      instance_type: ml.zz.large\n      count: 4\n"),
      ("      instance_type: ml.m5.2xlarge\n      count: 2\n", "      instance_type: ml.zz.xlarge\n      count: 2\n"),
      ("      - instance_type: ml.g5.12xlarge\n        count: 3\n", "      - instance_type: ml.g5.12xlarge\n        count: 0\n"),
      (JOHN_M5, "    principals:"),
      ("  - name: smith\n    quota:\n      - instance_type: ml.g5.12xlarge\n        count: 1\n"
       "      - instance_type: ml.m5.2xlarge\n        count: 1\n", "  - name: smith\n    quota: []\n")],
     [("HPK201", "error", "hyperpod.instance_groups[0].instance_type",
       "'ml.zz.large' is not a SageMaker HyperPod instance type",
       "did you mean ml.t3.large? `hyperpod-kit instances` lists the HyperPod types, e.g. ml.p5.48xlarge (docs/reference/instance-catalogue.md)"),
      ("HPK201", "error", "hyperpod.instance_groups[1].instance_type",
       "'ml.zz.xlarge' is not a SageMaker HyperPod instance type",
       "did you mean ml.t3.xlarge? `hyperpod-kit instances` lists the HyperPod types, e.g. ml.p5.48xlarge (docs/reference/instance-catalogue.md)"),
      # HPK502 ("the cluster has no ml.g5.12xlarge instances") is held back: the unknown groups may be of that type.
      # john's only entry is 0 instances: no quota either (a percent of nothing borrows nothing).
      ("HPK411", "warning", "teams[0].name", "team 'john' has no quota",
       "a team borrows only on instance types it has a quota for (borrow_limit is a percent of that quota), so "
       "a job of it that requests accelerators, CPU or memory never runs: give it a quota"),
      ("HPK411", "warning", "teams[1].name", "team 'smith' has no quota",
       "a team borrows only on instance types it has a quota for (borrow_limit is a percent of that quota), so "
       "a job of it that requests accelerators, CPU or memory never runs: give it a quota")]),
    ("wrong-dependency-digest-at-the-default-revision",
     [(CONTENT, CONTENT + f"    dependencies:\n      nvidia-device-plugin: {{url: {NVIDIA_URL}, sha256: '{'b' * 64}'}}\n")],
     [("HPK223", "error", "hyperpod.helm_chart.dependencies.nvidia-device-plugin",
       f"revision a00b22d17ea9 pins nvidia-device-plugin as {NVIDIA_URL} with SHA-256 "
       f"{hashlib.sha256(NVIDIA_TGZ.read_bytes()).hexdigest()}",
       "copy the pins hyperpod-kit chart-sha256 prints, or leave dependencies out for the default")]),
]

GOVERNANCE = {"cluster_policy": "AWS::SageMaker::ClusterSchedulerConfig", "compute_quota": "AWS::SageMaker::ComputeQuota"}

# Regions with HyperPod where CloudFormation offers both, only one, or neither governance type.
MIXED = sorted({frozenset(k for k, t in GOVERNANCE.items() if t in offered_in(p.stem)): p.stem
                for p in sorted(PROVIDERS.glob("*-*-[0-9].json"))
                if "AWS::SageMaker::Cluster" in offered_in(p.stem)}.values())
