"""Custom resource handler of the kit's cluster-admin installer. Three kinds of resource:

- Release (the default): the HyperPod dependency Helm chart at a pinned revision. Create and Update
  build the chart from pinned bytes only (chart_source.py), roll back or remove a release that an
  interrupted run left pending, and run `helm upgrade --install`; Delete uninstalls the release (the
  resource is RetainExceptOnCreate, so only a failed create's rollback sends one).
- Manifests: Kubernetes objects (team RBAC, admission guardrails) applied server-side after their
  namespaces exist; objects an update leaves out, or a delete, are deleted. A set comes in the event
  (Manifests) or, when it holds admission objects or is large, as an S3 object of the kit's CDK asset bucket
  (ManifestsObject: Bucket, Key, Sha256) - an update's event carries old and new properties and must fit
  Lambda's asynchronous payload limit, whatever the number of teams.
- WaitForDeployment: succeeds once a Deployment reports Available (Kueue before the cluster policy).
- WaitForSchedulableNode: succeeds once a HyperPod node can take pods (before the task-governance add-on,
  whose Kueue needs one). It waits across many invocations: on_event only starts the clock and is_complete,
  which CDK's provider framework calls every 30 s, looks at the nodes once per call; the wait fails with the
  nodes' states as the reason when its TimeoutSeconds pass. Every other Kind is complete when on_event returns.

The function is a standing cluster-admin that anyone allowed lambda:InvokeFunction can call, so it does
only what it was built for, fixed in its environment at synth (INSTALLER_SCOPE):
- every event must be a request CloudFormation is making of a resource of the kit's own stacks right now
  (cfn_anchor.py, from shared_handler/: DescribeStackResource shows it in the matching *_IN_PROGRESS state under the event's
  physical id), so a forged Create, Update or Delete - including a Delete of the release - is refused;
- the cluster, region, chart source and pins, release name and namespace must be the scope's (an Update
  back from exactly those values, the shape of a rollback, is acknowledged without touching the cluster,
  as are the rollback and clean-up requests for a cluster the EKS cluster's replacement left behind);
- manifests may only be the kinds the kit writes, with the content it writes (manifest_policy.py); admission
  objects (the guardrails set) only from the asset bucket, which only the account's CDK deployments write and
  which IAM lets the installer read (a forged event can at most name content a kit deploy uploaded); a team's
  set holds objects of its own namespace only and no admission object;
- values that start with "-" (helm and kubectl would read them as flags) are refused.

Every request budgets its time from the Lambda context and fails with a reason before Lambda's own
timeout; Delete succeeds when the EKS cluster no longer exists. Any failure raises HelmReleaseError
and the custom resource framework turns its message into the CloudFormation failure reason.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import cfn_anchor
import installer_tools as tools
from botocore.exceptions import BotoCoreError, ClientError
from chart_patches import apply_patches
from chart_source import DependencyPin, fetch_chart, prepare_chart
from installer_tools import Budget, ClusterGone, HelmReleaseError
from manifest_content import identity, sha256_hex
from manifest_policy import (
    ADMISSION_API,
    AUTOSCALING_SET,
    DNS_SUBDOMAIN,
    NODE_CLASS_API,
    NODE_POOL_API,
    manifest_refusal,
)

SCOPE_VARIABLE = "INSTALLER_SCOPE"
# Properties of a Release event that must equal the scope's (Region is compared with AWS_REGION).
# Patches (chart_patches.py) is present only where some apply, so that releases without any keep the
# properties they were deployed with.
RELEASE_KEYS = ("Repository", "Revision", "ContentSha256", "Dependencies", "ReleaseName", "Namespace", "Values",
                "Patches")
# helm keeps a release by name in a namespace: a new name or namespace is a second release, never a rename.
CREATE_ONLY_KEYS = ("ReleaseName", "Namespace")
PENDING = ("pending-install", "pending-upgrade", "pending-rollback")
# The task-governance add-on creates hyperpod-ns-<team> a moment after CloudFormation has created the
# team's compute quota; manifests for that namespace wait this long for it before failing.
NAMESPACE_WAIT_SECONDS = 300
POLL_SECONDS = 5
# WaitForDeployment's default bound when the event names none.
DEPLOYMENT_WAIT_SECONDS = 600
# WaitForSchedulableNode's default bound (the construct always names one).
NODE_WAIT_SECONDS = 3300
# Where the task-governance add-on runs Kueue's controller (cdk_app/stacks/governance_stack.py waits for it too).
KUEUE_DEPLOYMENT_PATH = "/apis/apps/v1/namespaces/kueue-system/deployments/kueue-controller-manager"
# The labels HyperPod puts on its nodes (SageMaker HyperPod EKS docs: node health and deep health checks).
HEALTH_LABEL = "sagemaker.amazonaws.com/node-health-status"
DEEP_HEALTH_LABEL = "sagemaker.amazonaws.com/deep-health-check"

# The CloudFormation type of the custom resource each Kind belongs to (the constructs set them).
RESOURCE_TYPES = {"Release": "Custom::HyperPodHelmRelease", "Manifests": "Custom::KubernetesManifests",
                  "WaitForDeployment": "Custom::DeploymentAvailable", "WaitForSchedulableNode": "Custom::SchedulableNode"}

DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
# The set of admission guardrails; every other set is a team's (team-<team>).
GUARDRAILS_SET = "guardrails"
# The teams' FSx for Lustre PersistentVolumes, in the storage stack beside their file systems (their claims are in
# the team sets).
STORAGE_SET = "storage"
# CDK names a file asset by its hash: the only keys a ManifestsObject may name.
ASSET_KEY = re.compile(r"[0-9a-f]{64}\.json")
# A set larger than this is not the kit's (the guardrails of thousands of teams are a few MB).
MAX_MANIFEST_BYTES = 64 * 1024 * 1024


def on_event(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    budget = Budget.from_context(context)
    props = event.get("ResourceProperties") or {}
    kind = props.get("Kind", "Release")
    handler = KINDS.get(kind)
    if handler is None:
        raise HelmReleaseError(f"unknown Kind {kind!r}; this installer handles {', '.join(sorted(KINDS))}")
    check_scope(event)
    try:
        cfn_anchor.confirm(event, scope()["Stacks"], os.environ.get("AWS_REGION"), RESOURCE_TYPES[kind],
                           cloudformation())
    except cfn_anchor.NotAnchored as err:
        raise HelmReleaseError(f"refusing the event: {err}") from err
    if props.get("ClusterName") != scope()["ClusterName"]:
        return left_alone(event, f"cluster {props.get('ClusterName')} is not this installer's "
                                 f"({scope()['ClusterName']}); nothing changed")
    return handler(event, budget)


def cloudformation() -> Any:
    """The CloudFormation client that confirms each event."""
    return tools.aws_client("cloudformation")


def left_alone(event: dict[str, Any], why: str) -> dict[str, Any]:
    """Success without touching any cluster, keeping the physical id CloudFormation holds."""
    props = event["ResourceProperties"]
    return {"PhysicalResourceId": event["PhysicalResourceId"],
            "Data": {"ContentSha256": props.get("ContentSha256", ""), "Revision": props.get("Revision", ""),
                     "Vendored": "", "Dropped": "", "Shadowed": "", "Patched": "",
                     "Skipped": why}}


# --- what the installer was built for ------------------------------------------------------------------

def scope() -> dict[str, Any]:
    raw = os.environ.get(SCOPE_VARIABLE)
    if not raw:
        raise HelmReleaseError(f"{SCOPE_VARIABLE} is not set; the installer acts only on what it was built for")
    return json.loads(raw)


def check_scope(event: dict[str, Any]) -> None:
    """The event's cluster and region are the installer's own (or the cluster it replaced, see
    follows_a_cluster_replacement); no string property starts with '-'."""
    props, built = event.get("ResourceProperties") or {}, scope()
    for key, value in props.items():
        if isinstance(value, str) and value.startswith("-"):
            raise HelmReleaseError(f"{key} {value!r} starts with '-', which helm and kubectl would read as a flag; "
                                   "refusing the event")
    if props.get("ClusterName") != built["ClusterName"] and not follows_a_cluster_replacement(event, built):
        raise HelmReleaseError(f"ClusterName {props.get('ClusterName')!r} is not the cluster this installer was "
                               "built for; refusing the event")
    region = os.environ.get("AWS_REGION")
    if props.get("Region") != region:
        raise HelmReleaseError(f"Region {props.get('Region')!r} is not this installer's region ({region})")


def follows_a_cluster_replacement(event: dict[str, Any], built: dict[str, Any]) -> bool:
    """After the EKS cluster was replaced, CloudFormation sends requests for the old cluster: the Update
    back to it when a later failure rolls the stack back (before it rolls back this function), and the
    cleanup Delete of the old physical id. The old cluster is retained and this installer may not reach
    it, so both are acknowledged without touching anything (the stack neither strands in
    UPDATE_ROLLBACK_FAILED nor deletes what the retained cluster runs); any other request is refused."""
    old = event.get("OldResourceProperties") or {}
    return (event.get("RequestType") == "Delete"
            or (event.get("RequestType") == "Update" and old.get("ClusterName") == built["ClusterName"]))


def release_scope_mismatch(props: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    built = scope()["Release"]
    for key in keys:
        if props.get(key) != built.get(key):
            return (f"{key} of the event ({props.get(key)!r}) differs from what this installer was built for "
                    f"({built.get(key)!r}); refusing the event")
    return None


def check_release_scope(props: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    mismatch = release_scope_mismatch(props, keys)
    if mismatch:
        raise HelmReleaseError(mismatch)
    return scope()["Release"]


def is_rollback_ahead_of_the_function(event: dict[str, Any]) -> bool:
    """An Update away from exactly what this installer was built for: the shape of CloudFormation rolling the
    release back before it has rolled back the function's environment. It is acknowledged without touching
    the cluster (the next deploy converges), so that a failed update cannot end in UPDATE_ROLLBACK_FAILED;
    a forged event of this shape changes nothing either."""
    old = event.get("OldResourceProperties") or {}
    return (event["RequestType"] == "Update" and release_scope_mismatch(event["ResourceProperties"], RELEASE_KEYS)
            is not None and release_scope_mismatch(old, RELEASE_KEYS) is None)


# --- Release ---------------------------------------------------------------------------------------------

def on_release(event: dict[str, Any], budget: Budget) -> dict[str, Any]:
    props = event["ResourceProperties"]
    request = event["RequestType"]
    physical_id = f"{props['ClusterName']}/{props['Namespace']}/{props['ReleaseName']}"
    with tempfile.TemporaryDirectory() as work:
        workdir = Path(work)
        if request == "Delete":
            check_release_scope(props, CREATE_ONLY_KEYS)
            try:
                kubeconfig = tools.write_kubeconfig(workdir, props["ClusterName"], props["Region"], budget)
            except ClusterGone:
                return {"PhysicalResourceId": event.get("PhysicalResourceId", physical_id)}
            uninstall(props, kubeconfig, workdir, budget)
            return {"PhysicalResourceId": event.get("PhysicalResourceId", physical_id)}
        if is_rollback_ahead_of_the_function(event):
            return {"PhysicalResourceId": event.get("PhysicalResourceId", physical_id),
                    "Data": {"ContentSha256": props.get("ContentSha256", ""), "Revision": props.get("Revision", ""),
                             "Vendored": "", "Dropped": "", "Shadowed": "", "Patched": "",
                             "Skipped": "rollback acknowledged; nothing changed"}}
        built = check_release_scope(props, RELEASE_KEYS)
        kubeconfig = tools.write_kubeconfig(workdir, props["ClusterName"], props["Region"], budget)
        if request == "Update":
            refuse_identity_change(event, kubeconfig, workdir, budget)
        pins = {name: DependencyPin(**pin) for name, pin in json.loads(built["Dependencies"]).items()}
        chart = fetch_chart(built["Repository"], built["Revision"], built["ContentSha256"], workdir / "src", budget)
        patched = apply_patches(chart, json.loads(built.get("Patches") or "[]"))
        prepared = prepare_chart(chart, props["Region"], kit_values(props), pins, workdir, budget)
        recover_pending(props, kubeconfig, workdir, budget)
        install(props, prepared.path, prepared.values_files, kubeconfig, workdir, budget)
    return {"PhysicalResourceId": physical_id,
            "Data": {"ContentSha256": built["ContentSha256"], "Revision": built["Revision"],
                     "Vendored": ",".join(prepared.vendored), "Dropped": ",".join(prepared.dropped),
                     "Shadowed": ",".join(prepared.shadowed), "Patched": ",".join(patched)}}


def refuse_identity_change(event: dict[str, Any], kubeconfig: Path, workdir: Path, budget: Budget) -> None:
    """A changed release name or namespace would install a second copy of every component next to the
    first. Refused - unless a release of the new name already exists, which is what a rollback to the
    previous name finds (so that a refused change never leaves the stack in UPDATE_ROLLBACK_FAILED)."""
    props, old = event["ResourceProperties"], event.get("OldResourceProperties") or {}
    changed = [key for key in CREATE_ONLY_KEYS if old.get(key, props[key]) != props[key]]
    if not changed or release_history(props, kubeconfig, workdir, budget):
        return
    moves = ", ".join(f"{key} {old[key]!r} -> {props[key]!r}" for key in changed)
    raise HelmReleaseError(f"{moves}: the release name and namespace cannot change once installed (helm would "
                           f"install a second release next to {old.get('ReleaseName')!r}); put the old value back, "
                           "or remove the chart release first and then deploy the new name")


def kit_values(props: dict[str, Any]) -> dict[str, Any]:
    """The values the kit sets: the region for the agents, and the component toggles as given."""
    values: dict[str, Any] = json.loads(props.get("Values") or "{}")
    region = props["Region"]
    values.setdefault("global", {})["region"] = region
    values.setdefault("health-monitoring-agent", {})["region"] = region
    return values


def _release_args(props: dict[str, Any], kubeconfig: Path) -> list[str]:
    return [props["ReleaseName"], "--namespace", props["Namespace"], "--kubeconfig", str(kubeconfig)]


def _helm_timeout(budget: Budget, what: str) -> str:
    # helm gives up (and says why) 30 s before the request's budget ends.
    return f"{int(budget.require(what, 60) - 30)}s"


def release_history(props: dict[str, Any], kubeconfig: Path, workdir: Path, budget: Budget) -> list[dict[str, Any]]:
    """helm's revisions of the release, oldest first; [] when there is no such release."""
    try:
        output = tools.run_tool(tools.HELM, ["history", *_release_args(props, kubeconfig), "--output", "json"],
                                tools.tool_env(workdir), "helm history", budget)
    except HelmReleaseError as err:
        if "release: not found" in str(err):
            return []
        raise
    return sorted(json.loads(output or "[]"), key=lambda entry: entry.get("revision", 0))


