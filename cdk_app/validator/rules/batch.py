"""Rules for the `batch:` section (AWS Batch for SageMaker Training jobs), codes HPK701-HPK730.

Facts from botocore's batch model and cfn-lint's AWS::Batch::* schemas: a FIFO queue can never get a
scheduling policy and a policy can be replaced but not removed; a policy's type (fair share or quota share)
cannot change; share identifiers are at most 255 letters and digits; a queue holds at most 500 active share
identifiers; quota shares count instances of instance-type capacity units.
"""

from __future__ import annotations

import difflib
import re
from fractions import Fraction
from itertools import accumulate
from typing import TYPE_CHECKING, Any

from cdk_app.config.batch_model import NUM_INSTANCES, Batch, BatchTeam, ServiceEnvironment
from cdk_app.config.model import KitConfig
from cdk_app.config.yaml_source import PathKey
from cdk_app.domain.batch_shares import (
    DEFAULT_WEIGHT_FACTOR,
    environment_named,
    environment_quota_entries,
    fair_share_fractions,
    fair_share_split_differs,
    percent_text,
    queue_named,
    quota_share_name,
    quota_share_teams,
    roles_of,
    team_queues,
    teams_on,
    training_instance_types,
    weight_factors_for,
)
from cdk_app.domain.capacity import Resources, describe
from cdk_app.domain.regions import cloudformation_types
from cdk_app.findings import format_path
from cdk_app.validator.reporter import report_repeats
from cdk_app.validator.rules.principals import principal_problem
from cdk_app.validator.rules.region import partition
from hyperpod_constructs.private.batch_team_policy import (
    INLINE_POLICY_LIMIT,
    batch_arn,
    job_queue_arn,
    quota_share_arn,
    team_policy,
)
from hyperpod_constructs.private.limits import SHARE_IDENTIFIER as SHARE_IDENTIFIER_PATTERN
from hyperpod_constructs.private.role_trust import TRUST_POLICY_LIMIT, policy_size, trust_policy

if TYPE_CHECKING:
    from cdk_app.validator.reporter import Reporter

# Used with fullmatch: a Python `$` also accepts a trailing newline ("AAA\n").
SHARE_IDENTIFIER = re.compile(SHARE_IDENTIFIER_PATTERN)
MAX_SHARE_IDENTIFIERS = 500
# AWS Batch service quotas that cannot be raised, per account and Region ("Resource: AWS Batch service quotas",
# https://docs.aws.amazon.com/batch/latest/userguide/service_limits.html): 50 job queues, 50 service
# environments, 1 job queue per quota-management service environment, 20 quota shares per quota-management
# job queue. A quota share has at most 5 capacity limits ("Quota shares",
# https://docs.aws.amazon.com/batch/latest/userguide/quota-shares.html). Neither the cfn-lint schemas nor
# botocore's batch model state these (no maxItems), so only the validator can refuse them before a deploy.
MAX_JOB_QUEUES = 50
MAX_SERVICE_ENVIRONMENTS = 50
MAX_QUEUES_PER_QUOTA_ENVIRONMENT = 1
MAX_QUOTA_SHARES_PER_QUEUE = 20
MAX_CAPACITY_LIMITS_PER_SHARE = 5
BASE: PathKey = ("batch",)


def check_batch(config: KitConfig, report: Reporter) -> None:
    batch = config.batch
    if batch is None:
        return
    _check_region(config.region, batch, report)
    _check_names(batch, report)
    _check_environments(batch, report)
    _check_queues(batch, report)
    _check_teams(batch, report)
    _check_quota_capacity(batch, report)
    _check_service_quotas(batch, report)
    _check_execution_roles(config, batch, report)
    _check_disabled_teams(batch, report)
    _check_team_role_sizes(config, batch, report)


def _check_names(batch: Batch, report: Reporter) -> None:

    report_repeats(report, "HPK701", [(BASE + ("service_environments", i, "name"), e.name)
                                       for i, e in enumerate(batch.service_environments)], "service environment")
    report_repeats(report, "HPK701", [(BASE + ("queues", i, "name"), q.name) for i, q in enumerate(batch.queues)],
                    "job queue")
    report_repeats(report, "HPK701", [(BASE + ("teams", i, "name"), t.name) for i, t in enumerate(batch.teams)],
                    "Batch team")


