"""The catalogue of bad configs: a valid base, each case's edit, and the code, line and path it must give."""

from __future__ import annotations

BASE = """\
environment: dev
account: "111122223333"
region: us-east-1
availability_zone_ids: [use1-az4, use1-az6]
network:
  cluster_zone_ids: [use1-az4, use1-az6]
eks:
  kubernetes_version: "1.33"
hyperpod:
  helm_chart:
    # The kit's pins for its default revision apply.
    release_name: hyperpod-dependencies
  instance_groups:
    - name: gpu
      instance_type: ml.g5.12xlarge
      count: 4
      availability_zone_id: use1-az4
      threads_per_core: 2
    - name: cpu
      instance_type: ml.m5.2xlarge
      count: 2
task_governance:
  addon_version: v1.6.0-eksbuild.1
  cloudformation_types: {cluster_policy: native, compute_quota: native}
cluster_policy:
  priority_classes:
    - name: high
      weight: 90
    - name: low
      weight: 10
teams:
  - name: john
    borrow_limit: 50
    quota:
      - instance_type: ml.g5.12xlarge
        count: 3
      - instance_type: ml.m5.2xlarge
        count: 1
  - name: smith
    quota:
      - instance_type: ml.g5.12xlarge
        count: 1
      - instance_type: ml.m5.2xlarge
        count: 1
"""


MARK = "#<"


# The network block of BASE, for edits that put their own in its place (it must stay one block).
NETWORK = "network:\n  cluster_zone_ids: [use1-az4, use1-az6]\neks:\n"


def edit(old: str, new: str) -> str:
    assert BASE.count(old) >= 1, f"edit target not in BASE: {old!r}"
    return BASE.replace(old, new, 1)


def many_classes(n: int) -> str:
    items = "".join(f"    - name: c{i}{'  ' + MARK if i == 10 else ''}\n      weight: {i}\n" for i in range(n))
    return BASE.replace("    - name: high\n      weight: 90\n    - name: low\n      weight: 10\n", items)


def many_quota_entries(n: int) -> str:
    types = ["ml.m5.large", "ml.m5.xlarge", "ml.m5.4xlarge", "ml.m5.8xlarge", "ml.m5.12xlarge", "ml.m5.16xlarge",
             "ml.m5.24xlarge", "ml.c5.large", "ml.c5.xlarge", "ml.c5.2xlarge", "ml.c5.4xlarge", "ml.c5.9xlarge",
             "ml.c5.12xlarge", "ml.c5.18xlarge", "ml.c5.24xlarge", "ml.t3.large"]
    entries = "".join(f"      - instance_type: {t}{'  ' + MARK if i == 15 else ''}\n        count: 0\n"
                      for i, t in enumerate(types[:n]))
    return edit("  - name: smith\n    quota:\n", "  - name: smith\n    quota:\n" + entries)


def gpu_lines(lines: str) -> str:
    """BASE with `lines` added to the gpu group (instance_groups[0])."""
    return edit("      count: 4\n      availability_zone_id: use1-az4\n",
                "      count: 4\n      availability_zone_id: use1-az4\n" + lines)


# A scheduled update of the gpu group, its deployment's keys to follow.
SCHEDULE = "      scheduled_update:\n        schedule_expression: cron(0 4 ? * SUN *)\n        deployment:\n"
def system_group(name: str = "system", labels: str = "      labels: {node-role: system}\n",
                 taints: str = "      taints: [{key: CriticalAddonsOnly, value: \"true\", effect: NoSchedule}]\n",
                 count: str = "2", itype: str = "ml.m5.xlarge") -> str:
    """BASE with a system group (by default labelled and tainted, of a type no team has) named by system_instance_group."""
    return edit("      count: 2\ntask_governance:\n", f"      count: 2\n    - name: system\n      instance_type: {itype}\n"
                f"      count: {count}\n{labels}{taints}  system_instance_group: {name}\ntask_governance:\n")