def recover_pending(props: dict[str, Any], kubeconfig: Path, workdir: Path, budget: Budget) -> str | None:
    """A release left in a pending state (a run killed mid-way) blocks every later upgrade: roll it back to
    its last deployed revision, or uninstall it if it never deployed. Returns what was done."""
    history = release_history(props, kubeconfig, workdir, budget)
    if not history or history[-1].get("status") not in PENDING:
        return None
    env = tools.tool_env(workdir)
    deployed = [entry for entry in history[:-1] if entry.get("status") in ("deployed", "superseded")]
    if deployed:
        revision = str(deployed[-1]["revision"])
        tools.run_tool(tools.HELM, ["rollback", *_release_args(props, kubeconfig), revision, "--wait=hookOnly",
                                    "--timeout", _helm_timeout(budget, "helm rollback")],
                       env, f"helm rollback of the pending release to revision {revision}", budget)
        return f"rollback {revision}"
    tools.run_tool(tools.HELM, ["uninstall", *_release_args(props, kubeconfig), "--wait=hookOnly",
                                "--timeout", _helm_timeout(budget, "helm uninstall")],
                   env, "helm uninstall of the pending, never deployed release", budget)
    return "uninstall"


def install(props: dict[str, Any], chart: Path, values_files: tuple[Path, ...], kubeconfig: Path, workdir: Path,
            budget: Budget) -> None:
    # The chart goes in before HyperPod creates any node, so its workloads cannot become ready yet:
    # wait for hooks only (stated so that nobody "fixes" it into a timeout). Every dependency is in
    # charts/ already (chart_source.prepare_chart): no `helm dependency build`, no download.
    args = ["upgrade", "--install", props["ReleaseName"], str(chart), "--namespace", props["Namespace"],
            "--kubeconfig", str(kubeconfig), "--wait=hookOnly", "--history-max", "10",
            "--timeout", _helm_timeout(budget, "helm upgrade --install")]
    for path in values_files:
        args += ["--values", str(path)]
    tools.run_tool(tools.HELM, args, tools.tool_env(workdir), "helm upgrade --install", budget)


