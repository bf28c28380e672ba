"""How many instances a rolling batch takes out of a group, and what the group's instance type keeps for the
teams' quotas meanwhile.

Amounts are worked out by hand from the public EC2 figures, not read from the kit's catalogue: ml.g5.12xlarge
has 4 GPUs, 48 vCPU and 192 GiB. CapacitySizeConfig (cfn-lint's schema, botocore) takes a Type of INSTANCE_COUNT
or CAPACITY_PERCENTAGE and a Value of at least 1; the rounding of a percent is the kit's documented choice
(rounded up: the larger batch SageMaker could take)."""

from __future__ import annotations

from datetime import datetime

import pytest

from cdk_app.config.model import BatchSize, KitConfig
from cdk_app.domain.capacity import Resources
from cdk_app.domain.cron_schedules import parse_cron
from cdk_app.domain.resource_schemas import resource_schema
from cdk_app.domain.rolling_updates import (
    batch_instances,
    batch_text,
    first_start_together,
    rolling_batch,
    rolling_batches,
    scheduled_alongside,
)


def size(kind: str, value: int) -> BatchSize:
    return BatchSize(type=kind, value=value)


def test_the_batch_types_are_the_schemas():
    schema = resource_schema("AWS::SageMaker::Cluster")["definitions"]["CapacitySizeConfig"]["properties"]
    assert set(schema["Type"]["pattern"].split("|")) == set(BatchSize.model_fields["type"].annotation.__args__)
    assert schema["Value"]["minimum"] == 1 and "maximum" not in schema["Value"]


@pytest.mark.parametrize(("kind", "value", "count", "taken"), [
    ("INSTANCE_COUNT", 2, 6, 2),
    ("INSTANCE_COUNT", 9, 6, 6),          # never more than the group
    ("CAPACITY_PERCENTAGE", 25, 6, 2),    # 1.5 rounded up
    ("CAPACITY_PERCENTAGE", 50, 6, 3),    # exact
    ("CAPACITY_PERCENTAGE", 1, 6, 1),     # 0.06 rounded up: at least one instance
    ("CAPACITY_PERCENTAGE", 34, 3, 2),    # 1.02 rounded up
    ("CAPACITY_PERCENTAGE", 100, 6, 6),
    ("CAPACITY_PERCENTAGE", 10, 0, 0),    # an empty group has nothing to update
    ("INSTANCE_COUNT", 1, 0, 0),
])
def test_batch_instances(kind, value, count, taken):
    assert batch_instances(size(kind, value), count) == taken


def test_batch_text_says_how_a_percent_was_counted():
    assert batch_text(size("CAPACITY_PERCENTAGE", 25), 6) == "2 instances (25 % of 6, rounded up)"
    assert batch_text(size("INSTANCE_COUNT", 1), 6) == "1 instance"
    assert batch_text(size("INSTANCE_COUNT", 8), 6) == "6 instances (the whole group: it has 6)"


def config(groups: list[tuple[str, int]], quotas: list[dict], disabled: tuple[str, ...] = ()) -> KitConfig:
    return KitConfig.model_validate({
        "environment": "dev", "account": "111122223333", "region": "us-east-1",
        "availability_zone_ids": ["use1-az4"],
        "hyperpod": {"instance_groups": [{"name": name, "instance_type": "ml.g5.12xlarge", "count": count}
                                         for name, count in groups]},
        "teams": [{"name": f"t{i}", "quota": [{"instance_type": "ml.g5.12xlarge", **quota}],
                   "enabled": f"t{i}" not in disabled} for i, quota in enumerate(quotas)]})


def test_a_batch_within_the_unreserved_instances_covers_the_quotas():
    c = config([("a", 4)], [{"count": 2}])
    ok, over = (rolling_batch(c, c.hyperpod.instance_groups[0], size("INSTANCE_COUNT", n)) for n in (2, 3))
    assert ok.headroom == 2 and ok.short == [] and ok.during == Resources(2, 8, 96, 384)
    assert over.short == ["count", "accelerators", "vcpu", "memory_gib"]


def test_the_type_counts_every_group_of_it():
    # Two groups of two g5: the teams' three instances are covered while one instance of either group updates.
    c = config([("a", 2), ("b", 2)], [{"count": 3}])
    assert rolling_batch(c, c.hyperpod.instance_groups[1], size("INSTANCE_COUNT", 1)).short == []
    assert rolling_batch(c, c.hyperpod.instance_groups[1], size("INSTANCE_COUNT", 2)).short == ["count", "accelerators",
                                                                                               "vcpu", "memory_gib"]


