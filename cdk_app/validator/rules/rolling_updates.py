"""Rolling AMI updates of instance groups (scheduled_update, auto_patch): batch sizes, schedules, and whether a
batch leaves the teams' quotas covered (the arithmetic is cdk_app.domain.rolling_updates')."""

from __future__ import annotations

from datetime import timedelta

from cdk_app.config.model import BatchSize, InstanceGroup, KitConfig, RollingDeployment
from cdk_app.config.yaml_source import PathKey
from cdk_app.domain.capacity import describe, group_maximum
from cdk_app.domain.cron_schedules import Cron, first_overlap, first_start, last_start_of_year, same_starts
from cdk_app.domain.rolling_updates import (
    RollingBatch,
    Totals,
    batch_instances,
    batch_text,
    first_start_together,
    rolling_batches,
    rolling_totals,
    schedule_of,
)
from cdk_app.findings import format_path
from cdk_app.validator.reporter import Reporter

# WhenAllIdle without a deployment: the whole group at once.
_WHOLE_GROUP = BatchSize.model_construct(type="CAPACITY_PERCENTAGE", value=100)  # built, not validated: validate stays light
# The batch fields of a rolling deployment (botocore's RollingDeploymentPolicy).
_BATCHES = ("maximum_batch_size", "rollback_maximum_batch_size")


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
    totals = rolling_totals(config)
    # A schedule that never starts an update (HPK242, HPK244) rolls no batch: its batches are not checked.
    fires = _check_schedules(config, report)
    for i, group in enumerate(config.hyperpod.instance_groups):
        for section, deployment in _deployments(group):
            if section == "scheduled_update" and group.name not in fires:
                continue
            for field in _BATCHES:
                # What the batch is, for messages: an update's, a patch's or a rollback's.
                what = "rollback" if field == "rollback_maximum_batch_size" else (
                    "patch" if section == "auto_patch" else "update")
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
                # Groups whose schedules start together update together; a rollback or a patch is the group's own.
                scheduled = report.now if (section, field) == ("scheduled_update", "maximum_batch_size") else None
                batch = _shortest(rolling_batches(config, group, size, scheduled, totals))
                if batch is not None:
                    _report_short(report, path, batch, size, what, group.instance_type)
        _check_patch_all_idle(config, report, i, group, totals)


def _shortest(batches: list[RollingBatch]) -> RollingBatch | None:
    """The batch to report: the first type it leaves short on its own (the clearer arithmetic), else the first
    that leaves the types short together (the same for every type of a flexible group)."""
    return (next((b for b in batches if b.short or b.short_partitions), None)
            or next((b for b in batches if b.short_jointly), None))


def _report_short(report: Reporter, path: PathKey, batch: RollingBatch, size: BatchSize, what: str,
                  group_type: str) -> None:
    others = (f" (and {batch.alongside} more of the type's other groups whose updates start with it)"
              if batch.alongside else "")
    article = "an" if what[0] in "aeiou" else "a"
    if batch.short_jointly:
        _report_jointly_short(report, path, batch, size, f"{article} {what} batch")
        return
    if batch.short:
        # Instances when they are short, else the dimension that is (a quota written in vCPU or memory).
        dim = "count" if "count" in batch.short else batch.short[0]
        given, left, held = (describe(getattr(amounts, dim), dim)
                             for amounts in (batch.capacity, batch.during, batch.reserved))
    else:
        profile = batch.short_partitions[0]
        given, held = batch.partitions[profile], batch.partitions_reserved[profile]
        given, left, held = (f"{n} {profile} partitions" for n in (given, given - batch.partitions_out.get(profile, 0), held))
    # A flexible group's batch is checked as each of its types: say which one is short.
    which = f" (as {batch.instance_type}, one of the types it may run as)" if batch.instance_type != group_type else ""
    arithmetic = (f"{article} {what} batch of group '{batch.group}'{which} takes "
                  f"{batch_text(size, batch.count)}{others} of {batch.instance_type} out: of the type's "
                  f"{given} it leaves {left} while the enabled teams reserve {held}")
    if batch.headroom >= 1:
        report.error("HPK520", path + ("value",), f"{arithmetic}: their quotas are not covered while it updates",
                     f"{_smaller_batch(path, batch.headroom, batch.alongside)}, or lower the quotas on "
                     f"{batch.instance_type}")
        return
    unit = "one instance" if batch.short else f"one node's {batch.short_partitions[0]} partitions"
    report.warning("HPK521", path, f"{arithmetic}: the teams leave less than {unit} unreserved, so any "
                                   "batch leaves their quotas uncovered while it updates",
                   f"leave at least {batch.batch + batch.alongside} {batch.instance_type} instance(s) unreserved (lower the quotas "
                   "or add instances), or let the teams know their guarantee lapses during the update")