def uninstall(props: dict[str, Any], kubeconfig: Path, workdir: Path, budget: Budget) -> None:
    args = ["uninstall", *_release_args(props, kubeconfig), "--wait=hookOnly", "--ignore-not-found",
            "--timeout", _helm_timeout(budget, "helm uninstall")]
    tools.run_tool(tools.HELM, args, tools.tool_env(workdir), "helm uninstall", budget)


# --- Manifests -----------------------------------------------------------------------------------------

def check_manifests(manifests: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(manifests, list):
        raise HelmReleaseError(f"{where} must be a JSON list of Kubernetes objects")
    refusals = [reason for reason in map(manifest_refusal, manifests) if reason]
    if refusals:
        raise HelmReleaseError(f"refusing {where}: " + "; ".join(refusals))
    return manifests


def set_refusal(name: str, manifests: list[dict[str, Any]], from_asset: bool) -> str | None:
    """Why the set `name` may not hold `manifests`: the guardrails set holds admission objects only, read from
    the asset bucket; the storage set holds PersistentVolumes only; the autoscaling set the Karpenter objects only;
    a team's set (team-<team>) holds no admission object, no PersistentVolume, no Karpenter object and namespaced
    objects only in its team's namespace; no other set exists."""
    if name == GUARDRAILS_SET:
        if not from_asset:
            return "the guardrails are read from the kit's asset bucket only (ManifestsObject), not from the event"
        strays = [identity(m) for m in manifests if m["apiVersion"] != ADMISSION_API]
        return f"{', '.join(strays)} do not belong to the guardrails" if strays else None
    volumes = [m for m in manifests if (m["apiVersion"], m["kind"]) == ("v1", "PersistentVolume")]
    if name == STORAGE_SET:
        strays = [identity(m) for m in manifests if m not in volumes]
        return f"{', '.join(strays)} do not belong to the storage volumes" if strays else None
    if name == AUTOSCALING_SET:
        strays = [identity(m) for m in manifests if m["apiVersion"] not in (NODE_CLASS_API, NODE_POOL_API)]
        return f"{', '.join(strays)} do not belong to the autoscaling objects" if strays else None
    team = re.fullmatch(r"team-(.+)", name)
    if team is None:
        return (f"{name} is not a set this installer was built for ({GUARDRAILS_SET}, {STORAGE_SET}, "
                f"{AUTOSCALING_SET}, or team-<team>)")
    for manifest in manifests:
        namespace = (manifest.get("metadata") or {}).get("namespace")
        if (manifest["apiVersion"] in (ADMISSION_API, NODE_CLASS_API, NODE_POOL_API) or manifest in volumes
                or (namespace and namespace != f"hyperpod-ns-{team.group(1)}")):
            return f"{identity(manifest)} does not belong to the set of team {team.group(1)}"
    return None


def check_set(name: str, manifests: list[dict[str, Any]], from_asset: bool, where: str) -> None:
    refusal = set_refusal(name, manifests, from_asset)
    if refusal:
        raise HelmReleaseError(f"refusing {where}: {refusal}")


def s3_client() -> Any:
    """The client that reads manifest sets from the asset bucket: a few MB may take longer than an API answer."""
    return tools.aws_client("s3", read_timeout=60)


def read_manifests_object(reference: Any, where: str, budget: Budget) -> bytes:
    """The bytes of a ManifestsObject, checked against the SHA-256 the event names. The installer's role may read
    the kit's asset bucket only; IAM refuses any other."""
    if not isinstance(reference, dict) or not ASSET_KEY.fullmatch(str(reference.get("Key", ""))) \
            or not re.fullmatch(r"[0-9a-f]{64}", str(reference.get("Sha256", ""))):
        raise HelmReleaseError(f"{where}: ManifestsObject must name Bucket, an asset Key (<sha256>.json) and Sha256")
    budget.require(f"reading {where} from S3", 30)
    try:
        answer = s3_client().get_object(Bucket=str(reference.get("Bucket", "")), Key=reference["Key"])
        content = answer["Body"].read(MAX_MANIFEST_BYTES + 1)
    except (BotoCoreError, ClientError) as err:
        raise HelmReleaseError(f"{where}: reading s3://{reference.get('Bucket')}/{reference['Key']} failed: {err}") from err
    if len(content) > MAX_MANIFEST_BYTES:
        raise HelmReleaseError(f"{where}: the object is larger than {MAX_MANIFEST_BYTES} bytes")
    if sha256_hex(content) != reference["Sha256"]:
        raise HelmReleaseError(f"{where}: s3://{reference.get('Bucket')}/{reference['Key']} is not the content the "
                               "event names (SHA-256 differs)")
    return content


def manifests_of(props: dict[str, Any], where: str, budget: Budget) -> tuple[list[dict[str, Any]], bool]:
    """The set an event's properties name, and whether it came from the asset bucket."""
    if "ManifestsObject" in props:
        raw = read_manifests_object(props["ManifestsObject"], where, budget)
        return check_manifests(json.loads(raw), where), True
    return check_manifests(json.loads(props.get("Manifests", "[]")), where), False


def on_manifests(event: dict[str, Any], budget: Budget) -> dict[str, Any]:
    """Apply the manifests (server-side), and delete those an update or a delete leaves out."""
    props = event["ResourceProperties"]
    request = event["RequestType"]
    name = str(props.get("Name", ""))
    if not DNS_LABEL.fullmatch(name):
        raise HelmReleaseError(f"Name {name!r} must be a DNS label")
    physical_id = f"{props['ClusterName']}/manifests/{name}"
    old = event.get("OldResourceProperties") or {}
    # The anchor confirmed the physical id; the properties it was made from (a Delete's, an Update's old ones)
    # must name it, so that an Update cannot delete another set's objects as its "previous" manifests.
    made_from = props if request == "Delete" else old
    if request in ("Update", "Delete") and event.get("PhysicalResourceId") != (
            f"{made_from.get('ClusterName')}/manifests/{made_from.get('Name')}"):
        raise HelmReleaseError(f"refusing the event: Name {str(made_from.get('Name'))!r} does not belong to "
                               f"{event.get('PhysicalResourceId')!r}")
    current, current_from_asset = manifests_of(props, "Manifests", budget)
    if request == "Update" and name == GUARDRAILS_SET and not current_from_asset and "ManifestsObject" in old:
        # The rollback of the first deploy of this kit, back to a kit that sent the guardrails in the event: that
        # content cannot be told from a forgery, so it is not applied. The cluster keeps the guardrails the failed
        # deploy applied from the asset bucket (newer, checked); the next deploy converges.
        return left_alone(event, "rollback to guardrails sent in the event acknowledged; the cluster keeps the "
                                 "guardrails read from the asset bucket")
    # A Delete only removes what it names (kit-named objects, manifest_policy.py), so content in the event is
    # enough for it - the governance stack of an older kit can still be deleted.
    check_set(name, current, current_from_asset or request == "Delete", "Manifests")
    same_set = request == "Update" and str(old.get("Name", name)) == name
    previous: list[dict[str, Any]] = []
    if same_set:
        previous, previous_from_asset = manifests_of(old, "the previous Manifests", budget)
        if name == GUARDRAILS_SET and not previous_from_asset:
            # Guardrails of a kit before ManifestsObject came in the event, which anyone may forge: nothing is
            # deleted on their word (objects they had and the new set lacks stay until removed by hand).
            previous = []
        check_set(name, previous, True, "the previous Manifests")
    wanted = [] if request == "Delete" else current
    # An Update to another Name is a replacement: CloudFormation deletes the old set by its own Delete.
    before = current if request == "Delete" else previous
    gone = removed(before, wanted)
    result = {"PhysicalResourceId": event.get("PhysicalResourceId", physical_id) if request == "Delete" else physical_id}
    with tempfile.TemporaryDirectory() as work:
        workdir = Path(work)
        try:
            kubeconfig = tools.write_kubeconfig(workdir, props["ClusterName"], props["Region"], budget)
        except ClusterGone:
            if request == "Delete":
                return result  # the objects went with the cluster
            raise
        if wanted:
            wait_for_namespaces(wanted, kubeconfig, workdir, budget)
            apply_manifests(wanted, kubeconfig, workdir, budget)
        if gone:
            delete_manifests(gone, kubeconfig, workdir, budget)
    return result


def _identity(manifest: dict[str, Any]) -> tuple[str, str, str, str]:
    meta = manifest.get("metadata", {})
    return manifest["apiVersion"], manifest["kind"], meta.get("namespace", ""), meta["name"]


def removed(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Objects in `before` that `after` no longer has (by apiVersion, kind, namespace and name)."""
    kept = {_identity(m) for m in after}
    return [m for m in before if _identity(m) not in kept]


def poll(check: Callable[[], str | None], budget: Budget, limit: float, poll_seconds: float,
         failure: Callable[[str, float], str]) -> None:
    """Call `check` until it returns None; each other answer says why not yet. Bounded by `limit` seconds
    and by the request's budget; the failure names the last answer."""
    bound = min(limit, budget.remaining() - 5)
    deadline = time.monotonic() + bound
    while True:
        reason = check()
        if reason is None:
            return
        if time.monotonic() + poll_seconds >= deadline:
            raise HelmReleaseError(failure(reason, max(bound, 0)))
        time.sleep(poll_seconds)


def _raw_get(path: str, kubeconfig: Path, workdir: Path, budget: Budget, what: str) -> dict[str, Any] | None:
    """GET an API path with kubectl (no discovery needed); None when the object does not exist."""
    try:
        output = tools.run_tool(tools.KUBECTL, ["get", "--raw", path, "--kubeconfig", str(kubeconfig)],
                                tools.tool_env(workdir), what, budget)
    except HelmReleaseError as err:
        if "NotFound" in str(err):
            return None
        raise
    return json.loads(output)


def wait_for_namespaces(manifests: list[dict[str, Any]], kubeconfig: Path, workdir: Path, budget: Budget,
                        timeout: float = NAMESPACE_WAIT_SECONDS, poll_seconds: float = POLL_SECONDS) -> None:
    """Wait until every namespace the manifests live in exists."""
    for namespace in sorted({m.get("metadata", {}).get("namespace") or "" for m in manifests} - {""}):
        def check(namespace: str = namespace) -> str | None:
            found = _raw_get(f"/api/v1/namespaces/{namespace}", kubeconfig, workdir, budget,
                             f"kubectl get namespace {namespace}")
            return None if found is not None else "not found"

        poll(check, budget, timeout, poll_seconds, lambda _reason, bound, namespace=namespace: (
            f"namespace {namespace} did not appear within {bound:.0f} s; it is created by the task-governance "
            "add-on with the team's compute quota"))


def apply_manifests(manifests: list[dict[str, Any]], kubeconfig: Path, workdir: Path, budget: Budget) -> None:
    path = workdir / "apply.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": manifests}))
    tools.run_tool(tools.KUBECTL, ["apply", "--server-side", "--field-manager=hyperpod-kit", "--force-conflicts",
                                   "--kubeconfig", str(kubeconfig), "-f", str(path)],
                   tools.tool_env(workdir), "kubectl apply", budget)


