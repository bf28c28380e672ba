"""HyperPod's managed Karpenter, flexible and Spot groups: each prerequisite is a located finding, each limit taken
from AWS::SageMaker::Cluster's schema in cfn-lint or botocore's SageMaker model, and the capacity table shows what is
guaranteed and what is best-effort."""

from __future__ import annotations

import pytest
from support.rule_runner import SAGEMAKER, codes, run

from cdk_app.domain.resource_schemas import resource_schema

CLUSTER = resource_schema("AWS::SageMaker::Cluster")["definitions"]
ON = ("hyperpod:\n", "hyperpod:\n  autoscaling: true\n")
CPU_GROUP = "    - name: cpu\n      instance_type: ml.m5.2xlarge\n      count: 2\n"


def group(*lines: str, name: str = "auto", itype: str = "ml.g5.12xlarge", count: int = 0) -> tuple[str, str]:
    """Append an instance group after the base's cpu group."""
    body = "".join(f"      {line}\n" for line in lines)
    return CPU_GROUP, CPU_GROUP + f"    - name: {name}\n      instance_type: {itype}\n      count: {count}\n" + body


def test_an_autoscaled_group_with_its_prerequisites_is_valid(write_config):
    report = run(write_config, ON, group("max_count: 2"))
    assert codes(report) == []
    row = next(r for r in report.capacity if r.instance_type == "ml.g5.12xlarge")
    # The validator's capacity is the autoscaled maximum; the guaranteed part is the fixed group's.
    assert (row.capacity.count, row.guaranteed.count, row.best_effort.count) == (6, 4, 2)


def test_max_count_without_autoscaling(write_config):
    assert codes(run(write_config, group("max_count: 2"))) == [("HPK250", "hyperpod.instance_groups[2].max_count")]


def test_autoscaling_needs_automatic_node_recovery(write_config):
    assert "None" in SAGEMAKER.shape_for("ClusterNodeRecovery").enum
    report = run(write_config, ("hyperpod:\n", "hyperpod:\n  autoscaling: true\n  node_recovery: None\n"),
                 group("max_count: 2"))
    assert codes(report) == [("HPK251", "hyperpod.node_recovery")]


def test_autoscaling_needs_the_health_monitoring_agent(write_config):
    report = run(write_config, ON, group("max_count: 2"), (
        "    content_sha256:", "    components: {health_monitoring_agent: false}\n    content_sha256:"))
    assert ("HPK252", "hyperpod.helm_chart.components.health_monitoring_agent") in codes(report)


def test_the_default_charts_agent_is_new_enough():
    from cdk_app.config.model import DEFAULT_HELM_CHART_HEALTH_AGENT_TAG
    from cdk_app.validator.rules.autoscaling import MIN_HEALTH_AGENT_TAG, agent_tag_key
    assert agent_tag_key(DEFAULT_HELM_CHART_HEALTH_AGENT_TAG) >= agent_tag_key(MIN_HEALTH_AGENT_TAG)
    assert agent_tag_key("1.0.742.0_1.0.241.0") > agent_tag_key("1.0.741.9_1.0.999.0")


def test_another_chart_revision_is_not_read_for_the_agent(write_config):
    report = run(write_config, ON, group("max_count: 2"), (
        "    content_sha256:", f"    revision: {'ab' * 20}\n    content_sha256:"))
    assert ("HPK253", "hyperpod.helm_chart.revision") in codes(report)


def test_an_autoscaled_group_starts_at_zero(write_config):
    assert codes(run(write_config, ON, group("max_count: 2", count=1))) == [
        ("HPK254", "hyperpod.instance_groups[2].count")]


def test_a_node_class_lists_at_most_ten_groups(write_config):
    many = "".join(f"    - name: auto{i}\n      instance_type: ml.m5.2xlarge\n      count: 0\n      max_count: 1\n"
                   for i in range(11))
    report = run(write_config, ON, (CPU_GROUP, CPU_GROUP + many))
    assert ("HPK255", "hyperpod.instance_groups") in codes(report)
    assert ("HPK255", "hyperpod.instance_groups") not in codes(run(write_config, ON, (CPU_GROUP, CPU_GROUP + many.split(
        "    - name: auto10")[0])))


def test_autoscaling_without_a_group_to_scale(write_config):
    assert codes(run(write_config, ON)) == [("HPK256", "hyperpod.autoscaling")]