def _check_region(region: str, batch: Batch, report: Reporter) -> None:
    available = cloudformation_types(region)
    needed = {"AWS::Batch::ServiceEnvironment": (BASE + ("service_environments",)),
              "AWS::Batch::JobQueue": (BASE + ("queues",))}
    for i, queue in enumerate(batch.queues):
        if queue.scheduling != "fifo":
            needed.setdefault("AWS::Batch::SchedulingPolicy", BASE + ("queues", i, "scheduling"))
        if queue.scheduling == "quota_share":
            needed.setdefault("AWS::Batch::QuotaShare", BASE + ("queues", i, "scheduling"))
    for resource_type, path in needed.items():
        if available and resource_type not in available:
            report.error("HPK715", path, f"CloudFormation in {region} has no {resource_type}",
                         "use a region that offers it (cfn-lint's region data lists them) or another scheduling")


def _check_environments(batch: Batch, report: Reporter) -> None:
    known = training_instance_types()
    for i, env in enumerate(batch.service_environments):
        seen: set[str] = set()
        for j, limit in enumerate(env.capacity_limits):
            path = BASE + ("service_environments", i, "capacity_limits", j, "unit")
            if limit.unit != NUM_INSTANCES and limit.unit not in known:
                near = difflib.get_close_matches(limit.unit, sorted(known), n=1, cutoff=0.8)
                report.error("HPK704", path, f"{limit.unit!r} is not a capacity unit",
                             (f"did you mean {near[0]}? " if near else "")
                             + "use NUM_INSTANCES or a SageMaker Training instance type such as ml.p4d.24xlarge")
            elif limit.unit in seen:
                report.error("HPK704", path, f"{limit.unit} is listed twice in service environment '{env.name}'",
                             "give each unit one capacity limit")
            seen.add(limit.unit)
        units = {limit.unit for limit in env.capacity_limits}
        if NUM_INSTANCES in units and len(units) > 1:
            report.error("HPK705", BASE + ("service_environments", i, "capacity_limits"),
                         f"service environment '{env.name}' mixes NUM_INSTANCES with instance types",
                         "use NUM_INSTANCES alone, or instance types alone (a quota-managed environment)")


def _check_queues(batch: Batch, report: Reporter) -> None:
    users: dict[str, str] = {}
    for i, queue in enumerate(batch.queues):
        base = BASE + ("queues", i)
        env = environment_named(batch, queue.service_environment)
        if env is None:
            names = [e.name for e in batch.service_environments]
            report.error("HPK702", base + ("service_environment",),
                         f"service environment '{queue.service_environment}' is not defined",
                         f"use one of: {', '.join(names)}")
        else:
            if env.name in users and quota_managed(env):
                report.error("HPK721", base + ("service_environment",),
                             f"queues '{users[env.name]}' and '{queue.name}' share service environment '{env.name}', "
                             "which has instance-type capacity units (quota management)",
                             f"AWS Batch associates at most {MAX_QUEUES_PER_QUOTA_ENVIRONMENT} job queue with a "
                             "quota-management service environment (not adjustable): give each queue its own")
            elif env.name in users:
                report.warning("HPK703", base + ("service_environment",),
                               f"queues '{users[env.name]}' and '{queue.name}' share service environment '{env.name}'",
                               "give each queue its own service environment (AWS recommends 1:1)")
            users.setdefault(env.name, queue.name)
            if queue.scheduling == "quota_share" and any(limit.unit == NUM_INSTANCES for limit in env.capacity_limits):
                report.error("HPK705", base + ("scheduling",),
                             f"quota shares count instances per instance type, but '{env.name}' counts NUM_INSTANCES",
                             "give the service environment instance-type capacity units (e.g. ml.p4d.24xlarge)")
        if queue.scheduling != "fair_share":
            for field in ("share_decay_seconds", "compute_reservation"):
                if getattr(queue, field) is not None:
                    report.warning("HPK711", base + (field,), f"{field} has no effect on a {queue.scheduling} queue",
                                   "remove it, or use scheduling: fair_share")
        members = teams_on(batch, queue.name)
        if queue.scheduling == "fair_share" and len(members) > MAX_SHARE_IDENTIFIERS:
            report.error("HPK708", base + ("name",), f"{len(members)} share identifiers on queue '{queue.name}'",
                         f"a queue holds at most {MAX_SHARE_IDENTIFIERS} active share identifiers")