def delete_manifests(manifests: list[dict[str, Any]], kubeconfig: Path, workdir: Path, budget: Budget) -> None:
    path = workdir / "delete.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": manifests}))
    # --wait=false: a PersistentVolume whose claim still exists (its claim goes with its team's set, which may
    # update after this one) keeps its protection finalizer until the claim is gone; waiting would hang the update.
    tools.run_tool(tools.KUBECTL, ["delete", "--ignore-not-found", "--wait=false", "--kubeconfig", str(kubeconfig),
                                   "-f", str(path)],
                   tools.tool_env(workdir), "kubectl delete", budget)


# --- WaitForDeployment ---------------------------------------------------------------------------------

def deployment_state(deployment: dict[str, Any] | None) -> str | None:
    """None when the Deployment is Available for its current spec, else why not."""
    if deployment is None:
        return "the deployment does not exist yet"
    status = deployment.get("status") or {}
    generation = (deployment.get("metadata") or {}).get("generation", 0)
    if status.get("observedGeneration", 0) < generation:
        return "the deployment controller has not yet seen its latest spec"
    available = next((c for c in status.get("conditions") or [] if c.get("type") == "Available"), None)
    if available is None:
        return "no Available condition yet"
    if available.get("status") != "True":
        return f"Available is {available.get('status')}: {available.get('reason')} - {available.get('message')}"
    return None


