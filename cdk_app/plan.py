"""`hyperpod-kit plan`: what a deploy will do, in an admin's words, computed from two sets of synthesized
templates - a baseline (a saved cdk.out, a git ref's synth, or the templates deployed in the account) and
the current config's synth.

Offline and deterministic: the comparison is the kit's own, on template JSON. Replacement is decided from
CloudFormation's resource schemas (createOnlyProperties in cfn-lint's copy, cdk_app.resource_schemas), not
from a list kept here; the API-backed governance resources (Custom::SageMaker<Kind>) use the schema of the
type they stand in for, as their handler does. A resource whose create-only property refers to a replaced
resource (Ref, GetAtt, or an import of another stack's export of it) is replaced too.

Verdict: a replacement or removal of a stateful resource is refused unless named with --allow-replace
<logical id>. Stateful: cfn-lint's list (buckets, keys, log groups, ...) plus what losing would lose the
fleet: the HyperPod and EKS clusters, their add-ons, the VPC and its subnets, and the Batch queues and
shares that hold submitted jobs. Refused the same way ("hazards"): in-place updates that destroy nodes
(an instance group removed, or its type, threads, zone or training plan changed: <logical id>/<group>),
a compute quota or the cluster policy replaced (running jobs lose their guarantee), a DeletionPolicy or
UpdateReplacePolicy dropped from a stateful resource, termination protection turned off (<stack name>).
Never allowed, because the deploy fails: a replacement that keeps a fixed name (CloudFormation creates the
new resource before deleting the old one), a resource type changed under the same logical id, and a
resource added under a new logical id with the name (or, for an access entry, the principal) of one the
same stack deletes.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Literal

from cdk_app.batch_shares import queue_scheduling
from cdk_app.config.model import QuotaEntry
from cdk_app.resource_schemas import create_only_properties, stateful_types
from cdk_app.stack_layout import environment_of, stack_prefix
from cdk_app.template_shape import TemplateShapeError, check_template
from cdk_app.validator.capacity import Resources, reservations, unit_for

# Losing one of these loses the running fleet or its network; cfn-lint's list covers data stores only.
FLEET_TYPES = frozenset({"AWS::SageMaker::Cluster", "AWS::EKS::Cluster", "AWS::EKS::Addon", "AWS::EC2::VPC",
                         "AWS::EC2::Subnet", "AWS::Batch::JobQueue", "AWS::Batch::QuotaShare",
                         "AWS::Batch::ServiceEnvironment"})
# The API-backed governance resources keep the native type's properties under "Parameters".
STAND_INS = {f"Custom::SageMaker{kind}": (f"AWS::SageMaker::{kind}", ("Parameters",))
             for kind in ("ClusterSchedulerConfig", "ComputeQuota")}
QUOTA_TYPES = {"AWS::SageMaker::ComputeQuota": (), "Custom::SageMakerComputeQuota": ("Parameters",)}
DIMENSIONS = (("Count", "instances"), ("Accelerators", "accelerators"), ("VCpu", "vCPU"),
              ("MemoryInGiB", "GiB memory"))
# Replacing one of these drops the guarantee of every running job it admits; removing a quota is the
# documented team removal (a warning), replacing it is not.
ALLOCATION_TYPES = frozenset({*QUOTA_TYPES, "AWS::SageMaker::ClusterSchedulerConfig",
                              "Custom::SageMakerClusterSchedulerConfig"})
RETAIN = ("Retain", "RetainExceptOnCreate", "Snapshot")
IGNORED_TYPES = frozenset({"AWS::CDK::Metadata"})  # `cdk synth` adds it, the in-process synth does not
REMOVAL_DOC = "README.md, section 'Removing or disabling a team'"
MOVE_DOC = "README.md, section 'Many teams: team stacks'"
STACK_REMOVAL_DOC = "README.md, section 'Removing a stack'"
DIGEST_KEY = "hyperpod-kit:config-sha256"
# The stack whose template carries the config digest: the governance stack, or in a Batch-only environment
# (no governance stack) the Batch stack.
DIGEST_STACK_SUFFIXES = ("-governance", "-batch")
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


@dataclass
class Plan:
    baseline: str
    changes: list[ResourceChange] = field(default_factory=list)
    teams: list[TeamChange] = field(default_factory=list)
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

    def names(self) -> set[str]:
        """What --allow-replace can name in this plan."""
        return {c.logical_id for c in self.changes if c.dangerous} | {h.name for h in self.hazards if h.refuse}

    def to_json(self, allowed: tuple[str, ...] = ()) -> dict[str, Any]:
        blocked = self.blocked(allowed)
        return {"baseline": self.baseline, "ok": not blocked, "refused": blocked,
                "changes": [c.to_json() for c in self.changes], "teams": [t.to_json() for t in self.teams],
                "hazards": [h.to_json() for h in self.hazards], "stacks_left_in_account": self.left_stacks}


# ---------------------------------------------------------------------------------------------- reading


def read_templates(folder: Path) -> dict[str, dict[str, Any]]:
    """Stack name -> template, from a cloud assembly (manifest.json) or a folder of *.template.json."""
    if not folder.is_dir():
        raise PlanInputError(f"{folder}: not a directory (give a cdk.out folder or a folder of *.template.json)")
    manifest = folder / "manifest.json"
    if manifest.is_file():
        files = {name: path for name, (path, _) in _manifest_stacks(folder, manifest).items()}
    else:
        files = {p.name.removesuffix(".template.json"): p for p in sorted(folder.glob("*.template.json"))}
    if not files:
        raise PlanInputError(f"{folder}: no CloudFormation templates in it")
    return {name: checked_template(_json(path), str(path)) for name, path in files.items()}


def termination_protection(folder: Path) -> dict[str, bool]:
    """Stack name -> termination protection, from a cloud assembly's manifest (empty without one)."""
    manifest = folder / "manifest.json"
    if not manifest.is_file():
        return {}
    return {name: protected for name, (_, protected) in _manifest_stacks(folder, manifest).items()}