def test_deep_health_checks_and_training_plans_are_not_for_autoscaled_groups(write_config):
    report = run(write_config, ON, group(
        "max_count: 2", "deep_health_checks: [InstanceStress]",
        "training_plan_arn: arn:aws:sagemaker:us-east-1:111122223333:training-plan/plan-1"))
    assert codes(report) == [("HPK257", "hyperpod.instance_groups[2].deep_health_checks"),
                             ("HPK258", "hyperpod.instance_groups[2].training_plan_arn")]


def test_an_autoscaled_gpu_group_runs_no_deep_health_checks_by_default(write_config):
    from cdk_app.domain.deep_health_checks import group_deep_health_checks
    report = run(write_config, ON, group("max_count: 2"))
    assert group_deep_health_checks(report.loaded.config.hyperpod.instance_groups[2]) == ()


def test_fallback_types_follow_the_schema(write_config):
    limit = CLUSTER["InstanceRequirements"]["properties"]["InstanceTypes"]["maxItems"]
    types = ["ml.g5.24xlarge", "ml.g5.48xlarge", "ml.g5.16xlarge", "ml.g5.8xlarge", "ml.g5.4xlarge"]
    fits = [types[i % len(types)] for i in range(limit - 1)]
    report = run(write_config, group(f"fallback_instance_types: {fits + ['ml.g5.2xlarge']}"))
    assert ("HPK013", "hyperpod.instance_groups[2].fallback_instance_types") in codes(report)
    report = run(write_config, group(f"fallback_instance_types: {fits}"))
    assert "HPK013" not in [code for code, _ in codes(report)]
    assert ("HPK259", "hyperpod.instance_groups[2].fallback_instance_types[5]") in codes(report)


def test_an_unknown_fallback_type_is_located(write_config):
    report = run(write_config, group("fallback_instance_types: [ml.g5.24xlarge, ml.g9.huge]"))
    assert codes(report) == [("HPK201", "hyperpod.instance_groups[2].fallback_instance_types[1]")]


def test_the_first_type_cannot_also_be_a_fallback(write_config):
    assert codes(run(write_config, group("fallback_instance_types: [ml.g5.12xlarge]"))) == [
        ("HPK259", "hyperpod.instance_groups[2].fallback_instance_types[0]")]


def test_capacity_types_are_the_schemas(write_config):
    assert set(CLUSTER["ClusterCapacityRequirements"]["properties"]) == {"OnDemand", "Spot"}
    assert codes(run(write_config, group("capacity_type: Reserved"))) == [
        ("HPK014", "hyperpod.instance_groups[2].capacity_type")]


def test_min_count_is_at_most_count(write_config):
    described = CLUSTER["ClusterInstanceGroup"]["properties"]["MinInstanceCount"]["description"]
    assert "MinInstanceCount must be less than or equal to InstanceCount" in described
    assert codes(run(write_config, group("min_count: 2", count=2))) == []
    assert codes(run(write_config, group("min_count: 3", count=2))) == [
        ("HPK260", "hyperpod.instance_groups[2].min_count")]


def test_min_count_on_an_autoscaled_group_names_max_count(write_config):
    # Red team: "above its count 0" left the author wondering about max_count 4.
    report = run(write_config, ON, group("max_count: 4", "min_count: 2"))
    [finding] = [f for f in report.findings if f.code == "HPK260"]
    assert finding.message.startswith("min_count 2 of instance group 'auto' is above its count 0 (MinInstanceCount "
                                      "is held to InstanceCount, which an autoscaled group keeps at 0; Karpenter "
                                      "scales it up to max_count 4 without it)")


def test_min_count_on_an_autoscaled_group_does_nothing_and_says_so(write_config):
    # botocore: MinInstanceCount "only affects the initial transition to InService"; held to count, which is 0 here.
    described = SAGEMAKER.shape_for("ClusterInstanceGroupSpecification").members["MinInstanceCount"].documentation
    assert "only affects the initial transition to" in described
    report = run(write_config, ON, group("max_count: 4", "min_count: 0"))
    assert codes(report) == [("HPK263", "hyperpod.instance_groups[2].min_count")]
    assert codes(run(write_config, ON, group("max_count: 4"))) == []


PLAN = "training_plan_arn: arn:aws:sagemaker:us-east-1:111122223333:training-plan/plan-1"


