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
bytes are estimated from per-piece sizes measured on a real synth (tests/stacks/test_layout.py fails when
the estimate drifts from the synthesized templates by more than its stated margin).
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field

from cdk_app.config.model import KitConfig, QuotaEntry, Team
from cdk_app.config.storage_model import team_file_systems
from cdk_app.domain.governance_types import estimated_native

GOVERNANCE = "governance"
NETWORK, CLUSTER, BATCH, STORAGE = "network", "cluster", "batch", "storage"
# CloudFormation's quotas per template (the body CDK uploads to S3 when it is over 51,200 bytes: 1 MB).
LIMITS = {"resources": 500, "outputs": 200, "parameters": 200, "template bytes": 1_000_000}

# Resources per piece (the constructs' own counts; tests/stacks/test_layout.py compares with the synth).
TEAM_QUOTA = 1  # ComputeQuota, native or API custom resource
TEAM_RBAC = 1  # Custom::KubernetesManifests
TEAM_ACCESS = 2  # IAM role + EKS access entry
# The API path's handler: 5 functions, 5 roles, 5 policies, 2 log groups, the waiter state machine.
API_PROVIDER = 18
GOVERNANCE_FIXED = 4  # schedulable-node wait, task-governance add-on, Kueue wait, cluster policy
GUARDRAILS = 1
OBSERVABILITY = 2  # CloudWatch agent role + add-on
PLACEHOLDER = 1  # AWS::CloudFormation::WaitConditionHandle of an empty team stack
CDK_METADATA = 1  # AWS::CDK::Metadata (version reporting, on in `cdk synth`)
PARAMETERS = 1  # BootstrapVersion of CDK's default synthesizer

# Bytes of each piece in the written template (JSON, one-space indent), measured on synths of environment
# "dev" (stack names of 20 characters) with the team name left out; each piece also carries the team name
# (logical id, path, names: NAME_USES times), its stack's name in its path and, per import of a cluster-stack
# value, the environment name. tests/stacks/test_layout.py holds the estimate to the real templates.
BYTES_STACK = 1_400  # description, Parameters, Rules, CDK metadata
BYTES_GOVERNANCE = 3_260  # node wait, add-on, Kueue wait, native cluster policy, ClusterPolicyArn output
BYTES_API_POLICY = 500  # the API-backed cluster policy is that much larger than the native one
BYTES_API_PROVIDER = 25_350  # its five functions carry the kit's function tag (python_handler_provider.FUNCTION_TAG)
# The guardrails resource names its content's asset (bucket, key, digest); the content itself, which grows with
# the teams, is an S3 object (constructs/kubernetes_manifests.py), so the template does not.
BYTES_GUARDRAILS = 1_050
BYTES_OBSERVABILITY = 1_900
BYTES_QUOTA = 660  # plus its entries
BYTES_QUOTA_ENTRY = 40  # plus the instance type, and per amount given 14 + the field's name and value
BYTES_RBAC = 700  # plus the manifests string, as the template escapes it
RBAC_PAYLOAD_BASE, RBAC_NAME_USES = 4028, 20
# A volume claim of the team (one per file system of it, storage section) in the same string: plus 3 per team-name
# and 2 per claim-name character.
CLAIM_PAYLOAD_BASE = 382
BYTES_ROLE = 565  # plus each principal (12 more each when there are several)
BYTES_ACCESS_ENTRY = 565
BYTES_ROLE_ARN_ENTRY = 125  # the team's part of the TeamRoleArns output, plus 2 per name character
BYTES_PLACEHOLDER = 200
NAME_USES = 4
# The Batch stack's pieces, measured the same way on synths of config/batch-only-example.yaml and of a varied
# Batch section (tests/stacks/test_layout.py), without the names they carry (counted per use) and without the
# environment name, which every resource carries twice (its tag and its stack's name in its path).
BYTES_BATCH_STACK = 1_900  # description, config digest, Parameters, Rules, CDK metadata
BYTES_BATCH_ENVIRONMENT = 370  # plus 3 per name character and each capacity limit
BYTES_BATCH_LIMIT = 90  # plus the unit and the number
BYTES_BATCH_QUEUE = 540  # plus 3 per name character and its service environment's name
BYTES_BATCH_QUEUE_POLICY = 110  # the queue's reference to its scheduling policy, plus the queue name
BYTES_BATCH_QUEUE_TIMEOUT = 215  # a RUNNABLE time limit, plus the queue name
BYTES_BATCH_POLICY = 380  # plus 3 per queue-name character and each share
BYTES_BATCH_SHARE = 85  # plus the share identifier and the weight factor
BYTES_BATCH_QUOTA_SHARE = 550  # plus 3 per team-name character, the queue name and each capacity limit
BYTES_BATCH_ROLE = 570  # plus 3 per team-name character and each principal (60 more for each further one)
BYTES_BATCH_ACCESS = 1_010  # the team's IAM policy: plus 5 per team-name character and the execution role ARN
BYTES_BATCH_QUEUE_GRANT = 135  # per queue the team may use, plus twice the queue name
BYTES_BATCH_STATEMENT = {"fair_share": 340, "quota_share": 390, "fifo": 320}  # one statement per kind it uses
BYTES_BATCH_MAX_PRIORITY = 95  # the priority condition, on each submit statement
BYTES_BATCH_OUTPUT = 220  # BatchTeamRoleArns, plus BYTES_ROLE_ARN_ENTRY and 2 per name character per team
STACK_NAME_REFERENCE = 20  # len("HyperPod-dev-teams-0"), the measured pieces' stack name
ENV_REFERENCE = 3  # len("dev")
IMPORTS = {"quota": 1, "rbac": 2, "role": 0, "access": 1}

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