def config_digest(config: Any) -> str:
    """A digest of the validated config's content, stamped into every template a synth writes."""
    return hashlib.sha256(config.model_dump_json().encode()).hexdigest()


def stamp(app: Any, config: Any) -> None:
    """Write config_digest(config) into the governance stack's template Metadata, so `plan --current` can
    tell a synth of this config from a stale one. Only there: a digest in the network and cluster templates
    would change them on every quota edit, which must leave them byte-identical."""
    from aws_cdk import Stack

    stacks = [child for child in app.node.children if isinstance(child, Stack)]
    for child in _digest_stacks(stacks, lambda stack: stack.stack_name):
        child.add_metadata(DIGEST_KEY, config_digest(config))


def _digest_stacks(stacks: list[Any], name: Any) -> list[Any]:
    """The stacks that carry the digest: those of the first suffix of DIGEST_STACK_SUFFIXES any stack has."""
    for suffix in DIGEST_STACK_SUFFIXES:
        found = [stack for stack in stacks if name(stack).endswith(suffix)]
        if found:
            return found
    return []


def check_digest(templates: dict[str, dict[str, Any]], config: Any, where: str) -> None:
    """Refuse a synth that is not of `config` as it is now (edited since, or of another file)."""
    wanted = config_digest(config)
    stamped = _digest_stacks(list(templates), str)
    if not stamped:
        raise PlanInputError(f"{where}: no governance or Batch stack in it to read the config digest from: "
                             "synthesize again")
    for stack in stamped:
        found = templates[stack].get("Metadata", {}).get(DIGEST_KEY)
        if found is None:
            raise PlanInputError(f"{where}: stack {stack} carries no config digest (synthesized by an older kit or "
                                 "not by `cdk synth`): synthesize again, or leave out --current")
        if found != wanted:
            raise PlanInputError(f"{where}: stack {stack} was synthesized from another version of the config "
                                 "(the file changed since): synthesize again (make synth), or leave out --current")


def check_account(sts: Any, account: str) -> None:
    """The credentials must be of the config's account; in another one every stack 'does not exist' and the
    plan would show everything as new."""
    from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

    try:
        found = sts.get_caller_identity()["Account"]
    except NoCredentialsError as err:
        raise PlanInputError("no AWS credentials for --against-account: set AWS_PROFILE or pass --profile") from err
    except (BotoCoreError, ClientError) as err:
        raise PlanInputError(f"--against-account: sts:GetCallerIdentity failed: {err}") from err
    if found != account:
        raise PlanInputError(f"--against-account: the credentials are of account {found}, the config deploys to "
                             f"{account}: choose that account's profile (--profile or AWS_PROFILE)")


