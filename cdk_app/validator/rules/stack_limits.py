"""CloudFormation's per-stack limits (resources, outputs, parameters, template bytes), checked on the stack
layout the app will build (cdk_app.stacks.layout), so a config that cannot deploy is refused before synth."""

from __future__ import annotations

from cdk_app.config.model import KitConfig
from cdk_app.config.yaml_source import PathKey
from cdk_app.stacks.layout import (
    BATCH,
    GOVERNANCE,
    Cost,
    TeamLayout,
    stack_costs,
    stack_name,
    suggested_team_stacks,
    team_layout,
)

# Above this share of a limit, say so while there is room to plan (growing needs team stacks or pins).
NEAR = 0.8
CODE = {"resources": "HPK510", "outputs": "HPK511", "template bytes": "HPK512", "parameters": "HPK513"}
DOC = "README: Many teams"


def _over(cost: Cost, share: float = 1.0) -> list[tuple[str, int, int]]:
    return [(what, amount, limit) for what, (amount, limit) in cost.against_limits().items() if amount > limit * share]


def _index(config: KitConfig, team: str) -> int:
    return next(i for i, t in enumerate(config.teams) if t.name == team)


def check_stack_limits(config: KitConfig, report) -> None:
    count = config.task_governance.team_stacks
    for i, team in enumerate(config.teams if config.hyperpod is not None else ()):
        if team.team_stack is not None and team.team_stack >= count:
            allowed = f"0 to {count - 1}" if count else "none: task_governance.team_stacks is 0"
            report.error("HPK515", ("teams", i, "team_stack"),
                         f"team stack {team.team_stack} does not exist (team stacks: {allowed})",
                         "remove team_stack, or pin the team to an existing team stack")
    layout = team_layout(config)
    costs = stack_costs(config, layout)
    for stack, cost in costs.items():
        name = stack_name(config, stack)
        for what, amount, limit in _over(cost):
            path, hint = _where(config, layout, costs, stack)
            report.error(CODE[what], path,
                         f"stack {name} would have {amount:,} {what}; CloudFormation allows {limit:,} per stack",
                         hint)
        if not _over(cost) and (near := _over(cost, NEAR)):
            what, amount, limit = near[0]
            path, hint = _where(config, layout, costs, stack)
            report.warning("HPK514", path,
                           f"stack {name} would have {amount:,} {what}, {amount / limit:.0%} of CloudFormation's "
                           f"{limit:,} per stack", hint)


def _where(config: KitConfig, layout: TeamLayout, costs: dict[str, Cost], stack: str) -> tuple[PathKey, str]:
    """The field to point at and what to do: the team stacks setting for the governance stack, else the last
    team the full stack received (most likely the one just added) and the team stack with the most room."""
    if stack == BATCH:
        return ("batch",), ("the Batch stack holds every service environment, queue, quota share and team role of "
                            "the environment: split the Batch teams and queues over two environments")
    teams = layout.stacks[stack]
    if stack == GOVERNANCE and not config.task_governance.team_stacks:
        return ("teams",), (f"set task_governance.team_stacks: {suggested_team_stacks(costs[GOVERNANCE])} (a new "
                            f"environment; on a deployed one this moves every team's quota - delete and create: {DOC})")
    if stack == GOVERNANCE:  # what grows here with team stacks: the guardrails list every team namespace
        return ("teams",), f"the guardrails name every team's namespace: split the teams over two environments ({DOC})"
    if not teams:
        return ("task_governance", "team_stacks"), DOC
    roomiest = min((s for s in layout.team_stacks), key=lambda s: costs[s].resources)
    path = ("teams", _index(config, teams[-1].name), "name")
    return path, (f"pin new teams of this stack elsewhere, e.g. team_stack: {roomiest.removeprefix('teams-')} "
                  f"({stack_name(config, roomiest)} has {costs[roomiest].resources} resources); never move a "
                  f"deployed team ({DOC})")