def rbac_payload(team: str, claims: tuple[str, ...] = ()) -> int:
    """The team's RBAC manifests string as written in the template (compact JSON, then escaped as a JSON
    string). A team name is a DNS label (nothing to escape) and appears RBAC_NAME_USES times, so the size is
    affine in its length; tests/unit/stacks/test_layout.py holds it equal to cdk_app.kubernetes.team_set's
    manifests (kept out of this module so that the validator, which uses it, imports no manifest code)."""
    return RBAC_PAYLOAD_BASE + RBAC_NAME_USES * len(team) + sum(
        CLAIM_PAYLOAD_BASE + 3 * len(team) + 2 * len(claim) for claim in claims)


def _quota_entry(entry: QuotaEntry) -> int:
    amounts = {"Count": entry.count, "Accelerators": entry.accelerators, "VCpu": entry.vcpu,
               "MemoryInGiB": entry.memory_gib}
    # "AcceleratorPartition": {"Type": ..., "Count": ...} on four lines of the synthesized JSON, and a comma
    partition = entry.accelerator_partition
    extra = 0 if partition is None else 82 + len(partition.type) + len(str(partition.count))
    return BYTES_QUOTA_ENTRY + len(entry.instance_type) + extra + sum(
        14 + len(name) + len(str(value)) for name, value in amounts.items() if value is not None)


def _borrow_limits(team: Team) -> int:
    """"AbsoluteBorrowLimits": [...] of ResourceSharingConfig: its key and brackets, and its entries one level
    deeper than the quota's (a space more on each of an entry's lines)."""
    limits = team.absolute_borrow_limits
    if not limits or team.sharing_strategy != "LendAndBorrow":  # the stack writes them for a borrower only
        return 0
    return 41 + sum(_quota_entry(entry) + 12 for entry in limits)


def team_cost(config: KitConfig, team: Team, stack: str) -> Cost:
    """A team's quota, its RBAC and, with principals, its role and access entry, in stack `stack` (suffix)."""
    per_resource = len(stack_name(config, stack)) - STACK_NAME_REFERENCE
    per_import = len(config.environment) - ENV_REFERENCE
    name = NAME_USES * len(team.name)
    resources = TEAM_QUOTA + TEAM_RBAC
    size = (BYTES_QUOTA + name + sum(map(_quota_entry, team.quota)) + _borrow_limits(team) + len(config.environment)
            + BYTES_RBAC + name + rbac_payload(team.name, tuple(fs.name for fs in team_file_systems(config.storage, team.name)))
            + 2 * per_resource + (IMPORTS["quota"] + IMPORTS["rbac"]) * per_import)
    if team.principals:
        resources += TEAM_ACCESS
        several = 12 if len(team.principals) > 1 else 0
        size += (BYTES_ROLE + name + sum(len(p) + several for p in team.principals) + BYTES_ACCESS_ENTRY + name
                 + BYTES_ROLE_ARN_ENTRY + 2 * len(team.name) + 2 * per_resource + IMPORTS["access"] * per_import)
    return Cost(resources=resources, bytes=size)


