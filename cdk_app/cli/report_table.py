"""The validate report as text: capacity, team reach and Batch tables, then the findings and the verdict.
Shared by validate and the commands that validate before they act (job, plan, batch-job)."""

from __future__ import annotations

from collections.abc import Sequence

from cdk_app.domain.batch_shares import percent_text
from cdk_app.domain.capacity import DIMENSIONS, Resources, exact_text
from cdk_app.domain.instance_types import CATALOGUE
from cdk_app.domain.reach import ABSOLUTE_LIMIT, BORROW_LIMIT, SHARING_DISABLED, PartitionReach, TeamReach
from cdk_app.support.text_table import aligned, printable
from cdk_app.validator.report import CapacityRow, Report


def _cell(reserved: Resources, capacity: Resources, dim: str) -> str:
    """Exact amounts, compared exactly: 16.0002 of 16 is over, and reads so."""
    used, total = getattr(reserved, dim), getattr(capacity, dim)
    return f"{exact_text(used)}/{exact_text(total)}" + (" !" if used > total else "")


def resource_amount(resources: Resources) -> str:
    """Instances, and accelerators in brackets where the type has them: 3 (12)."""
    accelerators = resources.accelerators
    return exact_text(resources.count) + (f" ({exact_text(accelerators)})" if accelerators else "")


# Said under a reach table that shows a fraction of an instance (john's 1.5 in dev): what half an instance means.
# {example} is the first fraction the table itself shows, so the note never names a number the reader cannot find.
FRACTIONAL_REACH = ("a fraction of an instance ({example}) is instances' worth of resources: task governance gives quotas "
                    "as accelerators, vCPU and memory, and a borrow limit is a percentage of them, so pods smaller than "
                    "a node can use the fraction; a job of whole-node pods cannot")


def fractional_reach_text(rows: list[TeamReach]) -> str | None:
    """The FRACTIONAL_REACH note for `rows`, naming their first fraction of an instance; None when all are whole."""
    fractions = [amount.count for row in rows for amount in (row.quota, row.reach) if amount.count.denominator != 1]
    return FRACTIONAL_REACH.format(example=exact_text(fractions[0])) if fractions else None


def fractional_reach_note(rows: list[TeamReach], indent: str) -> list[str]:
    """The note as a table's last line, when a quota or reach in `rows` is not a whole number of instances."""
    text = fractional_reach_text(rows)
    return [f"{indent}{text}"] if text else []


def halved_cpu_note(rows: Sequence[CapacityRow], indent: str) -> list[str]:
    """Under the capacity table, where a type's nodes have fewer vCPU than the catalogue (threads_per_core 1 on a
    type with two threads per core): the vCPU column is SageMaker's count, not what pods can be given."""
    halved = [f"{row.instance_type} {row.node_vcpu} of {CATALOGUE[row.instance_type].vcpu}" for row in rows
              if row.node_vcpu is not None and row.node_vcpu < CATALOGUE[row.instance_type].vcpu]
    if not halved:
        return []
    return [f"{indent}hyper-threading off (threads_per_core 1): a node offers half the vCPU SageMaker counts "
            f"({', '.join(halved)} per node); the vCPU column and the quotas count the full vCPU, pods get the half"]


def limited_by(row: TeamReach | PartitionReach) -> str:
    """What stops a team borrowing more, in words."""
    if row.capped_by is None:
        return "-"
    if row.capped_by == SHARING_DISABLED:
        return "idle sharing Disabled"
    if row.capped_by == ABSOLUTE_LIMIT:
        return "absolute borrow limit"
    if row.capped_by == BORROW_LIMIT:
        return f"borrow limit {row.borrow_limit} %" if isinstance(row, TeamReach) else "borrow limit"
    return "what others lend"


