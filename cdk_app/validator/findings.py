"""Findings: what the loader and the validator report, with stable codes."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"


# Every code the kit can report, with what it means. The README's table is generated from this
# (tests/test_readme.py keeps them in step) and a code never changes meaning once released.
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
    # HyperPod instance groups.
    "HPK201": "instance type is not a SageMaker HyperPod instance type",
    "HPK202": "instance group name is not allowed",
    "HPK203": "two instance groups have the same name",
    "HPK204": "deep health checks on an instance type without GPUs or Trainium",
    "HPK205": "instance group placed in an availability zone the environment does not list",
    "HPK206": "a deep health check is listed twice",
    "HPK207": "HyperPod cluster name is not allowed",
    "HPK208": "the HyperPod Helm chart archive is not pinned by SHA-256",
    "HPK209": "automatic node recovery without the health monitoring agent",
    "HPK210": "instance type not offered by HyperPod in the environment's region",
    "HPK211": "a Kubernetes label or taint key or value is not allowed",
    "HPK212": "threads_per_core 2 on an instance type with one thread per core (AWS Graviton)",
    # Cluster policy.
    "HPK301": "priority class name is not allowed",
    "HPK302": "more than 10 priority classes",
    "HPK303": "two priority classes have the same name",
    "HPK304": "two priority classes have the same weight (their order is undefined)",
    "HPK305": "task governance add-on older than v1.2.2-eksbuild.1 (no topology-aware scheduling)",
    "HPK306": "task governance add-on v1.3.x cannot be updated in place to v1.5 or later",
    "HPK307": "observability add-on older than v2.4.0-eksbuild.1 cannot collect Kueue metrics",
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
    "HPK410": "two team names give the same derived id (e.g. stack output TeamRole<Name>)",
    "HPK411": "a team has no compute quota",
    # Capacity.
    "HPK501": "cumulative team quota exceeds the cluster's capacity",
    "HPK502": "quota on an instance type the cluster does not have",
    "HPK503": "capacity no team can use while it is idle",
    "HPK504": "the shared pool would be negative: other teams already exceed capacity",
    "HPK505": "the shared pool would be empty: other teams already reserve all capacity",
    # Live checks (validate --live).
    "HPK601": "a compute quota on the deployed cluster was made outside the kit",
    "HPK602": "an instance group's live instance count differs from the config",
    "HPK603": "quotas on the deployed cluster exceed its live capacity",
    "HPK604": "the deployed cluster policy differs from the config",
    "HPK605": "the deployed task-governance add-on version differs from the config",
    "HPK606": "the account could not be read (credentials, permission, cluster not found, throttling)",
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

    def render(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}"
        subject = f" {self.path}:" if self.path else ""
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