# (case id, config text, code, field path, severity)
CASES: list[tuple[str, str, str, str, str]] = [
    # Shape of the config.
    ("unknown-top-key", edit("region: us-east-1\n", f"region: us-east-1\nregoin: x  {MARK}\n"), "HPK010", "regoin", "error"),
    ("misspelt-nested-key", edit("      count: 4\n", f"      count: 4\n      ebs_volum_gib: 9  {MARK}\n"), "HPK010",
     "hyperpod.instance_groups[0].ebs_volum_gib", "error"),
    ("misspelt-team-key", edit("    borrow_limit: 50\n", f"    borrow_limit: 50\n    quotas: []  {MARK}\n"), "HPK010",
     "teams[0].quotas", "error"),
    ("missing-instance-type", edit("    - name: cpu\n      instance_type: ml.m5.2xlarge\n", f"    - name: cpu  {MARK}\n"),
     "HPK011", "hyperpod.instance_groups[1].instance_type", "error"),
    ("missing-account", edit('account: "111122223333"\n', "").replace("environment: dev", f"environment: dev  {MARK}"),
     "HPK011", "account", "error"),
    ("account-unquoted", edit('account: "111122223333"', f"account: 111122223333  {MARK}"), "HPK012", "account", "error"),
    ("kubernetes-version-float", edit('kubernetes_version: "1.33"', f"kubernetes_version: 1.30  {MARK}"), "HPK012",
     "eks.kubernetes_version", "error"),
    ("count-as-text", edit("      count: 4\n", f'      count: "4"  {MARK}\n'), "HPK012", "hyperpod.instance_groups[0].count", "error"),
    ("teams-not-a-list", edit("teams:\n  - name: john\n", f"teams:  {MARK}\n  name: john\n").split("    borrow_limit")[0],
     "HPK012", "teams", "error"),
    ("quota-not-a-mapping", edit("      - instance_type: ml.m5.2xlarge\n        count: 1\n  - name: smith",
                                 f"      - ml.m5.2xlarge  {MARK}\n  - name: smith"), "HPK012", "teams[0].quota[1]", "error"),
    ("enabled-as-text", edit("    borrow_limit: 50\n", f"    borrow_limit: 50\n    enabled: \"yes\"  {MARK}\n"), "HPK012",
     "teams[0].enabled", "error"),
    ("count-negative", edit("      count: 4\n", f"      count: -1  {MARK}\n"), "HPK013", "hyperpod.instance_groups[0].count", "error"),
    ("count-too-large", edit("      count: 4\n", f"      count: 7000  {MARK}\n"), "HPK013", "hyperpod.instance_groups[0].count", "error"),
    ("ebs-too-large", edit("      count: 4\n", f"      count: 4\n      ebs_volume_gib: 20000  {MARK}\n"), "HPK013",
     "hyperpod.instance_groups[0].ebs_volume_gib", "error"),
    ("ebs-zero", edit("      count: 4\n", f"      count: 4\n      ebs_volume_gib: 0  {MARK}\n"), "HPK013",
     "hyperpod.instance_groups[0].ebs_volume_gib", "error"),
    ("fair-share-weight-too-high", edit("    borrow_limit: 50\n", f"    borrow_limit: 50\n    fair_share_weight: 101  {MARK}\n"),
     "HPK013", "teams[0].fair_share_weight", "error"),
    ("borrow-limit-too-high", edit("    borrow_limit: 50\n", f"    borrow_limit: 501  {MARK}\n"), "HPK013", "teams[0].borrow_limit", "error"),
    ("priority-weight-too-high", edit("      weight: 90\n", f"      weight: 150  {MARK}\n"), "HPK013",
     "cluster_policy.priority_classes[0].weight", "error"),
    ("no-instance-groups", edit("  instance_groups:\n", f"  instance_groups: []  {MARK}\nx:\n"),
     "HPK013", "hyperpod.instance_groups", "error"),
    ("threads-per-core-3", edit("      threads_per_core: 2\n", f"      threads_per_core: 3  {MARK}\n"), "HPK014",
     "hyperpod.instance_groups[0].threads_per_core", "error"),
    ("strategy-misspelt", edit("    borrow_limit: 50\n", f"    borrow_limit: 50\n    sharing_strategy: Lendd  {MARK}\n"),
     "HPK014", "teams[0].sharing_strategy", "error"),
    ("node-recovery-unknown", edit("hyperpod:\n", f"hyperpod:\n  node_recovery: Auto  {MARK}\n"), "HPK014",
     "hyperpod.node_recovery", "error"),
    ("deep-health-check-unknown", edit("      count: 4\n", f"      count: 4\n      deep_health_checks: [InstanceStres]  {MARK}\n"),
     "HPK014", "hyperpod.instance_groups[0].deep_health_checks[0]", "error"),
    ("region-upper-case", edit("region: us-east-1", f"region: US-EAST-1  {MARK}"), "HPK015", "region", "error"),
    ("az-name-not-id", edit("availability_zone_ids: [use1-az4, use1-az6]", f"availability_zone_ids: [us-east-1a]  {MARK}"),
     "HPK015", "availability_zone_ids[0]", "error"),
    ("account-short", edit('account: "111122223333"', f'account: "1234"  {MARK}'), "HPK015", "account", "error"),
    ("addon-version-format", edit("addon_version: v1.6.0-eksbuild.1", f"addon_version: 1.6.0  {MARK}"), "HPK015",
     "task_governance.addon_version", "error"),
    ("principal-not-arn", edit("    borrow_limit: 50\n", f"    borrow_limit: 50\n    principals: [TeamJohn]  {MARK}\n"),
     "HPK015", "teams[0].principals[0]", "error"),
    # Environment and network.
    ("kubernetes-too-old", edit('kubernetes_version: "1.33"', f'kubernetes_version: "1.29"  {MARK}'), "HPK101",
     "eks.kubernetes_version", "error"),
    ("az-listed-twice", edit("availability_zone_ids: [use1-az4, use1-az6]", f"availability_zone_ids: [use1-az4,\n  use1-az4]  {MARK}"),
     "HPK102", "availability_zone_ids[1]", "error"),
    ("az-other-region", edit("availability_zone_ids: [use1-az4, use1-az6]", f"availability_zone_ids: [use1-az4,\n  usw2-az1]  {MARK}"),
     "HPK106", "availability_zone_ids[1]", "error"),
    ("vpc-without-subnets", edit(NETWORK, f"network:\n  existing_vpc_id: vpc-0123456789abcdef0  {MARK}\neks:\n"), "HPK103",
     "network.existing_vpc_id", "error"),
    ("no-subnet-in-group-az", edit(NETWORK, "network:\n  existing_vpc_id: vpc-0123456789abcdef0\n  existing_subnets:\n"
                                   "    - subnet_id: subnet-0123456789abcdef0\n      availability_zone_id: use1-az6\neks:\n")
     .replace("      availability_zone_id: use1-az4\n", f"      availability_zone_id: use1-az4  {MARK}\n"),
     "HPK104", "hyperpod.instance_groups[0].availability_zone_id", "error"),
    ("subnet-in-unlisted-az", edit(NETWORK, "network:\n  existing_vpc_id: vpc-0123456789abcdef0\n  existing_subnets:\n"
                                   "    - subnet_id: subnet-0123456789abcdef0\n      availability_zone_id: use1-az4\n"
                                   f"    - subnet_id: subnet-0123456789abcdef1\n      availability_zone_id: use1-az1  {MARK}\neks:\n"),
     "HPK105", "network.existing_subnets[1].availability_zone_id", "error"),
    ("one-zone-only", edit("availability_zone_ids: [use1-az4, use1-az6]", f"availability_zone_ids: [use1-az4]  {MARK}")
     .replace("      availability_zone_id: use1-az4\n", ""), "HPK107", "availability_zone_ids", "error"),
    ("existing-subnets-one-zone", edit(NETWORK, "network:\n  existing_vpc_id: vpc-0123456789abcdef0\n"
                                       f"  existing_subnets:  {MARK}\n"
                                       "    - subnet_id: subnet-0123456789abcdef0\n      availability_zone_id: use1-az4\neks:\n"),
     "HPK107", "network.existing_subnets", "error"),
    ("zone-number-beyond-layout", edit("availability_zone_ids: [use1-az4, use1-az6]",
                                       f"availability_zone_ids: [use1-az4,\n  use1-az8]  {MARK}"),
     "HPK120", "availability_zone_ids[1]", "error"),
    ("cluster-zone-unlisted", edit(NETWORK, f"network:\n  cluster_zone_ids: [use1-az4,\n    use1-az1]  {MARK}\neks:\n"),
     "HPK121", "network.cluster_zone_ids[1]", "error"),
    ("default-cluster-zone-without-subnet",
     edit(NETWORK, "network:\n  existing_vpc_id: vpc-0123456789abcdef0\n  existing_subnets:\n"
          "    - subnet_id: subnet-0123456789abcdef0\n      availability_zone_id: use1-az4\n"
          "    - subnet_id: subnet-0123456789abcdef1\n      availability_zone_id: use1-az1\neks:\n")
     .replace("availability_zone_ids: [use1-az4, use1-az6]", f"availability_zone_ids: [use1-az4,\n  use1-az6, use1-az1]  {MARK}"),
     "HPK121", "availability_zone_ids[1]", "error"),
    ("cluster-zones-one", edit(NETWORK, f"network:\n  cluster_zone_ids: [use1-az4]  {MARK}\neks:\n"),
     "HPK122", "network.cluster_zone_ids", "error"),
    ("public-endpoint-with-cidrs", edit('  kubernetes_version: "1.33"\n',
                                        f'  kubernetes_version: "1.33"\n  endpoint_access: public  {MARK}\n'
                                        "  public_access_cidrs: [203.0.113.0/24]\n"),
     "HPK108", "eks.endpoint_access", "error"),
    ("private-endpoint-with-cidrs", edit('  kubernetes_version: "1.33"\n',
                                         '  kubernetes_version: "1.33"\n  endpoint_access: private\n'
                                         f"  public_access_cidrs: [203.0.113.0/24]  {MARK}\n"),
     "HPK109", "eks.public_access_cidrs", "warning"),
    ("public-endpoint-naming-nobody", edit('  kubernetes_version: "1.33"\n',
                                           f'  kubernetes_version: "1.33"\n  endpoint_access: public_and_private  {MARK}\n'),
     "HPK112", "eks.endpoint_access", "error"),
    ("public-endpoint-to-anywhere", edit('  kubernetes_version: "1.33"\n',
                                         '  kubernetes_version: "1.33"\n  endpoint_access: public_and_private\n'
                                         f"  public_access_cidrs: [0.0.0.0/0]  {MARK}\n"),
     "HPK113", "eks.public_access_cidrs", "warning"),
    ("chart-not-pinned", edit("  helm_chart:\n", f"  helm_chart:  {MARK}\n    revision: \"{'1' * 40}\"\n"),
     "HPK208", "hyperpod.helm_chart", "error"),
    ("chart-content-pin-wrong", edit("  helm_chart:\n", f"  helm_chart:\n    content_sha256: {'ab' * 32}  {MARK}\n"),
     "HPK223", "hyperpod.helm_chart.content_sha256", "error"),
    ("chart-dependency-pin-wrong", edit("  helm_chart:\n", "  helm_chart:\n    dependencies:\n"
                                        f"      nvidia-device-plugin:  {MARK}\n"
                                        "        url: https://nvidia.github.io/k8s-device-plugin/stable/"
                                        f"nvidia-device-plugin-0.16.1.tgz\n        sha256: {'ab' * 32}\n"),
     "HPK223", "hyperpod.helm_chart.dependencies.nvidia-device-plugin", "error"),
    ("chart-dependencies-not-pinned", edit("  helm_chart:\n", f"  helm_chart:  {MARK}\n    revision: \"{'1' * 40}\"\n"),
     "HPK220", "hyperpod.helm_chart", "error"),
    ("chart-dependency-pin-http", edit("  helm_chart:\n", "  helm_chart:\n    dependencies:\n      nvidia-device-plugin:\n"
                                       f"        url: http://nvidia.github.io/x.tgz  {MARK}\n        sha256: {'ab' * 32}\n"),
     "HPK015", "hyperpod.helm_chart.dependencies.nvidia-device-plugin.url", "error"),
    ("chart-inference-operator", edit("  helm_chart:\n", "  helm_chart:\n    components:\n"
                                      f"      inference_operator: true  {MARK}\n"),
     "HPK222", "hyperpod.helm_chart.components.inference_operator", "error"),
    ("chart-kuberay-gone", edit("  helm_chart:\n", f"  helm_chart:\n    components:\n      kuberay: true  {MARK}\n"),
     "HPK010", "hyperpod.helm_chart.components.kuberay", "error"),
    ("kubernetes-without-layer", edit('  kubernetes_version: "1.33"\n', f'  kubernetes_version: "1.31"  {MARK}\n'),
     "HPK221", "eks.kubernetes_version", "error"),
    ("recovery-without-agent", edit("  helm_chart:\n", "  helm_chart:\n    components:\n"
                                    f"      health_monitoring_agent: false  {MARK}\n"),
     "HPK209", "hyperpod.helm_chart.components.health_monitoring_agent", "error"),
    ("chart-revision-short", edit("  helm_chart:\n", f"  helm_chart:\n    revision: 40eb213  {MARK}\n"),
     "HPK015", "hyperpod.helm_chart.revision", "error"),
    ("chart-component-unknown", edit("  helm_chart:\n", "  helm_chart:\n    components:\n"
                                     f"      gpu_operator: true  {MARK}\n"),
     "HPK010", "hyperpod.helm_chart.components.gpu_operator", "error"),
    # Instance groups.
    ("group-type-unknown", edit("instance_type: ml.g5.12xlarge\n      count: 4", f"instance_type: ml.g5.13xlarge  {MARK}\n      count: 4"),
     "HPK201", "hyperpod.instance_groups[0].instance_type", "error"),
    ("group-name-underscore", edit("    - name: gpu\n", f"    - name: gpu_workers  {MARK}\n"), "HPK202",
     "hyperpod.instance_groups[0].name", "error"),
    ("group-names-repeat", edit("    - name: cpu\n", f"    - name: gpu  {MARK}\n"), "HPK203", "hyperpod.instance_groups[1].name", "error"),
    # HyperPod's managed Karpenter, flexible and Spot groups.
    ("max-count-without-autoscaling", edit("      count: 2\n", f"      count: 0\n      max_count: 2  {MARK}\n"),
     "HPK250", "hyperpod.instance_groups[1].max_count", "error"),
    ("autoscaling-without-recovery", edit("hyperpod:\n", f"hyperpod:\n  autoscaling: true\n  node_recovery: None  {MARK}\n")
     .replace("      count: 2\n", "      count: 0\n      max_count: 2\n"), "HPK251", "hyperpod.node_recovery", "error"),
    ("autoscaling-without-agent", edit("  helm_chart:\n", "  autoscaling: true\n  node_recovery: None\n  helm_chart:\n"
                                       f"    components:\n      health_monitoring_agent: false  {MARK}\n")
     .replace("      count: 2\n", "      count: 0\n      max_count: 2\n"),
     "HPK252", "hyperpod.helm_chart.components.health_monitoring_agent", "error"),
    ("autoscaled-group-above-zero", edit("hyperpod:\n", "hyperpod:\n  autoscaling: true\n")
     .replace("      count: 2\n", f"      count: 1  {MARK}\n      max_count: 2\n"), "HPK254", "hyperpod.instance_groups[1].count", "error"),
    ("autoscaling-nothing-to-scale", edit("hyperpod:\n", f"hyperpod:\n  autoscaling: true  {MARK}\n"),
     "HPK256", "hyperpod.autoscaling", "warning"),
    ("autoscaled-group-deep-health", edit("hyperpod:\n", "hyperpod:\n  autoscaling: true\n")
     .replace("      instance_type: ml.g5.12xlarge\n      count: 4\n", "      instance_type: ml.g5.12xlarge\n      count: 0\n"
              f"      max_count: 4\n      deep_health_checks: [InstanceStress]  {MARK}\n"),
     "HPK257", "hyperpod.instance_groups[0].deep_health_checks", "error"),
    ("autoscaled-group-training-plan", edit("hyperpod:\n", "hyperpod:\n  autoscaling: true\n")
     .replace("      count: 2\n", "      count: 0\n      max_count: 2\n      training_plan_arn: "
              f"arn:aws:sagemaker:us-east-1:111122223333:training-plan/cpu  {MARK}\n"),
     "HPK258", "hyperpod.instance_groups[1].training_plan_arn", "error"),
    ("flexible-type-twice", edit("      count: 2\n", f"      count: 2\n      fallback_instance_types: [ml.m5.4xlarge, ml.m5.4xlarge]  {MARK}\n"),
     "HPK259", "hyperpod.instance_groups[1].fallback_instance_types[1]", "error"),
    ("min-count-above-count", edit("      count: 2\n", f"      count: 2\n      min_count: 3  {MARK}\n"),
     "HPK260", "hyperpod.instance_groups[1].min_count", "error"),
    ("quota-on-a-flexible-group", edit("      - instance_type: ml.m5.2xlarge\n        count: 1\n  - name: smith\n",
                                       f"      - instance_type: ml.m5.2xlarge  {MARK}\n        count: 2\n  - name: smith\n")
     .replace("      count: 2\n", "      count: 2\n    - name: flex\n      instance_type: ml.m5.2xlarge\n"
              "      fallback_instance_types: [ml.m5.4xlarge]\n      count: 1\n", 1),
     "HPK530", "teams[0].quota[1]", "warning"),
    ("flexible-group-needed-twice", edit("      - instance_type: ml.m5.2xlarge\n        count: 1\n  - name: smith\n",
                                         "      - instance_type: ml.m5.2xlarge\n        count: 2\n"
                                         "      - instance_type: ml.m5.4xlarge\n        count: 1\n  - name: smith\n")
     .replace("      count: 2\n", "      count: 2\n    - name: flex\n      instance_type: ml.m5.2xlarge\n"
              f"      fallback_instance_types: [ml.m5.4xlarge]  {MARK}\n      count: 1\n", 1),
     "HPK532", "hyperpod.instance_groups[2].fallback_instance_types", "error"),
    ("quota-on-spot", edit("      - instance_type: ml.m5.2xlarge\n        count: 1\n  - name: smith\n",
                           f"      - instance_type: ml.m5.2xlarge  {MARK}\n        count: 2\n  - name: smith\n")
     .replace("      count: 2\n", "      count: 2\n    - name: spot\n      instance_type: ml.m5.2xlarge\n"
              "      capacity_type: Spot\n      count: 1\n", 1),
     "HPK531", "teams[0].quota[1]", "warning"),
    ("deep-health-on-cpu", edit("      count: 2\n", f"      count: 2\n      deep_health_checks: [InstanceStress]  {MARK}\n"),
     "HPK204", "hyperpod.instance_groups[1].deep_health_checks", "error"),
    ("group-az-unlisted", edit("      availability_zone_id: use1-az4\n", f"      availability_zone_id: use1-az1  {MARK}\n"),
     "HPK205", "hyperpod.instance_groups[0].availability_zone_id", "error"),
    ("deep-health-check-twice", edit("      count: 4\n", f"      count: 4\n      deep_health_checks: [InstanceStress, InstanceStress]  {MARK}\n"),
     "HPK206", "hyperpod.instance_groups[0].deep_health_checks", "error"),
    ("deep-health-connectivity-on-one-node", edit("task_governance:\n", "    - name: solo\n      instance_type: ml.p5.48xlarge\n"
                                                  f"      count: 1\n      deep_health_checks: [InstanceConnectivity]  {MARK}\n"
                                                  "task_governance:\n"),
     "HPK213", "hyperpod.instance_groups[2].deep_health_checks[0]", "error"),
    ("cluster-name-leading-hyphen", edit("hyperpod:\n", f"hyperpod:\n  cluster_name: -bad  {MARK}\n"), "HPK207",
     "hyperpod.cluster_name", "error"),
    # Cluster policy.
    ("priority-class-upper-case", edit("    - name: high\n", f"    - name: High  {MARK}\n"), "HPK301",
     "cluster_policy.priority_classes[0].name", "error"),
    ("eleven-priority-classes", many_classes(11), "HPK302", "cluster_policy.priority_classes[10]", "error"),
    ("priority-class-twice", edit("    - name: low\n", f"    - name: high  {MARK}\n"), "HPK303",
     "cluster_policy.priority_classes[1].name", "error"),
    ("priority-weights-equal", edit("      weight: 10\n", f"      weight: 90  {MARK}\n"), "HPK304",
     "cluster_policy.priority_classes[1].weight", "warning"),
    ("addon-without-topology", edit("addon_version: v1.6.0-eksbuild.1", f"addon_version: v1.1.3-eksbuild.1  {MARK}"), "HPK305",
     "task_governance.addon_version", "warning"),
    ("addon-upgrade-trap", edit("addon_version: v1.6.0-eksbuild.1", f"addon_version: v1.3.0-eksbuild.1  {MARK}"), "HPK306",
     "task_governance.addon_version", "warning"),
    ("native-type-missing-in-region", edit("region: us-east-1", "region: us-west-2")
     .replace("[use1-az4, use1-az6]", "[usw2-az1, usw2-az2]").replace("use1-az4", "usw2-az1")
     .replace("cluster_policy: native,", f"cluster_policy: native,  {MARK}\n    "),
     "HPK310", "task_governance.cloudformation_types.cluster_policy", "error"),
    ("api-where-native-exists", edit("cluster_policy: native,", f"cluster_policy: api,  {MARK}\n   "),
     "HPK311", "task_governance.cloudformation_types.cluster_policy", "warning"),
    ("governance-types-not-recorded", edit("  cloudformation_types: {cluster_policy: native, compute_quota: native}\n", "")
     .replace("task_governance:\n", f"task_governance:  {MARK}\n"), "HPK312", "task_governance.cloudformation_types",
     "error"),
    # Teams.
    ("team-name-upper-case", edit("  - name: john\n", f"  - name: John  {MARK}\n"), "HPK401", "teams[0].name", "error"),
    ("team-name-41-chars", edit("  - name: john\n", f"  - name: {'a' * 41}  {MARK}\n"), "HPK401", "teams[0].name", "error"),
    ("team-twice", edit("  - name: smith\n", f"  - name: john  {MARK}\n"), "HPK402", "teams[1].name", "error"),
    ("pool-named-like-team", BASE + f"shared_pool:\n  name: smith  {MARK}\n", "HPK402", "shared_pool.name", "error"),
    ("borrow-limit-with-dontlend", edit("    borrow_limit: 50\n", f"    sharing_strategy: DontLend\n    borrow_limit: 50  {MARK}\n"),
     "HPK403", "teams[0].borrow_limit", "error"),
    ("sixteen-quota-entries", many_quota_entries(16), "HPK404", "teams[1].quota[15]", "error"),
    ("quota-type-twice", edit("      - instance_type: ml.m5.2xlarge\n        count: 1\n  - name: smith",
                              f"      - instance_type: ml.g5.12xlarge  {MARK}\n        count: 0\n  - name: smith"),
     "HPK405", "teams[0].quota[1].instance_type", "error"),
    ("quota-type-unknown", edit("      - instance_type: ml.m5.2xlarge\n        count: 1\n  - name: smith",
                                f"      - instance_type: ml.m5.3xlarge  {MARK}\n        count: 1\n  - name: smith"),
     "HPK201", "teams[0].quota[1].instance_type", "error"),
    ("quota-without-amount", edit("      - instance_type: ml.m5.2xlarge\n        count: 1\n  - name: smith",
                                  f"      - instance_type: ml.m5.2xlarge  {MARK}\n  - name: smith"),
     "HPK406", "teams[0].quota[1]", "error"),
    ("accelerators-on-cpu", edit("      - instance_type: ml.m5.2xlarge\n        count: 1\n  - name: smith",
                                 f"      - instance_type: ml.m5.2xlarge\n        accelerators: 1  {MARK}\n  - name: smith"),
     "HPK407", "teams[0].quota[1].accelerators", "error"),
    ("count-and-accelerators-disagree", edit("        count: 3\n", f"        count: 3\n        accelerators: 8  {MARK}\n"),
     "HPK408", "teams[0].quota[0].accelerators", "error"),
    ("default-priority-unknown", edit("    borrow_limit: 50\n", f"    borrow_limit: 50\n    default_priority_class: urgent  {MARK}\n"),
     "HPK409", "teams[0].default_priority_class", "error"),
    # Capacity.
    ("quota-over-capacity", edit("  - name: smith\n    quota:\n      - instance_type: ml.g5.12xlarge\n        count: 1\n",
                                 f"  - name: smith\n    quota:\n      - instance_type: ml.g5.12xlarge  {MARK}\n        count: 2\n"),
     "HPK501", "teams[1].quota[0]", "error"),
    ("partial-quota-over-capacity", edit("  - name: smith\n    quota:\n      - instance_type: ml.g5.12xlarge\n        count: 1\n",
                                         f"  - name: smith\n    quota:\n      - instance_type: ml.g5.12xlarge  {MARK}\n        accelerators: 5\n"),
     "HPK501", "teams[1].quota[0]", "error"),
    ("quota-on-absent-type", edit("      - instance_type: ml.m5.2xlarge\n        count: 1\n  - name: smith",
                                  f"      - instance_type: ml.m5.2xlarge\n        count: 1\n      - instance_type: ml.p5.48xlarge  {MARK}\n"
                                  "        count: 1\n  - name: smith"),
     "HPK501", "teams[0].quota[2]", "error"),
    ("idle-capacity-unusable", edit("        count: 3\n", "        count: 2\n").replace(
        "cluster_policy:\n", f"cluster_policy:\n  idle_resource_sharing: Disabled  {MARK}\n"),
     "HPK503", "cluster_policy.idle_resource_sharing", "warning"),
    ("shared-pool-negative", edit("  - name: smith\n    quota:\n      - instance_type: ml.g5.12xlarge\n        count: 1\n",
                                  "  - name: smith\n    quota:\n      - instance_type: ml.g5.12xlarge\n        count: 2\n")
     + f"shared_pool:  {MARK}\n  name: pool\n", "HPK504", "shared_pool", "error"),
    ("shared-pool-empty", BASE + f"shared_pool:  {MARK}\n  name: pool\n", "HPK505", "shared_pool", "warning"),
    # GPU partitions and absolute borrow limits.
    ("mig-geometry-on-a-gpu-without-mig", edit("      availability_zone_id: use1-az4\n",
                                               "      availability_zone_id: use1-az4\n      labels:\n"
                                               f"        nvidia.com/mig.config: all-1g.10gb  {MARK}\n"),
     "HPK224", "hyperpod.instance_groups[0].labels.nvidia.com/mig.config", "error"),
    ("mig-profile-the-type-lacks", edit("  - name: smith\n    quota:\n", "  - name: smith\n    quota:\n"
                                        "      - instance_type: ml.m5.2xlarge\n"
                                        f"        accelerator_partition: {{type: mig-1g.10gb, count: 1}}  {MARK}\n"),
     "HPK430", "teams[1].quota[0].accelerator_partition.type", "error"),
    ("mig-partitions-over-the-geometry", edit("      count: 2\n", "      count: 2\n    - name: mig\n"
                                              "      instance_type: ml.p5.48xlarge\n      count: 1\n      labels:\n"
                                              "        nvidia.com/mig.config: all-7g.80gb\n").replace(
        "  - name: smith\n    quota:\n", "  - name: smith\n    quota:\n      - instance_type: ml.p5.48xlarge\n"
        f"        accelerator_partition: {{type: mig-7g.80gb, count: 9}}  {MARK}\n"),
     "HPK533", "teams[1].quota[0].accelerator_partition.count", "error"),
    ("absolute-limits-on-a-lender", edit("  - name: smith\n    quota:\n",
                                         "  - name: smith\n    sharing_strategy: Lend\n"
                                         f"    absolute_borrow_limits:  {MARK}\n      - instance_type: ml.g5.12xlarge\n"
                                         "        accelerators: 4\n    quota:\n"),
     "HPK431", "teams[1].absolute_borrow_limits", "error"),
    # The red team's abl_gpu_on_mig and abl_wrongprof (issue 31): limits held to the capacity quotas are.
    ("absolute-gpu-limit-on-partitioned-gpus", edit("      count: 2\n", "      count: 2\n    - name: mig\n"
                                                    "      instance_type: ml.p5.48xlarge\n      count: 1\n      labels:\n"
                                                    "        nvidia.com/mig.config: all-1g.10gb\n").replace(
        "  - name: smith\n    quota:\n", "  - name: smith\n    absolute_borrow_limits:\n"
        f"      - instance_type: ml.p5.48xlarge\n        accelerators: 8  {MARK}\n    quota:\n"
        "      - instance_type: ml.p5.48xlarge\n        accelerator_partition: {type: mig-1g.10gb, count: 7}\n"),
     "HPK434", "teams[1].absolute_borrow_limits[0].accelerators", "error"),
    ("absolute-limit-of-a-profile-no-group-gives", edit("      count: 2\n", "      count: 2\n    - name: mig\n"
                                                        "      instance_type: ml.p5.48xlarge\n      count: 1\n"
                                                        "      labels:\n        nvidia.com/mig.config: all-1g.10gb\n").replace(
        "  - name: smith\n    quota:\n", "  - name: smith\n    absolute_borrow_limits:\n"
        "      - instance_type: ml.p5.48xlarge\n"
        f"        accelerator_partition: {{type: mig-7g.80gb, count: 1}}  {MARK}\n    quota:\n"
        "      - instance_type: ml.p5.48xlarge\n        accelerator_partition: {type: mig-1g.10gb, count: 7}\n"),
     "HPK435", "teams[1].absolute_borrow_limits[0].accelerator_partition.type", "error"),
    # The AMI lifecycle of instance groups (AWS::SageMaker::Cluster's schema and botocore's documentation).
    ("image-id-not-hex", gpu_lines(f"      image_id: ami-0123456789abcdefg  {MARK}\n"), "HPK015",
     "hyperpod.instance_groups[0].image_id", "error"),
    ("image-release-version-two-parts", gpu_lines(f'      image_release_version: "1.2"  {MARK}\n'), "HPK015",
     "hyperpod.instance_groups[0].image_release_version", "error"),
    ("image-release-version-float", gpu_lines(f"      image_release_version: 1.2  {MARK}\n"), "HPK012",
     "hyperpod.instance_groups[0].image_release_version", "error"),
    ("schedule-day-of-month-and-week-star", gpu_lines("      scheduled_update:\n"
                                                      f"        schedule_expression: cron(0 4 * * SUN *)  {MARK}\n"),
     "HPK015", "hyperpod.instance_groups[0].scheduled_update.schedule_expression", "error"),
    ("schedule-rate-expression", gpu_lines("      scheduled_update:\n"
                                           f"        schedule_expression: rate(7 days)  {MARK}\n"),
     "HPK015", "hyperpod.instance_groups[0].scheduled_update.schedule_expression", "error"),
    ("schedule-missing", gpu_lines(f"      scheduled_update:  {MARK}\n        deployment: {{}}\n"), "HPK011",
     "hyperpod.instance_groups[0].scheduled_update.schedule_expression", "error"),
    ("batch-type-unknown", gpu_lines(SCHEDULE + f"          maximum_batch_size: {{type: PERCENT, value: 25}}  {MARK}\n"),
     "HPK014", "hyperpod.instance_groups[0].scheduled_update.deployment.maximum_batch_size.type", "error"),
    ("batch-zero", gpu_lines(SCHEDULE + f"          maximum_batch_size: {{type: INSTANCE_COUNT, value: 0}}  {MARK}\n"),
     "HPK013", "hyperpod.instance_groups[0].scheduled_update.deployment.maximum_batch_size.value", "error"),
    ("batch-over-any-group", gpu_lines(SCHEDULE + f"          maximum_batch_size: {{type: INSTANCE_COUNT, value: 6759}}  {MARK}\n"),
     "HPK013", "hyperpod.instance_groups[0].scheduled_update.deployment.maximum_batch_size.value", "error"),
    ("batch-percent-over-100", gpu_lines(SCHEDULE + "          rollback_maximum_batch_size:\n"
                                         f"            {{type: CAPACITY_PERCENTAGE, value: 101}}  {MARK}\n"),
     "HPK240", "hyperpod.instance_groups[0].scheduled_update.deployment.rollback_maximum_batch_size.value", "error"),
    ("wait-interval-over-an-hour", gpu_lines(SCHEDULE + f"          wait_interval_seconds: 3601  {MARK}\n"), "HPK013",
     "hyperpod.instance_groups[0].scheduled_update.deployment.wait_interval_seconds", "error"),
    ("eleven-rollback-alarms", gpu_lines(SCHEDULE + f"          rollback_alarms: [{', '.join(f'a{i}' for i in range(11))}]"
                                         f"  {MARK}\n"), "HPK013",
     "hyperpod.instance_groups[0].scheduled_update.deployment.rollback_alarms", "error"),
    ("rollback-alarm-blank", gpu_lines(SCHEDULE + f'          rollback_alarms: ["   "]  {MARK}\n'), "HPK015",
     "hyperpod.instance_groups[0].scheduled_update.deployment.rollback_alarms[0]", "error"),
    ("patching-strategy-drain-first", gpu_lines(f"      auto_patch: {{patching_strategy: DrainFirst}}  {MARK}\n"), "HPK014",
     "hyperpod.instance_groups[0].auto_patch.patching_strategy", "error"),
    # john holds 1 of the 4 g5 instances, smith 1: two are unreserved, a batch of three leaves one.
    ("batch-below-quota", gpu_lines(SCHEDULE + f"          maximum_batch_size: {{type: INSTANCE_COUNT, value: 3}}  {MARK}\n")
     .replace("      - instance_type: ml.g5.12xlarge\n        count: 3\n", "      - instance_type: ml.g5.12xlarge\n        count: 1\n"),
     "HPK520", "hyperpod.instance_groups[0].scheduled_update.deployment.maximum_batch_size.value", "error"),
    ("percent-batch-below-quota", gpu_lines("      auto_patch:\n        patching_strategy: WhenIdle\n        deployment:\n"
                                            f"          maximum_batch_size: {{type: CAPACITY_PERCENTAGE, value: 51}}  {MARK}\n")
     .replace("      - instance_type: ml.g5.12xlarge\n        count: 3\n", "      - instance_type: ml.g5.12xlarge\n        count: 1\n"),
     "HPK520", "hyperpod.instance_groups[0].auto_patch.deployment.maximum_batch_size.value", "error"),
    # The teams reserve all four: even the default batch of one instance leaves a quota uncovered.
    ("default-batch-no-headroom", gpu_lines(f"      scheduled_update:  {MARK}\n        schedule_expression: cron(0 4 ? * SUN *)\n"),
     "HPK521", "hyperpod.instance_groups[0].scheduled_update.deployment.maximum_batch_size", "warning"),
    # A flexible group of 1 (g5.24xlarge or g5.12xlarge) gives smith's g5.24xlarge or the g5.12xlarge a batch of
    # the gpu group takes out, not both: each type alone is covered (5 g5.12xlarge less 1 for 4), together not.
    ("batch-needs-a-flexible-group-twice", gpu_lines(f"      scheduled_update:  {MARK}\n        schedule_expression: "
                                                     "cron(0 4 ? * SUN *)\n").replace(
        "    - name: cpu\n", "    - {name: flex, instance_type: ml.g5.24xlarge, fallback_instance_types: [ml.g5.12xlarge], "
        "count: 1}\n    - name: cpu\n", 1).replace(
        "  - name: smith\n    quota:\n", "  - name: smith\n    quota:\n      - {instance_type: ml.g5.24xlarge, count: 1}\n", 1),
     "HPK521", "hyperpod.instance_groups[0].scheduled_update.deployment.maximum_batch_size", "warning"),
    # WhenAllIdle without batches cordons all four g5, which the teams reserve.
    ("patch-whole-group-when-all-idle", gpu_lines(f"      auto_patch: {{patching_strategy: WhenAllIdle}}  {MARK}\n"),
     "HPK522", "hyperpod.instance_groups[0].auto_patch.patching_strategy", "warning"),
    ("two-groups-one-schedule", gpu_lines("      scheduled_update: {schedule_expression: cron(0 4 ? * SUN *)}\n").replace(
        "      count: 2\n", f"      count: 2\n      scheduled_update: {{schedule_expression: cron(0 4 ? * SUN *)}}  {MARK}\n", 1),
     "HPK241", "hyperpod.instance_groups[1].scheduled_update.schedule_expression", "warning"),
    # The administrators' system group (hyperpod.system_instance_group).
    ("system-group-missing", system_group(name=f"sytem  {MARK}"), "HPK215", "hyperpod.system_instance_group", "error"),
    ("system-group-unlabelled", system_group(labels=f"      labels: {{}}  {MARK}\n"), "HPK216",
     "hyperpod.instance_groups[2].labels", "error"),
    ("system-group-untainted", system_group(taints=f"      taints: []  {MARK}\n"), "HPK217",
     "hyperpod.instance_groups[2].taints", "error"),
    ("system-group-empty", system_group(count=f"0  {MARK}"), "HPK218", "hyperpod.instance_groups[2].count", "warning"),
    ("system-group-type-in-quota", system_group(itype="ml.m5.2xlarge").replace(
        "      - instance_type: ml.m5.2xlarge\n        count: 1\n  - name: smith",
        f"      - instance_type: ml.m5.2xlarge  {MARK}\n        count: 1\n  - name: smith"),
     "HPK219", "teams[0].quota[1].instance_type", "warning"),
]


def marked_line(text: str) -> int:
    lines = [i + 1 for i, line in enumerate(text.splitlines()) if MARK in line]
    assert len(lines) == 1, "each case marks exactly one line"
    return lines[0]
