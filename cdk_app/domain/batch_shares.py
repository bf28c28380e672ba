"""How a `batch:` team maps onto AWS Batch, in one place for the validator, the Batch stack, `batch-job`
and `validate --live`: the QuotaShare settings of a team, the share a team uses on a queue, the
SageMaker Training instance types (from botocore's sagemaker model) and how far a quota share reaches.
Imports neither aws_cdk nor boto3 at module level, so `validate` stays fast when there is no batch section.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from pathlib import Path

from cdk_app.config.batch_model import Batch, BatchQuota, BatchTeam, JobQueue, Scheduling, ServiceEnvironment

# The kit's (HyperPod) vocabulary -> AWS Batch's enums (botocore batch QuotaShareResourceSharingStrategy,
# QuotaShareInSharePreemptionState).
SHARING_STRATEGY = {"LendAndBorrow": "LEND_AND_BORROW", "Lend": "LEND", "DontLend": "RESERVE"}
IN_SHARE_PREEMPTION = {"LowerPriority": "ENABLED", "Never": "DISABLED"}
UNLIMITED_BORROW = -1  # Batch's default borrow limit
SERVICE_JOB_TYPE = "SAGEMAKER_TRAINING"


@lru_cache(maxsize=1)
def training_instance_types() -> frozenset[str]:
    """Instance types SageMaker Training accepts: the TrainingInstanceType enum of botocore's sagemaker model.
    The model file is read directly - importing botocore and building its session costs `validate` far more."""
    spec = importlib.util.find_spec("botocore")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("botocore is not installed; it is a dependency of hyperpod-kit (run make setup)")
    versions = Path(next(iter(spec.submodule_search_locations))) / "data" / "sagemaker"
    latest = max(versions.iterdir())
    packed = latest / "service-2.json.gz"
    text = gzip.decompress(packed.read_bytes()) if packed.is_file() else (latest / "service-2.json").read_bytes()
    return frozenset(json.loads(text)["shapes"]["TrainingInstanceType"]["enum"])


def queue_scheduling(policy_arn: object, policy: Mapping[str, object] | None) -> Scheduling:
    """A queue's scheduling type from its scheduling policy ARN and that policy, as Batch describes it
    (quotaSharePolicy) or as a template holds it (QuotaSharePolicy): `validate --live` (HPK716) and `plan` read
    deployed queues with it. No policy is FIFO; a policy with a quota-share part is quota share, else fair share."""
    if not policy_arn:
        return "fifo"
    return "quota_share" if {"quotaSharePolicy", "QuotaSharePolicy"} & set(policy or {}) else "fair_share"


def queue_named(batch: Batch, name: str) -> JobQueue | None:
    return next((q for q in batch.queues if q.name == name), None)


def environment_named(batch: Batch, name: str) -> ServiceEnvironment | None:
    return next((e for e in batch.service_environments if e.name == name), None)


def team_named(batch: Batch, name: str) -> BatchTeam | None:
    return next((t for t in batch.teams if t.name == name), None)


def submission_refusal(batch: Batch, team: BatchTeam, queue_name: str) -> str | None:
    """Why no new job of `team` on queue `queue_name` is accepted or ever placed, naming the config field that
    says so, or None: the queue's refusal, its service environment's, then the team's quota share's."""
    return (queue_refusal(batch, queue_name) or environment_refusal(batch, queue_name)
            or share_refusal(batch, team, queue_name))


def queue_refusal(batch: Batch, queue_name: str) -> str | None:
    """botocore's batch model (CreateJobQueue state): "If the job queue state is DISABLED, new jobs can't be added
    to the queue, but jobs already in the queue can finish." An unknown queue is the validator's (HPK706): None."""
    i = next((i for i, q in enumerate(batch.queues) if q.name == queue_name), None)
    if i is None or batch.queues[i].enabled:
        return None
    return (f"queue '{queue_name}' is disabled (batch.queues[{i}].enabled: false): Batch adds no new jobs to a "
            "DISABLED job queue; jobs already in it finish")


def environment_refusal(batch: Batch, queue_name: str) -> str | None:
    """A DISABLED service environment is one Batch's scheduler places no jobs on (the batch model says so of a
    DISABLED compute environment, CreateComputeEnvironment state: "the Batch scheduler doesn't attempt to place
    jobs within the environment"), so a job accepted on its queue waits RUNNABLE."""
    queue = queue_named(batch, queue_name)
    if queue is None:
        return None
    k, env = next(((k, e) for k, e in enumerate(batch.service_environments) if e.name == queue.service_environment),
                  (None, None))
    if env is None or env.enabled:
        return None
    waits = (f"until its runnable timeout ({queue.runnable_timeout_seconds} s) ends it"
             if queue.runnable_timeout_seconds is not None else "for as long as the environment stays disabled")
    return (f"service environment '{env.name}' of queue '{queue_name}' is disabled "
            f"(batch.service_environments[{k}].enabled: false): Batch places no jobs on a DISABLED service "
            f"environment, so the job would wait RUNNABLE {waits}")