def render_table(report: Report, strict: bool = False, quote: Sequence[str] | None = None) -> str:
    """The report as text; `strict` (validate --strict) makes warnings fail, and the verdict says so. `quote`: the
    file's lines, each finding's shown under it (init's refused file, which exists nowhere to open)."""

    def quoted(line: int) -> list[str]:
        if quote is None or not 1 <= line <= len(quote):
            return []
        return [f"  {line:>4} | {printable(quote[line - 1])}"]

    lines = [printable(report.file) + (f" (environment {printable(report.environment)})" if report.environment else "")]
    if report.capacity:
        pool = report.capacity[0].shared_pool is not None
        # Shown where some capacity is best-effort (autoscaled, flexible or Spot groups): fixed clusters read as before.
        split = any(not row.best_effort.is_zero() for row in report.capacity)
        header = ("instance type", "count", "accelerators", "vCPU", "memory GiB", *(("shared pool",) if pool else ()),
                  "unreserved", *(("guaranteed", "best-effort") if split else ()))
        rows = [(row.instance_type, *(_cell(row.reserved, row.capacity, d) for d in DIMENSIONS),
                 *((resource_amount(row.shared_pool),) if row.shared_pool is not None else ()), resource_amount(row.unreserved),
                 *((resource_amount(row.guaranteed), resource_amount(row.best_effort)) if split else ()))
                for row in report.capacity]
        lines.append("  reserved/capacity (! = over capacity)" + ("; shared pool: the pool's own quota" if pool else "")
                     + "; unreserved: held by no team" + (" or pool" if pool else "")
                     + " (idle sharing lends it to teams that borrow) - in instances (accelerators)")
        if split:
            lines.append("  capacity is the most the groups may give; guaranteed: fixed On-Demand groups of one type; "
                         "best-effort: autoscaled (up to max_count), flexible (may come up as another type) and Spot")
        lines.extend(aligned([header, *rows], indent="  "))
        lines.extend(halved_cpu_note(report.capacity, indent="  "))
    if report.reach:
        lines.append("  team reach: quota, and the most it can use by borrowing (instances, accelerators)")
        header = ("team", "instance type", "strategy", "quota", "reach", "limited by")
        rows = [(row.team, row.instance_type, row.strategy, resource_amount(row.quota), resource_amount(row.reach), limited_by(row))
                for row in report.reach]
        lines.extend(aligned([header, *rows], indent="  "))
        lines.extend(fractional_reach_note(report.reach, indent="  "))
    lines.extend(_partition_lines(report))
    lines.extend(_batch_lines(report))
    for finding in report.findings:
        lines += [finding.render(), *quoted(finding.line)]
    for ack in report.acknowledged:
        lines.append(f"acknowledged ({ack.by}): {ack.finding.render()} - kept because: {printable(ack.reason)}")
    if report.held_back:
        lines.append(held_back_line(report))
        for line in dict.fromkeys(f.line for f in report.held_back):
            lines += quoted(line)
    if report.rules_skipped:
        # Without this line a shape error looks like the only problem, while nothing else was checked yet.
        lines.append("not checked yet: the policy rules (capacity, reach, names, Kueue mapping ...) need the shape "
                     "errors above fixed first; validate again after fixing them")
    verdict = "unreadable" if report.unreadable else ("invalid" if report.errors else "valid")
    counts = f"{len(report.errors)} error(s), {len(report.warnings)} warning(s)" + (
        f" ({len(report.acknowledged)} acknowledged)" if report.acknowledged else "")
    if strict and verdict == "valid" and report.warnings:
        lines.append(f"invalid under --strict: {counts} (--strict makes the warnings fail)")
    else:
        lines.append(f"{verdict}: {counts}")
    return "\n".join(lines)


