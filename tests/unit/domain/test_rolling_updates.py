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
from cdk_app.domain.rolling_updates import batch_instances, batch_text, first_start_together, rolling_batch


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
