"""Run the loader and every rule on a config file and gather the result."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from cdk_app.config.loader import ConfigInvalid, LoadedConfig, load_config
from cdk_app.config.model import KitConfig
from cdk_app.config.yaml_source import PathKey
from cdk_app.domain.capacity import (
    Resources,
    cluster_capacity,
    config_shares,
    guaranteed_capacity,
    node_cpus,
    partition_capacity,
    partition_reservations,
    reservations,
    shared_pool_quota,
    teams_total,
)
from cdk_app.domain.reach import (
    PartitionReach,
    TeamReach,
    partition_reach,
    team_reach,
    unallocated,
    unallocated_partitions,
)
from cdk_app.findings import Finding, Severity, format_path
from cdk_app.validator.acknowledgements import Acknowledged, acknowledge
from cdk_app.validator.batch_summary import BatchCapacityRow, BatchQueueRow, batch_capacity, batch_queues
from cdk_app.validator.reporter import Reporter
from cdk_app.validator.rules import RULES
from cdk_app.validator.rules.kinds import depends_on_kinds, has_cluster


@dataclass(frozen=True, slots=True)
class CapacityRow:
    instance_type: str
    capacity: Resources
    reserved: Resources  # by the teams and the shared pool
    # The shared pool's own quota on the type (None: the config has no pool), and the capacity no enabled
    # allocation holds - what idle sharing lends to borrowers (cdk_app.domain.reach.unallocated).
    shared_pool: Resources | None = None
    unreserved: Resources = Resources()
    # What the teams can count on (cdk_app.domain.capacity.guaranteed_capacity): capacity is the most the groups
    # may give, autoscaled, flexible and Spot groups included; this leaves those out.
    guaranteed: Resources = Resources()
    # The vCPUs of the type's fewest-CPU node with its group's threads_per_core (capacity.node_cpus): half the
    # catalogue's where hyper-threading is off, while the vCPU columns count the full vCPU, as SageMaker does.
    node_vcpu: int | None = None

    @property
    def best_effort(self) -> Resources:
        return self.capacity - self.guaranteed

    def to_json(self) -> dict[str, object]:
        return {"instance_type": self.instance_type, "capacity": self.capacity.to_json(),
                "reserved": self.reserved.to_json(),
                "shared_pool": None if self.shared_pool is None else self.shared_pool.to_json(),
                "unreserved": self.unreserved.to_json(), "guaranteed": self.guaranteed.to_json(),
                "best_effort": self.best_effort.to_json(), "node_vcpu": self.node_vcpu}


@dataclass(frozen=True, slots=True)
class PartitionRow:
    """GPU partitions of one MIG profile on one instance type: what the groups' geometries give, what the
    enabled teams' quotas hold, and what no team holds (idle sharing lends it to teams that borrow)."""

    instance_type: str
    profile: str
    capacity: int
    reserved: int
    unreserved: int

    def to_json(self) -> dict[str, object]:
        return {"instance_type": self.instance_type, "profile": self.profile, "capacity": self.capacity,
                "reserved": self.reserved, "unreserved": self.unreserved}


@dataclass(frozen=True)
class Report:
    file: str
    findings: list[Finding]
    capacity: list[CapacityRow] = field(default_factory=list)
    reach: list[TeamReach] = field(default_factory=list)
    batch_capacity: list[BatchCapacityRow] = field(default_factory=list)
    batch_queues: list[BatchQueueRow] = field(default_factory=list)
    # Findings that may only follow from an earlier error (a key left out as broken, an unknown instance type):
    # their advice would be wrong, so they are shown apart and do not count until that error is fixed.
    held_back: list[Finding] = field(default_factory=list)
    # The broken keys (dotted paths) the held-back findings may follow from, for saying what to fix first.
    held_because: tuple[str, ...] = ()
    environment: str | None = None
    unreadable: bool = False
    # The shape errors could not be set aside, so no policy rule (capacity, reach, names ...) ran at all.
    rules_skipped: bool = False
    # Warnings the config acknowledges (acknowledged_warnings), with the reason: shown, not counted.
    acknowledged: list[Acknowledged] = field(default_factory=list)
    # The loaded config, for commands that go on from the findings (job, validate --live); None if unreadable.
    loaded: LoadedConfig | None = field(default=None, repr=False, compare=False)
    partitions: list[PartitionRow] = field(default_factory=list)
    partition_reach: list[PartitionReach] = field(default_factory=list)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.WARNING]

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def exit_code(self) -> int:
        """0 valid, 1 policy or shape errors, 2 unreadable file."""
        return 2 if self.unreadable else (1 if self.errors else 0)


