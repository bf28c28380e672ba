"""Which stack holds each team, and what every governance-side stack costs against CloudFormation's limits.

Pure Python (no aws_cdk): app_builder places the teams with `team_layout`, and the validator checks the
same placement with `stack_costs` before anything is synthesized - one source of truth for both.

Placement. task_governance.team_stacks = 0 (the default) keeps every team in the governance stack, as the
kit always did, so a deployed environment's quotas stay where they are. With team_stacks = N > 0 there are
N team stacks, HyperPod-<env>-teams-<k>, and a team lives in stack k = CRC-32 of its name modulo N: a
function of the team's own name and the fixed N only, so adding or removing a team never moves another
team's quota (a moved quota is deleted and created again, and running jobs lose their guarantee). Every
one of the N stacks always exists (an empty one holds a placeholder), so removing a stack's last team
still deletes its resources. A team may be pinned to a stack (teams[].team_stack) when its own stack is
full; pinning is decided when the team is added, so it moves nobody.

Costs. Resources, outputs and parameters are counted exactly per piece (what the constructs make); template
bytes are estimated from per-piece sizes measured on a real synth (tests/test_stack_layout.py fails when
the estimate drifts from the synthesized templates by more than its stated margin).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

from cdk_app.config.model import KitConfig, Team
from cdk_app.governance_types import uses_native

GOVERNANCE = "governance"
# CloudFormation's quotas per template (the body CDK uploads to S3 when it is over 51,200 bytes: 1 MB).
LIMITS = {"resources": 500, "outputs": 200, "parameters": 200, "template bytes": 1_000_000}
MAX_TEAM_STACKS = 100

# Resources per piece (the constructs' own counts; tests/test_stack_layout.py compares with the synth).
TEAM_QUOTA = 1  # ComputeQuota, native or API custom resource
TEAM_RBAC = 1  # Custom::KubernetesManifests
TEAM_ACCESS = 2  # IAM role + EKS access entry
# The API path's handler: functions, roles, policies, log groups and the waiter state machine (one per stack).
API_PROVIDER = 12
GOVERNANCE_FIXED = 3  # task-governance add-on, Kueue wait, cluster policy
GUARDRAILS = 1
OBSERVABILITY = 2  # CloudWatch agent role + add-on
PLACEHOLDER = 1  # AWS::CloudFormation::WaitConditionHandle of an empty team stack
CDK_METADATA = 1  # AWS::CDK::Metadata (version reporting, on in `cdk synth`)
PARAMETERS = 1  # BootstrapVersion of CDK's default synthesizer

# Bytes per piece of the written template (JSON, one-space indent), measured: see tests/test_stack_layout.py.
BYTES_STACK = 1_900  # Parameters, Rules, metadata resource, an output
BYTES_GOVERNANCE = 6_000  # add-on, Kueue wait, cluster policy, outputs
BYTES_GUARDRAILS = 48_000  # the two admission policies and their bindings, without the per-namespace entries
BYTES_GUARDED_NAMESPACE = 320  # each team namespace in the guardrails' maps and bindings
BYTES_OBSERVABILITY = 2_400
BYTES_API_PROVIDER = 14_000
BYTES_QUOTA = 1_300  # plus BYTES_QUOTA_ENTRY per instance type
BYTES_QUOTA_ENTRY = 90
BYTES_RBAC = 1_900
BYTES_ACCESS = 1_500  # plus BYTES_PRINCIPAL per principal (and its length)
BYTES_PRINCIPAL = 20
BYTES_ROLE_ARN_ENTRY = 90  # the team's entry in the TeamRoleArns output
BYTES_PER_NAME_USE = 12  # times the team name appears in its pieces (ids, names, paths, namespaces)
BYTES_PLACEHOLDER = 200


@dataclass(frozen=True, slots=True)
class Cost:
    resources: int = 0
    outputs: int = 0
    parameters: int = 0
    bytes: int = 0

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.resources + other.resources, self.outputs + other.outputs,
                    self.parameters + other.parameters, self.bytes + other.bytes)

    def against_limits(self) -> dict[str, tuple[int, int]]:
        """Limit name -> (this stack's amount, CloudFormation's limit)."""
        return {"resources": (self.resources, LIMITS["resources"]), "outputs": (self.outputs, LIMITS["outputs"]),
                "parameters": (self.parameters, LIMITS["parameters"]),
                "template bytes": (self.bytes, LIMITS["template bytes"])}


def team_stack_name(index: int) -> str:
    return f"teams-{index}"


def hashed_team_stack(team: str, team_stacks: int) -> int:
    """The team stack a team name belongs to: CRC-32 (stable across runs and machines, unlike hash())."""
    return zlib.crc32(team.encode("utf-8")) % team_stacks


@dataclass(frozen=True)
class TeamLayout:
    """Stack suffix (governance or teams-<k>) -> the teams it holds, in config order."""

    stacks: dict[str, tuple[Team, ...]] = field(default_factory=dict)

    @property
    def team_stacks(self) -> list[str]:
        return [name for name in self.stacks if name != GOVERNANCE]

    def stack_of(self, team: str) -> str:
        return next(stack for stack, teams in self.stacks.items() if any(t.name == team for t in teams))


def team_layout(config: KitConfig) -> TeamLayout:
    """Where each team goes: the governance stack (team_stacks 0), else its pin or its hashed team stack.
    Pins outside 0..team_stacks-1 are the validator's to report; here they fall back to the hash."""
    count = config.task_governance.team_stacks
    if count == 0:
        return TeamLayout({GOVERNANCE: tuple(config.teams)})
    members: dict[str, list[Team]] = {team_stack_name(k): [] for k in range(count)}
    for team in config.teams:
        pinned = team.team_stack if team.team_stack is not None and team.team_stack < count else None
        index = hashed_team_stack(team.name, count) if pinned is None else pinned
        members[team_stack_name(index)].append(team)
    return TeamLayout({GOVERNANCE: (), **{name: tuple(teams) for name, teams in members.items()}})


