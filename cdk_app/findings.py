"""Findings: what the loader and the validator report, with stable codes."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from cdk_app.support.text_table import printable


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"


# Every code the kit can report, with what it means. The docs' finding-code page is generated from this
# (scripts/docs_reference.py, each time the site is built) and a code never changes meaning once released.
CODES: dict[str, str] = {
    # The file itself (exit code 2: nothing could be checked).
    "HPK001": "the file cannot be read (missing, a directory, not UTF-8)",
    "HPK002": "the file is not a single valid YAML document",
    "HPK003": "the document is empty or not a mapping of keys",
    "HPK004": "a key appears twice in one mapping",
    "HPK005": "the file is too large, too deeply nested or expands too many aliases",
    # Shape of the config (exit code 1).
    "HPK010": "unknown key (the message names the nearest valid key)",
    "HPK011": "a required key is missing",
    "HPK012": "a value has the wrong type",
    "HPK013": "a number or list length is out of range",
    "HPK014": "a value is not one of the allowed choices",
    "HPK015": "a value does not match the required format",
    # Acknowledged warnings (acknowledged_warnings).
    "HPK030": "an acknowledgement names an error, an unknown code or an acknowledgement finding: only warnings can be acknowledged",
    "HPK031": "an acknowledgement matches no warning of the file (the warning is gone, or the code or path is wrong)",
    # Selecting the environment (app.py).
    "HPK020": "the file's environment differs from the name it was selected by (-c env=<name>)",
    # Environment, network and EKS.
    "HPK101": "Kubernetes version older than 1.30 (task governance needs 1.30+)",
    "HPK102": "an availability zone id is listed twice",
    "HPK103": "existing VPC and subnets must be given together",
    "HPK104": "no existing subnet in an instance group's availability zone",
    "HPK105": "an existing subnet is in an availability zone the environment does not list",
    "HPK106": "an availability zone id does not belong to the environment's region",
    "HPK107": "EKS needs subnets in at least two availability zones",
    "HPK108": "public-only API endpoint restricted to CIDRs the VPC's NAT addresses are not known to be in",
    "HPK109": "public_access_cidrs given for an endpoint that is not public",
    "HPK110": "the region does not exist or has no SageMaker HyperPod (per cfn-lint's region data)",
    "HPK111": "an IAM principal is not a role or user of the config's account (root, session, group, other account)",
    "HPK112": "a public API endpoint without public_access_cidrs (no default of anywhere)",
    "HPK113": "public_access_cidrs open the Kubernetes API to the whole internet (0.0.0.0/0)",
    "HPK120": "an availability zone's number has no subnet slot in a new VPC (az1 to az7 fit)",
    "HPK121": "a cluster zone (network.cluster_zone_ids) has no subnet in the environment",
    "HPK122": "network.cluster_zone_ids names fewer than two distinct zones",
    "HPK123": "network.cluster_zone_ids is not recorded (the cluster zones then follow availability_zone_ids' order)",
    # Derived names, administrators, taints and team roles.
    "HPK160": "a name the kit derives from the environment (HyperPod cluster, lifecycle-scripts bucket) is not allowed",
    "HPK161": "a cluster administrator is listed twice, or two administrators would get the same access entry",
    "HPK162": "a taint value is empty (AWS::SageMaker::Cluster takes a value of at least 1 character, or none)",
    "HPK163": "more than 50 taints on one instance group (AWS::SageMaker::Cluster's limit)",
    "HPK164": "two taints of an instance group have the same key and effect (Kubernetes refuses the node)",
    "HPK165": "an existing subnet is listed twice (a subnet lies in exactly one availability zone)",
    "HPK166": "a training_plan_arn whose name part cannot be a training plan's name",
    "HPK167": "more than 40 eks.public_access_cidrs (EKS's limit per cluster)",
    "HPK168": "a taint's teams names a team the config does not have (or a taint keyed by a device resource)",
    "HPK170": "a HyperPod team role's trust policy is over IAM's 2,048-character limit (too many principals)",
    # HyperPod instance groups.
    "HPK201": "instance type is not a SageMaker HyperPod instance type",
    "HPK202": "instance group name is not allowed",
    "HPK203": "two instance groups have the same name",
    "HPK204": "deep health checks on an instance type without GPUs or Trainium",
    "HPK205": "instance group placed in an availability zone the environment does not list",
    "HPK206": "a deep health check is listed twice",
    "HPK207": "HyperPod cluster name is not allowed",
    "HPK208": "the HyperPod Helm chart is not pinned by its content digest",
    "HPK209": "automatic node recovery without the health monitoring agent",
    "HPK210": "instance type not offered by HyperPod in the environment's region",
    "HPK211": "a Kubernetes label or taint key or value is not allowed",
    "HPK212": "threads_per_core 2 on an instance type with one thread per core (AWS Graviton, NVIDIA Grace)",
    "HPK213": "InstanceConnectivity deep health check on an instance type without EFA or a group of one node",
    "HPK214": "no instance group gives a schedulable node within the governance stack's wait (deep health checks, taints, no nodes)",
    "HPK215": "hyperpod.system_instance_group names no instance group",
    "HPK216": "the system instance group's labels do not select it alone (no labels, or another group has them all)",
    "HPK217": "the system instance group has no NoSchedule or NoExecute taint that keeps every team's pods off",
    "HPK218": "the system instance group has no nodes (count 0): the training and MPI operators cannot run",
    "HPK219": "a team has a quota for the system instance group's instance type (its pods cannot use those nodes)",
    "HPK220": "the HyperPod Helm chart's remote dependencies are not pinned",
    "HPK221": "no kubectl/helm layer within one minor version of the Kubernetes version",
    "HPK222": "a chart component needs remote charts the kit cannot pin",
    "HPK224": "an instance group's nvidia.com/mig.config label names no MIG geometry its GPUs take",
    "HPK225": "GPU partitions set by nvidia.com/mig.config need the NVIDIA GPU operator, which the kit does not install",
    "HPK223": "a chart pin differs from the one the kit verified for its default revision",
    # The AMI lifecycle of instance groups (scheduled updates, automatic patches).
    "HPK240": "a rolling batch given in percent is above 100",
    "HPK241": "two instance groups' AMI update schedules start at the same minute on some date (AWS: overlapping schedules may fail)",
    "HPK242": "a scheduled AMI update's cron expression never fires from today on (no such date, or its dates have passed)",
    "HPK243": "an instance group's scheduled AMI update starts while another group's rolling update may still run",
    "HPK244": "a scheduled AMI update's cron expression gives both or neither of day-of-month and day-of-week",
    "HPK245": "a scheduled AMI update's cron expression first fires more than a year from today",
    "HPK246": "an instance group names both image_id and image_release_version (AWS documents neither which wins)",
    # HyperPod's managed Karpenter, flexible and Spot instance groups.
    "HPK250": "an instance group has max_count but hyperpod.autoscaling is off",
    "HPK251": "autoscaling without node_recovery Automatic (an autoscaling prerequisite)",
    "HPK252": "autoscaling without a health monitoring agent of the version autoscaling needs",
    "HPK253": "autoscaling with a chart revision whose health monitoring agent version the kit has not read",
    "HPK254": "an autoscaled instance group does not start at count 0",
    "HPK255": "more autoscaled instance groups than a HyperpodNodeClass can list (10)",
    "HPK256": "autoscaling is on but no instance group has max_count",
    "HPK257": "deep health checks on an autoscaled instance group (HyperPod's Karpenter does not support them)",
    "HPK258": "a training plan on an autoscaled instance group (HyperPod's Karpenter does not support it)",
    "HPK259": "an instance type is listed twice in a flexible instance group",
    "HPK260": "min_count above the instance group's count",
    "HPK261": "a training plan on a flexible instance group (a plan reserves one instance type)",
    "HPK262": "a training plan on a Spot instance group (a plan's capacity is reserved, not Spot)",
    "HPK263": "min_count on an autoscaled instance group (it can only be 0 there, and does nothing)",
    "HPK264": "the system instance group is autoscaled (max_count): no NodePool launches its nodes for the operators",
    "HPK265": "an autoscaled instance group partitions its GPUs (MIG): its NodePool is not sized to partition quotas",
    # Cluster policy.
    "HPK301": "priority class name is not allowed",
    "HPK302": "more than 10 priority classes",
    "HPK303": "two priority classes have the same name",
    "HPK304": "two priority classes have the same weight (their order is undefined)",
    "HPK305": "task governance add-on older than v1.2.2-eksbuild.1 (no topology-aware scheduling)",
    "HPK306": "task governance add-on v1.3.x cannot be updated in place to v1.5 or later",
    "HPK307": "observability add-on older than v2.4.0-eksbuild.1 cannot collect Kueue metrics",
    "HPK310": "a governance resource is recorded as native but the region's CloudFormation lacks the type",
    "HPK311": "a governance resource is recorded as api though the region now offers the native type",
    "HPK312": "the native-or-api choice of a governance resource is not recorded in the config",
    "HPK320": "require_priority_class is set but the cluster policy defines no priority classes",
    # Teams.
    "HPK401": "team name is not allowed",
    "HPK402": "two teams (or a team and the shared pool) have the same name",
    "HPK403": "borrow limit given without the LendAndBorrow strategy",
    "HPK404": "more than 15 quota entries for a team",
    "HPK405": "a team lists the same instance type twice",
    "HPK406": "a quota entry gives no amount",
    "HPK407": "accelerator quota on an instance type without accelerators",
    "HPK408": "quota amounts of one entry disagree with each other",
    "HPK409": "a team's default priority class is not in the cluster policy",
    "HPK410": "two team names give the same derived id (no longer reported: the Batch stack's team roles share one JSON output)",
    "HPK411": "a team has no compute quota",
    "HPK412": "a quota entry on an accelerated instance type reserves no accelerators (vCPU or memory only)",
    "HPK420": "a team's allowed priority class is not in the cluster policy",
    "HPK421": "a team lists the same priority class or capability twice",
    "HPK422": "a team's default priority class is not one of its allowed priority classes",
    "HPK423": "require_priority_class is set but a team may use no priority class",
    # Capacity.
    "HPK430": "a quota entry's MIG profile is not one its instance type's GPU offers",
    "HPK431": "absolute borrow limits on a team that does not borrow (not LendAndBorrow)",
    "HPK432": "an absolute borrow limit on an instance type the team has no quota for",
    "HPK433": "absolute borrow limits while idle_resource_sharing is Disabled",
    "HPK434": "an absolute borrow limit of whole GPUs on an instance type whose GPUs are all partitioned",
    "HPK435": "an absolute borrow limit of a MIG profile no instance group's geometry gives",
    "HPK501": "cumulative team quota exceeds the cluster's capacity",
    "HPK502": "quota on an instance type the cluster does not have",
    "HPK503": "capacity no team can use while it is idle",
    "HPK504": "the shared pool would be negative: other teams already exceed capacity",
    "HPK505": "the shared pool would be empty: other teams already reserve all capacity",
    "HPK530": "team quotas fit only with flexible groups, which may come up as another of their instance types",
    "HPK531": "team quotas fit only with Spot capacity, which EC2 may take back at any time",
    "HPK532": "team quotas on several types need more instances of the flexible groups than they have together",
    # CloudFormation's limits per stack, on the stack layout the app builds (cdk_app/stacks/layout.py).
    "HPK533": "cumulative MIG partition quota exceeds the partitions the instance groups' GPUs give",
    "HPK540": "a team's quota holds more vCPU of a type than its nodes have with threads_per_core 1 (SageMaker counts the full vCPU)",
    "HPK510": "a stack would have more than 500 resources (CloudFormation's limit per stack)",
    "HPK511": "a stack would have more than 200 outputs (CloudFormation's limit per stack)",
    "HPK512": "a stack's template would be larger than 1,000,000 bytes (CloudFormation's limit for a template in S3)",
    "HPK513": "a stack would have more than 200 parameters (CloudFormation's limit per stack)",
    "HPK514": "a stack is above 80 % of a CloudFormation limit (plan team stacks or pins before it is full)",
    "HPK515": "a team is pinned to a team stack that does not exist",
    # Rolling AMI updates against the quotas (cdk_app/domain/rolling_updates.py).
    "HPK520": "a rolling batch (with the type's batches whose schedules start with it) takes an instance type below the teams' quotas though a smaller one would not",
    "HPK521": "the teams leave less than one instance of a type unreserved, so any rolling batch leaves their quotas uncovered",
    "HPK522": "automatic patches WhenAllIdle without a deployment cordon a whole instance group the teams' quotas need",
    # Live checks (validate --live).
    "HPK601": "a compute quota on the deployed cluster was made outside the kit",
    "HPK602": "an instance group's live instance count differs from the config, or a deployed group is not in it (a deploy deletes its nodes)",
    "HPK603": "quotas on the deployed cluster exceed its live capacity",
    "HPK604": "the deployed cluster policy differs from the config",
    "HPK605": "the deployed task-governance add-on version differs from the config",
    "HPK606": "the account could not be read (credentials, permission, cluster not found, throttling)",
    "HPK607": "hyperpod.cluster_name differs from the deployed cluster (create-only ClusterName: replaces it)",
    "HPK608": "the config's VPC differs from the deployed cluster's (create-only VpcConfig or CidrBlock: replaces it)",
    "HPK609": "the deployed cluster's subnet zones differ from network.cluster_zone_ids (create-only VpcConfig: replaces it)",
    "HPK610": "eks.kubernetes_version is a downgrade or skips a minor version of the deployed EKS cluster",
    # AWS Batch for SageMaker Training jobs (the batch section).
    "HPK701": "two Batch service environments, job queues or teams have the same name",
    "HPK702": "a job queue names a service environment the config does not define",
    "HPK703": "two job queues share one service environment (AWS recommends one queue per environment)",
    "HPK704": "a capacity unit is neither NUM_INSTANCES nor a SageMaker Training instance type, or is listed twice",
    "HPK705": "capacity units that cannot work together (NUM_INSTANCES with instance types, or under quota shares)",
    "HPK706": "a Batch team names a job queue the config does not define",
    "HPK707": "a team on a fair-share queue has no share identifier, or one Batch does not allow",
    "HPK708": "a share identifier is used twice on one queue, or a queue has over 500",
    "HPK709": "a team on a quota-share queue has no quota, or quota on a unit its service environment lacks",
    "HPK710": "quota shares hold more of a unit than their service environment's capacity",
    "HPK711": "a Batch setting that has no effect on the queue type it applies to",
    "HPK712": "Batch borrow limit given without the LendAndBorrow strategy",
    "HPK713": "a Batch team is on more than one quota-share queue",
    "HPK714": "a Batch team has principals but no training execution role to pass",
    "HPK715": "an AWS::Batch resource type the config needs is not offered in the region",
    "HPK716": "a deployed job queue's scheduling type differs from the config: Batch cannot change it in place",
    "HPK717": "a deployed Batch queue, environment or quota share differs from the config",
    "HPK718": "a quota share or share identifier on a deployed queue was made outside the kit",
    "HPK719": "the environment has neither a hyperpod nor a batch section (it would deploy nothing)",
    "HPK720": "a HyperPod, EKS or network setting in a Batch-only environment (no hyperpod section), where it has no effect",
    "HPK721": "two job queues on one quota-management (instance-type) service environment: AWS Batch allows one",
    "HPK722": "a job queue with more than 20 quota shares, or a quota share with more than 5 capacity limits (AWS Batch)",
    "HPK723": "more than 50 job queues or 50 service environments (AWS Batch's limit per account and Region)",
    "HPK724": "a Batch team's quota lists one instance type twice",
    "HPK725": "a Batch team's execution role is not an IAM role of the config's account and partition",
    "HPK726": "two Batch teams pass the same training execution role",
    "HPK727": "a disabled Batch team (enabled: false) is on a FIFO or fair-share queue, where Batch cannot disable it",
    "HPK728": "a Batch team role's trust policy (2,048) or inline policy (10,240 characters) is over IAM's size quota",
    "HPK729": "a Batch team lists one job queue twice",
    "HPK730": "Batch teams with quotas on a fair-share queue only, whose weight factors do not give the split the quotas state",
    # Workload files of simulate and explain (exit code 1; an unreadable file is HPK001-005, exit code 2).
    "HPK801": "a workload entry has an unknown key, misses one, or a value of the wrong type or range",
    "HPK802": "a workload entry names a team, priority class or instance type the environment does not have",
    "HPK803": "a simulated job can never be admitted (it needs more than its team can ever reach)",
    "HPK804": "a team has two jobs of one name in a workload file",
    "HPK805": "in a simulation Kueue admits and preempts the same jobs again and again without settling",
    "HPK806": "the jobs running at a simulation's start hold more than the environment's cluster has",
    "HPK807": "a team's jobs running at a simulation's start hold more than it can reach under the config (warning)",
    # Shared storage: FSx for Lustre file systems (the storage section).
    "HPK901": "a file system belongs to a team the environment does not have",
    "HPK902": "a file system's storage capacity is not one FSx for Lustre takes for its deployment and storage type",
    "HPK903": "a file system's per-unit throughput is missing or not allowed for its deployment type",
    "HPK904": "metadata IOPS on a deployment type without metadata configuration, or a value FSx does not provision",
    "HPK905": "backup settings on a scratch file system, or a backup start time without automatic backups",
    "HPK906": "a file system is in an availability zone where the environment has no subnet",
    "HPK907": "a file system is in a zone where no instance group has nodes (warning)",
    "HPK908": "data repository associations of a file system overlap (nested or repeated paths, / beside others)",
    "HPK909": "an import or export event is listed twice",
    "HPK910": "two file systems of a team with one name, or mounted at one path",
    "HPK911": "a file system's mount path has a '.' or '..' segment or lies in /dev, /proc or /sys",
    "HPK912": "a data repository association's S3 bucket is not a name S3 allows",
    # Shared storage against the deployed account (validate --live).
    "HPK913": "a deployed file system or data repository association is missing, deleted outside the kit or not AVAILABLE",
    "HPK914": "a deployed file system's deployment or storage type or drive cache differs from the config: FSx cannot change it in place",
    "HPK915": "a deployed file system has more capacity or metadata IOPS than the config (grown outside the kit): FSx never lowers them",
    "HPK916": "a deployed file system or association differs from the config, or an association was made outside the kit",
    "HPK917": "the FSx CSI driver add-on is missing, unhealthy or not the pinned version",
    # Shared storage: the storage section's deployment options.
    "HPK918": "HDD storage on a deployment type other than PERSISTENT_1, or a drive cache type missing on HDD or set on SSD",
    "HPK919": "a KMS key on a scratch file system, or a key of another region or partition",
    "HPK920": "data repository associations on a SCRATCH_1 file system",
}


def format_path(path: tuple[str | int, ...]) -> str:
    """('teams', 2, 'quota', 0, 'count') -> 'teams[2].quota[0].count'."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem in one config file, located to the line and column."""

    code: str
    severity: Severity
    file: str
    line: int
    column: int
    path: str
    message: str
    hint: str
    # The fields (paths) the finding's verdict rests on, where its rule names them: it is held back only when
    # one of those is broken (cdk_app.validator.report). None: the report judges from the code and the path.
    reads: tuple[str, ...] | None = field(default=None, compare=False)

    def render(self) -> str:
        where = f"{printable(self.file)}:{self.line}:{self.column}"  # one line, whatever the path holds
        subject = f" {printable(self.path)}:" if self.path else ""  # a key the user wrote can hold anything
        return f"{where}{subject} {self.message} ({self.hint}) [{self.code} {self.severity.value}]"

    def to_json(self) -> dict[str, object]:
        return {
            "code": self.code,
            "severity": self.severity.value,
            "path": self.path,
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "message": self.message,
            "hint": self.hint,
        }