def _base(config: KitConfig, teams: tuple[Team, ...]) -> Cost:
    """What every team-holding stack has besides its teams: CDK's parameter and metadata, the API handler
    when its quotas are API-backed, the TeamRoleArns output when a team has principals."""
    cost = Cost(resources=CDK_METADATA, parameters=PARAMETERS, bytes=BYTES_STACK)
    if teams and not estimated_native(config, "compute_quota"):
        cost += Cost(resources=API_PROVIDER, bytes=BYTES_API_PROVIDER)
    if any(t.principals for t in teams):
        cost += Cost(outputs=1)
    return cost


def governance_cost(config: KitConfig, teams: tuple[Team, ...]) -> Cost:
    bound = len(config.teams) + (config.shared_pool is not None)
    cost = _base(config, teams) + Cost(resources=GOVERNANCE_FIXED, outputs=1, bytes=BYTES_GOVERNANCE)
    if not estimated_native(config, "cluster_policy"):
        cost += Cost(bytes=BYTES_API_POLICY)
        if not (teams and not estimated_native(config, "compute_quota")):  # the policy's handler, if not there yet
            cost += Cost(resources=API_PROVIDER, bytes=BYTES_API_PROVIDER)
    if bound:
        cost += Cost(resources=GUARDRAILS, bytes=BYTES_GUARDRAILS)
    if config.shared_pool is not None:  # one entry per instance type of the cluster
        types = {g.instance_type for g in config.hyperpod.instance_groups}
        cost += Cost(resources=TEAM_QUOTA, bytes=BYTES_QUOTA + 4 * len(config.shared_pool.name) + sum(
            BYTES_QUOTA_ENTRY + len(t) + 14 + 5 + 4 for t in types))
    if config.observability.enabled:
        cost += Cost(resources=OBSERVABILITY, bytes=BYTES_OBSERVABILITY)
    return cost


def stack_suffixes(config: KitConfig, layout: TeamLayout | None = None) -> tuple[str, ...]:
    """Every stack the app builds for the environment (suffixes of HyperPod-<env>-*): the HyperPod stacks when
    it has a cluster (with the storage stack when it has a storage section), the Batch stack when it has a batch
    section. A Batch-only environment has the Batch
    stack alone - no VPC, EKS, HyperPod or task governance."""
    hyperpod: tuple[str, ...] = ()
    if config.hyperpod is not None:
        storage = (STORAGE,) if config.storage is not None else ()
        hyperpod = (NETWORK, CLUSTER, *storage, *(layout or team_layout(config)).stacks)
    return hyperpod + ((BATCH,) if config.batch is not None else ())


def batch_cost(config: KitConfig) -> Cost:
    """The Batch stack (cdk_app.stacks.batch_stack): a service environment per entry, a job queue per queue
    with a scheduling policy unless FIFO, a quota share per team on a quota-share queue, a role and policy per
    team with principals and an execution role, and one output (BatchTeamRoleArns) when any team has a role."""
    from cdk_app.domain.batch_shares import quota_share_teams, roles_of  # keeps this module's import light

    spec = config.batch
    assert spec is not None
    per_resource = 2 * len(config.environment)
    cost = Cost(resources=CDK_METADATA, parameters=PARAMETERS, bytes=BYTES_BATCH_STACK + per_resource)
    kinds = {q.name: q.scheduling for q in spec.queues}
    for env in spec.service_environments:
        cost += Cost(resources=1, bytes=BYTES_BATCH_ENVIRONMENT + 3 * len(env.name) + per_resource + sum(
            BYTES_BATCH_LIMIT + len(c.unit) + len(str(c.max_capacity)) for c in env.capacity_limits))
    for queue in spec.queues:
        size = BYTES_BATCH_QUEUE + 3 * len(queue.name) + len(queue.service_environment) + per_resource
        if queue.runnable_timeout_seconds is not None:
            size += BYTES_BATCH_QUEUE_TIMEOUT + len(queue.name)
        if queue.scheduling != "fifo":
            size += BYTES_BATCH_QUEUE_POLICY + len(queue.name)
            shares = [t for t in spec.teams if queue.name in t.queues and t.share_identifier is not None]
            size += BYTES_BATCH_POLICY + 3 * len(queue.name) + per_resource + (sum(
                BYTES_BATCH_SHARE + len(t.share_identifier or "") + len(str(t.weight_factor or ""))
                for t in shares) if queue.scheduling == "fair_share" else 0)
        cost += Cost(resources=1 + (queue.scheduling != "fifo"), bytes=size)
    for team, queue in quota_share_teams(spec):
        cost += Cost(resources=1, bytes=BYTES_BATCH_QUOTA_SHARE + 3 * len(team.name) + len(queue) + per_resource + sum(
            BYTES_BATCH_LIMIT + len(q.instance_type) + len(str(q.count)) for q in team.quota))
    roles = roles_of(spec)
    for team in roles:
        used = {kinds[name] for name in team.queues if name in kinds}
        several = 60 * (len(team.principals) - 1)
        cost += Cost(resources=2, bytes=BYTES_BATCH_ROLE + 3 * len(team.name) + several + sum(map(len, team.principals))
                     + BYTES_BATCH_ACCESS + 5 * len(team.name) + len(team.execution_role_arn or "") + 2 * per_resource
                     + sum(BYTES_BATCH_QUEUE_GRANT + 2 * len(name) for name in team.queues)
                     + sum(BYTES_BATCH_STATEMENT[kind] + (BYTES_BATCH_MAX_PRIORITY if team.max_priority is not None else 0)
                           for kind in used) + len(team.share_identifier or ""))
    if roles:
        cost += Cost(outputs=1, bytes=BYTES_BATCH_OUTPUT + sum(BYTES_ROLE_ARN_ENTRY + 2 * len(t.name) for t in roles))
    return cost


