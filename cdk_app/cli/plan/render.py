"""A plan in an admin's words."""

from __future__ import annotations

from cdk_app.cli.plan.model import (
    BILLED_WHEN_KEPT,
    EDITING_DOC,
    MOVE_DOC,
    QUOTA_DOC,
    QUOTA_FIELDS,
    REMOVAL_DOC,
    REMOVED_TEAM,
    STACK_REMOVAL_DOC,
    GroupChange,
    Hazard,
    Plan,
    ResourceChange,
    TeamChange,
)
from cdk_app.config.names import team_namespace
from cdk_app.domain.capacity import unit_for


def _amounts(amounts: dict[str, float]) -> str:
    words = [f"{value:g} {unit_for(value, word)}" for dim, word in QUOTA_FIELDS if (value := amounts.get(dim)) is not None]
    words += [f"{value:g} {profile} {unit_for(value, 'partitions')}"
              for profile, value in sorted(amounts.items()) if profile.startswith("mig-")]
    return ", ".join(words) or "none"


def _quota_lines(change: TeamChange) -> list[str]:
    lines = []
    for itype in sorted(set(change.before) | set(change.after)):
        old, new = change.before.get(itype), change.after.get(itype)
        if old != new:
            lines.append(f"      {itype}: {_amounts(old) if old else 'none'} -> {_amounts(new) if new else 'none'}")
    return lines


def _group_line(change: GroupChange) -> str:
    """One instance group's node change, from -> to; a removal's own refusal is among the hazards."""
    nodes = f"x {change.instance_type}"
    if change.before is None:
        return f"  + instance group {change.group} added: {change.after} {nodes}"
    if change.after is None:
        return f"  - instance group {change.group} removed: {change.before} {nodes} (its nodes are terminated)"
    if change.after > change.before:
        return (f"  ~ instance group {change.group} grown: {change.before} -> {change.after} {nodes} "
                f"({change.after - change.before} node(s) added)")
    return (f"  ~ instance group {change.group} shrunk: {change.before} -> {change.after} {nodes} "
            f"({change.before - change.after} node(s) removed: SageMaker picks which; jobs on them stop)")


ACTION_WORDS = {"add": "create", "remove": "DELETE", "replace": "REPLACE", "modify": "update"}


# The line already says "will FAIL" and why; naming it changes nothing.
FAILS_VERDICT = "refused whatever --allow-replace names"


def _verdict(name: str, allowed: tuple[str, ...]) -> str:
    return "allowed by --allow-replace" if name in allowed else f"REFUSED (name it with --allow-replace {name} if intended)"


def _outcome(change: ResourceChange) -> str:
    if change.fails:
        return f"; will FAIL: {change.fails}"
    if change.retained:
        billed = BILLED_WHEN_KEPT.get(change.type)
        return (f"; the old one stays in the account ({change.retained})"
                + (f": {billed} until you delete it" if billed else ""))
    return "; the old one is DELETED" if change.action == "replace" else ""


def _cluster_advice(change: ResourceChange) -> str:
    """A HyperPod cluster is never replaced by a deploy that works: its policy and quotas follow it and keep
    their fixed names (and with its name kept, so does the cluster), so say what to do instead."""
    return (f"  ! the HyperPod cluster cannot be replaced by this environment's deploy ({'; '.join(change.reasons)}). "
            "Keep hyperpod.cluster_name, network.cluster_zone_ids and the EKS cluster as deployed, or create a new "
            "environment (a config file with its own environment name) beside this one, move the teams' work to it "
            f"and then remove this one ({EDITING_DOC})")


def _hazard_line(hazard: Hazard, allowed: tuple[str, ...]) -> str:
    if hazard.fails:
        verdict = f"will FAIL: {FAILS_VERDICT}"
    else:
        verdict = _verdict(hazard.name, allowed) if hazard.refuse else "called out, not refused"
    return f"  {hazard.text} - {verdict}"


