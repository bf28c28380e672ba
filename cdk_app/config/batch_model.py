"""The optional `batch:` section: AWS Batch for SageMaker Training jobs (service environments, job queues
and each team's share), as frozen pydantic models.

Ranges and formats are the ones botocore's batch model and cfn-lint's AWS::Batch::* schemas give
(cited per field); rules across fields (references, capacity, uniqueness) live in
cdk_app.validator.rules.batch with codes HPK701-HPK719.

Teams use the same vocabulary as HyperPod teams (sharing_strategy, borrow_limit, preempt_team_tasks,
quota) so that an admin reads one language; the Batch stack maps it onto a QuotaShare:
LendAndBorrow -> LEND_AND_BORROW, Lend -> LEND, DontLend -> RESERVE, LowerPriority -> in-share
preemption ENABLED, Never -> DISABLED. Fair-share weights are Batch's own weight factors: lower
means a larger share (see README, "Teams on AWS Batch").
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from cdk_app.config.types import IAM_PRINCIPAL_PATTERN, Bool, Float, Int, KitModel, SharingStrategy, Str

# Batch names (service environments, queues, scheduling policies, quota shares): "up to 128 characters ...
# letters, numbers, hyphens (-), and underscores (_)" (botocore batch CreateServiceEnvironment/CreateJobQueue/
# CreateQuotaShare). The kit also wants a letter or digit first, so names never start with a separator.
BATCH_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$"
QUEUE_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,115}$"
# Training execution role a team passes to SageMaker.
IAM_ROLE_PATTERN = r"^arn:aws[a-z-]*:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]{1,512}$"
NUM_INSTANCES = "NUM_INSTANCES"
Scheduling = Literal["fifo", "fair_share", "quota_share"]
BatchName = Annotated[Str, Field(pattern=BATCH_NAME_PATTERN)]


class CapacityLimit(KitModel):
    unit: Str
    """NUM_INSTANCES (all instances together), or a SageMaker instance type such as ml.p4d.24xlarge
    (a quota-managed environment, needed for quota_share queues)."""
    max_capacity: Annotated[Int, Field(ge=1, le=100000)]
    """Most instances of the unit that the environment's jobs may use at once."""


class ServiceEnvironment(KitModel):
    name: BatchName
    """Service environment name (letters, digits, - and _, at most 128). Changing it replaces the environment."""
    capacity_limits: Annotated[tuple[CapacityLimit, ...], Field(min_length=1)]
    """Capacity of the environment, one entry per unit."""
    enabled: Bool = True
    """Disabled keeps the environment but schedules nothing on it."""


class JobQueue(KitModel):
    name: Annotated[Str, Field(pattern=QUEUE_NAME_PATTERN)]
    """Job queue name (letters, digits, - and _, at most 116: its scheduling policy is named <name>-fair-share
    or <name>-quota-share, within Batch's 128); jobs are submitted to it by this name."""
    service_environment: Str
    """Service environment of the queue (one queue per environment, as AWS recommends)."""
    scheduling: Scheduling = "fifo"
    """fifo: first in, first out; fair_share: share identifiers with weight factors; quota_share: one quota
    share per team with its own capacity. Batch cannot change this on a deployed queue."""
    priority: Annotated[Int, Field(ge=0, le=1000)] = 1
    """Higher-priority queues on the same service environment are scheduled first (0-1000)."""
    share_decay_seconds: Annotated[Int, Field(ge=0, le=604800)] | None = None
    """fair_share: time window of past usage that counts (0 = Batch's minimum of 600 s, at most one week)."""
    compute_reservation: Annotated[Int, Field(ge=0, le=99)] | None = None
    """fair_share: percent of capacity kept for share identifiers not yet active ((r/100)^active shares)."""
    runnable_timeout_seconds: Annotated[Int, Field(ge=600, le=86400)] | None = None
    """Terminate a job that waits RUNNABLE at the head of the queue this long (600-86400 s), e.g. one larger
    than its share can ever get. Default: it waits."""
    enabled: Bool = True
    """Disabled queues accept no new jobs; queued jobs still finish."""


class BatchQuota(KitModel):
    instance_type: Str
    """Instance type: one of the capacity units of the queue's service environment."""
    count: Annotated[Int, Field(ge=1, le=100000)]
    """Instances the quota share holds without borrowing (its MaxCapacity)."""


class BatchTeam(KitModel):
    name: BatchName
    """Team name (letters, digits, - and _, at most 128); the team's quota share has this name."""
    queues: Annotated[tuple[Str, ...], Field(min_length=1)]
    """Queues the team submits to; its role may submit to these only."""
    share_identifier: Str | None = None
    """fair_share queues: the share identifier the team's jobs carry (1-255 letters and digits)."""
    weight_factor: Annotated[Float, Field(ge=0.0001, le=999.9999)] | None = None
    """fair_share queues: Batch's weight factor (0.0001-999.9999, Batch's default 1.0). LOWER means a LARGER
    share: weight 1 gets 5 times the capacity of weight 5. (HyperPod's fair_share_weight is the other way round.)"""
    quota: tuple[BatchQuota, ...] = ()
    """quota_share queues: the instances the team's quota share holds, per instance type."""
    sharing_strategy: SharingStrategy = "LendAndBorrow"
    """quota_share: LendAndBorrow lends idle capacity and borrows (LEND_AND_BORROW); Lend only lends (LEND);
    DontLend keeps it (RESERVE)."""
    borrow_limit: Annotated[Int, Field(ge=-1, le=100000)] | None = None
    """quota_share, LendAndBorrow only: percent of the quota the team may borrow on top; -1 = unlimited.
    Default: Batch's, unlimited."""
    preempt_team_tasks: Literal["Never", "LowerPriority"] = "LowerPriority"
    """quota_share: once the share is full, a higher-priority job preempts the team's lowest-priority one."""
    principals: tuple[Annotated[Str, Field(pattern=IAM_PRINCIPAL_PATTERN)], ...] = ()
    """IAM principals allowed to assume the team's Batch role."""
    execution_role_arn: Annotated[Str, Field(pattern=IAM_ROLE_PATTERN)] | None = None
    """SageMaker training execution role the team's jobs run as; the team's role may pass this role only."""
    max_priority: Annotated[Int, Field(ge=0, le=9999)] | None = None
    """Highest scheduling priority the team's role may give a job (IAM condition batch:SchedulingPriority)."""
    enabled: Bool = True
    """quota_share: Disabled keeps the quota share but it accepts no new jobs."""


class Batch(KitModel):
    """AWS Batch for SageMaker Training jobs: deployed as stack HyperPod-<environment>-batch."""

    service_environments: Annotated[tuple[ServiceEnvironment, ...], Field(min_length=1)]
    """Capacity pools (one per instance family, typically)."""
    queues: Annotated[tuple[JobQueue, ...], Field(min_length=1)]
    """Job queues, each on one service environment."""
    teams: tuple[BatchTeam, ...] = ()
    """Teams and their shares of the queues."""