def test_a_training_plan_on_a_flexible_or_spot_group_warns(write_config):
    # A plan's capacity blocks are each of one instance type (AWS's guide, Reserve training plans).
    assert codes(run(write_config, group(PLAN, "fallback_instance_types: [ml.g5.24xlarge]", count=1))) == [
        ("HPK261", "hyperpod.instance_groups[2].training_plan_arn")]
    assert codes(run(write_config, group(PLAN, "capacity_type: Spot", count=1))) == [
        ("HPK262", "hyperpod.instance_groups[2].capacity_type")]
    assert codes(run(write_config, group(PLAN, "capacity_type: OnDemand", count=1))) == []


def test_quotas_counting_on_a_flexible_group(write_config):
    # john's 3 g5 and smith's 1 fit the fixed 4; 2 more on john rely on the flexible group.
    more = ("      - instance_type: ml.g5.12xlarge\n        count: 3\n", "      - instance_type: ml.g5.12xlarge\n        count: 5\n")
    report = run(write_config, more, group("fallback_instance_types: [ml.g5.24xlarge]", count=2))
    assert codes(report) == [("HPK530", "teams[0].quota[0]"), ("HPK530", "teams[1].quota[0]")]
    assert "flexible group(s) auto" in report.findings[0].message
    row = next(r for r in report.capacity if r.instance_type == "ml.g5.12xlarge")
    assert (row.capacity.count, row.guaranteed.count) == (6, 4)
    # Beyond even the flexible group's instances, it is over capacity.
    over = ("      - instance_type: ml.g5.12xlarge\n        count: 3\n", "      - instance_type: ml.g5.12xlarge\n        count: 6\n")
    assert "HPK501" in [code for code, _ in codes(run(write_config, over, group(
        "fallback_instance_types: [ml.g5.24xlarge]", count=2)))]


def test_quotas_counting_on_spot(write_config):
    more = ("      - instance_type: ml.g5.12xlarge\n        count: 3\n", "      - instance_type: ml.g5.12xlarge\n        count: 4\n")
    report = run(write_config, more, group("capacity_type: Spot", count=1))
    assert codes(report) == [("HPK531", "teams[0].quota[0]"), ("HPK531", "teams[1].quota[0]")]
    row = next(r for r in report.capacity if r.instance_type == "ml.g5.12xlarge")
    assert (row.capacity.count, row.guaranteed.count, row.best_effort.count) == (5, 4, 1)
    # Spot capacity no quota needs is best-effort in the table, and no finding.
    assert codes(run(write_config, group("capacity_type: Spot", count=1))) == []


def test_autoscaled_on_demand_groups_make_up_for_spot_in_hpk531(write_config):
    # The fixed 4 g5 turned Spot and an autoscaled On-Demand group of 4: the quotas (4) fit the On-Demand groups,
    # whose NodePool counts no Spot node as given (cdk_app.domain.autoscaling), so nothing counts on Spot.
    spot = ("      count: 4\n", "      count: 4\n      capacity_type: Spot\n")
    assert codes(run(write_config, ON, spot, group("max_count: 4"))) == []
    # With only 3 to autoscale, one instance of the quotas counts on Spot again.
    assert [c for c, _ in codes(run(write_config, ON, spot, group("max_count: 3")))] == ["HPK531", "HPK531"]


def test_an_autoscaled_system_group_is_refused(write_config):
    # Round-3 red team (y1.yaml): the system group at count 0, max_count 2 got a NodePool limit of 0 (the pools are
    # sized to the teams' queues), so the training and MPI operators never had a node.
    system = ("hyperpod:\n", "hyperpod:\n  autoscaling: true\n  system_instance_group: sys\n")
    report = run(write_config, system, group("max_count: 2", "labels: {node-role: system}",
                                             "taints: [{key: CriticalAddonsOnly, value: \"true\", effect: NoSchedule}]",
                                             name="sys", itype="ml.m5.xlarge"))
    assert ("HPK264", "hyperpod.instance_groups[2].max_count") in codes(report)
    assert next(f for f in report.findings if f.code == "HPK264").severity.value == "error"


@pytest.mark.parametrize("lines", [("max_count: 2",), ("capacity_type: Spot",), ("fallback_instance_types: [ml.g5.24xlarge]",)])
def test_an_idle_best_effort_group_is_reported_once(write_config, lines):
    # A group of a type no team holds: nobody's job can use it (HPK503), whatever kind of capacity it is.
    report = run(write_config, ("hyperpod:\n", "hyperpod:\n  autoscaling: true\n") if "max_count: 2" in lines else
                 ("hyperpod:\n", "hyperpod:\n"), group(*lines, itype="ml.p4d.24xlarge", count=0 if "max_count: 2" in lines else 1))
    assert codes(report) == [("HPK503", "hyperpod.instance_groups[2].instance_type")]


