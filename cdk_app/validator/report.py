"""Run the loader and every rule on a config file and gather the result."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from cdk_app.config.loader import ConfigInvalid, LoadedConfig, load_config
from cdk_app.domain.capacity import Resources, cluster_capacity, reservations, shared_pool_quota, teams_total
from cdk_app.domain.reach import TeamReach, team_reach
from cdk_app.findings import Finding, Severity, format_path
from cdk_app.validator.batch_summary import BatchCapacityRow, BatchQueueRow, batch_capacity, batch_queues
from cdk_app.validator.reporter import Reporter
from cdk_app.validator.rules import RULES
from cdk_app.validator.rules.kinds import depends_on_kinds, has_cluster


@dataclass(frozen=True, slots=True)
class CapacityRow:
    instance_type: str
    capacity: Resources
    reserved: Resources

    def to_json(self) -> dict[str, object]:
        return {"instance_type": self.instance_type, "capacity": self.capacity.to_json(),
                "reserved": self.reserved.to_json()}


@dataclass(frozen=True)
class Report:
    file: str
    findings: list[Finding]
    capacity: list[CapacityRow] = field(default_factory=list)
    reach: list[TeamReach] = field(default_factory=list)
    batch_capacity: list[BatchCapacityRow] = field(default_factory=list)
    batch_queues: list[BatchQueueRow] = field(default_factory=list)
    environment: str | None = None
    unreadable: bool = False
    # The loaded config, for commands that go on from the findings (job, validate --live); None if unreadable.
    loaded: LoadedConfig | None = field(default=None, repr=False, compare=False)

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


def validate(loaded: LoadedConfig) -> Report:
    """All policy findings and the capacity table of a loaded config."""
    config = loaded.config
    reporter = Reporter(loaded.source)
    for rule in RULES:
        rule(config, reporter)
    findings = sorted(reporter.findings, key=lambda f: (f.line, f.column, f.code))
    batch = (batch_capacity(config.batch), batch_queues(config.batch)) if config.batch is not None else ([], [])
    if not has_cluster(config):
        return Report(loaded.source.file, findings, batch_capacity=batch[0], batch_queues=batch[1],
                      environment=config.environment, loaded=loaded)
    reserved = teams_total(config.teams)
    capacity = cluster_capacity(config)
    if config.shared_pool is not None:
        # The pool's entries exactly as the governance stack writes them, filled as SageMaker fills them.
        for itype, pool in reservations(shared_pool_quota(config)).items():
            reserved[itype] = reserved.get(itype, Resources()) + pool
    rows = [CapacityRow(t, capacity.get(t, Resources()), reserved.get(t, Resources()))
            for t in sorted(set(capacity) | set(reserved))]
    return Report(loaded.source.file, findings, rows, team_reach(config), *batch, config.environment, loaded=loaded)


def check_file(path: Path | str, display_name: str | None = None) -> Report:
    """Load and validate one file; never raises for anything the file holds."""
    try:
        loaded = load_config(path, display_name)
    except ConfigInvalid as err:
        findings = list(err.findings)
        if err.partial is not None:
            findings += _unaffected(validate(err.partial).findings, err.repaired)
            findings.sort(key=lambda f: (f.line, f.column, f.code))
        return Report(display_name or str(path), findings, unreadable=err.unreadable)
    return validate(loaded)


# Keys whose absence changes what the capacity rules sum or whom they count as lending.
_CAPACITY_INPUTS = frozenset({"instance_groups", "quota", "shared_pool", "enabled", "sharing_strategy",
                              "idle_resource_sharing"})


def _changes_capacity(path: tuple[str | int, ...]) -> bool:
    if path in (("hyperpod",), ("teams",), ("cluster_policy",)):
        return True  # a whole section (the loader leaves out keys, never a list item such as one team)
    return bool(_CAPACITY_INPUTS.intersection(p for p in path if isinstance(p, str)))


# Findings at one key whose rule reads a sibling key: left out as broken, the sibling would look absent.
_SIBLING_INPUTS = {"HPK711": ("queues",), "HPK712": ("sharing_strategy",), "HPK714": ("execution_role_arn",)}


def _unaffected(findings: list[Finding], repaired: tuple[tuple[str | int, ...], ...]) -> list[Finding]:
    """Policy findings of a config checked without its broken keys that do not depend on those keys:
    none at, above or below a left-out key, and no capacity finding if a capacity input was left out."""
    left_out = [format_path(path) for path in repaired]
    # Left out, a broken hyperpod or batch section would look absent: which kinds the environment has is unknown.
    kinds_unknown = any(path[:1] in (("hyperpod",), ("batch",)) for path in repaired)
    capacity_touched = any(_changes_capacity(path) for path in repaired)
    # Left out, a Batch queue's scheduling would read as fifo, and nearly every Batch rule reads the scheduling.
    scheduling_unknown = any(path[:2] == ("batch", "queues") and path[-1] == "scheduling" for path in repaired)

    def related(finding: Finding) -> bool:
        parent = finding.path.rpartition(".")[0]
        if any(f"{parent}.{key}" in left_out for key in _SIBLING_INPUTS.get(finding.code, ())):
            return True
        return any(finding.path == p or finding.path.startswith((p + ".", p + "[")) or
                   p.startswith((finding.path + ".", finding.path + "[")) for p in left_out)

    return [f for f in findings if not related(f) and not (capacity_touched and f.code.startswith("HPK5"))
            and not (scheduling_unknown and f.code.startswith("HPK7"))
            and not (kinds_unknown and depends_on_kinds(f.code, f.path))]