def on_wait_for_deployment(event: dict[str, Any], budget: Budget) -> dict[str, Any]:
    props = event["ResourceProperties"]
    namespace, name = str(props.get("Namespace", "")), str(props.get("Name", ""))
    if not (DNS_LABEL.fullmatch(namespace) and DNS_SUBDOMAIN.fullmatch(name)):
        raise HelmReleaseError(f"Namespace {namespace!r} and Name {name!r} must be Kubernetes names")
    physical_id = f"{props['ClusterName']}/wait/{namespace}/{name}"
    if event["RequestType"] == "Delete":
        return {"PhysicalResourceId": event.get("PhysicalResourceId", physical_id)}
    limit = seconds(props, "TimeoutSeconds", DEPLOYMENT_WAIT_SECONDS)
    poll_seconds = seconds(props, "PollSeconds", POLL_SECONDS)
    with tempfile.TemporaryDirectory() as work:
        workdir = Path(work)
        kubeconfig = tools.write_kubeconfig(workdir, props["ClusterName"], props["Region"], budget)
        wait_for_deployment(namespace, name, kubeconfig, workdir, budget, limit, poll_seconds)
    return {"PhysicalResourceId": physical_id}


def seconds(props: dict[str, Any], key: str, default: float) -> float:
    """A positive, finite number of seconds from the event (CloudFormation passes it as a string)."""
    raw = props.get(key) or default
    try:
        value = float(raw)
    except (TypeError, ValueError):
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise HelmReleaseError(f"{key} {raw!r} must be a positive number of seconds")
    return value