def _smaller_batch(path: PathKey, headroom: int, alongside: int) -> str:
    """How to make the batch fit: at most `headroom` instances alone, less the `alongside` instances of the
    groups whose updates start with it."""
    def take(n: int) -> str:
        return f"take at most {n} instance(s) at a time ({format_path(path[-1:])}: {{type: INSTANCE_COUNT, value: {n}}})"
    fits = headroom - alongside
    if not alongside:
        return take(headroom)
    if fits >= 1:
        return f"{take(fits)}, or give the group its own schedule (alone it may take {headroom})"
    return f"give the group its own schedule and {take(headroom)}"


def _report_jointly_short(report: Reporter, path: PathKey, batch: RollingBatch, size: BatchSize, what: str) -> None:
    """Every type is covered on its own while the batch is out, but the flexible groups cannot be every type at
    once (capacity.GroupsCover, HPK532's arithmetic)."""
    cover = batch.cover
    others = (f" (and {batch.together} more of the groups whose updates start with it)" if batch.together else "")
    arithmetic = (f"{what} of group '{batch.group}' takes {batch_text(size, batch.count)}{others} out: the enabled "
                  f"teams' quotas then need {sum(cover.need.values())} instances from flexible group(s) "
                  f"{', '.join(cover.groups) or '(none)'} ({cover.needs_text()}) beyond the single-type groups, "
                  f"but those groups can give {cover.given} of them at once (a flexible group is one type at a time)")
    if batch.headroom >= 1:
        report.error("HPK520", path + ("value",), f"{arithmetic}: their quotas are not covered while it updates",
                     f"{_smaller_batch(path, batch.headroom, batch.together)}, or lower the quotas")
        return
    report.warning("HPK521", path, f"{arithmetic}: no batch of the group leaves their quotas covered",
                   "add single-type instances for those types or lower the quotas, or let the teams know their "
                   "guarantee lapses during the update")


def _check_patch_all_idle(config: KitConfig, report: Reporter, i: int, group: InstanceGroup, totals: Totals) -> None:
    """AutoPatchConfig WhenAllIdle without a rolling deployment cordons every instance of the group and patches
    them all once all are idle (the config's own words, AutoPatch.patching_strategy): the whole group is out at
    once. Where the teams' quotas need its instances, they are not covered until the patch is done."""
    patch = group.auto_patch
    if patch is None or patch.patching_strategy != "WhenAllIdle" or patch.deployment is not None:
        return
    batch = _shortest(rolling_batches(config, group, _WHOLE_GROUP, None, totals))
    if batch is None:
        return
    report.warning("HPK522", ("hyperpod", "instance_groups", i, "auto_patch", "patching_strategy"),
                   f"WhenAllIdle without a deployment cordons all {batch.count} instance(s) of group '{group.name}' "
                   "when a patch comes out and patches them once all are idle, but the enabled teams' quotas need "
                   f"some of them ({batch.instance_type}): meanwhile Kueue still admits jobs within those quotas and "
                   "their pods stay Pending on the cordoned nodes, until every instance has gone idle and is patched",
                   "give auto_patch a deployment with batches the quotas leave room for, "
                   "use WhenIdle, or leave the group's instances unreserved")


def _check_schedules(config: KitConfig, report: Reporter) -> set[str]:
    """The groups whose scheduled update may start (a schedule the kit cannot read included); findings on the
    schedules. AWS (HyperPod AMI updates): "if you're creating multiple schedules, we recommend that you have a time
    buffer in between schedules. If schedules overlap, updates might fail." Schedules compare by their dates from
    today on (cdk_app.domain.cron_schedules): two that ever start at the same minute overlap for certain (HPK241);
    one that starts while another's roll may still run - its batches times the wait between them - may (HPK243).
    The kit does not guess how long a batch's own update takes, so that is the least a roll lasts."""
    read: list[tuple[int, InstanceGroup, Cron | str]] = []
    for i, group in enumerate(config.hyperpod.instance_groups):
        schedule = schedule_of(group)
        if schedule is None:
            continue
        path: PathKey = ("hyperpod", "instance_groups", i, "scheduled_update", "schedule_expression")
        if isinstance(schedule, Cron) and not _fires(report, path, group.scheduled_update.schedule_expression, schedule):
            continue
        read.append((i, group, schedule))
    apart = _report_together(read, report)
    _check_overlaps([(i, group, cron) for i, group, cron in read if isinstance(cron, Cron)], apart, report)
    return {group.name for _, group, _ in read}