def _check_teams(batch: Batch, report: Reporter) -> None:
    shares: dict[tuple[str, str], PathKey] = {}
    for i, team in enumerate(batch.teams):
        base = BASE + ("teams", i)
        kinds: dict[str, list[str]] = {}
        listed: dict[str, int] = {}
        for j, name in enumerate(team.queues):
            if name in listed:
                # One finding for the repeat, whatever the queue's kind; the repeat is not counted again (it is no
                # second share identifier on the queue, HPK708, nor a second quota-share queue, HPK713).
                report.error("HPK729", base + ("queues", j), f"team '{team.name}' lists job queue '{name}' twice "
                             f"(first at queues[{listed[name]}])",
                             "list each queue once; if another queue was meant, name that one")
                continue
            listed[name] = j
            queue = queue_named(batch, name)
            if queue is None:
                report.error("HPK706", base + ("queues", j), f"job queue '{name}' is not defined",
                             f"use one of: {', '.join(q.name for q in batch.queues)}")
                continue
            kinds.setdefault(queue.scheduling, []).append(name)
            if queue.scheduling == "fair_share" and team.share_identifier is not None:
                key = (name, team.share_identifier)
                if key in shares:
                    report.error("HPK708", base + ("share_identifier",),
                                 f"share identifier '{team.share_identifier}' is used twice on queue '{name}' "
                                 f"(first at {format_path(shares[key])})", "give each team its own share identifier")
                shares.setdefault(key, base + ("share_identifier",))
        if "fair_share" in kinds:
            if team.share_identifier is None:
                report.error("HPK707", base, f"team '{team.name}' is on fair-share queue '{kinds['fair_share'][0]}' "
                             "without a share_identifier", "add share_identifier: 1-255 letters and digits")
            elif not SHARE_IDENTIFIER.fullmatch(team.share_identifier):
                report.error("HPK707", base + ("share_identifier",),
                             f"share identifier {team.share_identifier!r} is not allowed",
                             "1-255 letters and digits (Batch allows no other characters)")
        else:
            for field in ("share_identifier", "weight_factor"):
                if getattr(team, field) is not None:
                    report.warning("HPK711", base + (field,), f"{field} has no effect: team '{team.name}' is on no "
                                   "fair-share queue", "remove it, or add the team to a fair_share queue")
        quota_queues = kinds.get("quota_share", [])
        if len(quota_queues) > 1:
            report.error("HPK713", base + ("queues",),
                         f"team '{team.name}' is on quota-share queues {', '.join(quota_queues)}",
                         "a team's quota applies to one quota_share queue: keep one")
        if quota_queues and not team.quota:
            report.error("HPK709", base, f"team '{team.name}' is on quota-share queue '{quota_queues[0]}' without quota",
                         "add quota: [{instance_type, count}] for the queue's instance types")
        if team.quota and not quota_queues:
            if not _quota_split_lost(batch, team, kinds.get("fair_share", []), base, report):
                report.warning("HPK711", base + ("quota",), f"quota has no effect: team '{team.name}' is on no "
                               "quota-share queue", "remove it, or add the team to a quota_share queue")
        if team.borrow_limit is not None and team.sharing_strategy != "LendAndBorrow":
            report.error("HPK712", base + ("borrow_limit",),
                         f"borrow_limit has no effect with sharing_strategy {team.sharing_strategy}",
                         "remove borrow_limit, or set sharing_strategy: LendAndBorrow")
        if team.principals and team.execution_role_arn is None:
            report.error("HPK714", base + ("principals",),
                         f"team '{team.name}' has principals but no execution_role_arn, so its jobs cannot run",
                         "name the SageMaker training execution role its jobs run as")


