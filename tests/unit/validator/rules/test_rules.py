"""Rules behaviour that mutation testing of cdk_app/validator/rules/ found untested.

Each limit is tested on both sides of its edge, with the edge taken from a source the kit did not write:
botocore's SageMaker and IAM service models (name lengths, list sizes) and Kubernetes' 63-character label
limit for the names the kit derives (namespace hyperpod-ns-<team>, LocalQueue hyperpod-ns-<team>-localqueue,
PriorityClass <name>-priority). Codes and wording are the README's finding table. The base config
(tests/support/adversarial/base.yaml) is valid and gives no finding.
"""

from __future__ import annotations

import hashlib

import botocore.session
import pytest
from support.paths import SUPPORT
from support.rule_runner import PROVIDERS, offered_in, run

SAGEMAKER = botocore.session.get_session().get_service_model("sagemaker")
IAM = botocore.session.get_session().get_service_model("iam")
JOHN_M5 = "      - instance_type: ml.m5.2xlarge\n        count: 1\n    principals:"  # john's second quota entry
K8S_LABEL = 63  # Kubernetes: a label value and a DNS-1123 label are at most 63 characters


def limit(model, shape: str) -> int:
    return model.shape_for(shape).metadata["max"]


def codes(report) -> list[tuple[str, str]]:
    return sorted((f.code, f.path) for f in report.findings)


def test_base_is_clean(write_config):
    assert codes(run(write_config)) == []


@pytest.mark.parametrize("extra", [0, 1])
def test_team_name_fits_the_localqueue_label(write_config, extra):
    # The longest name whose LocalQueue name hyperpod-ns-<team>-localqueue still fits a label, and one more.
    longest = K8S_LABEL - len("hyperpod-ns-") - len("-localqueue")
    name = "t" * (longest + extra)
    report = run(write_config, ("  - name: smith\n", f"  - name: {name}\n"))
    assert codes(report) == ([("HPK401", "teams[1].name")] if extra else [])


@pytest.mark.parametrize("extra", [0, 1])
def test_shared_pool_name_has_the_team_limit(write_config, extra):
    longest = K8S_LABEL - len("hyperpod-ns-") - len("-localqueue")
    name = "p" * (longest + extra)
    report = run(write_config, ("teams:\n", f"shared_pool:\n  name: {name}\nteams:\n"))
    refused = [(f.code, f.path, f.message, f.hint) for f in report.findings if f.code == "HPK401"]
    assert refused == ([("HPK401", "shared_pool.name", f"shared pool name {name!r} is not allowed",
                         f"lower-case letters, digits and inner hyphens, at most {longest} characters")]
                       if extra else [])


@pytest.mark.parametrize("name, allowed", [("a1-b", True), ("Team", False), ("-team", False), ("team-", False),
                                           ("te_am", False)])
def test_team_name_is_a_dns_label(write_config, name, allowed):
    report = run(write_config, ("  - name: smith\n", f"  - name: {name}\n"))
    assert codes(report) == ([] if allowed else [("HPK401", "teams[1].name")])


@pytest.mark.parametrize("extra", [0, 1])
def test_priority_class_name_fits_with_its_suffix(write_config, extra):
    name = "c" * (K8S_LABEL - len("-priority") + extra)
    report = run(write_config, ("    - name: low\n", f"    - name: {name}\n"))
    assert codes(report) == ([("HPK301", "cluster_policy.priority_classes[1].name")] if extra else [])
    if extra:
        assert f"at most {K8S_LABEL - len('-priority')} characters" in report.findings[0].hint


@pytest.mark.parametrize("extra", [0, 1])
def test_priority_class_count_is_the_api_limit(write_config, extra):
    most = limit(SAGEMAKER, "PriorityClassList")
    classes = "".join(f"    - name: c{i}\n      weight: {i}\n" for i in range(most + extra))
    report = run(write_config, ("    - name: high\n      weight: 90\n    - name: low\n      weight: 10\n", classes))
    assert codes(report) == ([("HPK302", f"cluster_policy.priority_classes[{most}]")] if extra else [])
    if extra:
        assert report.findings[0].message == f"{most + 1} priority classes are defined"
        assert report.findings[0].hint == f"at most {most}"


