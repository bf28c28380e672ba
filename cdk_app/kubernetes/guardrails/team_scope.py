"""Which namespaces the policies bind and what each team may use there (priority classes, capabilities)."""

from __future__ import annotations

from cdk_app.config.model import KitConfig
from cdk_app.domain.kueue_mapping import governed_teams
from cdk_app.kubernetes.guardrails.cel import lit, per_namespace
from cdk_app.kubernetes.guardrails.constants import BASELINE_CAPABILITIES


def allowed_priority_classes(config: KitConfig, team: str) -> list[str]:
    """The classes a team may name: teams[].priority_classes, by default every class of the cluster policy."""
    chosen = next((t.priority_classes for t in config.teams if t.name == team), None)
    if chosen is None:
        chosen = tuple(c.name for c in config.cluster_policy.priority_classes)
    return list(chosen)


def _allowed_by_team(config: KitConfig) -> dict[str, list[str]]:
    """allowed_priority_classes of every bound team, in one pass over the teams (not one per team)."""
    chosen: dict[str, tuple[str, ...] | None] = {}
    for team in config.teams:
        chosen.setdefault(team.name, team.priority_classes)  # the first team of a name, as next() finds it
    default = tuple(c.name for c in config.cluster_policy.priority_classes)
    return {name: list(default if chosen.get(name) is None else chosen[name]) for name in governed_teams(config)}


def priority_label(priority_class: str) -> str:
    """The label value (and WorkloadPriorityClass name) task governance gives a class."""
    return f"{priority_class}-priority"


def priority_variable(config: KitConfig) -> dict[str, str]:
    values = {team: [priority_label(c) for c in allowed] for team, allowed in _allowed_by_team(config).items()}
    return {"name": "priorityClasses", "expression": per_namespace(values)}


def priority_text(config: KitConfig) -> str:
    """CEL: the request namespace's allowed classes as one string, for messages (CEL has no join here)."""
    return per_namespace({team: ", ".join(priority_label(c) for c in allowed) or "none"
                           for team, allowed in _allowed_by_team(config).items()})


def capability_variable(config: KitConfig) -> dict[str, str]:
    extras = {team.name: team.allowed_capabilities for team in config.teams}
    values = {team: extras.get(team, ()) for team in governed_teams(config)}
    return {"name": "capabilities", "expression": f"{lit(BASELINE_CAPABILITIES)} + {per_namespace(values)}"}