def held_back_line(report: Report) -> str:
    """One line for the findings that may only follow from the errors above: which and where (not their advice),
    what they rest on, and which errors to fix first."""
    held = report.held_back
    lines_of: dict[str, dict[str, None]] = {}  # distinct lines per code, in order
    for finding in held:
        lines_of.setdefault(finding.code, {})[str(finding.line)] = None
    where = "; ".join(f"{code} at line{'s' if len(at) > 1 else ''} {', '.join(at)}" for code, at in lines_of.items())
    causes = [f"line {_cause_line(report, path)} ({path})" if _cause_line(report, path) else path
              for path in report.held_because]
    rests = ""
    if any(f.code.startswith("HPK5") for f in held) and any(".instance_groups[" in p and p.endswith("instance_type")
                                                            for p in report.held_because):
        # The one case a reader cannot guess: the quotas may be fine once the group's type is what was meant.
        rests = ("; a group's capacity is unknown while its instance type is, and the cluster may hold enough for "
                 "these quotas once it is fixed (quotas over capacity whatever the type are reported above)")
    return (f"held back: {len(held)} finding(s) ({where}) that may only follow from the error(s) at "
            f"{', '.join(causes) or 'the errors above'}{rests}; fix those first and validate again to see them")


def _cause_line(report: Report, path: str) -> int | None:
    """The line of the error at a broken key (or at a key within or around it)."""
    for finding in report.errors:
        if finding.path == path or finding.path.startswith((path + ".", path + "[")) \
                or path.startswith((finding.path + ".", finding.path + "[")):
            return finding.line
    return None


def _partition_lines(report: Report) -> list[str]:
    """GPU partitions: reserved/given per instance type and MIG profile, then each team's reach in them."""
    lines = []
    if report.partitions:
        lines.append("  GPU partitions (MIG): reserved/given by the groups' nvidia.com/mig.config geometry (! = over)")
        rows = [(row.instance_type, row.profile, f"{row.reserved}/{row.capacity}" + (" !" if row.reserved > row.capacity else ""),
                 str(row.unreserved)) for row in report.partitions]
        lines.extend(aligned([("instance type", "profile", "partitions", "unreserved"), *rows], indent="  "))
    if report.partition_reach:
        lines.append("  team reach in partitions: quota, and the most it can use by borrowing")
        rows = [(row.team, row.instance_type, row.profile, str(row.quota), str(row.reach), limited_by(row))
                for row in report.partition_reach]
        lines.extend(aligned([("team", "instance type", "profile", "quota", "reach", "limited by"), *rows], indent="  "))
    return lines


def _batch_lines(report: Report) -> list[str]:
    """AWS Batch: quota shares held / capacity per service environment and unit, then each queue's shares."""
    lines = []
    if report.batch_capacity:
        lines.append("  AWS Batch: quota shares held/capacity per service environment (- = no quota-share queue, ! = over)")
        rows = [(row.service_environment, row.unit,
                 f"{'-' if row.quota_shares is None else row.quota_shares}/{row.capacity}"
                 + (" !" if (row.quota_shares or 0) > row.capacity else ""))
                for row in report.batch_capacity]
        lines.extend(aligned([("service environment", "unit", "held/capacity"), *rows], indent="  "))
    if report.batch_queues:
        lines.append("  AWS Batch queues: shares (fair share: weight factor, lower = larger share, and the share "
                     "identifier's part of the queue while every one on it has jobs waiting; quota share: quota and "
                     "reach by borrowing)")
        rows = []
        for queue in report.batch_queues:
            shares = [f"{s.team} {s.share_identifier} weight {s.weight_factor if s.weight_factor is not None else '1.0 (default)'}"
                      f" = {percent_text(s.part)}"
                      if s.unit is None else f"{s.team} {s.quota} -> {s.reach} {s.unit} ({s.strategy})"
                      for s in queue.shares]
            rows.append((queue.queue, queue.scheduling, str(queue.priority), queue.service_environment,
                         "; ".join(shares) or "-"))
        lines.extend(aligned([("queue", "scheduling", "priority", "service environment", "shares"), *rows], indent="  "))
    return lines
