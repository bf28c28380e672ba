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
fleet: the HyperPod and EKS clusters, their add-ons, the VPC and its subnets.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Literal

from cdk_app.config.model import QuotaEntry
from cdk_app.resource_schemas import create_only_properties, stateful_types
from cdk_app.validator.capacity import Resources, reservations

# Losing one of these loses the running fleet or its network; cfn-lint's list covers data stores only.
FLEET_TYPES = frozenset({"AWS::SageMaker::Cluster", "AWS::EKS::Cluster", "AWS::EKS::Addon", "AWS::EC2::VPC",
                         "AWS::EC2::Subnet"})
# The API-backed governance resources keep the native type's properties under "Parameters".
STAND_INS = {f"Custom::SageMaker{kind}": (f"AWS::SageMaker::{kind}", ("Parameters",))
             for kind in ("ClusterSchedulerConfig", "ComputeQuota")}
QUOTA_TYPES = {"AWS::SageMaker::ComputeQuota": (), "Custom::SageMakerComputeQuota": ("Parameters",)}
DIMENSIONS = (("Count", "instances"), ("Accelerators", "accelerators"), ("VCpu", "vCPU"),
              ("MemoryInGiB", "GiB memory"))
REMOVAL_DOC = "README.md, section 'Removing or disabling a team'"
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
    retained: bool = False

    @property
    def dangerous(self) -> bool:
        return self.stateful and self.action in ("remove", "replace")

    def to_json(self) -> dict[str, Any]:
        return {"stack": self.stack, "logical_id": self.logical_id, "type": self.type, "path": self.path,
                "action": self.action, "reasons": list(self.reasons), "stateful": self.stateful,
                "retained": self.retained}


@dataclass(frozen=True)
class TeamChange:
    team: str
    change: Literal["added", "removed", "changed"]
    before: dict[str, dict[str, float]]
    after: dict[str, dict[str, float]]
    lowered: tuple[str, ...] = ()
    disabled: bool = False

    @property
    def may_preempt(self) -> bool:
        return self.change == "removed" or bool(self.lowered) or self.disabled

    def to_json(self) -> dict[str, Any]:
        return {"team": self.team, "change": self.change, "before": self.before, "after": self.after,
                "lowered": list(self.lowered), "disabled": self.disabled, "may_preempt": self.may_preempt}


@dataclass
class Plan:
    baseline: str
    changes: list[ResourceChange] = field(default_factory=list)
    teams: list[TeamChange] = field(default_factory=list)

    def refused(self, allowed: tuple[str, ...] | set[str] = ()) -> list[ResourceChange]:
        return [c for c in self.changes if c.dangerous and c.logical_id not in set(allowed)]

    def to_json(self, allowed: tuple[str, ...] = ()) -> dict[str, Any]:
        refused = self.refused(allowed)
        return {"baseline": self.baseline, "ok": not refused, "refused": [c.logical_id for c in refused],
                "changes": [c.to_json() for c in self.changes], "teams": [t.to_json() for t in self.teams]}


# ---------------------------------------------------------------------------------------------- reading


def read_templates(folder: Path) -> dict[str, dict[str, Any]]:
    """Stack name -> template, from a cloud assembly (manifest.json) or a folder of *.template.json."""
    if not folder.is_dir():
        raise PlanInputError(f"{folder}: not a directory (give a cdk.out folder or a folder of *.template.json)")
    manifest = folder / "manifest.json"
    files: dict[str, Path] = {}
    if manifest.is_file():
        artifacts = _json(manifest).get("artifacts", {})
        for artifact_id, artifact in artifacts.items():
            if artifact.get("type") == "aws:cloudformation:stack":
                properties = artifact.get("properties", {})
                files[properties.get("stackName", artifact_id)] = folder / properties["templateFile"]
    else:
        files = {p.name.removesuffix(".template.json"): p for p in sorted(folder.glob("*.template.json"))}
    if not files:
        raise PlanInputError(f"{folder}: no CloudFormation templates in it")
    return {name: _json(path) for name, path in files.items()}


def environment_stacks(templates: dict[str, dict[str, Any]], environment: str, where: str) -> dict[str, dict[str, Any]]:
    """The stacks of `environment` (HyperPod-<environment>-*); an error when there are none, e.g. a synth
    of another environment."""
    prefix = f"HyperPod-{environment}-"
    mine = {name: template for name, template in templates.items() if name.startswith(prefix)}
    if not mine:
        raise PlanInputError(f"{where} holds no stack of environment {environment} ({prefix}*), only: "
                             f"{', '.join(sorted(templates))}")
    return mine


def _json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise PlanInputError(f"{path}: cannot be read as JSON: {err}") from err


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
                target = argument[0] if isinstance(argument, list) else str(argument).split(".")[0]
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