def _quota_split_lost(batch: Batch, team: BatchTeam, fair_queues: list[str], base: PathKey, report: Reporter) -> bool:
    """HPK730: teams with quotas on a fair-share queue (and no quota-share queue) state a split that Batch never
    sees - a fair-share policy has weight factors only (botocore FairsharePolicy.shareDistribution) - so unless
    the weight factors give that split, it deploys as the weights say (by default all 1.0: equal parts).
    Weights are not derived from quotas on the admin's behalf: a quota is a capacity a share holds, a weight
    only a share of contention, and quotas in several instance types give no one ratio. True if reported."""
    for queue in fair_queues:
        holders = [t for t in teams_on(batch, queue)
                   if t.quota and not team_queues(batch, t).quota_share and t.share_identifier is not None]
        if len(holders) < 2 or team not in holders:
            continue
        kinds = {q.instance_type for t in holders for q in t.quota}
        parts = {t.name: sum(q.count for q in t.quota) for t in holders}
        weights = {t.name: t.weight_factor if t.weight_factor is not None else DEFAULT_WEIGHT_FACTOR for t in holders}
        if len(kinds) == 1 and not fair_share_split_differs(weights, parts):
            continue  # the weights already give the split: the quota is only redundant (HPK711)
        total = sum(parts.values())
        asked = ", ".join(f"{name} {percent_text(Fraction(part, total))}" for name, part in parts.items())
        given = ", ".join(f"{name} {percent_text(part)}" for name, part in fair_share_fractions(weights).items())
        derived = weight_factors_for(parts) if len(kinds) == 1 else None
        how = ("write the split as weight factors (lower = larger share): "
               + ", ".join(f"{name} weight_factor: {w:g}" for name, w in derived.items())) if derived else \
            "write the split as weight factors (lower = larger share; a part goes as 1/weight)"
        # Counts of several instance types add up to no one split: say so, rather than a split the weights may
        # even match (3 + 3 of two sizes against 6 of one is not 50/50).
        stated = (f"the quotas ask for {asked}" if len(kinds) == 1 else
                  f"quotas in several instance types ({', '.join(sorted(kinds))}) state no one split")
        others = [q for q in fair_queues if q != queue]
        also = f" (and on fair-share queue{'s' if len(others) > 1 else ''} {', '.join(others)})" if others else ""
        report.error("HPK730", base + ("quota",),
                     f"team '{team.name}' has a quota but is on no quota-share queue; on fair-share queue '{queue}'"
                     f"{also} Batch splits by weight factor and ignores quotas: {stated}, the weight factors give "
                     f"{given}",
                     f"{how}, and remove quota; or put the teams on a quota_share queue, where quotas hold")
        return True
    return False


def _check_quota_capacity(batch: Batch, report: Reporter) -> None:
    """Per service environment and unit: the quota shares of every quota_share queue on it summed, against the
    environment's limit, with capacity.py's Resources arithmetic (the one HPK501 uses)."""
    for env in batch.service_environments:
        queues = [q.name for q in batch.queues if q.scheduling == "quota_share" and q.service_environment == env.name]
        capacity = {limit.unit: Resources(count=Fraction(limit.max_capacity)) for limit in env.capacity_limits}
        totals: dict[str, Resources] = {}
        entries: dict[str, list[tuple[str, int, PathKey]]] = {}
        for i, team, queue, j, entry in environment_quota_entries(batch, env.name):
            path = BASE + ("teams", i, "quota", j)
            if entry.instance_type not in capacity:
                report.error("HPK709", path + ("instance_type",),
                             f"service environment '{env.name}' of queue '{queue}' has no {entry.instance_type} capacity",
                             f"use one of its units: {', '.join(capacity)}")
                continue
            totals[entry.instance_type] = totals.get(entry.instance_type, Resources()) + Resources(count=Fraction(entry.count))
            entries.setdefault(entry.instance_type, []).append((team.name, entry.count, path))
        for unit, total in totals.items():
            if not total.exceeding(capacity[unit]):
                continue
            # Point at the entry that tips the sum over.
            sums = accumulate(count for _, count, _ in entries[unit])
            tipping = next(path for (_, _, path), total_so_far in zip(entries[unit], sums)
                           if total_so_far > capacity[unit].count)
            split = ", ".join(f"{name} {count}" for name, count, _ in entries[unit])
            report.error("HPK710", tipping,
                         f"quota shares on {', '.join(queues)} hold {describe(total.count, 'count')} of {unit} but "
                         f"service environment '{env.name}' has {describe(capacity[unit].count, 'count')} ({split})",
                         f"lower the quotas by {describe(total.count - capacity[unit].count, 'count')} "
                         f"or raise the environment's max_capacity")