def wait_for_deployment(namespace: str, name: str, kubeconfig: Path, workdir: Path, budget: Budget, limit: float,
                        poll_seconds: float = POLL_SECONDS) -> None:
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments/{name}"

    def check() -> str | None:
        return deployment_state(_raw_get(path, kubeconfig, workdir, budget, f"kubectl get deployment {namespace}/{name}"))

    poll(check, budget, limit, poll_seconds, lambda reason, bound: (
        f"deployment {namespace}/{name} was not Available within {bound:.0f} s ({reason}); check its pods with "
        f"kubectl -n {namespace} describe deployment {name}"))


# --- WaitForSchedulableNode ---------------------------------------------------------------------------

def node_refusal(node: dict[str, Any]) -> str | None:
    """None when a pod without tolerations (Kueue's controller) can be scheduled on the node, else why not:
    HyperPod marks a node Schedulable once its health checks pass; it must also be Ready, not cordoned, and
    carry no NoSchedule/NoExecute taint (an instance group's own taints keep Kueue off it as well)."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    health = labels.get(HEALTH_LABEL)
    if health != "Schedulable":
        deep = labels.get(DEEP_HEALTH_LABEL)
        return f"{health or 'no health status yet'}" + (f" (deep health check {deep})" if deep else "")
    ready = next((c for c in (node.get("status") or {}).get("conditions") or [] if c.get("type") == "Ready"), None)
    if ready is None or ready.get("status") != "True":
        return "not Ready"
    spec = node.get("spec") or {}
    if spec.get("unschedulable"):
        return "cordoned"
    taints = [t for t in spec.get("taints") or [] if t.get("effect") in ("NoSchedule", "NoExecute")]
    if taints:
        return "tainted " + ", ".join(f"{t.get('key')}={t.get('value', '')}:{t.get('effect')}" for t in taints)
    return None


def on_wait_for_node(event: dict[str, Any], _budget: Budget) -> dict[str, Any]:
    """Starts the wait; is_complete does it. Only a new cluster is waited for: an Update for the same cluster
    (a changed bound, a rollback) finds task governance installed already, and must not wait an hour for a node
    that a scaled-down cluster may not have right now."""
    props = event["ResourceProperties"]
    physical_id = f"{props['ClusterName']}/wait/schedulable-node"
    if event["RequestType"] == "Delete":
        return {"PhysicalResourceId": event.get("PhysicalResourceId", physical_id)}
    seconds(props, "TimeoutSeconds", NODE_WAIT_SECONDS)  # refused now rather than at the first check
    old = event.get("OldResourceProperties") or {}
    if event["RequestType"] == "Update" and old.get("ClusterName") == props["ClusterName"]:
        return {"PhysicalResourceId": physical_id, "Data": {"Skipped": "the cluster is not new; nothing to wait for"}}
    return {"PhysicalResourceId": physical_id, "Data": {"WaitStartedAt": f"{time.time():.0f}"}}


def is_complete(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """CDK's provider framework asks this after on_event; only WaitForSchedulableNode has anything to wait for.
    It only reads nodes and answers yes or no, so it needs no CloudFormation anchor beyond on_event's."""
    props = event.get("ResourceProperties") or {}
    if props.get("Kind") != "WaitForSchedulableNode" or event.get("RequestType") == "Delete":
        return {"IsComplete": True}
    check_scope(event)
    if props.get("ClusterName") != scope()["ClusterName"] or "Skipped" in (event.get("Data") or {}):
        return {"IsComplete": True}  # on_event left it alone (a request for a replaced cluster)
    budget = Budget.from_context(context)
    limit = seconds(props, "TimeoutSeconds", NODE_WAIT_SECONDS)
    started = seconds(event.get("Data") or {}, "WaitStartedAt", time.time())
    waited = time.time() - started
    try:
        with tempfile.TemporaryDirectory() as work:
            workdir = Path(work)
            kubeconfig = tools.write_kubeconfig(workdir, props["ClusterName"], props["Region"], budget)
            nodes = (_raw_get("/api/v1/nodes", kubeconfig, workdir, budget, "kubectl get nodes") or {}).get("items") or []
            return _node_or_kueue(nodes, kubeconfig, workdir, budget, waited, limit)
    except NodeWaitOver:
        raise
    except (HelmReleaseError, BotoCoreError, ClientError) as err:
        # CDK's waiter ends the resource on any error of is_complete; throttling, an API server restart or a slow
        # start must only cost a poll. The error is the reason once the wait's time is up.
        if waited >= limit:
            raise HelmReleaseError(f"no HyperPod node could be seen after {waited / 60:.0f} min: {err}") from err
        print(json.dumps({"waiting_for": "a schedulable HyperPod node", "seconds": round(waited), "error": str(err)}))
        return {"IsComplete": False}