def validate(loaded: LoadedConfig, left_out: tuple[PathKey, ...] = (), stand_ins: tuple[str, ...] = (),
             meant: tuple[str, ...] = (), now: datetime | None = None) -> Report:
    """All policy findings and the capacity table of a loaded config. `left_out`: keys the loader left out as
    broken or stood in for (a partial config), `stand_ins` the values it put in for zone ids and `meant` the
    texts of required keys it read as their fix says; `now` the moment dates are judged against (UTC, naive; the
    clock's when None). Findings that may follow from them, or from a value no rule can read (an unknown instance
    type), are held back."""
    config = loaded.config
    reporter = Reporter(loaded.source, now)
    for rule in RULES:
        rule(config, reporter)
    findings, held_back, because = _split_followers(sorted(reporter.findings, key=lambda f: (f.line, f.column, f.code)),
                                           left_out, tuple(reporter.unreadable), stand_ins, meant)
    about_acks = Reporter(loaded.source)
    findings, acknowledged = acknowledge(config, about_acks, findings, held_back)
    findings = sorted(findings + about_acks.findings, key=lambda f: (f.line, f.column, f.code))
    batch = (batch_capacity(config.batch), batch_queues(config.batch)) if config.batch is not None else ([], [])
    if not has_cluster(config):
        return Report(loaded.source.file, findings, batch_capacity=batch[0], batch_queues=batch[1],
                      held_back=held_back, held_because=because, environment=config.environment, acknowledged=acknowledged, loaded=loaded)
    reserved = teams_total(config.teams, config_shares(config))
    capacity = cluster_capacity(config)
    # The pool's entries exactly as the governance stack writes them, filled as SageMaker fills them.
    pool = reservations(shared_pool_quota(config)) if config.shared_pool is not None else None
    for itype, held in (pool or {}).items():
        reserved[itype] = reserved.get(itype, Resources()) + held
    free = unallocated(config)
    guaranteed, cpus = guaranteed_capacity(config), node_cpus(config)
    rows = [CapacityRow(t, capacity.get(t, Resources()), reserved.get(t, Resources()),
                        None if pool is None else pool.get(t, Resources()), free.get(t, Resources()),
                        guaranteed.get(t, Resources()), cpus[t][0] if t in cpus else None)
            for t in sorted(set(capacity) | set(reserved))]
    return Report(loaded.source.file, findings, rows, team_reach(config), *batch, held_back, because, config.environment,
                  acknowledged=acknowledged, loaded=loaded, partitions=_partition_rows(config), partition_reach=partition_reach(config))


def _partition_rows(config: KitConfig) -> list[PartitionRow]:
    capacity, free = partition_capacity(config), unallocated_partitions(config)
    reserved: dict[tuple[str, str], int] = {}
    for team in config.teams:
        for key, count in partition_reservations(team.quota).items():
            reserved[key] = reserved.get(key, 0) + count
    return [PartitionRow(itype, profile, capacity.get((itype, profile), 0), reserved.get((itype, profile), 0),
                         free.get((itype, profile), 0))
            for itype, profile in sorted(set(capacity) | set(reserved))]


def check_file(path: Path | str, display_name: str | None = None, now: datetime | None = None) -> Report:
    """Load and validate one file, judging dates against `now` (the clock's when None); never raises for anything
    the file holds."""
    try:
        loaded = load_config(path, display_name)
    except ConfigInvalid as err:
        findings, held_back, because, acknowledged = list(err.findings), [], (), []
        if err.partial is not None:
            partial = validate(err.partial, err.repaired, err.stand_ins, err.meant, now)
            findings += partial.findings
            held_back, because = partial.held_back, partial.held_because
            findings.sort(key=lambda f: (f.line, f.column, f.code))
            acknowledged = partial.acknowledged
        return Report(display_name or str(path), findings, held_back=held_back, held_because=because, unreadable=err.unreadable,
                      rules_skipped=err.partial is None and not err.unreadable, acknowledged=acknowledged)
    return validate(loaded, now=now)


# Keys whose absence changes what the capacity rules sum or whom they count as lending.
_CAPACITY_INPUTS = frozenset({"instance_groups", "quota", "shared_pool", "enabled", "sharing_strategy",
                              "idle_resource_sharing"})


def _changes_capacity(path: tuple[str | int, ...]) -> bool:
    if path in (("hyperpod",), ("teams",), ("cluster_policy",)):
        return True  # a whole section (the loader leaves out keys, never a list item such as one team)
    keys = [p for p in path if isinstance(p, str)]
    if "instance_groups" in keys:
        # A group's capacity is its types, count (or max_count) and capacity type; a broken zone, label or taint
        # leaves it as it is.
        below = keys[keys.index("instance_groups") + 1:]
        return not below or below[0] in ("instance_type", "count", "max_count", "fallback_instance_types",
                                          "capacity_type")
    return bool(_CAPACITY_INPUTS.intersection(keys))


