"""What a plan is made of: resource changes, hazards, team changes, and the resource kinds that decide them."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

# Losing one of these loses the running fleet or its network; cfn-lint's list covers data stores only.
FLEET_TYPES = frozenset({"AWS::SageMaker::Cluster", "AWS::EKS::Cluster", "AWS::EKS::Addon", "AWS::EC2::VPC",
                         "AWS::EC2::Subnet", "AWS::Batch::JobQueue", "AWS::Batch::QuotaShare",
                         "AWS::Batch::ServiceEnvironment"})


# A replaced resource the old copy of which UpdateReplacePolicy keeps: what keeps costing until it is deleted by hand.
BILLED_WHEN_KEPT = {"AWS::SageMaker::Cluster": "its nodes keep running and billing",
                    "AWS::EKS::Cluster": "its control plane keeps billing"}


# The API-backed governance resources keep the native type's properties under "Parameters".
STAND_INS = {f"Custom::SageMaker{kind}": (f"AWS::SageMaker::{kind}", ("Parameters",))
             for kind in ("ClusterSchedulerConfig", "ComputeQuota")}


QUOTA_TYPES = {"AWS::SageMaker::ComputeQuota": (), "Custom::SageMakerComputeQuota": ("Parameters",)}


QUOTA_FIELDS = (("Count", "instances"), ("Accelerators", "accelerators"), ("VCpu", "vCPU"),
              ("MemoryInGiB", "GiB memory"))
# The row of a team's absolute borrow limit on an instance type: "<type> absolute borrow limit".
BORROW_LIMIT_ROW = " absolute borrow limit"


# Replacing one of these drops the guarantee of every running job it admits; removing a quota is the
# documented team removal (a warning), replacing it is not.
ALLOCATION_TYPES = frozenset({*QUOTA_TYPES, "AWS::SageMaker::ClusterSchedulerConfig",
                              "Custom::SageMakerClusterSchedulerConfig"})


RETAIN = ("Retain", "RetainExceptOnCreate", "Snapshot")


IGNORED_TYPES = frozenset({"AWS::CDK::Metadata"})  # `cdk synth` adds it, the in-process synth does not


# Where plan sends the reader: the page itself (tests/contracts/test_docs.py opens each).
REMOVAL_DOC = "docs/how-to/remove-a-team.md"
QUOTA_DOC = "docs/how-to/change-a-quota.md"
EDITING_DOC = "docs/how-to/edit-safely.md"
MOVE_DOC = "docs/how-to/many-teams.md"
STACK_REMOVAL_DOC = "docs/how-to/teardown.md, section 'Removing a stack'"


# What removing a team does, as plan says it for a removal and a rename and docs/how-to/remove-a-team.md says it word
# for word (a test holds them equal). From what a deploy does: the compute quota is deleted (so the add-on's queues
# go), the installer deletes the team's set of Kubernetes objects (its RBAC and volume claims), and the storage
# stack retains a file system that leaves it (DeletionPolicy RetainExceptOnCreate). The namespace is the add-on's.
REMOVED_TEAM = ("its running jobs lose their queue: treat them as stopped; the kit deletes its volume claims and "
                "RBAC in {namespace}, and the namespace itself, which task governance made with the compute quota, "
                "is to be taken as deleted with everything left in it (jobs, ConfigMaps, secrets); its file systems "
                "stay in the account with their data, no longer managed")
RENAMED_TEAM = ("the new name starts empty: a new namespace, queue and team role (its members assume the new role's "
                "ARN, output TeamRoleArns), and new, empty file systems where the old team had them")
# The one safer order of a rename, said by plan and by the removal and edit-safely pages alike.
RENAME_ORDER = ("two deploys are safer: first add the new team (the cluster needs room for both quotas: grow a group "
                "or cut the old team's quota), move the work and the data across, then remove the old team")


MISSING = object()


Action = Literal["add", "remove", "replace", "modify"]


class PlanInputError(Exception):
    """A baseline or current synth could not be read; the message says which and why."""


@dataclass(frozen=True)
class ResourceChange:
    stack: str
    logical_id: str
    type: str
    path: str
    action: Action
    reasons: tuple[str, ...] = ()
    stateful: bool = False
    retained: str | None = None  # the policy that keeps the old resource: UpdateReplacePolicy or DeletionPolicy
    fails: str | None = None     # why CloudFormation refuses this change (the deploy fails and rolls back)

    @property
    def dangerous(self) -> bool:
        return (self.stateful and self.action in ("remove", "replace")) or self.fails is not None

    def to_json(self) -> dict[str, Any]:
        return {"stack": self.stack, "logical_id": self.logical_id, "type": self.type, "path": self.path,
                "action": self.action, "reasons": list(self.reasons), "stateful": self.stateful,
                "retained": self.retained, "fails": self.fails}


@dataclass(frozen=True)
class Hazard:
    """A destructive change that is not a whole-resource replacement or deletion, refused unless `name` is
    given to --allow-replace; `refuse=False` is a call-out only (e.g. an instance group scaled down)."""
    stack: str
    name: str
    text: str
    refuse: bool = True
    fails: bool = False  # the deploy fails: --allow-replace cannot accept it

    def to_json(self) -> dict[str, Any]:
        return {"stack": self.stack, "name": self.name, "text": self.text, "refuse": self.refuse, "fails": self.fails}


@dataclass(frozen=True)
class TeamChange:
    team: str
    change: Literal["added", "removed", "changed", "moved"]
    before: dict[str, dict[str, float]]
    after: dict[str, dict[str, float]]
    lowered: tuple[str, ...] = ()
    disabled: bool = False
    # (stack before, stack after) when the quota changes stacks: CloudFormation deletes it and creates it anew.
    moved: tuple[str, str] | None = None

    @property
    def may_preempt(self) -> bool:
        return self.change == "removed" or bool(self.lowered) or self.disabled or self.moved is not None

    def to_json(self) -> dict[str, Any]:
        return {"team": self.team, "change": self.change, "before": self.before, "after": self.after,
                "lowered": list(self.lowered), "disabled": self.disabled, "may_preempt": self.may_preempt,
                "moved": list(self.moved) if self.moved else None}


def group_types(group: dict[str, Any]) -> list[str]:
    """The instance types an AWS::SageMaker::Cluster InstanceGroups entry may run, in HyperPod's order: a flexible
    group's InstanceRequirements.InstanceTypes, else its InstanceType (botocore: the two are mutually exclusive).
    Empty for an entry that names neither as text (a hand-edited template)."""
    flexible = group.get("InstanceRequirements")
    listed = flexible.get("InstanceTypes") if isinstance(flexible, dict) else None
    if isinstance(listed, list) and listed:
        return [t for t in listed if isinstance(t, str)]
    return [group["InstanceType"]] if isinstance(group.get("InstanceType"), str) else []


def types_text(group: dict[str, Any]) -> str:
    """The group's types for a message: "ml.g5.12xlarge" or "ml.g5.12xlarge/ml.g5.24xlarge" (flexible)."""
    return "/".join(group_types(group)) or "instance type not given"