def _node_or_kueue(nodes: list[dict[str, Any]], kubeconfig: Path, workdir: Path, budget: Budget, waited: float,
                   limit: float) -> dict[str, Any]:
    """Done when a node can take Kueue's controller, or when Kueue is installed already; else not yet, or the
    failure with the nodes' states once the wait is up."""
    states = {(n.get("metadata") or {}).get("name", "?"): node_refusal(n) for n in nodes}
    schedulable = sorted(name for name, refusal in states.items() if refusal is None)
    if schedulable:
        return {"IsComplete": True, "Data": {"SchedulableNode": schedulable[0]}}
    # An environment that had task governance before this wait existed (the kit's upgrade creates the wait for it)
    # may be scaled to zero right now: its Kueue is installed, there is nothing to wait for.
    if _raw_get(KUEUE_DEPLOYMENT_PATH, kubeconfig, workdir, budget, "kubectl get deployment (Kueue)") is not None:
        return {"IsComplete": True, "Data": {"SchedulableNode": "", "Skipped": "task governance already runs"}}
    summary = nodes_summary(states)
    if waited >= limit:
        raise NodeWaitOver(
            f"no HyperPod node could take pods after {waited / 60:.0f} min ({summary}), so task governance "
            "(Kueue) cannot start. Nodes with deep health checks need about 2 hours: deploy this stack again once "
            f"kubectl get nodes -L {HEALTH_LABEL} shows one Schedulable, untainted node")
    print(json.dumps({"waiting_for": "a schedulable HyperPod node", "seconds": round(waited), "nodes": summary}))
    return {"IsComplete": False}


class NodeWaitOver(HelmReleaseError):
    """The wait's time is up: the resource fails with this reason."""


def nodes_summary(states: dict[str, str | None]) -> str:
    """'3 nodes: 2 Unschedulable (deep health check InProgress), 1 not Ready' or 'no nodes yet'."""
    if not states:
        return "no nodes have joined yet"
    counts: dict[str, int] = {}
    for refusal in states.values():
        counts[refusal or "schedulable"] = counts.get(refusal or "schedulable", 0) + 1
    return f"{len(states)} node(s): " + ", ".join(f"{n} {why}" for why, n in sorted(counts.items()))


KINDS: dict[str, Callable[[dict[str, Any], Budget], dict[str, Any]]] = {
    "Release": on_release, "Manifests": on_manifests, "WaitForDeployment": on_wait_for_deployment,
    "WaitForSchedulableNode": on_wait_for_node,
}