def test_a_broken_max_count_holds_back_what_counts_autoscaled_groups(write_config):
    report = run(write_config, ON, group("max_count: 0"))
    assert codes(report) == [("HPK013", "hyperpod.instance_groups[2].max_count")]
    assert [(f.code, f.path) for f in report.held_back] == [("HPK256", "hyperpod.autoscaling")]


def test_the_shared_pool_holds_no_flexible_capacity(write_config):
    # A flexible group counts in full under each of its types; a pool holding what the teams leave of both would
    # hold twice the group. Its instances stay unallocated: idle sharing lends them, once, as its first type
    # (the base's 4 ml.g5.12xlarge are all reserved, so the 2 unreserved are the group's).
    report = run(write_config, ("teams:\n", "shared_pool: {name: shared}\nteams:\n"),
                 group("fallback_instance_types: [ml.g5.24xlarge]", count=2))
    assert codes(report) == []
    rows = {r.instance_type: r for r in report.capacity}
    assert rows["ml.g5.24xlarge"].shared_pool.is_zero() and rows["ml.g5.12xlarge"].shared_pool.is_zero()
    assert (rows["ml.g5.12xlarge"].unreserved.count, rows["ml.g5.24xlarge"].unreserved.count) == (2, 0)


def test_quotas_needing_a_flexible_group_twice(write_config):
    # The flexible group of 2 could be 2 g5.12xlarge or 2 g5.24xlarge: john's 2 more g5.12xlarge and 1 g5.24xlarge
    # each fit it alone, not together.
    more = ("      - instance_type: ml.g5.12xlarge\n        count: 3\n",
            "      - instance_type: ml.g5.12xlarge\n        count: 5\n      - instance_type: ml.g5.24xlarge\n        count: 1\n")
    report = run(write_config, more, group("fallback_instance_types: [ml.g5.24xlarge]", count=2))
    assert ("HPK532", "hyperpod.instance_groups[2].fallback_instance_types") in codes(report)
    finding = next(f for f in report.findings if f.code == "HPK532")
    assert "need 3 instances from flexible group(s) auto (ml.g5.12xlarge: 2, ml.g5.24xlarge: 1)" in finding.message
    assert "can give 2 of them at once" in finding.message


def test_every_type_of_a_flexible_group_takes_its_settings(write_config):
    # A flexible group may come up as any of its types: a CPU fallback cannot run deep health checks, a Graviton
    # one cannot run two threads per core.
    report = run(write_config, group("fallback_instance_types: [ml.m5.2xlarge]", "deep_health_checks: [InstanceStress]",
                                     count=1))
    assert ("HPK204", "hyperpod.instance_groups[2].deep_health_checks") in codes(report)
    assert "ml.m5.2xlarge has neither" in next(f.message for f in report.findings if f.code == "HPK204")
    report = run(write_config, group("fallback_instance_types: [ml.c6g.xlarge]", "threads_per_core: 2",
                                     itype="ml.m5.xlarge", count=1))
    assert ("HPK212", "hyperpod.instance_groups[2].threads_per_core") in codes(report)


def test_an_autoscaled_partitioned_group_says_its_node_pool_is_not_sized_to_partitions(write_config):
    # Round-4 red team: an autoscaled all-1g.10gb p5 group held a team's 112 partitions, and the p5 pool - sized in
    # whole GPUs and memory, the fixed whole-GPU node's unused memory taken off - allowed one node of the two.
    report = run(write_config, ON, group("max_count: 2", "labels: {nvidia.com/mig.config: all-1g.10gb}",
                                         itype="ml.p5.48xlarge"))
    [finding] = [f for f in report.findings if f.code == "HPK265"]
    assert finding.path == "hyperpod.instance_groups[2].labels.nvidia.com/mig.config"
    assert finding.severity.value == "warning"
    assert "give the partitions a fixed group" in finding.hint
    unpartitioned = run(write_config, ON, group("max_count: 2", itype="ml.p5.48xlarge"))
    assert "HPK265" not in [f.code for f in unpartitioned.findings]