def environment_stacks(templates: dict[str, dict[str, Any]], environment: str, where: str) -> dict[str, dict[str, Any]]:
    """The stacks of `environment` (HyperPod-<environment>-*); an error when there are none, e.g. a synth
    of another environment."""
    prefix = stack_prefix(environment)
    # Exact: prod's prefix is also the start of prod-eu's stack names.
    mine = {name: template for name, template in templates.items() if environment_of(name) == environment}
    if not mine:
        others = sorted({environment_of(name) for name in templates} - {None})
        renamed = (f"; if the environment was renamed from {' or '.join(others)}: a rename deploys a second set of "
                   f"stacks ({prefix}*) next to the old ones, which stay" if others else "")
        raise PlanInputError(f"{where} holds no stack of environment {environment} ({prefix}*), only: "
                             f"{', '.join(sorted(templates))}{renamed}")
    return mine


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are unique: with a key given twice, JSON readers disagree on which wins."""
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise ValueError(f"key {key!r} given twice in one object")
        found[key] = value
    return found


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=_unique_keys)
    except (OSError, UnicodeDecodeError, ValueError) as err:  # JSONDecodeError is a ValueError
        raise PlanInputError(f"{path}: cannot be read as JSON: {err}") from err
    except RecursionError as err:
        raise PlanInputError(f"{path}: cannot be read as JSON: nested too deeply") from err


def checked_template(template: Any, where: str) -> dict[str, Any]:
    """`template` when it is a CloudFormation template, else PlanInputError naming `where` and the field."""
    try:
        check_template(template, STAND_INS)
    except TemplateShapeError as err:
        raise PlanInputError(f"{where}: not a CloudFormation template: {err}") from err
    return template


def _manifest_stacks(folder: Path, manifest: Path) -> dict[str, tuple[Path | None, bool]]:
    """Stack name -> (template file, termination protection) from a cloud assembly manifest."""
    artifacts = _json(manifest)
    artifacts = artifacts.get("artifacts", {}) if isinstance(artifacts, dict) else None
    if not isinstance(artifacts, dict) or not all(isinstance(a, dict) for a in artifacts.values()):
        raise PlanInputError(f"{manifest}: not a cloud assembly manifest (artifacts must be a mapping of mappings)")
    stacks = {}
    for artifact_id, artifact in artifacts.items():
        if artifact.get("type") != "aws:cloudformation:stack":
            continue
        properties = artifact.get("properties", {})
        if not isinstance(properties, dict) or not isinstance(properties.get("templateFile"), str):
            raise PlanInputError(f"{manifest}: artifacts.{artifact_id}.properties.templateFile: a stack artifact "
                                 "needs the file name of its template")
        stacks[str(properties.get("stackName", artifact_id))] = (folder / properties["templateFile"],
                                                                 bool(properties.get("terminationProtection", False)))
    return stacks


# -------------------------------------------------------------------------------------------- comparing


def _at(value: Any, path: tuple[str, ...]) -> Iterator[Any]:
    """Every value at `path` ('*' = each list item); MISSING where the path ends early."""
    if not path:
        yield value
        return
    head, rest = path[0], path[1:]
    if head == "*":
        for item in value if isinstance(value, list) else ():
            yield from _at(item, rest)
    elif isinstance(value, dict) and head in value:
        yield from _at(value[head], rest)
    else:
        yield MISSING


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


def _path(resource: dict[str, Any], stack: str, logical_id: str) -> str:
    """The construct path (stack/construct/.../Resource) when the synth recorded it."""
    return resource.get("Metadata", {}).get("aws:cdk:path", f"{stack}/{logical_id}")


def _comparable(resource: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in resource.items() if k != "Metadata"}


def compare(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]], baseline: str,
            protection: tuple[dict[str, bool], dict[str, bool]] = ({}, {})) -> Plan:
    """What deploying `after` over `before` does, stack by stack and team by team. `protection` is each
    side's termination protection per stack, where known."""
    stateful = stateful_types() | FLEET_TYPES
    exports = _exports(after)
    plan = Plan(baseline=baseline)
    # `cdk deploy` only deploys the app's stacks: one that left the app stays in the account as it is.
    plan.left_stacks = sorted(set(before) - set(after))
    direct: dict[tuple[str, str], tuple[str, ...]] = {}
    modified: set[tuple[str, str]] = set()
    pairs: dict[tuple[str, str], tuple[dict[str, Any], dict[str, Any]]] = {}
    for stack in sorted(after):
        old_resources = _resources(before.get(stack, {}))
        new_resources = _resources(after[stack])
        for logical_id in sorted(set(old_resources) | set(new_resources)):
            old, new = old_resources.get(logical_id), new_resources.get(logical_id)
            key = (stack, logical_id)
            if old is None or new is None:
                resource = new if old is None else old
                action: Action = "add" if old is None else "remove"
                plan.changes.append(ResourceChange(
                    stack, logical_id, resource["Type"], _path(resource, stack, logical_id), action,
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
                            if list(_at(old.get("Properties", {}), path)) != list(_at(new.get("Properties", {}), path)))
            if changed:
                direct[key] = tuple(f"create-only {p} changes" for p in changed)
    replaced = _propagate(direct, pairs, exports)
    for key in sorted(modified | set(replaced)):
        old, new = pairs[key]
        reasons = replaced.get(key, ())
        action = "replace" if reasons else "modify"
        plan.changes.append(ResourceChange(
            key[0], key[1], new["Type"], _path(new, key[0], key[1]), action, reasons,
            stateful=_stateful(new["Type"], action, stateful) or _stateful(old["Type"], action, stateful),
            retained=_retained(old, "UpdateReplacePolicy") if reasons else None,
            fails=_fails(old, new) if reasons else None))
        if not reasons and new["Type"] == "AWS::SageMaker::Cluster":
            plan.hazards.extend(group_hazards(key[0], key[1], old.get("Properties", {}), new.get("Properties", {})))
        if old["Type"] in stateful or old["Type"] in ALLOCATION_TYPES:
            plan.hazards.extend(_policy_hazards(key[0], key[1], old, new))
    plan.changes.sort(key=lambda c: (c.stack, c.logical_id))
    plan.hazards.extend(_name_collisions(plan.changes, before, after))
    plan.hazards.extend(_protection_hazards(*protection, after))
    plan.hazards.extend(_scheduling_changes(before, after))
    plan.teams = team_changes({s: before[s] for s in before if s in after}, after)
    plan.hazards.extend(_renamed_teams(plan))
    return plan


def _resources(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {k: r for k, r in template.get("Resources", {}).items() if r.get("Type") not in IGNORED_TYPES}


def _stateful(resource_type: str, action: Action, stateful: frozenset[str] | set[str]) -> bool:
    """Stateful for this action: a quota or the cluster policy only when replaced (removing a team's quota
    is the documented removal, called out per team)."""
    return resource_type in stateful or (action == "replace" and resource_type in ALLOCATION_TYPES)


def _fails(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    """Why CloudFormation refuses this replacement, if it does."""
    if old["Type"] != new["Type"]:
        return ("CloudFormation refuses a resource type change under the same logical id (keep the recorded "
                "type; to move, see README.md 'Things to know before editing')")
    props_old, props_new = old.get("Properties", {}), new.get("Properties", {})
    schema_type, prefix = STAND_INS.get(new["Type"], (new["Type"], ()))
    for path in create_only_properties(schema_type):
        if len(path) != 1 or not path[0].endswith("Name"):
            continue
        values = [next(_at(props, prefix + path)) for props in (props_old, props_new)]
        if isinstance(values[0], str) and values[0] == values[1]:
            return (f"the name {values[0]} is taken: CloudFormation creates the replacement before deleting the "
                    "old one and refuses to replace a resource with a fixed name")
    return None


def group_hazards(stack: str, logical_id: str, old: dict[str, Any], new: dict[str, Any]) -> list[Hazard]:
    """What an in-place update of a HyperPod cluster does to its instance groups' nodes. UpdateCluster
    deletes a group left out of the desired state (InstanceGroupsToDelete) with its nodes, and rebuilds
    a group's nodes for a new instance type (AWS docs: 'you can change the instance type'); a zone move,
    a threads-per-core change, a smaller volume or a dropped training plan cannot keep the nodes either."""
    def groups(props: dict[str, Any]) -> dict[str, dict[str, Any]]:
        return {g["InstanceGroupName"]: g for g in props.get("InstanceGroups", [])
                if isinstance(g, dict) and isinstance(g.get("InstanceGroupName"), str)}

    def nodes(group: dict[str, Any]) -> str:
        return f"{group.get('InstanceCount', '?')} x {group.get('InstanceType', '?')} nodes"

    def volume(group: dict[str, Any]) -> int:
        return sum(int(c.get("EbsVolumeConfig", {}).get("VolumeSizeInGB", 0) or 0)
                   for c in group.get("InstanceStorageConfigs", []) if isinstance(c, dict))

    old_groups, new_groups = groups(old), groups(new)
    hazards = []
    for name, group in sorted(old_groups.items()):
        where = f"{logical_id}/{name}"
        if name not in new_groups:
            added = sorted(set(new_groups) - set(old_groups))
            hint = f" (a renamed group is a new, empty one: {', '.join(added)})" if added else ""
            hazards.append(Hazard(stack, where, f"instance group {name} removed: its {nodes(group)} are terminated, "
                                               f"with the jobs running on them{hint}"))
            continue
        now = new_groups[name]
        why = []
        if group.get("InstanceType") != now.get("InstanceType"):
            why.append(f"instance type {group.get('InstanceType')} -> {now.get('InstanceType')}")
        if group.get("ThreadsPerCore") != now.get("ThreadsPerCore"):
            why.append(f"threads per core {group.get('ThreadsPerCore')} -> {now.get('ThreadsPerCore')}")
        if volume(now) < volume(group):
            why.append(f"EBS volume {volume(group)} -> {volume(now)} GiB (a volume cannot shrink)")
        if group.get("TrainingPlanArn") and group.get("TrainingPlanArn") != now.get("TrainingPlanArn"):
            why.append(f"training plan {str(group['TrainingPlanArn']).rsplit('/', 1)[-1]} "
                       f"{'changed' if now.get('TrainingPlanArn') else 'dropped'} (its reserved capacity is left)")
        if group.get("OverrideVpcConfig") != now.get("OverrideVpcConfig"):
            why.append("subnet (zone) changed")
        if why:
            hazards.append(Hazard(stack, where, f"instance group {name}: {'; '.join(why)}: its {nodes(group)} are "
                                               "terminated and re-created, with the jobs running on them"))
        before_count, after_count = group.get("InstanceCount"), now.get("InstanceCount")
        if isinstance(before_count, int) and isinstance(after_count, int) and after_count < before_count:
            # An explicit scale-down the admin wrote: called out, not refused (capacity checks run in validate).
            hazards.append(Hazard(stack, where, f"instance group {name}: {before_count} -> {after_count} nodes: "
                                               f"{before_count - after_count} x {now.get('InstanceType')} nodes removed "
                                               "(SageMaker picks which; jobs on them stop)", refuse=False))
    return hazards


def _policy_hazards(stack: str, logical_id: str, old: dict[str, Any], new: dict[str, Any]) -> list[Hazard]:
    return [Hazard(stack, logical_id, f"{_path(new, stack, logical_id)} ({new['Type']}): {policy} "
                                      f"{old[policy]} dropped (now {new.get(policy, 'Delete')}): a later "
                                      f"{'replacement' if policy == 'UpdateReplacePolicy' else 'deletion'} "
                                      "would delete it")
            for policy in ("DeletionPolicy", "UpdateReplacePolicy")
            if old.get(policy) in RETAIN and new.get(policy) not in RETAIN]


def _protection_hazards(before: dict[str, bool], after: dict[str, bool],
                        templates: dict[str, dict[str, Any]]) -> list[Hazard]:
    return [Hazard(stack, stack, f"stack {stack}: termination protection turned off (`cdk destroy` would then "
                                 "delete it)")
            for stack in sorted(templates) if before.get(stack) and after.get(stack) is False]


def _template_scheduling(queue: dict[str, Any], resources: dict[str, dict[str, Any]]) -> str:
    """The scheduling type of a job queue in a template: its SchedulingPolicyArn is the GetAtt of the policy."""
    arn = queue.get("Properties", {}).get("SchedulingPolicyArn")
    target = arn.get("Fn::GetAtt", [None])[0] if isinstance(arn, dict) else None
    return queue_scheduling(arn, resources.get(target, {}).get("Properties") if target else None)


def _scheduling_changes(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> list[Hazard]:
    """A job queue kept under its logical id whose scheduling type changes. Batch never adds a scheduling policy
    to a FIFO queue, never removes one, and never changes it between fair share and quota share (botocore
    CreateJobQueue/UpdateJobQueue schedulingPolicyArn), so the update fails; `validate --live` says the same
    against the deployed queue (HPK716)."""
    hazards = []
    for stack in sorted(after):
        old_resources, new_resources = _resources(before.get(stack, {})), _resources(after[stack])
        for logical_id, new in sorted(new_resources.items()):
            old = old_resources.get(logical_id)
            if new["Type"] != "AWS::Batch::JobQueue" or old is None or old["Type"] != new["Type"]:
                continue
            kinds = _template_scheduling(old, old_resources), _template_scheduling(new, new_resources)
            if kinds[0] != kinds[1]:
                hazards.append(Hazard(stack, logical_id, f"{_path(new, stack, logical_id)} (AWS::Batch::JobQueue): "
                                      f"scheduling {kinds[0]} -> {kinds[1]}: Batch cannot change a queue's scheduling "
                                      "type (give the queue a new name - a new queue is created, the old one "
                                      f"removed - and move its teams, or keep scheduling: {kinds[0]})", fails=True))
    return hazards


def _identity(resource: dict[str, Any]) -> str | None:
    """What the service keeps unique for this resource: an access entry's principal (EKS allows one entry
    per principal), else a fixed name (a top-level create-only '...Name' property given as a literal)."""
    props = resource.get("Properties", {})
    if resource["Type"] == "AWS::EKS::AccessEntry":
        return json.dumps(props.get("PrincipalArn"), sort_keys=True) if "PrincipalArn" in props else None
    schema_type, prefix = STAND_INS.get(resource["Type"], (resource["Type"], ()))
    for path in create_only_properties(schema_type):
        if len(path) == 1 and path[0].endswith("Name"):
            value = next(_at(props, prefix + path))
            if isinstance(value, str):
                return value
    return None


def _name_collisions(changes: list[ResourceChange], before: dict[str, dict[str, Any]],
                     after: dict[str, dict[str, Any]]) -> list[Hazard]:
    """A resource added under a new logical id with the identity of one being removed (an admin moved in
    a list, a team moved to another stack): CloudFormation creates the new one before deleting the old one,
    and the service refuses a second one with that identity."""
    def identity(templates: dict[str, dict[str, Any]], change: ResourceChange) -> tuple[str, str] | None:
        resource = _resources(templates.get(change.stack, {})).get(change.logical_id)
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
                refs = set().union(*(_references(v, exports, key[0]) for v in _at(new.get("Properties", {}), path)
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


# ----------------------------------------------------------------------------------------------- teams


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
            for entry in props.get("ComputeQuotaConfig", {}).get("ComputeQuotaResources", []):
                amounts[entry["InstanceType"]] = {dim: float(entry[dim]) for dim, _ in DIMENSIONS
                                                  if isinstance(entry.get(dim), (int, float, str))
                                                  and str(entry[dim]).replace(".", "", 1).isdigit()}
            teams[team] = (amounts, props.get("ActivationState", "Enabled") == "Enabled", stack)
    return teams


def _filled(itype: str, amounts: dict[str, float]) -> Resources | None:
    """The amounts with the dimensions SageMaker fills in the instance's ratio (the validator's arithmetic:
    16 accelerators of ml.p5.48xlarge is 2 instances' worth); None for an entry the model refuses."""
    fields = {"Count": "count", "Accelerators": "accelerators", "VCpu": "vcpu", "MemoryInGiB": "memory_gib"}
    try:
        entry = QuotaEntry(instance_type=itype, **{fields[d]: int(v) if v == int(v) else v for d, v in amounts.items()})
    except ValueError:  # pydantic's ValidationError: e.g. a hand-edited template
        return None
    return reservations([entry]).get(itype)


def _lowered(before: dict[str, dict[str, float]], after: dict[str, dict[str, float]]) -> tuple[str, ...]:
    """Instance types whose quota shrinks in any dimension (or disappears)."""
    lowered = []
    for itype, amounts in sorted(before.items()):
        new = after.get(itype)
        old_filled, new_filled = _filled(itype, amounts), _filled(itype, new) if new else None
        if new is None:
            lowered.append(itype)
        elif old_filled is not None and new_filled is not None:
            if old_filled.exceeding(new_filled):
                lowered.append(itype)
        elif any(new.get(dim, 0.0) < value for dim, value in amounts.items()):
            lowered.append(itype)
    return tuple(lowered)


def _renamed_teams(plan: Plan) -> list[Hazard]:
    """A team removed while another is added looks like a rename, which replaces the quota: the old team's
    jobs lose their guarantee and the add-on deletes its namespace. Refused unless named (team:<old name>);
    removing and adding in separate deploys is the safer order anyway."""
    removed = [t.team for t in plan.teams if t.change == "removed"]
    added = [t.team for t in plan.teams if t.change == "added"]
    if not (removed and added):
        return []
    return [Hazard("", f"team:{team}", f"team {team} removed while {', '.join(added)} is added (a rename?): its "
                                       f"quota is deleted, its namespace hyperpod-ns-{team} with it, and its running "
                                       f"jobs lose their guarantee (drain first: {REMOVAL_DOC})")
            for team in removed]


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


# ----------------------------------------------------------------------------------------------- words


def _amounts(amounts: dict[str, float]) -> str:
    return ", ".join(f"{value:g} {unit_for(value, word)}"
                     for dim, word in DIMENSIONS if (value := amounts.get(dim)) is not None) or "none"


def _quota_lines(change: TeamChange) -> list[str]:
    lines = []
    for itype in sorted(set(change.before) | set(change.after)):
        old, new = change.before.get(itype), change.after.get(itype)
        if old != new:
            lines.append(f"      {itype}: {_amounts(old) if old else 'none'} -> {_amounts(new) if new else 'none'}")
    return lines


ACTION_WORDS = {"add": "create", "remove": "DELETE", "replace": "REPLACE", "modify": "update"}


def _verdict(name: str, allowed: tuple[str, ...], fails: bool) -> str:
    if fails:
        return "will FAIL: refused"
    return "allowed by --allow-replace" if name in allowed else f"REFUSED (name it with --allow-replace {name} if intended)"


def render(plan: Plan, allowed: tuple[str, ...] = ()) -> str:
    lines = [f"plan against {plan.baseline}"]
    if plan.teams:
        lines.append("teams:")
    for team in plan.teams:
        if team.change == "added":
            lines.append(f"  + team {team.team} added")
        elif team.change == "removed":
            lines.append(f"  - team {team.team} removed: its compute quota is deleted")
        elif team.moved is not None:
            lines.append(f"  ~ team {team.team} moves from stack {team.moved[0]} to {team.moved[1]}: its compute "
                         f"quota is deleted and created again ({MOVE_DOC})")
        else:
            lines.append(f"  ~ team {team.team}" + (": allocation disabled" if team.disabled else ": quota changed"))
        lines.extend(_quota_lines(team))
        if team.may_preempt:
            lines.append(f"    ! running jobs of team {team.team} may be preempted/stopped "
                         f"(drain first: {REMOVAL_DOC})")
    if plan.hazards:
        lines.append("nodes, allocations and protection:")
    for hazard in plan.hazards:
        verdict = _verdict(hazard.name, allowed, hazard.fails) if hazard.refuse else "called out, not refused"
        lines.append(f"  {hazard.text} - {verdict}")
    dangerous = [c for c in plan.changes if c.dangerous]
    if dangerous:
        lines.append("stateful resources replaced or deleted:")
    for change in dangerous:
        if change.fails:
            outcome = f"; will FAIL: {change.fails}"
        elif change.retained:
            outcome = f"; the old one stays in the account ({change.retained})"
        else:
            outcome = f"; the old one is DELETED" if change.action == "replace" else ""
        lines.append(f"  {ACTION_WORDS[change.action]} {change.path} ({change.type}, logical id {change.logical_id}): "
                     f"{'; '.join(change.reasons) or 'removed from the template'}{outcome} - "
                     f"{_verdict(change.logical_id, allowed, change.fails is not None)}")
    others = [c for c in plan.changes if not c.dangerous]
    if others:
        lines.append("other changes:")
        for stack in sorted({c.stack for c in others}):
            counts: dict[str, int] = {}
            for change in (c for c in others if c.stack == stack):
                counts[ACTION_WORDS[change.action]] = counts.get(ACTION_WORDS[change.action], 0) + 1
            lines.append(f"  {stack}: " + ", ".join(f"{n} {word}" for word, n in sorted(counts.items())))
            lines.extend(f"    {ACTION_WORDS[c.action]} {c.path} ({c.type})" + (f": {'; '.join(c.reasons)}" if c.reasons else "")
                         for c in others if c.stack == stack and c.action in ("replace", "remove"))
    for stack in plan.left_stacks:
        lines.append(f"stack {stack} is no longer in the app: `cdk deploy` does not delete it, its resources keep "
                     f"running unmanaged (see {STACK_REMOVAL_DOC})")
    if not plan.changes and not plan.left_stacks:
        lines.append("no changes")
    blocked = plan.blocked(allowed)
    lines.append(f"refused: {len(blocked)} change(s) that destroy or fail, not named with --allow-replace: "
                 f"{', '.join(blocked)}" if blocked else
                 "ok: nothing stateful is replaced, deleted or weakened without --allow-replace")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------- sources


KIT_ROOT = Path(__file__).resolve().parent.parent


def cdk_context(root: Path) -> dict[str, Any]:
    """The feature flags of cdk.json in `root`, which the CDK CLI would pass to the app."""
    path = root / "cdk.json"
    return _json(path).get("context", {}) if path.is_file() else {}


def synthesize(config: Any, outdir: Path) -> Path:
    """The config's cloud assembly, synthesized in this process as `cdk synth` runs app.py (cdk.json's
    feature flags, cdk-nag included)."""
    import os

    node = KIT_ROOT / "node_modules" / ".bin" / "node"
    if node.exists():  # the pinned Node 22, as `npx cdk` uses; read when jsii starts its runtime
        os.environ.setdefault("JSII_NODE", str(node))
    from aws_cdk import App

    from cdk_app.app_builder import build_app

    # Path metadata (on in `cdk synth`) lets the plan name resources by construct path.
    app = App(outdir=str(outdir), context={**cdk_context(KIT_ROOT), "aws:cdk:enable-path-metadata": True},
              builtin_cloud_formation_validation=False)
    build_app(app, config)
    stamp(app, config)
    try:
        app.synth()
    except RuntimeError as err:  # jsii's wrapper of the synth's own failure, e.g. cdk-nag's verdict
        raise PlanInputError(f"synthesizing {config.environment} failed: {str(err).splitlines()[0]}") from err
    return outdir


# Runs a git ref's own app.py with this virtualenv: its cdk_app and constructs/ come first on the path.
_REF_BOOT = """
import runpy, sys, types
src = sys.argv[1]
sys.path.insert(0, src)
package = types.ModuleType("hyperpod_constructs")
package.__path__ = [src + "/constructs"]
sys.modules["hyperpod_constructs"] = package
sys.argv = [src + "/app.py"]
runpy.run_path(src + "/app.py", run_name="__main__")
"""


def resolve_ref(repo: Path, ref: str) -> str:
    """The commit `ref` names, resolved before any other git call sees it: a value starting with '-' would
    be read by git as an option (`--output=FILE` makes `git archive` truncate FILE), so it is refused, and
    only the resolved hexadecimal commit id is passed on."""
    import subprocess

    if not ref or ref.startswith("-") or any(ord(c) < 32 or ord(c) == 127 for c in ref):
        raise PlanInputError(f"--against-ref {ref!r}: not a git ref (a branch, tag or commit; it cannot be empty, "
                             "start with '-' or hold control characters)")
    found = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", "--end-of-options",
                            f"{ref}^{{commit}}"], capture_output=True, text=True)
    commit = found.stdout.strip()
    if found.returncode != 0 or not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", commit):
        raise PlanInputError(f"--against-ref {ref!r}: no such commit in {repo} (git rev-parse --verify: "
                             f"{found.stderr.strip() or 'unknown revision'})")
    return commit


def synthesize_ref(repo: Path, ref: str, config_path: str, environment: str, workdir: Path) -> Path | None:
    """The cloud assembly of `config_path` as the repository was at `ref` (its code and its config), or None
    when the ref has no such file (an environment added since: nothing of it can be deployed yet)."""
    import os
    import subprocess
    import sys

    source, outdir = workdir / "source", workdir / "cdk.out"
    source.mkdir(parents=True)
    commit = resolve_ref(repo, ref)
    archive = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", commit], capture_output=True)
    if archive.returncode != 0:
        raise PlanInputError(f"git ref {ref!r}: {archive.stderr.decode(errors='replace').strip()}")
    subprocess.run(["tar", "-x", "-C", str(source)], input=archive.stdout, check=True)
    if not (source / config_path).is_file():
        return None
    declared = re.search(r"^environment:\s*[\"']?([\w-]+)", (source / config_path).read_text(errors="replace"), re.M)
    if declared and declared.group(1) != environment:
        old = declared.group(1)
        raise PlanInputError(f"environment renamed: {config_path} says environment: {environment}, at {ref} it said "
                             f"{old}. A rename deploys a second set of stacks ({stack_prefix(environment)}*) next to "
                             f"{stack_prefix(old)}*, which stay, and their fixed names (cluster, quotas) collide; keep "
                             f"environment: {old}, or create the new environment deliberately and retire the old one "
                             f"({STACK_REMOVAL_DOC})")
    node = repo / "node_modules" / ".bin"
    env = {**os.environ, "CDK_OUTDIR": str(outdir),
           "CDK_CONTEXT_JSON": json.dumps({**cdk_context(source), "env": environment,
                                           "config": str(source / config_path)})}
    if (node / "node").exists():
        env.update(PATH=f"{node}{os.pathsep}{env.get('PATH', '')}", JSII_NODE=str(node / "node"))
    result = subprocess.run([sys.executable, "-c", _REF_BOOT, str(source)], cwd=source, env=env,
                            capture_output=True, text=True, timeout=900)
    if result.returncode != 0:
        tail = "\n".join(result.stderr.strip().splitlines()[-15:])
        raise PlanInputError(f"synthesizing {config_path} at {ref} failed:\n{tail}")
    return outdir


def deployed_templates(cloudformation: Any, stacks: list[str]) -> dict[str, dict[str, Any]]:
    """The templates of `stacks` as deployed (CloudFormation GetTemplate, read-only); a stack that does not
    exist yet is left out, so everything in it shows as created."""
    from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

    templates = {}
    for stack in stacks:
        try:
            body = cloudformation.get_template(StackName=stack, TemplateStage="Original")["TemplateBody"]
        except NoCredentialsError as err:
            raise PlanInputError("no AWS credentials for --against-account: set AWS_PROFILE or pass --profile") from err
        except ClientError as err:
            if "does not exist" in err.response.get("Error", {}).get("Message", ""):
                continue
            raise PlanInputError(f"cloudformation:GetTemplate {stack} failed: {err}") from err
        except BotoCoreError as err:
            raise PlanInputError(f"cloudformation:GetTemplate {stack} failed: {err}") from err
        where = f"the deployed template of {stack}"
        try:
            parsed = body if isinstance(body, dict) else json.loads(body, object_pairs_hook=_unique_keys)
        except (ValueError, RecursionError) as err:  # a YAML template body, or a broken one
            raise PlanInputError(f"{where}: cannot be read as JSON: {err}") from err
        templates[stack] = checked_template(parsed, where)
    return templates


def deployed_protection(cloudformation: Any, stacks: list[str]) -> dict[str, bool]:
    """Termination protection of each deployed stack (cloudformation:DescribeStacks, read-only)."""
    from botocore.exceptions import BotoCoreError, ClientError

    found = {}
    for stack in stacks:
        try:
            described = cloudformation.describe_stacks(StackName=stack)["Stacks"]
        except (BotoCoreError, ClientError) as err:
            raise PlanInputError(f"cloudformation:DescribeStacks {stack} failed: {err}") from err
        found[stack] = bool(described and described[0].get("EnableTerminationProtection", False))
    return found