def quota_managed(env: ServiceEnvironment) -> bool:
    """A service environment whose capacity is counted per instance type: Batch's quota management."""
    return all(limit.unit != NUM_INSTANCES for limit in env.capacity_limits)


def _check_service_quotas(batch: Batch, report: Reporter) -> None:
    """Batch's fixed quotas: queues and service environments per Region, quota shares per queue, capacity limits
    per quota share; and each instance type once in a quota share (its capacity limits are one per unit)."""
    for field, count, limit, what in (("queues", len(batch.queues), MAX_JOB_QUEUES, "job queues"),
                                      ("service_environments", len(batch.service_environments),
                                       MAX_SERVICE_ENVIRONMENTS, "service environments")):
        if count > limit:
            report.error("HPK723", BASE + (field, limit), f"{count} {what}: the one at index {limit} is over AWS Batch's "
                         f"limit of {limit} {what} per account and Region",
                         f"keep at most {limit} (a Batch service quota that cannot be raised; other stacks and "
                         "consoles in the account count too)")
    sharing: dict[str, list[int]] = {}
    for team, queue in quota_share_teams(batch):
        sharing.setdefault(queue, []).append(next(i for i, t in enumerate(batch.teams) if t is team))
    for queue, indexes in sharing.items():
        if len(indexes) > MAX_QUOTA_SHARES_PER_QUEUE:
            i = indexes[MAX_QUOTA_SHARES_PER_QUEUE]
            team = batch.teams[i]
            report.error("HPK722", BASE + ("teams", i, "queues", team.queues.index(queue)),
                         f"queue '{queue}' would get {len(indexes)} quota shares; team '{team.name}' is share "
                         f"{MAX_QUOTA_SHARES_PER_QUEUE + 1}",
                         f"AWS Batch attaches at most {MAX_QUOTA_SHARES_PER_QUEUE} quota shares to a job queue (not "
                         "adjustable): move teams to another quota_share queue on its own service environment")
    for i, team in enumerate(batch.teams):
        seen: dict[str, int] = {}
        for j, entry in enumerate(team.quota):
            if entry.instance_type in seen:
                report.error("HPK724", BASE + ("teams", i, "quota", j, "instance_type"),
                             f"team '{team.name}' lists {entry.instance_type} twice in its quota "
                             f"(first at quota[{seen[entry.instance_type]}])",
                             "give each instance type one entry: its quota share has one capacity limit per unit")
            seen.setdefault(entry.instance_type, j)
        if len(team.quota) > MAX_CAPACITY_LIMITS_PER_SHARE:
            report.error("HPK722", BASE + ("teams", i, "quota", MAX_CAPACITY_LIMITS_PER_SHARE),
                         f"team '{team.name}' has {len(team.quota)} quota entries: its quota share would get "
                         f"{len(team.quota)} capacity limits",
                         f"a quota share supports at most {MAX_CAPACITY_LIMITS_PER_SHARE} capacity limits (AWS Batch): "
                         "keep at most 5 instance types per team")