def stack_costs(config: KitConfig, layout: TeamLayout | None = None) -> dict[str, Cost]:
    """Stack suffix -> its estimated cost, for the governance stack, every team stack and the Batch stack
    (the network and cluster stacks hold a fixed set of resources, far below every limit; the storage stack at
    most 10 file systems with 8 associations each and 3 more resources)."""
    costs: dict[str, Cost] = {}
    if config.batch is not None:
        costs[BATCH] = batch_cost(config)
    if config.hyperpod is None:
        return costs
    layout = layout or team_layout(config)
    for stack, teams in layout.stacks.items():
        cost = governance_cost(config, teams) if stack == GOVERNANCE else _base(config, teams)
        if stack != GOVERNANCE and not teams:
            cost += Cost(resources=PLACEHOLDER, bytes=BYTES_PLACEHOLDER)
        for team in teams:
            cost += team_cost(config, team, stack)
        costs[stack] = cost
    return costs


STACK_FAMILY = "HyperPod-"


def stack_prefix(environment: str) -> str:
    """What every stack name of an environment starts with."""
    return f"{STACK_FAMILY}{environment}-"


def stack_name(config: KitConfig, suffix: str) -> str:
    return stack_prefix(config.environment) + suffix


def stack_description(config: KitConfig, suffix: str, layout: TeamLayout | None = None) -> str:
    """What stack `suffix` of the environment holds: its CloudFormation description, and what `show` lists."""
    holds = {NETWORK: "VPC, subnets and node security group",
             CLUSTER: "EKS, HyperPod dependencies, lifecycle scripts, execution role and the HyperPod cluster",
             STORAGE: "FSx for Lustre file systems of the teams, the FSx CSI driver and their volumes",
             BATCH: "AWS Batch queues and team shares for SageMaker Training jobs"}.get(suffix)
    if holds is None and suffix == GOVERNANCE:
        holds = "task governance, " + ("team quotas and access, observability"
                                       if (layout or team_layout(config)).stacks[GOVERNANCE] else
                                       f"guardrails, observability (teams: {stack_name(config, 'teams-*')})")
    elif holds is None:
        holds = f"team quotas, access and RBAC ({suffix})"
    return f"hyperpod-kit {config.environment}: {holds}"


# Environments may hold '-' (prod-eu): the environment of a stack name is what precedes a known suffix.
_STACK_NAME = re.compile(rf"{STACK_FAMILY}([a-z][a-z0-9-]*)-(?:{NETWORK}|{CLUSTER}|{STORAGE}|{GOVERNANCE}|{BATCH}|"
                         rf"{team_stack_name(0).removesuffix('0')}[0-9]+)")


def environment_of(stack: str) -> str | None:
    """The environment of one of the kit's stack names; None for any other name."""
    match = _STACK_NAME.fullmatch(stack)
    return match.group(1) if match else None


def suggested_team_stacks(governance: Cost) -> int:
    """Team stacks for the teams of a governance stack that holds them all, each stack about half full on
    average, so hashing's unevenness and growth fit."""
    return max(2, -(-governance.resources // (LIMITS["resources"] // 2)),
               -(-governance.bytes // (LIMITS["template bytes"] // 2)))