def _report_together(read: list[tuple[int, InstanceGroup, Cron | str]], report: Reporter) -> set[tuple[int, int]]:
    """HPK241 on each group whose schedule starts with an earlier group's (the first such); the pairs that never
    start together, which may still overlap."""
    apart = set()
    for k, (j, group, schedule) in enumerate(read):
        reported = False
        for i, earlier, theirs in read[:k]:
            when = first_start_together(theirs, schedule, report.now)
            if when is None:
                apart.add((i, j))
                continue
            if reported:
                continue
            reported = True
            said, expression = earlier.scheduled_update.schedule_expression, group.scheduled_update.schedule_expression
            if isinstance(when, str) or same_starts(theirs, schedule, report.now):
                at = expression if said == expression else f"{said} and {expression} (the same schedule)"
            else:
                at = f"{when:%Y-%m-%d %H:%M} UTC ({said} and {expression} meet then)"
            report.warning("HPK241", ("hyperpod", "instance_groups", j, "scheduled_update", "schedule_expression"),
                           f"groups '{earlier.name}' and '{group.name}' both start an AMI update at {at}: AWS warns "
                           "that overlapping schedules may make updates fail",
                           "give each group its own time, with a buffer between them")
    return apart


# A first start further away than this is worth saying: until then the group keeps its AMI.
_FAR = timedelta(days=366)


def _fires(report: Reporter, path: PathKey, expression: str, cron: Cron) -> bool:
    """Whether the schedule starts an update from today on; a located finding when it does not, or not for
    more than a year."""
    if cron.both_days:
        which = "neither day-of-month nor day-of-week" if cron.day_of_week == "?" else "both day-of-month and day-of-week"
        report.error("HPK244", path, f"{expression} gives {which}: AWS cron takes one of them and ? in the other",
                     "e.g. cron(0 4 ? * SUN *) for Sundays at 04:00 UTC, or cron(0 4 1 * ? *) for the 1st of each month")
        return False
    now = report.now
    first = first_start(cron, now)
    if first is not None:
        if first - now > _FAR:
            report.warning("HPK245", path, f"{expression} first starts an update on {first:%Y-%m-%d %H:%M} UTC, "
                                           f"{(first - now).days // 365} year(s) from now: until then the group's AMI "
                                           "is not updated on schedule",
                           "for regular updates give a date every month has, e.g. cron(0 4 ? * 1#1 *) for the first "
                           "Sunday of each month")
        return True
    if isinstance(cron.year, int) and cron.year < now.year:
        why = f"its year {cron.year} has passed"
    elif isinstance(cron.year, int) and (last := last_start_of_year(cron, cron.year)) is not None:
        why = f"its dates in {cron.year} have passed (the last was {last:%Y-%m-%d %H:%M} UTC)"
    elif isinstance(cron.year, int):
        why = f"no date of {cron.year} matches it"
    else:
        why = "no date matches it (e.g. day 31 of a month of 30 days, or 30 February)"
    report.error("HPK242", path, f"{expression} never starts an update: {why}",
                 "give a day every month it names has, and a year to come or *")
    return False


def _check_overlaps(timed: list[tuple[int, InstanceGroup, Cron]], apart: set[tuple[int, int]], report: Reporter) -> None:
    for i, group, cron in timed:
        deployment = group.scheduled_update.deployment
        wait = deployment.wait_interval_seconds
        size = group_maximum(group)
        per_batch = batch_instances(deployment.maximum_batch_size, size)
        if not wait or not per_batch:
            continue  # no wait given (SageMaker's default is not documented) or nothing to roll
        batches = -(-size // per_batch)
        window = timedelta(seconds=batches * wait)
        for j, other, other_cron in timed:
            if (min(i, j), max(i, j)) not in apart:
                continue  # the group itself, or one that starts with it (HPK241)
            hit = first_overlap(cron, other_cron, report.now, window)
            if hit is not None:
                report.warning("HPK243", ("hyperpod", "instance_groups", j, "scheduled_update", "schedule_expression"),
                               f"group '{other.name}' starts its AMI update at {other.scheduled_update.schedule_expression}"
                               f" (e.g. {hit:%Y-%m-%d %H:%M} UTC) while the update of group '{group.name}', started at "
                               f"{group.scheduled_update.schedule_expression}, may still run: {batches} batch(es) of "
                               f"{per_batch} with {wait} s between them take at least {_duration(window)}; AWS warns "
                               "that overlapping schedules may make updates fail",
                               f"start '{other.name}' at least {_duration(window)} after '{group.name}' (more, for the "
                               "updates themselves), or give the two groups days of their own")


def _duration(span: timedelta) -> str:
    """2400 s -> "40 min", 3690 s -> "1 h 1 min 30 s"."""
    hours, rest = divmod(int(span.total_seconds()), 3600)
    minutes, seconds = divmod(rest, 60)
    return " ".join(f"{n} {unit}" for n, unit in ((hours, "h"), (minutes, "min"), (seconds, "s")) if n) or "0 s"