def team_cost(team: Team) -> Cost:
    """A team's quota, its RBAC and, with principals, its role and access entry."""
    resources = TEAM_QUOTA + TEAM_RBAC
    size = BYTES_QUOTA + BYTES_QUOTA_ENTRY * len(team.quota) + BYTES_RBAC + BYTES_PER_NAME_USE * len(team.name)
    if team.principals:
        resources += TEAM_ACCESS
        size += BYTES_ACCESS + BYTES_ROLE_ARN_ENTRY + sum(BYTES_PRINCIPAL + len(p) for p in team.principals)
    return Cost(resources=resources, bytes=size)


def _base(config: KitConfig, teams: tuple[Team, ...]) -> Cost:
    """What every team-holding stack has besides its teams: CDK's parameter and metadata, the API handler
    when its quotas are API-backed, the TeamRoleArns output when a team has principals."""
    cost = Cost(resources=CDK_METADATA, parameters=PARAMETERS, bytes=BYTES_STACK)
    if teams and not uses_native(config, "compute_quota"):
        cost += Cost(resources=API_PROVIDER, bytes=BYTES_API_PROVIDER)
    if any(t.principals for t in teams):
        cost += Cost(outputs=1)
    return cost


def governance_cost(config: KitConfig, teams: tuple[Team, ...]) -> Cost:
    bound = len(config.teams) + (config.shared_pool is not None)
    cost = _base(config, teams) + Cost(resources=GOVERNANCE_FIXED, outputs=1, bytes=BYTES_GOVERNANCE)
    if not uses_native(config, "cluster_policy") and not (teams and not uses_native(config, "compute_quota")):
        cost += Cost(resources=API_PROVIDER, bytes=BYTES_API_PROVIDER)  # the policy's handler, if not there yet
    if bound:
        cost += Cost(resources=GUARDRAILS, bytes=BYTES_GUARDRAILS + BYTES_GUARDED_NAMESPACE * bound)
    if config.shared_pool is not None:
        cost += Cost(resources=TEAM_QUOTA, bytes=BYTES_QUOTA + BYTES_QUOTA_ENTRY * 2)
    if config.observability.enabled:
        cost += Cost(resources=OBSERVABILITY, bytes=BYTES_OBSERVABILITY)
    return cost


def stack_costs(config: KitConfig, layout: TeamLayout | None = None) -> dict[str, Cost]:
    """Stack suffix -> its estimated cost, for the governance stack and every team stack."""
    layout = layout or team_layout(config)
    costs: dict[str, Cost] = {}
    for stack, teams in layout.stacks.items():
        cost = governance_cost(config, teams) if stack == GOVERNANCE else _base(config, teams)
        if stack != GOVERNANCE and not teams:
            cost += Cost(resources=PLACEHOLDER, bytes=BYTES_PLACEHOLDER)
        for team in teams:
            cost += team_cost(team)
        costs[stack] = cost
    return costs


def stack_name(config: KitConfig, suffix: str) -> str:
    return f"HyperPod-{config.environment}-{suffix}"


def suggested_team_stacks(config: KitConfig) -> int:
    """Team stacks that leave each one about half full on average, so hashing's unevenness and growth fit."""
    total = Cost()
    for team in config.teams:
        total += team_cost(team)
    per_stack = (LIMITS["resources"] // 2, LIMITS["template bytes"] // 2)
    return max(2, -(-total.resources // per_stack[0]), -(-total.bytes // per_stack[1]))