@pytest.mark.parametrize("extra", [0, 1])
def test_quota_entry_count_is_the_api_limit(write_config, extra):
    # Entries of zero instances on types the cluster lacks only warn (HPK502); the count is what is refused.
    most = limit(SAGEMAKER, "ComputeQuotaResourceConfigList")
    types = ["ml.m5.large", "ml.m5.xlarge", "ml.m5.4xlarge", "ml.m5.8xlarge", "ml.m5.12xlarge", "ml.m5.16xlarge",
             "ml.m5.24xlarge", "ml.c5.large", "ml.c5.xlarge", "ml.c5.2xlarge", "ml.c5.4xlarge", "ml.c5.9xlarge",
             "ml.c5.12xlarge", "ml.c5.18xlarge", "ml.c5.24xlarge", "ml.t3.medium"]
    # john has two entries (g5, m5) already.
    entries = "".join(f"      - instance_type: {t}\n        count: 0\n" for t in types[:most - 2 + extra])
    report = run(write_config, (JOHN_M5, JOHN_M5.replace("    principals:", f"{entries}    principals:")))
    assert [(f.code, f.path) for f in report.errors] == ([("HPK404", f"teams[0].quota[{most}]")] if extra else [])
    if extra:
        assert report.errors[0].message == f"team 'john' has {most + 1} quota entries"
        assert report.errors[0].hint == f"at most {most} per team"


@pytest.mark.parametrize("field, shape, code, where", [
    ("cluster_name", "ClusterName", "HPK207", "hyperpod.cluster_name"),
    ("name", "ClusterInstanceGroupName", "HPK202", "hyperpod.instance_groups[1].name"),
])
@pytest.mark.parametrize("extra", [0, 1])
def test_sagemaker_names_at_the_api_limit(write_config, field, shape, code, where, extra):
    name = "n" * (limit(SAGEMAKER, shape) + extra)
    if field == "cluster_name":
        edits = [("hyperpod:\n", f"hyperpod:\n  cluster_name: {name}\n")]
    else:
        edits = [("    - name: cpu\n", f"    - name: {name}\n")]
    assert [c for c in codes(run(write_config, *edits)) if c[0] == code] == ([(code, where)] if extra else [])


@pytest.mark.parametrize("kind, shape", [("role", "roleNameType"), ("user", "userNameType")])
@pytest.mark.parametrize("extra", [0, 1])
def test_principal_name_at_the_iam_limit(write_config, kind, shape, extra):
    # The name is what follows the last slash of the path; the path itself does not count.
    name = "r" * (limit(IAM, shape) + extra)
    arn = f"arn:aws:iam::111122223333:{kind}/team/path/{name}"
    report = run(write_config, ("      - arn:aws:iam::111122223333:role/TeamJohn\n", f"      - {arn}\n"))
    assert codes(report) == ([("HPK111", "teams[0].principals[0]")] if extra else [])
    if extra:
        assert f"the {kind} name is longer than {limit(IAM, shape)} characters" in report.findings[0].message


# --- HPK503: capacity no team can use while it is idle ----------------------------------------------------------
# john reserves 1 of the 4 g5 instead of 3, so two g5 are reserved by nobody. Whether another team can use it
# depends on idle sharing (the API's IdleResourceSharing values are Enabled and Disabled) and on a team that
# borrows (LendAndBorrow).
JOHN_ONE_G5 = ("      - instance_type: ml.g5.12xlarge\n        count: 3\n",
               "      - instance_type: ml.g5.12xlarge\n        count: 1\n")
IDLE_ENUM = SAGEMAKER.shape_for("IdleResourceSharing").enum


def test_free_capacity_is_usable_while_a_team_borrows(write_config):
    assert codes(run(write_config, JOHN_ONE_G5)) == []


def test_free_capacity_with_idle_sharing_disabled(write_config):
    assert "Disabled" in IDLE_ENUM
    report = run(write_config, JOHN_ONE_G5,
                 ("cluster_policy:\n", "cluster_policy:\n  idle_resource_sharing: Disabled\n"))
    assert [(f.code, f.path, f.message) for f in report.findings] == [
        ("HPK503", "cluster_policy.idle_resource_sharing",
         "2 instances of ml.g5.12xlarge are reserved by no team and idle_resource_sharing is Disabled, "
         "so no team can use them")]