def test_a_quota_in_vcpu_limits_the_batch_where_instances_look_free():
    # 8 GPUs (2 instances) and 40 vCPU without GPUs: SageMaker gives the vCPU entry no accelerators, so the
    # instances look half free, but 56 of 192 vCPU are left - one instance's 48, not two.
    c = config([("a", 4)], [{"accelerators": 8}, {"vcpu": 40}])
    batch = rolling_batch(c, c.hyperpod.instance_groups[0], size("INSTANCE_COUNT", 2))
    assert batch.reserved.count == 2 and batch.headroom == 1
    assert batch.short == ["vcpu", "memory_gib"]


def test_a_disabled_team_is_no_quota_to_cover():
    c = config([("a", 4)], [{"count": 2}, {"count": 2}], disabled=("t1",))
    assert rolling_batch(c, c.hyperpod.instance_groups[0], size("INSTANCE_COUNT", 2)).short == []


def test_quotas_over_capacity_are_left_to_the_capacity_rule():
    c = config([("a", 2)], [{"count": 3}])
    assert rolling_batch(c, c.hyperpod.instance_groups[0], size("INSTANCE_COUNT", 1)) is None


NOW = datetime(2026, 11, 27, 21, 30)


@pytest.mark.parametrize(("a", "b", "together"), [
    (parse_cron("cron(0 4 ? * SUN *)"), parse_cron("cron(0 4 ? * 1#1 *)"), datetime(2026, 12, 6, 4, 0)),
    (parse_cron("cron(0 4 ? * SUN *)"), parse_cron("cron(0 4 ? * MON *)"), None),
    # A schedule the kit cannot read (an empty minute, which the schema's pattern allows) starts with the same text.
    ("cron( 4 ? * SUN *)", "cron( 4 ? * SUN *)", "cron( 4 ? * SUN *)"),
    ("cron( 4 ? * SUN *)", parse_cron("cron(0 4 ? * SUN *)"), None),
])
def test_schedules_start_together_by_their_dates_or_the_same_unread_text(a, b, together):
    assert first_start_together(a, b, NOW) == first_start_together(b, a, NOW) == together
G5, G5_24, P5 = "ml.g5.12xlarge", "ml.g5.24xlarge", "ml.p5.48xlarge"
SUNDAY = {"schedule_expression": "cron(0 4 ? * SUN *)",
          "deployment": {"maximum_batch_size": {"type": "INSTANCE_COUNT", "value": 1}}}


def kit(groups: list[dict], quota: list[dict]) -> KitConfig:
    return KitConfig.model_validate({
        "environment": "dev", "account": "111122223333", "region": "us-east-1",
        "availability_zone_ids": ["use1-az4"], "hyperpod": {"instance_groups": groups},
        "teams": [{"name": "t0", "quota": quota}]})


def test_a_flexible_groups_batch_is_checked_as_each_type_it_may_run_as():
    # The group may be 2 x g5.24xlarge when it rolls: a batch of 1 leaves 1 of the 2 instances the quota needs.
    c = kit([{"name": "flex", "instance_type": G5, "fallback_instance_types": [G5_24], "count": 2}],
            [{"instance_type": G5_24, "count": 2}])
    batches = rolling_batches(c, c.hyperpod.instance_groups[0], size("INSTANCE_COUNT", 1), scheduled=None)
    assert [(b.instance_type, b.short) for b in batches] == [
        (G5, []), (G5_24, ["count", "accelerators", "vcpu", "memory_gib"])]


def test_a_group_that_may_run_as_the_type_rolls_alongside_its_groups():
    c = kit([{"name": "a", "instance_type": G5_24, "count": 2, "scheduled_update": SUNDAY},
             {"name": "flex", "instance_type": G5, "fallback_instance_types": [G5_24], "count": 1,
              "scheduled_update": SUNDAY}],
            [{"instance_type": G5_24, "count": 2}])
    a, flex = c.hyperpod.instance_groups
    assert scheduled_alongside(c.hyperpod.instance_groups, a, NOW) == ((flex, 1),)
    # 3 g5.24xlarge at most (flex counted as one), 2 out together: 1 left for a quota of 2.
    [batch] = rolling_batches(c, a, size("INSTANCE_COUNT", 1), scheduled=NOW)
    assert (batch.alongside, batch.during.count, batch.short[0]) == (1, 1, "count")


