"""Two sets of templates compared resource by resource: adds, removals, updates and replacements."""

from __future__ import annotations

import json
import re
from typing import Any

from cdk_app.cli.plan.groups import group_changes
from cdk_app.cli.plan.hazards import (
    file_system_hazards,
    group_hazards,
    policy_hazards,
    protection_hazards,
    release_hazards,
    renamed_team_hazards,
    scheduling_hazards,
)
from cdk_app.cli.plan.model import (
    ALLOCATION_TYPES,
    EDITING_DOC,
    FLEET_TYPES,
    MISSING,
    RETAIN,
    STAND_INS,
    Action,
    Hazard,
    Plan,
    ResourceChange,
    resource_path,
    template_resources,
    values_at,
)
from cdk_app.cli.plan.node_pools import node_pool_hazards
from cdk_app.cli.plan.rolls import roll_hazards
from cdk_app.cli.plan.teams import team_changes
from cdk_app.domain.resource_schemas import create_only_properties, stateful_types


def _create_only(resource_type: str) -> tuple[tuple[str, ...], ...]:
    schema_type, prefix = STAND_INS.get(resource_type, (resource_type, ()))
    return tuple(prefix + path for path in create_only_properties(schema_type))


def _references(value: Any, exports: dict[str, set[tuple[str, str]]], stack: str) -> set[tuple[str, str]]:
    """(stack, logical id) of every resource `value` refers to, through imports too."""
    found: set[tuple[str, str]] = set()
    if isinstance(value, list):
        for item in value:
            found |= _references(item, exports, stack)
    elif isinstance(value, dict):
        if len(value) == 1:
            (function, argument), = value.items()
            if function == "Ref" and isinstance(argument, str) and not argument.startswith("AWS::"):
                found.add((stack, argument))
            elif function == "Fn::GetAtt":
                target = str(argument[0]) if isinstance(argument, list) and argument else str(argument).split(".")[0]
                found.add((stack, target))
            elif function == "Fn::ImportValue" and isinstance(argument, str):
                found |= exports.get(argument, set())
            elif function == "Fn::Sub":
                text = argument[0] if isinstance(argument, list) else argument
                found |= {(stack, name.split(".")[0]) for name in re.findall(r"\$\{([^!}][^}]*)\}", str(text))
                          if not name.startswith("AWS::")}
        for item in value.values():
            found |= _references(item, exports, stack)
    return found


def _exports(templates: dict[str, dict[str, Any]]) -> dict[str, set[tuple[str, str]]]:
    exports: dict[str, set[tuple[str, str]]] = {}
    for stack, template in templates.items():
        for output in template.get("Outputs", {}).values():
            name = output.get("Export", {}).get("Name")
            if isinstance(name, str):
                exports[name] = _references(output.get("Value"), {}, stack)
    return exports




def _comparable(resource: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in resource.items() if k != "Metadata"}


def compare(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]], baseline: str,
            protection: tuple[dict[str, bool], dict[str, bool]] = ({}, {}),
            backing: dict[str, bool] | None = None) -> Plan:
    """What deploying `after` over `before` does, stack by stack and team by team. `protection` is each
    side's termination protection per stack, where known; `backing` whether the teams' quotas per instance type
    fit the On-Demand capacity of the config deployed (capacity.spot_backing), where known."""
    stateful = stateful_types() | FLEET_TYPES
    exports = _exports(after)
    plan = Plan(baseline=baseline)
    # `cdk deploy` only deploys the app's stacks: one that left the app stays in the account as it is.
    plan.left_stacks = sorted(set(before) - set(after))
    direct: dict[tuple[str, str], tuple[str, ...]] = {}
    modified: set[tuple[str, str]] = set()
    pairs: dict[tuple[str, str], tuple[dict[str, Any], dict[str, Any]]] = {}
    for stack in sorted(after):
        old_resources = template_resources(before.get(stack, {}))
        new_resources = template_resources(after[stack])
        for logical_id in sorted(set(old_resources) | set(new_resources)):
            old, new = old_resources.get(logical_id), new_resources.get(logical_id)
            key = (stack, logical_id)
            if old is None or new is None:
                resource = new if old is None else old
                action: Action = "add" if old is None else "remove"
                plan.changes.append(ResourceChange(
                    stack, logical_id, resource["Type"], resource_path(resource, stack, logical_id), action,
                    stateful=_stateful(resource["Type"], action, stateful),
                    retained=_retained(resource, "DeletionPolicy")))
                continue
            pairs[key] = (old, new)
            if _comparable(old) == _comparable(new):
                continue
            modified.add(key)
            if old["Type"] != new["Type"]:
                direct[key] = (f"resource type {old['Type']} -> {new['Type']}",)
                continue
            changed = tuple("/".join(path) for path in _create_only(new["Type"])
                            if list(values_at(old.get("Properties", {}), path)) != list(values_at(new.get("Properties", {}), path)))
            if changed:
                direct[key] = tuple(f"create-only {p} changes" for p in changed)
    replaced = _propagate(direct, pairs, exports)
    for key in sorted(modified | set(replaced)):
        old, new = pairs[key]
        reasons = replaced.get(key, ())
        action = "replace" if reasons else "modify"
        plan.changes.append(ResourceChange(
            key[0], key[1], new["Type"], resource_path(new, key[0], key[1]), action, reasons,
            stateful=_stateful(new["Type"], action, stateful) or _stateful(old["Type"], action, stateful),
            retained=_retained(old, "UpdateReplacePolicy") if reasons else None,
            fails=_fails(old, new) if reasons else None))
        if not reasons and new["Type"] == "AWS::SageMaker::Cluster":
            plan.hazards.extend(group_hazards(key[0], key[1], old.get("Properties", {}), new.get("Properties", {}),
                                              backing))
            plan.hazards.extend(roll_hazards(key[0], key[1], old.get("Properties", {}), new.get("Properties", {})))
        if not reasons and new["Type"] == old["Type"] == "AWS::FSx::FileSystem":
            plan.hazards.extend(file_system_hazards(key[0], key[1], old, new))
        if not reasons and new["Type"] == old["Type"] == "Custom::HyperPodHelmRelease":
            plan.hazards.extend(release_hazards(key[0], key[1], old, new))
        if old["Type"] in stateful or old["Type"] in ALLOCATION_TYPES:
            plan.hazards.extend(policy_hazards(key[0], key[1], old, new))
    plan.changes.sort(key=lambda c: (c.stack, c.logical_id))
    plan.hazards.extend(_name_collisions(plan.changes, before, after))
    plan.hazards.extend(protection_hazards(*protection, after))
    plan.hazards.extend(scheduling_hazards(before, after))
    plan.hazards.extend(node_pool_hazards(before, after))
    plan.teams = team_changes({s: before[s] for s in before if s in after}, after)
    plan.groups = group_changes(before, after)
    plan.hazards.extend(renamed_team_hazards(plan))
    return plan