def compare(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]], baseline: str) -> Plan:
    """What deploying `after` over `before` does, stack by stack and team by team."""
    stateful = stateful_types() | FLEET_TYPES
    exports = _exports(after)
    plan = Plan(baseline=baseline)
    direct: dict[tuple[str, str], tuple[str, ...]] = {}
    modified: set[tuple[str, str]] = set()
    pairs: dict[tuple[str, str], tuple[dict[str, Any], dict[str, Any]]] = {}
    for stack in sorted(set(before) | set(after)):
        old_resources = before.get(stack, {}).get("Resources", {})
        new_resources = after.get(stack, {}).get("Resources", {})
        for logical_id in sorted(set(old_resources) | set(new_resources)):
            old, new = old_resources.get(logical_id), new_resources.get(logical_id)
            key = (stack, logical_id)
            if old is None or new is None:
                resource = new if old is None else old
                action: Action = "add" if old is None else "remove"
                plan.changes.append(ResourceChange(
                    stack, logical_id, resource["Type"], _path(resource, stack, logical_id), action,
                    stateful=resource["Type"] in stateful, retained=_retained(resource)))
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
        plan.changes.append(ResourceChange(
            key[0], key[1], new["Type"], _path(new, key[0], key[1]), "replace" if reasons else "modify", reasons,
            stateful=new["Type"] in stateful or old["Type"] in stateful, retained=_retained(old)))
    plan.changes.sort(key=lambda c: (c.stack, c.logical_id))
    plan.teams = team_changes(before, after)
    return plan


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


def _retained(resource: dict[str, Any]) -> bool:
    return resource.get("DeletionPolicy") in ("Retain", "RetainExceptOnCreate")


# ----------------------------------------------------------------------------------------------- teams


def _quotas(templates: dict[str, dict[str, Any]]) -> dict[str, tuple[dict[str, dict[str, float]], bool]]:
    """Team -> (instance type -> amounts, enabled), from every compute quota in the templates."""
    teams: dict[str, tuple[dict[str, dict[str, float]], bool]] = {}
    for template in templates.values():
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
            teams[team] = (amounts, props.get("ActivationState", "Enabled") == "Enabled")
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


def team_changes(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> list[TeamChange]:
    old, new = _quotas(before), _quotas(after)
    changes = []
    for team in sorted(set(old) | set(new)):
        if team not in new:
            changes.append(TeamChange(team, "removed", old[team][0], {}))
        elif team not in old:
            changes.append(TeamChange(team, "added", {}, new[team][0]))
        elif old[team] != new[team]:
            changes.append(TeamChange(team, "changed", old[team][0], new[team][0], _lowered(old[team][0], new[team][0]),
                                      disabled=old[team][1] and not new[team][1]))
    return changes


# ----------------------------------------------------------------------------------------------- words


def _amounts(amounts: dict[str, float]) -> str:
    return ", ".join(f"{value:g} {word}" for dim, word in DIMENSIONS if (value := amounts.get(dim)) is not None) or "none"


def _quota_lines(change: TeamChange) -> list[str]:
    lines = []
    for itype in sorted(set(change.before) | set(change.after)):
        old, new = change.before.get(itype), change.after.get(itype)
        if old != new:
            lines.append(f"      {itype}: {_amounts(old) if old else 'none'} -> {_amounts(new) if new else 'none'}")
    return lines


ACTION_WORDS = {"add": "create", "remove": "DELETE", "replace": "REPLACE", "modify": "update"}


def render(plan: Plan, allowed: tuple[str, ...] = ()) -> str:
    lines = [f"plan against {plan.baseline}"]
    if plan.teams:
        lines.append("teams:")
    for team in plan.teams:
        if team.change == "added":
            lines.append(f"  + team {team.team} added")
        elif team.change == "removed":
            lines.append(f"  - team {team.team} removed: its compute quota is deleted")
        else:
            lines.append(f"  ~ team {team.team}" + (": allocation disabled" if team.disabled else ": quota changed"))
        lines.extend(_quota_lines(team))
        if team.may_preempt:
            lines.append(f"    ! running jobs of team {team.team} may be preempted/stopped "
                         f"(drain first: {REMOVAL_DOC})")
    dangerous = [c for c in plan.changes if c.dangerous]
    if dangerous:
        lines.append("stateful resources replaced or deleted:")
    for change in dangerous:
        verdict = "allowed by --allow-replace" if change.logical_id in allowed else \
            f"REFUSED (name it with --allow-replace {change.logical_id} if intended)"
        kept = "; the old one stays in the account (DeletionPolicy Retain)" if change.retained else ""
        lines.append(f"  {ACTION_WORDS[change.action]} {change.path} ({change.type}, logical id {change.logical_id}): "
                     f"{'; '.join(change.reasons) or 'removed from the template'}{kept} - {verdict}")
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
    if not plan.changes:
        lines.append("no changes")
    refused = plan.refused(allowed)
    lines.append(f"refused: {len(refused)} stateful replacement(s)/deletion(s) not named with --allow-replace"
                 if refused else "ok: nothing stateful is replaced or deleted without --allow-replace")
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
    from aws_cdk import App

    from cdk_app.app_builder import build_app

    # Path metadata (on in `cdk synth`) lets the plan name resources by construct path.
    app = App(outdir=str(outdir), context={**cdk_context(KIT_ROOT), "aws:cdk:enable-path-metadata": True},
              builtin_cloud_formation_validation=False)
    build_app(app, config)
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


def synthesize_ref(repo: Path, ref: str, config_path: str, environment: str, workdir: Path) -> Path | None:
    """The cloud assembly of `config_path` as the repository was at `ref` (its code and its config), or None
    when the ref has no such file (an environment added since: nothing of it can be deployed yet)."""
    import os
    import subprocess
    import sys

    source, outdir = workdir / "source", workdir / "cdk.out"
    source.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", ref], capture_output=True)
    if archive.returncode != 0:
        raise PlanInputError(f"git ref {ref!r}: {archive.stderr.decode(errors='replace').strip()}")
    subprocess.run(["tar", "-x", "-C", str(source)], input=archive.stdout, check=True)
    if not (source / config_path).is_file():
        return None
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
        templates[stack] = body if isinstance(body, dict) else json.loads(body)
    return templates