@dataclass(frozen=True)
class GroupChange:
    """An instance group whose nodes change: added (before None), removed (after None), grown or shrunk."""
    group: str
    instance_type: str
    before: int | None
    after: int | None

    @property
    def change(self) -> str:
        if self.before is None:
            return "added"
        if self.after is None:
            return "removed"
        return "grown" if (self.after or 0) > (self.before or 0) else "shrunk"

    def to_json(self) -> dict[str, Any]:
        return {"group": self.group, "instance_type": self.instance_type, "change": self.change,
                "before": self.before, "after": self.after}


@dataclass
class Plan:
    baseline: str
    changes: list[ResourceChange] = field(default_factory=list)
    teams: list[TeamChange] = field(default_factory=list)
    groups: list[GroupChange] = field(default_factory=list)
    hazards: list[Hazard] = field(default_factory=list)
    left_stacks: list[str] = field(default_factory=list)  # in the baseline, no longer in the app

    def refused(self, allowed: tuple[str, ...] | set[str] = ()) -> list[ResourceChange]:
        """Dangerous resource changes not named; one that fails is refused even when named."""
        return [c for c in self.changes if c.dangerous and (c.fails or c.logical_id not in set(allowed))]

    def refused_hazards(self, allowed: tuple[str, ...] | set[str] = ()) -> list[Hazard]:
        return [h for h in self.hazards if h.refuse and (h.fails or h.name not in set(allowed))]

    def blocked(self, allowed: tuple[str, ...] | set[str] = ()) -> list[str]:
        """Everything that makes the plan exit 1: logical ids, <logical id>/<group> and stack names."""
        return sorted({c.logical_id for c in self.refused(allowed)} | {h.name for h in self.refused_hazards(allowed)})

    def failing(self) -> list[str]:
        """What CloudFormation would fail on: blocked whatever --allow-replace names."""
        return sorted({c.logical_id for c in self.changes if c.fails} | {h.name for h in self.hazards if h.fails})

    def unnamed(self, allowed: tuple[str, ...] | set[str] = ()) -> list[str]:
        """What blocks the plan only until it is named with --allow-replace."""
        return sorted(set(self.blocked(allowed)) - set(self.failing()))

    def names(self) -> set[str]:
        """What --allow-replace can name in this plan."""
        return {c.logical_id for c in self.changes if c.dangerous} | {h.name for h in self.hazards if h.refuse}

    def to_json(self, allowed: tuple[str, ...] = ()) -> dict[str, Any]:
        blocked = self.blocked(allowed)
        return {"baseline": self.baseline, "ok": not blocked, "refused": blocked,
                "changes": [c.to_json() for c in self.changes], "teams": [t.to_json() for t in self.teams],
                "instance_groups": [g.to_json() for g in self.groups],
                "hazards": [h.to_json() for h in self.hazards], "stacks_left_in_account": self.left_stacks}


def values_at(value: Any, path: tuple[str, ...]) -> Iterator[Any]:
    """Every value at `path` ('*' = each list item); MISSING where the path ends early."""
    if not path:
        yield value
        return
    head, rest = path[0], path[1:]
    if head == "*":
        for item in value if isinstance(value, list) else ():
            yield from values_at(item, rest)
    elif isinstance(value, dict) and head in value:
        yield from values_at(value[head], rest)
    else:
        yield MISSING


def template_resources(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {k: r for k, r in template.get("Resources", {}).items() if r.get("Type") not in IGNORED_TYPES}

def resource_path(resource: dict[str, Any], stack: str, logical_id: str) -> str:
    """The construct path (stack/construct/.../Resource) when the synth recorded it."""
    return resource.get("Metadata", {}).get("aws:cdk:path", f"{stack}/{logical_id}")
