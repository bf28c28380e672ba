"""Teams: names, admission extras and quota entries."""

from __future__ import annotations

from fractions import Fraction

from cdk_app.config.model import (
    KitConfig,
)
from cdk_app.config.names import (
    DNS1123_LABEL,
)
from cdk_app.config.scalars import exact
from cdk_app.config.yaml_source import PathKey
from cdk_app.domain.capacity import (
    describe,
    exact_text,
    per_instances,
    team_reservations,
)
from cdk_app.domain.instance_types import CATALOGUE
from cdk_app.domain.mig_profiles import profiles_of
from cdk_app.findings import format_path
from cdk_app.validator.reporter import Reporter, report_repeats
from cdk_app.validator.rules.instance_groups import report_unknown_type

MAX_TEAM_NAME = 40  # hyperpod-ns-<team>-localqueue must fit a 63-character label value


MAX_QUOTA_ENTRIES = 15


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
        for field in ("quota", "absolute_borrow_limits"):  # both lists take 15 items (the ComputeQuota schema)
            entries = getattr(team, field)
            if len(entries) > MAX_QUOTA_ENTRIES:
                report.error("HPK404", base + (field, MAX_QUOTA_ENTRIES),
                             f"team '{team.name}' has {len(entries)} {field.replace('_', ' ')} entries",
                             f"at most {MAX_QUOTA_ENTRIES} per team")
        if team.default_priority_class is not None and team.default_priority_class not in class_names:
            known = ", ".join(sorted(class_names)) or "none are defined"
            report.error("HPK409", base + ("default_priority_class",),
                         f"priority class '{team.default_priority_class}' is not in cluster_policy.priority_classes",
                         f"use one of: {known}")
        _check_team_admission(config, i, report)
        _check_quota_entries(team.quota, base, report)
        _check_quota_entries(team.absolute_borrow_limits, base, report, "absolute_borrow_limits")
    if config.shared_pool is not None:
        pool_name = config.shared_pool.name
        names.append((("shared_pool", "name"), pool_name))
        if len(pool_name) > MAX_TEAM_NAME or not DNS1123_LABEL.fullmatch(pool_name):
            report.error("HPK401", ("shared_pool", "name"), f"shared pool name {pool_name!r} is not allowed",
                         f"lower-case letters, digits and inner hyphens, at most {MAX_TEAM_NAME} characters")
    report_repeats(report, "HPK402", names, "team")
    for i, team in enumerate(config.teams):
        unknown = any(entry.instance_type not in CATALOGUE for entry in team.quota)  # HPK201's matter
        partitions = any(entry.accelerator_partition for entry in team.quota)
        if not unknown and not partitions and all(held.is_zero() for held in team_reservations(team).values()):
            # The reach rule (cdk_app.domain.reach): a team borrows only on instance types it has a quota for,
            # a percent of that quota - nothing when every entry is zero, as when there is none.
            report.warning("HPK411", ("teams", i, "name"), f"team '{team.name}' has no quota",
                           "a team borrows only on instance types it has a quota for (borrow_limit is a percent of "
                           "that quota), so a job of it that requests accelerators, CPU or memory never runs: "
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
        report_repeats(report, "HPK421", [(base + (field, j), v) for j, v in enumerate(getattr(team, field) or ())],
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


def _check_quota_entries(entries: tuple, base: PathKey, report: Reporter, field: str = "quota") -> None:
    """Entries of the team's `field`: quota, or absolute_borrow_limits (the same ComputeQuotaResourceConfig)."""
    seen: dict[str, int] = {}
    what = "a quota entry" if field == "quota" else "an absolute borrow limit"
    for j, entry in enumerate(entries):
        path = base + (field, j)
        if entry.instance_type in seen:
            report.error("HPK405", path + ("instance_type",),
                         f"{entry.instance_type} already has {what} ({format_path(base + (field, seen[entry.instance_type]))})",
                         "merge the two entries into one")
        else:
            seen[entry.instance_type] = j
        spec = CATALOGUE.get(entry.instance_type)
        if spec is None:
            report_unknown_type(report, path + ("instance_type",), entry.instance_type)
            continue
        given = {d: getattr(entry, d) for d in ("count", "accelerators", "vcpu", "memory_gib")
                 if getattr(entry, d) is not None}
        if not given:
            if entry.accelerator_partition is None:
                report.error("HPK406", path, f"{what.split(' ', 1)[1]} for {entry.instance_type} gives no amount",
                             "give count, accelerators, vcpu/memory_gib or accelerator_partition"
                             if profiles_of(entry.instance_type) else "give count, accelerators, or vcpu/memory_gib")
            continue
        if entry.accelerators is not None and not spec.has_accelerators:
            report.error("HPK407", path + ("accelerators",),
                         f"{entry.instance_type} has no accelerators",
                         "give count or vcpu/memory_gib for CPU instance types")
            continue
        if (field == "quota" and spec.has_accelerators and entry.count is None and entry.accelerators is None
                and entry.accelerator_partition is None):
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
                                 f"{dim} {exact_text(exact(value))} disagrees with count {entry.count} "
                                 f"({describe(getattr(whole, dim), dim)} on {entry.instance_type})",
                                 "give count alone, or leave count out")