@pytest.mark.parametrize("strategy", ["Lend", "DontLend"])
def test_free_capacity_without_a_borrowing_team(write_config, strategy):
    # Both teams lend or keep their quota; neither borrows, so the free g5 stay idle.
    report = run(write_config, JOHN_ONE_G5, ("    borrow_limit: 50\n", f"    sharing_strategy: {strategy}\n"),
                 ("  - name: smith\n", f"  - name: smith\n    sharing_strategy: {strategy}\n"))
    assert [(f.code, f.path, f.message) for f in report.findings] == [
        ("HPK503", "teams", "2 instances of ml.g5.12xlarge are reserved by no team and no enabled team uses "
                            "LendAndBorrow, so no team can use them")]
    assert report.findings[0].hint == "give the capacity to teams, add a shared_pool, or let teams borrow"


def test_a_disabled_borrower_does_not_count(write_config):
    report = run(write_config, JOHN_ONE_G5, ("  - name: smith\n", "  - name: smith\n    sharing_strategy: Lend\n"),
                 ("    borrow_limit: 50\n", "    borrow_limit: 50\n    enabled: false\n"))
    assert ("HPK503", "teams") in codes(report)


# --- HPK201's did-you-mean ----------------------------------------------------------------------------------------
def test_case_only_typo_is_suggested_after_the_fuzzy_budget(write_config):
    # Past 50 distinct unknown types the fuzzy did-you-mean stops (linear time on huge files); a type that
    # differs from a real one only in case or surrounding blanks is still named. The real type is one of
    # botocore's ClusterInstanceType values.
    assert "ml.g5.12xlarge" in SAGEMAKER.shape_for("ClusterInstanceType").enum
    unknown = "".join(f"      - instance_type: ml.zz{i}.large\n        count: 1\n" for i in range(50))
    report = run(write_config, (JOHN_M5, f"{unknown}      - instance_type: ml.zz0.lage\n        count: 1\n"
                                "      - instance_type: ' ML.G5.12XLARGE'\n        count: 1\n    principals:"))
    hints = {f.path: f.hint for f in report.findings if f.code == "HPK201"}
    assert hints["teams[0].quota[52].instance_type"].startswith("did you mean ml.g5.12xlarge? ")
    assert hints["teams[0].quota[51].instance_type"].startswith("HyperPod types look like")
    assert hints["teams[0].quota[1].instance_type"].startswith("HyperPod types look like")


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
       "did you mean ml.m5.2xlarge? HyperPod types look like ml.p5.48xlarge (see the instance catalogue)")]),
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
       "did you mean ml.t3.large? HyperPod types look like ml.p5.48xlarge (see the instance catalogue)"),
      ("HPK201", "error", "hyperpod.instance_groups[1].instance_type",
       "'ml.zz.xlarge' is not a SageMaker HyperPod instance type",
       "did you mean ml.t3.xlarge? HyperPod types look like ml.p5.48xlarge (see the instance catalogue)"),
      ("HPK502", "warning", "teams[0].quota[0].instance_type",
       "the cluster has no ml.g5.12xlarge instances, so this quota can never be used",
       "add an instance group of ml.g5.12xlarge or remove the entry (the cluster has no known types)"),
      ("HPK411", "warning", "teams[1].name", "team 'smith' has no quota",
       "its jobs run only on idle compute it borrows; give it a quota")]),
    ("wrong-dependency-digest-at-the-default-revision",
     [(CONTENT, CONTENT + f"    dependencies:\n      nvidia-device-plugin: {{url: {NVIDIA_URL}, sha256: '{'b' * 64}'}}\n")],
     [("HPK223", "error", "hyperpod.helm_chart.dependencies.nvidia-device-plugin",
       f"revision a00b22d17ea9 pins nvidia-device-plugin as {NVIDIA_URL} with SHA-256 "
       f"{hashlib.sha256(NVIDIA_TGZ.read_bytes()).hexdigest()}",
       "copy the pins hyperpod-kit chart-sha256 prints, or leave dependencies out for the default")]),
]


@pytest.mark.parametrize("edits, expected", [c[1:] for c in WORD_FOR_WORD], ids=[c[0] for c in WORD_FOR_WORD])
def test_findings_word_for_word(write_config, edits, expected):
    report = run(write_config, *edits)
    assert [(f.code, f.severity.value, f.path, f.message, f.hint) for f in report.findings] == expected


