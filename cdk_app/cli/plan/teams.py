"""Each team's compute quota before and after, read from the templates."""

from __future__ import annotations

from typing import Any

from cdk_app.cli.plan.model import BORROW_LIMIT_ROW, QUOTA_FIELDS, QUOTA_TYPES, TeamChange
from cdk_app.config.model import QuotaEntry
from cdk_app.domain.capacity import Resources, reservations


def _located_quotas(templates: dict[str, dict[str, Any]]) -> dict[str, tuple[dict[str, dict[str, float]], bool, str]]:
    """Team -> (instance type -> amounts, enabled, the stack holding the quota)."""
    teams: dict[str, tuple[dict[str, dict[str, float]], bool, str]] = {}
    for stack, template in templates.items():
        for resource in template.get("Resources", {}).values():
            if resource.get("Type") not in QUOTA_TYPES:
                continue
            props = resource.get("Properties", {})
            for key in QUOTA_TYPES[resource["Type"]]:
                props = props.get(key, {})
            team = props.get("ComputeQuotaTarget", {}).get("TeamName")
            if not isinstance(team, str):
                continue
            amounts = {}
            quota_config = props.get("ComputeQuotaConfig", {})
            for entry in quota_config.get("ComputeQuotaResources", []):
                amounts[entry["InstanceType"]] = _entry_amounts(entry)
            # Absolute borrow limits show as their own rows: a change of them is a change of the quota.
            for entry in quota_config.get("ResourceSharingConfig", {}).get("AbsoluteBorrowLimits", []):
                amounts[entry["InstanceType"] + BORROW_LIMIT_ROW] = _entry_amounts(entry)
            teams[team] = (amounts, props.get("ActivationState", "Enabled") == "Enabled", stack)
    return teams


def _entry_amounts(entry: dict[str, Any]) -> dict[str, float]:
    """A ComputeQuotaResourceConfig's amounts by field, and its MIG partitions by profile (mig-...)."""
    amounts = {dim: float(entry[dim]) for dim, _ in QUOTA_FIELDS
               if isinstance(entry.get(dim), (int, float, str)) and str(entry[dim]).replace(".", "", 1).isdigit()}
    partition = entry.get("AcceleratorPartition")
    if isinstance(partition, dict) and isinstance(partition.get("Count"), int):
        amounts[str(partition.get("Type"))] = float(partition["Count"])
    return amounts


def _filled(itype: str, amounts: dict[str, float]) -> Resources | None:
    """The amounts with the dimensions SageMaker fills in the instance's ratio (the validator's arithmetic:
    16 accelerators of ml.p5.48xlarge is 2 instances' worth); None for an entry the model refuses."""
    fields = {"Count": "count", "Accelerators": "accelerators", "VCpu": "vcpu", "MemoryInGiB": "memory_gib"}
    try:
        entry = QuotaEntry(instance_type=itype, **{fields[d]: int(v) if v == int(v) else v for d, v in amounts.items()
                                                   if d in fields})
    except ValueError:  # pydantic's ValidationError: e.g. a hand-edited template
        return None
    return reservations([entry]).get(itype)


def _lowered(before: dict[str, dict[str, float]], after: dict[str, dict[str, float]]) -> tuple[str, ...]:
    """Instance types whose quota shrinks in any dimension (or disappears)."""
    lowered = []
    for itype, amounts in sorted(before.items()):
        if itype.endswith(BORROW_LIMIT_ROW):  # what a team may borrow; its running jobs keep their quota
            continue
        new = after.get(itype)
        old_filled, new_filled = _filled(itype, amounts), _filled(itype, new) if new else None
        if new is None:
            lowered.append(itype)
        elif any(new.get(key, 0.0) < value for key, value in amounts.items() if key.startswith("mig-")):
            lowered.append(itype)  # fewer GPU partitions of a profile
        elif old_filled is not None and new_filled is not None:
            if old_filled.exceeding(new_filled):
                lowered.append(itype)
        elif any(new.get(dim, 0.0) < value for dim, value in amounts.items()):
            lowered.append(itype)
    return tuple(lowered)


def team_changes(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> list[TeamChange]:
    old, new = _located_quotas(before), _located_quotas(after)
    changes = []
    for team in sorted(set(old) | set(new)):
        if team not in new:
            changes.append(TeamChange(team, "removed", old[team][0], {}))
        elif team not in old:
            changes.append(TeamChange(team, "added", {}, new[team][0]))
        elif old[team][2] != new[team][2]:
            changes.append(TeamChange(team, "moved", old[team][0], new[team][0], moved=(old[team][2], new[team][2])))
        elif old[team] != new[team]:
            changes.append(TeamChange(team, "changed", old[team][0], new[team][0], _lowered(old[team][0], new[team][0]),
                                      disabled=old[team][1] and not new[team][1]))
    return changes
