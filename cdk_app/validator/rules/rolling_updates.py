"""Rolling AMI updates of instance groups (scheduled_update, auto_patch): batch sizes, schedules, and whether a
batch leaves the teams' quotas covered (the arithmetic is cdk_app.domain.rolling_updates')."""

from __future__ import annotations

from cdk_app.config.model import BatchSize, InstanceGroup, KitConfig, RollingDeployment
from cdk_app.config.yaml_source import PathKey
from cdk_app.domain.capacity import describe, team_groups
from cdk_app.domain.rolling_updates import RollingBatch, batch_text, rolling_batch, scheduled_alongside
from cdk_app.findings import format_path
from cdk_app.validator.reporter import Reporter

# What a batch is, in the words of each field (botocore's RollingDeploymentPolicy).
_BATCHES = (("maximum_batch_size", "update"), ("rollback_maximum_batch_size", "rollback"))


def _deployments(group: InstanceGroup) -> list[tuple[str, RollingDeployment]]:
    """The rolling deployments a group has: its scheduled update's (always, a default one included) and its
    automatic patches' when given."""
    found = []
    if group.scheduled_update is not None:
        found.append(("scheduled_update", group.scheduled_update.deployment))
    if group.auto_patch is not None and group.auto_patch.deployment is not None:
        found.append(("auto_patch", group.auto_patch.deployment))
    return found


def check_rolling_updates(config: KitConfig, report: Reporter) -> None:
    for i, group in enumerate(config.hyperpod.instance_groups):
        for section, deployment in _deployments(group):
            for field, what in _BATCHES:
                size = getattr(deployment, field)
                if size is None:
                    continue
                path: PathKey = ("hyperpod", "instance_groups", i, section, "deployment", field)
                if size.type == "CAPACITY_PERCENTAGE" and size.value > 100:
                    # CapacitySizeConfig.Value has a minimum of 1 and no maximum in the schema or botocore;
                    # a percent of the group's instances above 100 names no batch.
                    report.error("HPK240", path + ("value",), f"a batch of {size.value} % of the group's instances",
                                 "a percent is 1-100 (100 updates the whole group at once); for a number of "
                                 "instances use type: INSTANCE_COUNT")
                    continue
                # Groups of the type on the same schedule update together; a rollback or a patch is the group's own.
                together = (scheduled_alongside(team_groups(config), group)
                            if (section, field) == ("scheduled_update", "maximum_batch_size") else 0)
                batch = rolling_batch(config, group, size, together)
                if batch is not None and batch.short:
                    _report_short(report, path, batch, size, what)
    _check_schedules(config, report)


def _report_short(report: Reporter, path: PathKey, batch: RollingBatch, size: BatchSize, what: str) -> None:
    # Instances when they are short, else the dimension that is (a quota written in vCPU or memory).
    dim = "count" if "count" in batch.short else batch.short[0]
    others = (f" (and {batch.alongside} more of the type's other groups on the same schedule)"
              if batch.alongside else "")
    arithmetic = (f"a{'n' if what == 'update' else ''} {what} batch of group '{batch.group}' takes "
                  f"{batch_text(size, batch.count)}{others} of {batch.instance_type} out: of the type's "
                  f"{describe(getattr(batch.capacity, dim), dim)} it leaves {describe(getattr(batch.during, dim), dim)} "
                  f"while the enabled teams reserve {describe(getattr(batch.reserved, dim), dim)}")
    if batch.headroom >= 1:
        def take(n: int) -> str:
            return f"take at most {n} instance(s) at a time ({format_path(path[-1:])}: {{type: INSTANCE_COUNT, value: {n}}})"
        fits = batch.headroom - batch.alongside
        if not batch.alongside:
            fix = take(batch.headroom)
        elif fits >= 1:
            fix = f"{take(fits)}, or give the group its own schedule (alone it may take {batch.headroom})"
        else:
            fix = f"give the group its own schedule and {take(batch.headroom)}"
        report.error("HPK520", path + ("value",), f"{arithmetic}: their quotas are not covered while it updates",
                     f"{fix}, or lower the quotas on {batch.instance_type}")
        return
    report.warning("HPK521", path, f"{arithmetic}: the teams leave less than one instance unreserved, so any "
                                   "batch leaves their quotas uncovered while it updates",
                   f"leave at least {batch.batch + batch.alongside} {batch.instance_type} instance(s) unreserved (lower the quotas "
                   "or add instances), or let the teams know their guarantee lapses during the update")


def _check_schedules(config: KitConfig, report: Reporter) -> None:
    """AWS (HyperPod AMI updates): "if you're creating multiple schedules, we recommend that you have a time
    buffer in between schedules. If schedules overlap, updates might fail." Only the same expression is
    certain to overlap; the kit does not guess how long an update takes."""
    first: dict[str, str] = {}
    for i, group in enumerate(config.hyperpod.instance_groups):
        if group.scheduled_update is None:
            continue
        expression = group.scheduled_update.schedule_expression
        if expression in first:
            report.warning("HPK241", ("hyperpod", "instance_groups", i, "scheduled_update", "schedule_expression"),
                           f"groups '{first[expression]}' and '{group.name}' both update their AMI at {expression}: "
                           "AWS warns that overlapping schedules may make updates fail",
                           "give each group its own time, with a buffer between them")
        else:
            first[expression] = group.name