def share_refusal(batch: Batch, team: BatchTeam, queue_name: str) -> str | None:
    """botocore's batch model (CreateQuotaShare state): "If the quota share is DISABLED, new jobs won't be accepted
    but jobs already submitted can finish." Only quota shares have a state (HPK727 refuses the rest)."""
    queue = queue_named(batch, queue_name)
    if queue is None or queue.scheduling != "quota_share" or team.enabled:
        return None
    t = next(t for t, other in enumerate(batch.teams) if other is team)
    return (f"quota share '{quota_share_name(team)}' is disabled (batch.teams[{t}].enabled: false): Batch accepts "
            "no new jobs in a DISABLED quota share; jobs already submitted finish")


def quota_share_name(team: BatchTeam) -> str:
    return team.name


def borrow_limit(team: BatchTeam) -> int | None:
    """The QuotaShare BorrowLimit to write: only LEND_AND_BORROW shares borrow; None leaves Batch's default."""
    return team.borrow_limit if team.sharing_strategy == "LendAndBorrow" else None


def quota_share_request(team: BatchTeam, queue: str) -> dict[str, object]:
    """The team's quota share as a CreateQuotaShare request (botocore names); the stack writes the same."""
    sharing: dict[str, object] = {"strategy": SHARING_STRATEGY[team.sharing_strategy]}
    if borrow_limit(team) is not None:
        sharing["borrowLimit"] = borrow_limit(team)
    return {
        "quotaShareName": quota_share_name(team),
        "jobQueue": queue,
        "capacityLimits": [{"capacityUnit": q.instance_type, "maxCapacity": q.count} for q in team.quota],
        "resourceSharingConfiguration": sharing,
        "preemptionConfiguration": {"inSharePreemption": IN_SHARE_PREEMPTION[team.preempt_team_tasks]},
        "state": "ENABLED" if team.enabled else "DISABLED",
    }


def teams_on(batch: Batch, queue: str) -> list[BatchTeam]:
    return [t for t in batch.teams if queue in t.queues]


def quota_share_teams(batch: Batch) -> list[tuple[BatchTeam, str]]:
    """(team, queue) for each quota share the Batch stack creates: a team's on its quota_share queue (the
    validator refuses a team on two, HPK713; the first counts)."""
    kinds = {q.name: q.scheduling for q in batch.queues}
    pairs = []
    for team in batch.teams:
        queue = next((name for name in team.queues if kinds.get(name) == "quota_share"), None)
        if queue is not None:
            pairs.append((team, queue))
    return pairs


def environment_quota_entries(batch: Batch, environment: str) -> list[tuple[int, BatchTeam, str, int, BatchQuota]]:
    """(team index, team, queue, entry index, entry) for every quota entry of the teams on the quota_share
    queues of service environment `environment`; disabled shares count too (they keep their capacity).
    The validator's HPK710 and validate's Batch table sum these."""
    queues = [q.name for q in batch.queues if q.scheduling == "quota_share" and q.service_environment == environment]
    found = []
    for i, team in enumerate(batch.teams):
        queue = next((name for name in team.queues if name in queues), None)
        if queue is not None:
            found.extend((i, team, queue, j, entry) for j, entry in enumerate(team.quota))
    return found


@dataclass(frozen=True, slots=True)
class TeamQueues:
    """The queues a team's role may submit to, by kind (names): what the Batch stack puts in its policy and the
    validator measures (HPK728). quota_share is the team's quota-share queue (its quota share's), or None."""

    fair_share: tuple[str, ...]
    quota_share: str | None
    fifo: tuple[str, ...]


def team_queues(batch: Batch, team: BatchTeam) -> TeamQueues:
    kinds = {q.name: q.scheduling for q in batch.queues}
    share = next((queue for t, queue in quota_share_teams(batch) if t is team), None)
    return TeamQueues(fair_share=tuple(n for n in team.queues if kinds.get(n) == "fair_share"), quota_share=share,
                      fifo=tuple(n for n in team.queues if kinds.get(n) == "fifo"))


def roles_of(batch: Batch) -> list[BatchTeam]:
    """Teams that get a role in the Batch stack: principals to trust and an execution role to pass."""
    return [t for t in batch.teams if t.principals and t.execution_role_arn is not None]


@dataclass(frozen=True, slots=True)
class ShareReach:
    """One team's quota share on one unit: what it holds and the most it can run by borrowing."""

    team: str
    unit: str
    quota: int
    reach: int


def quota_share_reach(batch: Batch, queue: str, in_use: Mapping[str, int] | None = None) -> list[ShareReach]:
    """Per team of a quota_share queue and unit: quota, and quota plus what it may borrow while the other
    shares use `in_use` instances (team -> instances; absent teams are idle). A LEND_AND_BORROW share borrows
    the idle capacity of LEND and LEND_AND_BORROW shares, up to its borrow limit (percent of its quota,
    -1 unlimited); RESERVE and LEND shares never borrow. Disabled shares neither borrow nor lend."""
    in_use = in_use or {}
    teams = [t for t in teams_on(batch, queue) if t.enabled]
    rows = []
    for team in teams:
        for entry in team.quota:
            if team.sharing_strategy != "LendAndBorrow":
                rows.append(ShareReach(team.name, entry.instance_type, entry.count, entry.count))
                continue
            idle = sum(max(0, q.count - in_use.get(other.name, 0))
                       for other in teams if other is not team and lends(other)
                       for q in other.quota if q.instance_type == entry.instance_type)
            cap = borrow_allowance(team, entry.count)
            rows.append(ShareReach(team.name, entry.instance_type, entry.count,
                                   entry.count + (idle if cap is None else min(idle, cap))))
    return rows