def render(plan: Plan, allowed: tuple[str, ...] = ()) -> str:
    lines = [f"plan against {plan.baseline}"]
    # A hazard about a team (a rename) is read with the teams, not with the nodes'.
    team_hazards = [h for h in plan.hazards if h.name.startswith("team:")]
    if plan.teams or team_hazards:
        lines.append("teams:")
    for team in plan.teams:
        if team.change == "added":
            lines.append(f"  + team {team.team} added")
        elif team.change == "removed":
            lines.append(f"  - team {team.team} removed: its compute quota is deleted")
        elif team.moved is not None:
            lines.append(f"  ~ team {team.team} moves from stack {team.moved[0]} to {team.moved[1]}: its compute "
                         f"quota is deleted and created again ({MOVE_DOC})")
        else:
            lines.append(f"  ~ team {team.team}" + (": allocation disabled" if team.disabled else ": quota changed"))
        lines.extend(_quota_lines(team))
        if team.change == "removed":
            lines.append(f"    ! {REMOVED_TEAM.format(namespace=team_namespace(team.team))} (drain and copy out "
                         f"first: {REMOVAL_DOC})")
        elif team.may_preempt:
            lines.append(f"    ! running jobs of team {team.team} beyond what it is now guaranteed run on borrowed "
                         f"compute and may be preempted (drain or resize them first: {QUOTA_DOC})")
    lines.extend(_hazard_line(hazard, allowed) for hazard in team_hazards)
    if plan.groups:
        lines.append("instance groups:")
        lines.extend(_group_line(change) for change in plan.groups)
    node_hazards = [h for h in plan.hazards if h not in team_hazards]
    if node_hazards:
        lines.append("nodes, allocations and protection:")
    lines.extend(_hazard_line(hazard, allowed) for hazard in node_hazards)
    dangerous = [c for c in plan.changes if c.dangerous]
    if dangerous:
        lines.append("stateful resources replaced or deleted:")
    for change in dangerous:
        verdict = FAILS_VERDICT if change.fails else _verdict(change.logical_id, allowed)
        lines.append(f"  {ACTION_WORDS[change.action]} {change.path} ({change.type}, logical id {change.logical_id}): "
                     f"{'; '.join(change.reasons) or 'removed from the template'}{_outcome(change)} - {verdict}")
    lines.extend(_cluster_advice(c) for c in dangerous
                 if c.type == "AWS::SageMaker::Cluster" and c.action == "replace")
    others = [c for c in plan.changes if not c.dangerous]
    if others:
        lines.append("other changes:")
        for stack in sorted({c.stack for c in others}):
            counts: dict[str, int] = {}
            for change in (c for c in others if c.stack == stack):
                counts[ACTION_WORDS[change.action]] = counts.get(ACTION_WORDS[change.action], 0) + 1
            lines.append(f"  {stack}: " + ", ".join(f"{n} {word}" for word, n in sorted(counts.items())))
            lines.extend(f"    {ACTION_WORDS[c.action]} {c.path} ({c.type})" + (f": {'; '.join(c.reasons)}" if c.reasons else "")
                         for c in others if c.stack == stack and c.action in ("replace", "remove"))
    for stack in plan.left_stacks:
        lines.append(f"stack {stack} is no longer in the app: `cdk deploy` does not delete it, its resources keep "
                     f"running unmanaged (see {STACK_REMOVAL_DOC})")
    if not plan.changes and not plan.left_stacks:
        lines.append("no changes")
    failing, unnamed = plan.failing(), plan.unnamed(allowed)
    if failing:
        lines.append(f"will fail: {len(failing)} change(s) CloudFormation refuses, whatever --allow-replace names: "
                     f"{', '.join(failing)}")
    if unnamed:
        lines.append(f"refused: {len(unnamed)} change(s) that destroy, not named with --allow-replace: "
                     f"{', '.join(unnamed)}")
    if not failing and not unnamed:
        lines.append("ok: nothing stateful is replaced, deleted or weakened without --allow-replace")
    return "\n".join(lines)