# Add-on version edges, from the reference facts: the task governance add-on has topology-aware scheduling from
# v1.2.2-eksbuild.1, cannot go from v1.3.x to v1.5 in place; amazon-cloudwatch-observability collects Kueue
# metrics from v2.4.0-eksbuild.1.
@pytest.mark.parametrize("version, expected", [
    ("v1.2.1-eksbuild.9", ["HPK305"]), ("v1.2.2-eksbuild.1", []), ("v1.3.0-eksbuild.1", ["HPK306"]),
    ("v1.3.9-eksbuild.2", ["HPK306"]), ("v1.4.0-eksbuild.1", []), ("v1.1.3-eksbuild.1", ["HPK305"]),
])
def test_task_governance_add_on_edges(write_config, version, expected):
    report = run(write_config, ("  addon_version: v1.6.0-eksbuild.1\n", f"  addon_version: {version}\n"))
    assert [(f.code, f.path) for f in report.findings] == [(c, "task_governance.addon_version") for c in expected]


@pytest.mark.parametrize("settings, refused", [
    ("  addon_version: v2.3.9-eksbuild.1\n", True), ("  addon_version: v2.4.0-eksbuild.1\n", False),
    ("  addon_version: v1.9.0-eksbuild.1\n  kueue_metrics: false\n", False),
    ("  addon_version: v1.9.0-eksbuild.1\n  enabled: false\n", False), ("  kueue_metrics: true\n", False),
])
def test_observability_add_on_edges(write_config, settings, refused):
    report = run(write_config, ("task_governance:\n", f"observability:\n{settings}task_governance:\n"))
    assert codes(report) == ([("HPK307", "observability.addon_version")] if refused else [])


GOVERNANCE = {"cluster_policy": "AWS::SageMaker::ClusterSchedulerConfig", "compute_quota": "AWS::SageMaker::ComputeQuota"}


# Regions with HyperPod where CloudFormation offers both, only one, or neither governance type.
MIXED = sorted({frozenset(k for k, t in GOVERNANCE.items() if t in offered_in(p.stem)): p.stem
                for p in sorted(PROVIDERS.glob("*-*-[0-9].json"))
                if "AWS::SageMaker::Cluster" in offered_in(p.stem)}.values())


@pytest.mark.parametrize("region", MIXED)
@pytest.mark.parametrize("recorded", [None, "native", "api"])
def test_governance_types_follow_the_region_data(write_config, region, recorded):
    types = "" if recorded is None else f"  cloudformation_types: {{cluster_policy: {recorded}, compute_quota: {recorded}}}\n"
    report = run(write_config, ("region: us-east-1\n", f"region: {region}\n"),
                 ("  cloudformation_types: {cluster_policy: native, compute_quota: native}\n", types))
    expected = []
    for key, cfn_type in GOVERNANCE.items():
        offered = cfn_type in offered_in(region)
        if recorded is None:
            default = "native" if offered else "api"
            expected.append(("HPK312", "task_governance", f"task_governance.cloudformation_types.{key} is not "
                             f"recorded; the kit uses {default} from the region data of the installed cfn-lint, "
                             "which an upgrade may change"))
        elif recorded == "native" and not offered:
            expected.append(("HPK310", f"task_governance.cloudformation_types.{key}",
                             f"{cfn_type} is not a CloudFormation type in {region}"))
        elif recorded == "api" and offered:
            expected.append(("HPK311", f"task_governance.cloudformation_types.{key}",
                             f"{region} now offers {cfn_type}, but this environment records api"))
    assert [(f.code, f.path, f.message) for f in report.findings if f.code.startswith("HPK31")] == expected


@pytest.mark.parametrize("region, hint", [
    ("eu-westt-1", "did you mean eu-west-1? use an AWS region such as us-east-1"),
    # Nearest is ap-east-1 at a similarity of 0.78: too far to guess (mx-central-1 is Mexico's region).
    ("mx-east-1", "use an AWS region such as us-east-1"),
])
def test_unknown_region_suggests_only_a_near_name(write_config, region, hint):
    assert {"eu-west-1", "ap-east-1", "mx-central-1"} <= {p.stem for p in PROVIDERS.glob("*.json")}
    report = run(write_config, ("region: us-east-1\n", f"region: {region}\n"))
    assert [(f.code, f.message, f.hint) for f in report.findings if f.code == "HPK110"] == [
        ("HPK110", f"region {region!r} does not exist (cfn-lint knows no such region)", hint)]