def lends(team: BatchTeam) -> bool:
    """LEND and LEND_AND_BORROW shares lend their idle capacity; RESERVE keeps it (QuotaShareResourceSharingStrategy)."""
    return team.sharing_strategy in ("Lend", "LendAndBorrow")


def borrow_allowance(team: BatchTeam, quota: int) -> int | None:
    """Most instances of one unit a quota share may borrow on top of its `quota` of it; None is unlimited. Only
    LEND_AND_BORROW borrows; botocore QuotaShareResourceSharingConfiguration.borrowLimit: "expressed as a percentage
    of the quota share's configured CapacityLimits ... applied uniformly across all capacity units ... The default
    borrowLimit is -1, which indicates unlimited borrowing." A fraction of an instance cannot be borrowed (floor)."""
    if team.sharing_strategy != "LendAndBorrow":
        return 0
    limit = team.borrow_limit if team.borrow_limit is not None else UNLIMITED_BORROW
    return None if limit == UNLIMITED_BORROW else quota * limit // 100


DEFAULT_WEIGHT_FACTOR = 1.0  # botocore ShareAttributes.weightFactor: "The default value is 1.0."


def fair_share_fractions(weights: Mapping[str, float]) -> dict[str, Fraction]:
    """Each active share identifier's part of a fair-share queue's capacity, from its weight factor: botocore
    ShareAttributes.weightFactor, "A lower value has a higher priority for compute resources. For example, jobs that
    use a share identifier with a weight factor of 0.125 (1/8) get 8 times the compute resources of jobs that use a
    share identifier with a weight factor of 1." So parts go as 1/weight: weights 1, 3, 5 get 15/23, 5/23, 3/23."""
    inverse = {share: 1 / Fraction(str(weight)) for share, weight in weights.items()}
    total = sum(inverse.values())
    return {share: part / total for share, part in inverse.items()}


def queue_fair_shares(batch: Batch, queue: str) -> dict[str, Fraction]:
    """Each share identifier's part of fair-share queue `queue` while every share identifier on it has jobs
    waiting (an idle one's part goes to the others): the weight factors of the teams on the queue (Batch's
    default 1.0 where none is given) through fair_share_fractions. An identifier used twice (HPK708) counts once."""
    weights: dict[str, float] = {}
    for team in teams_on(batch, queue):
        if team.share_identifier is not None:
            weights.setdefault(team.share_identifier,
                               team.weight_factor if team.weight_factor is not None else DEFAULT_WEIGHT_FACTOR)
    return fair_share_fractions(weights) if weights else {}


def percent_text(part: Fraction) -> str:
    """A part as a percentage, to four significant digits: 7/10 -> '70 %', 15/23 -> '65.22 %'."""
    return f"{float(part) * 100:.4g} %"


MAX_WEIGHT_FACTOR = 999.9999  # botocore ShareAttributes.weightFactor: "the largest supported value"


def weight_factors_for(parts: Mapping[str, int]) -> dict[str, float] | None:
    """Weight factors that give each share identifier its part (fair_share_fractions inverted: a weight goes
    as 1/part), the largest part at weight 1; None when a part is 0 or Batch's range or 4-decimal precision
    cannot hold the ratio."""
    if not parts or min(parts.values()) <= 0:
        return None
    largest = max(parts.values())
    weights = {share: round(largest / part, 4) for share, part in parts.items()}
    if max(weights.values()) > MAX_WEIGHT_FACTOR or fair_share_split_differs(weights, parts):
        return None
    return weights


def fair_share_split_differs(weights: Mapping[str, float], parts: Mapping[str, int]) -> bool:
    """Whether the weight factors split a queue otherwise than `parts` (to a tenth of a percent) among these shares."""
    total = sum(parts.values())
    fractions = fair_share_fractions(weights)
    return any(abs(fractions[share] - Fraction(part, total)) > Fraction(1, 1000) for share, part in parts.items())


def fair_share_usable(capacity: int, compute_reservation: int | None, active_shares: int) -> int:
    """Instances a fair-share queue's active share identifiers may use together: botocore FairsharePolicy
    computeReservation, "The reserved ratio is (computeReservation/100)^ActiveFairShares" of the maximum, kept for
    share identifiers not yet used. Jobs take whole instances, so a reserved fraction of one holds it back (floor)."""
    if not compute_reservation or active_shares < 1:
        return capacity
    return math.floor(capacity - capacity * Fraction(compute_reservation, 100) ** active_shares)