def _stateful(resource_type: str, action: Action, stateful: frozenset[str] | set[str]) -> bool:
    """Stateful for this action: a quota or the cluster policy only when replaced (removing a team's quota
    is the documented removal, called out per team)."""
    return resource_type in stateful or (action == "replace" and resource_type in ALLOCATION_TYPES)


def _fails(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    """Why CloudFormation refuses this replacement, if it does."""
    if old["Type"] != new["Type"]:
        return ("CloudFormation refuses a resource type change under the same logical id (keep the recorded "
                f"type; to move, see {EDITING_DOC})")
    props_old, props_new = old.get("Properties", {}), new.get("Properties", {})
    schema_type, prefix = STAND_INS.get(new["Type"], (new["Type"], ()))
    for path in create_only_properties(schema_type):
        if len(path) != 1 or not path[0].endswith("Name"):
            continue
        values = [next(values_at(props, prefix + path)) for props in (props_old, props_new)]
        if isinstance(values[0], str) and values[0] == values[1]:
            return (f"the name {values[0]} is taken: CloudFormation creates the replacement before deleting the "
                    "old one and refuses to replace a resource with a fixed name")
    return None


def _identity(resource: dict[str, Any]) -> str | None:
    """What the service keeps unique for this resource: an access entry's principal (EKS allows one entry
    per principal), else a fixed name (a top-level create-only '...Name' property given as a literal)."""
    props = resource.get("Properties", {})
    if resource["Type"] == "AWS::EKS::AccessEntry":
        return json.dumps(props.get("PrincipalArn"), sort_keys=True) if "PrincipalArn" in props else None
    schema_type, prefix = STAND_INS.get(resource["Type"], (resource["Type"], ()))
    for path in create_only_properties(schema_type):
        if len(path) == 1 and path[0].endswith("Name"):
            value = next(values_at(props, prefix + path))
            if isinstance(value, str):
                return value
    return None


def _name_collisions(changes: list[ResourceChange], before: dict[str, dict[str, Any]],
                     after: dict[str, dict[str, Any]]) -> list[Hazard]:
    """A resource added under a new logical id with the identity of one being removed (an admin moved in
    a list, a team moved to another stack): CloudFormation creates the new one before deleting the old one,
    and the service refuses a second one with that identity."""
    def identity(templates: dict[str, dict[str, Any]], change: ResourceChange) -> tuple[str, str] | None:
        resource = template_resources(templates.get(change.stack, {})).get(change.logical_id)
        key = _identity(resource) if resource else None
        return (change.type, key) if key is not None else None

    removed = {key: c for c in changes if c.action == "remove" and (key := identity(before, c))}
    hazards = []
    for change in changes:
        if change.action != "add" or (key := identity(after, change)) not in removed:
            continue
        old = removed[key]
        same_stack = old.stack == change.stack
        hazards.append(Hazard(change.stack, change.logical_id,
                              f"{change.path} ({change.type}) is created with the identity of {old.path}, which is "
                              f"deleted ({key[1]}): the service allows one, and "
                              + ("CloudFormation creates the new one first, so the deploy fails (deploy the removal "
                                 "first)" if same_stack else
                                 f"{change.stack} must not be deployed before {old.stack} has deleted it"),
                              fails=same_stack))
    return hazards


def _propagate(direct: dict[tuple[str, str], tuple[str, ...]],
               pairs: dict[tuple[str, str], tuple[dict[str, Any], dict[str, Any]]],
               exports: dict[str, set[tuple[str, str]]]) -> dict[tuple[str, str], tuple[str, ...]]:
    """Replacements, including those a replaced resource forces on the ones whose create-only
    properties refer to it (their value changes at deploy time although the template text does not)."""
    replaced = dict(direct)
    grew = True
    while grew:
        grew = False
        for key, (_old, new) in pairs.items():
            if key in replaced:
                continue
            for path in _create_only(new["Type"]):
                refs = set().union(*(_references(v, exports, key[0]) for v in values_at(new.get("Properties", {}), path)
                                     if v is not MISSING))
                hit = sorted(ref for ref in refs if ref in replaced)
                if hit:
                    replaced[key] = (f"create-only {'/'.join(path)} refers to {hit[0][1]}, which is replaced",)
                    grew = True
                    break
    return replaced


def _retained(resource: dict[str, Any], policy: str) -> str | None:
    """'<policy> <value>' when `policy` keeps the old resource (UpdateReplacePolicy governs a replacement,
    DeletionPolicy a removal)."""
    value = resource.get(policy)
    return f"{policy} {value}" if value in RETAIN else None