# Autoscaling findings that count the groups with max_count: a group's max_count left out as broken would look absent.
_COUNTS_AUTOSCALED_GROUPS = ("HPK255", "HPK256")

# Findings at one key whose rule reads a sibling key: left out as broken, the sibling would look absent.
_SIBLING_INPUTS = {"HPK711": ("queues",), "HPK712": ("sharing_strategy",), "HPK714": ("execution_role_arn",),
                   "HPK730": ("queues", "share_identifier", "weight_factor")}


def _split_followers(findings: list[Finding], repaired: tuple[PathKey, ...], unreadable: tuple[PathKey, ...],
                     stand_ins: tuple[str, ...] = (), meant: tuple[str, ...] = ()
                     ) -> tuple[list[Finding], list[Finding], tuple[str, ...]]:
    """(findings that stand, findings that may follow from a broken key, the broken keys): nothing above or below a key left out
    (`repaired`) or whose value no rule could read (`unreadable`, e.g. an unknown instance type), nothing at a
    left-out key, and no capacity finding if a capacity input is either. The finding at an unreadable key is
    the cause itself and stands."""
    left_out = [format_path(path) for path in repaired]
    unread = [format_path(path) for path in unreadable]
    # Left out, a broken hyperpod or batch section would look absent: which kinds the environment has is unknown.
    kinds_unknown = any(path in (("hyperpod",), ("batch",)) for path in repaired)
    # An unknown instance group type may be any type a quota is on: every capacity finding may follow from it.
    # An unknown quota entry type only takes that entry out of the sums, which can make other capacity look
    # idle (HPK503, HPK505) but never over capacity: an error such as HPK501 stands on its own.
    capacity_touched = (any(_changes_capacity(path) for path in repaired)
                        or any(path[:2] == ("hyperpod", "instance_groups") for path in unreadable))
    quota_unread = any(len(path) > 2 and path[2] == "quota" for path in unreadable)
    # Left out, a Batch queue's scheduling would read as fifo, and nearly every Batch rule reads the scheduling.
    scheduling_unknown = any(path[:2] == ("batch", "queues") and path[-1] == "scheduling" for path in repaired)

    named_stand_in, named_meant = (re.compile(rf"\b({'|'.join(map(re.escape, values))})\b") if values else None
                                   for values in (stand_ins, meant))

    def touches(path: str, broken: list[str]) -> bool:
        return any(path == p or path.startswith((p + ".", p + "[")) or p.startswith((path + ".", path + "["))
                   for p in broken)

    def related(finding: Finding) -> bool:
        parent = finding.path.rpartition(".")[0]
        if any(f"{parent}.{key}" in left_out for key in _SIBLING_INPUTS.get(finding.code, ())):
            return True
        if any(finding.path == p for p in left_out):
            return True
        return any(finding.path.startswith((p + ".", p + "[")) or p.startswith((finding.path + ".", finding.path + "["))
                   for p in left_out + unread)

    def follows(finding: Finding) -> bool:
        if finding.path in unread:
            return False  # the cause (HPK201), at the key itself
        if named_meant is not None and named_meant.search(f"{finding.message} {finding.hint}"):
            return True  # it names a value read as its fix says (account: 011122223333 as "011122223333")
        if finding.reads is not None:
            # The rule named what the verdict rests on: held back only if one of those fields is broken.
            return any(touches(path, left_out + unread) for path in (finding.path, *finding.reads))
        return (related(finding) or (capacity_touched and (finding.code.startswith("HPK5")
                                                           or finding.code in _COUNTS_AUTOSCALED_GROUPS))
                or (quota_unread and finding.code in ("HPK503", "HPK505"))
                or (scheduling_unknown and finding.code.startswith("HPK7"))
                or (kinds_unknown and depends_on_kinds(finding.code, finding.path)))

    # A finding that names a value the loader put in place of a broken zone id would show, even as held back,
    # advice about a zone nobody wrote: it is dropped (the broken id's own error says what to fix).
    if named_stand_in is not None:
        findings = [f for f in findings if not named_stand_in.search(f"{f.message} {f.hint}")]
    capacity_causes = [format_path(p) for p in repaired if _changes_capacity(p)] + [
        format_path(p) for p in unreadable if p[:2] == ("hyperpod", "instance_groups")]

    def causes(finding: Finding) -> list[str]:
        """The broken keys a held-back finding may follow from (all of them where no rule singles one out)."""
        named = [p for p in left_out + unread
                 if any(touches(path, [p]) for path in (finding.path, *(finding.reads or ())))]
        if finding.code.startswith("HPK5") or finding.code in _COUNTS_AUTOSCALED_GROUPS:
            named += capacity_causes
        return named or left_out + unread

    held = [f for f in findings if follows(f)]
    because = tuple(dict.fromkeys(p for f in held for p in causes(f)))
    return [f for f in findings if f not in held], held, because