def test_a_partitioned_groups_batch_takes_its_partitions_not_whole_gpus():
    # p5.48xlarge: 8 H100 GPUs; all-1g.10gb gives 7 x 1g.10gb per GPU (NVIDIA's MIG profiles), so 56 per node.
    # The partitioned node out leaves no partition for a quota of 50, though the whole-GPU node's instance is free.
    groups = [{"name": "mig", "instance_type": P5, "count": 1, "labels": {"nvidia.com/mig.config": "all-1g.10gb"}},
              {"name": "whole", "instance_type": P5, "count": 1}]
    c = kit(groups, [{"instance_type": P5, "accelerator_partition": {"type": "mig-1g.10gb", "count": 50}}])
    [batch] = rolling_batches(c, c.hyperpod.instance_groups[0], size("INSTANCE_COUNT", 1), scheduled=None)
    assert batch.partitions_out == {"mig-1g.10gb": 56} and batch.out.accelerators == 0
    assert batch.short == [] and batch.short_partitions == ["mig-1g.10gb"]
    assert batch.headroom == 0
    # A quota of the whole node's 8 GPUs: the partitioned node's batch takes none of them.
    c = kit(groups, [{"instance_type": P5, "accelerators": 8}])
    [batch] = rolling_batches(c, c.hyperpod.instance_groups[0], size("INSTANCE_COUNT", 1), scheduled=None)
    assert (batch.during.accelerators, batch.short, batch.short_partitions) == (8, [], [])


def test_a_partitioned_batch_within_the_unreserved_partitions_covers_the_quotas():
    c = kit([{"name": "mig", "instance_type": P5, "count": 2, "labels": {"nvidia.com/mig.config": "all-1g.10gb"}}],
            [{"instance_type": P5, "accelerator_partition": {"type": "mig-1g.10gb", "count": 56}}])
    [batch] = rolling_batches(c, c.hyperpod.instance_groups[0], size("INSTANCE_COUNT", 1), scheduled=None)
    assert (batch.short, batch.short_partitions, batch.headroom) == ([], [], 1)


# --- Every type's quotas at once (capacity.GroupsCover, as HPK532 counts): the red team's third round, F4 ------------


def test_a_batch_leaves_the_flexible_group_one_type_at_a_time():
    # r1.yaml: gpu-workers 4 x g5.12xlarge rolls 1 at a time; flex is 2 x g5.24xlarge or g5.12xlarge; john
    # reserves 4 g5.12xlarge, smith 2 g5.24xlarge. With one gpu-workers instance out, john needs 1 of flex and
    # smith both: 3 of 2. The type's own count (6 g5.12xlarge, flex under both types) hid it.
    from support.paths import SUPPORT

    from cdk_app.config.loader import load_config
    c = load_config(SUPPORT / "adversarial" / "issue31" / "r3_r1.yaml").config
    [batch] = rolling_batches(c, c.hyperpod.instance_groups[0], size("INSTANCE_COUNT", 1), scheduled=None)
    assert (batch.short, batch.short_partitions, batch.during.count) == ([], [], 5)
    assert batch.short_jointly and batch.headroom == 0
    assert (batch.cover.need, batch.cover.given) == ({G5: 1, G5_24: 2}, 2)


def test_a_group_of_another_type_that_rolls_with_it_counts_too():
    # a (2 g5.12xlarge) and b (2 g5.24xlarge) roll together; flex (1, either type) covers one of them. Each type
    # alone keeps 2 of its 3 for a quota of 2; together each needs flex.
    c = kit([{"name": "a", "instance_type": G5, "count": 2, "scheduled_update": SUNDAY},
             {"name": "b", "instance_type": G5_24, "count": 2, "scheduled_update": SUNDAY},
             {"name": "flex", "instance_type": G5, "fallback_instance_types": [G5_24], "count": 1}],
            [{"instance_type": G5, "count": 2}, {"instance_type": G5_24, "count": 2}])
    a, b, _ = c.hyperpod.instance_groups
    assert scheduled_alongside(c.hyperpod.instance_groups, a, NOW) == ((b, 1),)
    [batch] = rolling_batches(c, a, size("INSTANCE_COUNT", 1), scheduled=NOW)
    assert (batch.short, batch.alongside, batch.together) == ([], 0, 1)
    assert batch.short_jointly and batch.cover.need == {G5: 1, G5_24: 1} and batch.cover.given == 1
    # Alone (a rollback runs alone), a's batch leaves flex for it.
    [alone] = rolling_batches(c, a, size("INSTANCE_COUNT", 1), scheduled=None)
    assert not alone.short_jointly and alone.headroom == 1


def test_the_headroom_is_the_largest_batch_every_type_survives_at_once():
    # a: 4 g5.12xlarge; flex: 2 of either type; quotas 4 g5.12xlarge and 1 g5.24xlarge. flex gives the
    # g5.24xlarge and one more: a may lose 1 at a time, not 2.
    c = kit([{"name": "a", "instance_type": G5, "count": 4},
             {"name": "flex", "instance_type": G5_24, "fallback_instance_types": [G5], "count": 2}],
            [{"instance_type": G5, "count": 4}, {"instance_type": G5_24, "count": 1}])
    one, two = (rolling_batches(c, c.hyperpod.instance_groups[0], size("INSTANCE_COUNT", n), scheduled=None)[0]
                for n in (1, 2))
    assert not one.short_jointly and two.short_jointly
    assert one.headroom == two.headroom == 1