def _check_execution_roles(config: KitConfig, batch: Batch, report: Reporter) -> None:
    """The role a team passes to SageMaker: the principal rule of HPK111 (form, IAM name length, partition of the
    region, the config's account - Batch teams have no cross-account setting), and one role per team."""

    first: dict[str, str] = {}
    for i, team in enumerate(batch.teams):
        arn = team.execution_role_arn
        if arn is None:
            continue
        path = BASE + ("teams", i, "execution_role_arn")
        why = principal_problem(arn, config, cross_account=False)
        if why:
            report.error("HPK725", path, f"{arn[:120]!r} cannot be team '{team.name}''s training execution role: {why}",
                         f"name an IAM role of account {config.account} in partition {partition(config.region)}: "
                         "SageMaker runs the team's jobs as it, and a role of another account or partition cannot "
                         "be passed")
        elif arn in first:
            report.warning("HPK726", path, f"teams '{first[arn]}' and '{team.name}' pass the same execution role "
                           f"{arn}", "give each team its own training execution role: jobs of one team can read "
                           "and write whatever the other's role may")
        first.setdefault(arn, team.name)


def _check_disabled_teams(batch: Batch, report: Reporter) -> None:
    """enabled: false disables a team's quota share; Batch has no such switch for a share identifier or a FIFO
    queue, so a disabled team on those queues would still submit there. Refused rather than half applied."""
    for i, team in enumerate(batch.teams):
        if team.enabled:
            continue
        open_queues = [name for name in dict.fromkeys(team.queues)  # a queue listed twice is HPK729's, counted once
                       if (queue := queue_named(batch, name)) is not None and queue.scheduling != "quota_share"]
        if open_queues:
            name = open_queues[0]
            report.error("HPK727", BASE + ("teams", i, "enabled"),
                         f"team '{team.name}' is disabled but is on {queue_named(batch, name).scheduling} queue "
                         f"'{name}'" + (f" (and {len(open_queues) - 1} more)" if len(open_queues) > 1 else "")
                         + ": enabled: false only disables a quota share, so its role could still submit there",
                         "remove the fifo and fair_share queues from the team's queues (its role then cannot submit "
                         "to them), or set enabled: true")


def team_role_documents(config: KitConfig, team: BatchTeam) -> tuple[dict[str, Any], dict[str, Any]]:
    """The trust and inline policy the Batch stack writes for `team`, with every ARN resolved as CloudFormation
    will resolve it (the account, Region and partition are the config's; queue and quota-share ARNs are Batch's
    formats), from the same functions BatchTeamAccess calls."""

    assert config.batch is not None and team.execution_role_arn is not None
    where = (partition(config.region), config.region, config.account)
    queues = team_queues(config.batch, team)
    shares = (((job_queue_arn(*where, queues.quota_share),
                quota_share_arn(*where, queues.quota_share, quota_share_name(team))),)
              if queues.quota_share is not None else ())
    document = team_policy(execution_role_arn=team.execution_role_arn,
                           service_jobs=batch_arn(*where, "service-job/*"),
                           fair_share_queues=tuple(job_queue_arn(*where, q) for q in queues.fair_share),
                           share_identifier=team.share_identifier, quota_shares=shares,
                           fifo_queues=tuple(job_queue_arn(*where, q) for q in queues.fifo),
                           max_priority=team.max_priority)
    return trust_policy(team.principals), document


def _check_team_role_sizes(config: KitConfig, batch: Batch, report: Reporter) -> None:
    """IAM refuses a role whose trust policy, or whose inline policies together, exceed its size quotas; CloudFormation
    and cfn-lint cannot tell before the deploy, since the template holds tokens where IAM gets ARNs."""
    roles = {id(team) for team in roles_of(batch)}
    for i, team in enumerate(batch.teams):
        if id(team) not in roles:
            continue
        trust, document = team_role_documents(config, team)
        for size, limit, field, what, hint in (
                (policy_size(trust), TRUST_POLICY_LIMIT, "principals", "trust policy",
                 "trust fewer principals, e.g. one IAM role the team's people assume (IAM's default quota; each "
                 "principal ARN counts with its quotes and comma)"),
                (policy_size(document), INLINE_POLICY_LIMIT, "queues", "inline policy",
                 "put the team on fewer queues or shorten the queue names (each queue ARN is listed twice)")):
            if size > limit:
                report.error("HPK728", BASE + ("teams", i, field),
                             f"team '{team.name}''s Batch role would have a {size:,}-character {what}, over IAM's "
                             f"limit of {limit:,} characters", hint)
