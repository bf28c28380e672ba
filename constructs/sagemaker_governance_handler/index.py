"""Custom resource handler: a HyperPod cluster policy (ClusterSchedulerConfig) or team compute allocation
(ComputeQuota) through the SageMaker API, for regions whose CloudFormation lacks the native type.

It runs behind CDK's provider framework with a completion check: on_event starts the work and returns at
once with the resource's id; is_complete is then called every few seconds until it says done, raises, or
the framework's total timeout passes. Either failure reaches CloudFormation with the id on_event returned,
so a Create that SageMaker accepted and that then fails (CreateFailed, or still Creating at the timeout) is
deleted by the stack's rollback - the framework skips that Delete only when on_event itself failed, i.e.
before anything was made.

- Create: Create*, tagged with the stack id and logical id of the resource; done when Describe says Created.
  A namesake on the cluster is taken over only when its tags say this same stack and logical id created it
  (a create whose answer was lost): it is updated instead of colliding, or deleted when it failed and the
  deploy asks to be run again. Any other namesake fails the deploy, naming it - it belongs to someone else.
- Update: Describe for the current version, Update* with it as TargetVersion; done only when Describe shows a
  version newer than that target and a settled status (the old version's "Created" does not count). A
  resource still Creating or Updating (a rollback that follows a failed update at once) is updated by the
  completion check once it has settled. A create-only field (name, cluster, team name) that differs from the
  live resource creates a new one; CloudFormation deletes the old one afterwards - unless the new one would
  have the old one's name, which is refused (a replacement needs a new Name). Unchanged parameters (only the
  custom resource's own settings changed) send nothing.
- Delete: Delete* (already gone counts as deleted, one still being created is deleted once it settles); done
  when Describe finds nothing or Deleted; DeleteFailed or DeleteRollbackFailed ends it with the reason.
Any failed call or *Failed status raises with the API's reason; throttling, server errors and lost
connections only make the completion check answer "not yet". Each invocation budgets its time from the
Lambda's remaining time: every call's socket timeouts and retries fit in what is left, and the handler stops
with a reason well before the Lambda would be killed.

Anyone allowed lambda:InvokeFunction on either function could otherwise create, change or delete any policy or
quota of the cluster: on_event and is_complete first ask CloudFormation whether the event is a request it is
making of this handler's stack now (cfn_anchor.py, shared with the installer; the framework's own function
calls on_event and the waiter is_complete, each with CloudFormation's event). A CloudFormation call that may
pass (throttling) makes the completion check answer "not yet", like a SageMaker one.

CloudFormation passes every scalar of a custom resource as a string; the handler converts each value
to the type the SageMaker API model gives it, so requests are valid against the real model.
"""

from __future__ import annotations

import math
import time
from typing import Any

import cfn_anchor
from botocore.exceptions import ClientError, ConnectionError as EndpointConnectionFailure, HTTPClientError

# Stop this long before Lambda's own limit, so the failure carries a reason instead of "Task timed out".
MARGIN_SECONDS = 20.0
# Without a Lambda context (tests, local runs): the budget of one invocation.
DEFAULT_BUDGET_SECONDS = 60.0
# One API call (every attempt, connect and read) may take at most this share of the budget, and never more
# than CALL_SECONDS; with ATTEMPTS attempts each gets half of it for connecting and half for reading.
CALL_SHARE, CALL_SECONDS, ATTEMPTS = 1 / 3, 60.0, 2
SETTLED = ("Created", "Updated")
IN_PROGRESS = ("Creating", "Updating", "Deleting")
# Where a deletion ends without the resource gone: nothing more this handler can do.
DELETE_STUCK = ("DeleteFailed", "DeleteRollbackFailed")
# Errors worth another poll rather than a failed deployment.
TRANSIENT_CODES = {"ThrottlingException", "Throttling", "ThrottledException", "TooManyRequestsException",
                   "RequestLimitExceeded", "ServiceUnavailable", "InternalFailure", "InternalServerError",
                   "InternalServerException"}
# The tags a Create writes, so that a namesake can be told apart: made by this resource, or someone else's.
STACK_TAG, LOGICAL_TAG = "hyperpod-kit:cloudformation-stack-id", "hyperpod-kit:cloudformation-logical-id"


class GovernanceError(Exception):
    """A failure the deployment must stop on; the message is what CloudFormation shows."""


class Transient(GovernanceError):
    """A call that failed for a reason that may pass (throttling, a server error, a lost connection)."""


KINDS: dict[str, dict[str, Any]] = {
    "ClusterSchedulerConfig": {
        "operation": "ClusterSchedulerConfig",
        "id": "ClusterSchedulerConfigId", "arn": "ClusterSchedulerConfigArn", "version": "ClusterSchedulerConfigVersion",
        "create_only": (("Name",), ("ClusterArn",)),
        "updatable": ("SchedulerConfig", "Description"),
    },
    "ComputeQuota": {
        "operation": "ComputeQuota",
        "id": "ComputeQuotaId", "arn": "ComputeQuotaArn", "version": "ComputeQuotaVersion",
        "create_only": (("Name",), ("ClusterArn",), ("ComputeQuotaTarget", "TeamName")),
        "updatable": ("ComputeQuotaConfig", "ComputeQuotaTarget", "ActivationState", "Description"),
    },
}


class Budget:
    """The time one invocation may still spend: Lambda's remaining time minus a margin. Each call may take
    at most `call_seconds` (the client's timeouts and retries are set from it), and starts only while at
    least that much is left, so the last call ends before the budget does."""

    def __init__(self, context: Any) -> None:
        remaining = (context.get_remaining_time_in_millis() / 1000 if context is not None
                     else DEFAULT_BUDGET_SECONDS + MARGIN_SECONDS)
        self.deadline = time.monotonic() + remaining - MARGIN_SECONDS
        self.call_seconds = max(1.0, min(CALL_SECONDS, (remaining - MARGIN_SECONDS) * CALL_SHARE))

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def check(self, step: str) -> None:
        if self.left() < self.call_seconds:
            raise Transient(f"stopped {MARGIN_SECONDS:.0f} s before the Lambda time limit, before {step}; "
                            "the SageMaker API is slow or throttling - deploy again later")


def client_config(budget: Budget) -> Any:
    """Socket timeouts and retries that keep one call (all its attempts) within budget.call_seconds."""
    from botocore.config import Config

    # Standard mode sleeps at most about a second before the second attempt.
    per_socket = max(0.5, (budget.call_seconds - 1) / ATTEMPTS / 2)
    return Config(connect_timeout=per_socket, read_timeout=per_socket,
                  retries={"mode": "standard", "total_max_attempts": ATTEMPTS})


def _setup(event: dict[str, Any], context: Any, client: Any) -> tuple[dict[str, Any], Any, Budget]:
    props = event["ResourceProperties"]
    kind = KINDS.get(props.get("Kind", ""))
    if kind is None:
        raise GovernanceError(f"Kind must be one of {sorted(KINDS)}, got {props.get('Kind')!r}")
    budget = Budget(context)
    if client is None:
        import boto3

        client = boto3.client("sagemaker", region_name=props["Region"], config=client_config(budget))
    return kind, client, budget


def ownership(event: dict[str, Any]) -> dict[str, str]:
    """The tags that say which CloudFormation resource made a policy or quota."""
    return {STACK_TAG: str(event.get("StackId", "")), LOGICAL_TAG: str(event.get("LogicalResourceId", ""))}


def cloudformation(budget: Budget) -> Any:
    """The CloudFormation client that confirms each event, within the same budget as SageMaker's."""
    import boto3

    return boto3.client("cloudformation", config=client_config(budget))


def confirm_caller(event: dict[str, Any], budget: Budget, replacing: bool = False) -> None:
    """Raise unless CloudFormation is making this request of this handler's stack now."""
    budget.check("confirming the event with CloudFormation")
    try:
        cfn_anchor.confirm_own_stack(event, f"Custom::SageMaker{event['ResourceProperties']['Kind']}",
                                     cloudformation(budget), replacing)
    except cfn_anchor.NotAnchored as err:
        passing = err.__cause__ is not None and isinstance(_failure("", err.__cause__), Transient)
        raise (Transient if passing else GovernanceError)(f"refusing the event: {err}") from err


def on_event(event: dict[str, Any], context: Any = None, client: Any = None) -> dict[str, Any]:
    """Start the change and return the id at once; is_complete waits for it."""
    kind, client, budget = _setup(event, context, client)
    confirm_caller(event, budget)
    request = event["RequestType"]
    props = event["ResourceProperties"]
    if request == "Delete":
        delete(client, kind, event["PhysicalResourceId"], budget)
        return {"PhysicalResourceId": event["PhysicalResourceId"]}
    params = typed(client, f"Create{kind['operation']}", props["Parameters"])
    live = None
    if request == "Update":
        resource_id = event["PhysicalResourceId"]
        live = current(client, kind, resource_id, budget)
        data = {"Id": resource_id, "Arn": live[kind["arn"]]}
        if event["OldResourceProperties"]["Parameters"] == props["Parameters"]:
            # Only the custom resource's own settings changed (e.g. ServiceTimeout): nothing to send.
            return {"PhysicalResourceId": resource_id, "Data": data}
        if not replaced(kind, live, params):
            try:
                if live["Status"] in IN_PROGRESS:
                    raise Busy(f"{kind['operation']} {resource_id} is {live['Status']}")
                arn, version = update(client, kind, resource_id, params, budget, live)
            except Busy:  # still changing (a rollback right after a failed update): is_complete updates it
                return {"PhysicalResourceId": resource_id,
                        "Data": {**data, "Pending": str(live[kind["version"]])}}
            return {"PhysicalResourceId": resource_id, "Data": {**data, "Arn": arn, "Version": version}}
    namesake = find_namesake(client, kind, params, budget)
    if namesake is not None and live is not None and namesake[kind["id"]] == live[kind["id"]]:
        changed = [".".join(path) for path in kind["create_only"] if _get(live, path) != _get(params, path)]
        raise GovernanceError(f"{', '.join(changed)} of {kind['operation']} '{params['Name']}' ({live[kind['id']]}) "
                              "cannot change in place, and its replacement cannot have the same Name while it "
                              "exists; give the replacement a new Name")
    if namesake is not None:
        return adopt(client, kind, namesake, params, event, budget)
    resource_id, arn = create(client, kind, params, event, budget)
    return {"PhysicalResourceId": resource_id, "Data": {"Id": resource_id, "Arn": arn}}


def find_namesake(client: Any, kind: dict[str, Any], params: dict[str, Any], budget: Budget) -> dict[str, Any] | None:
    """A policy or quota of this name on this cluster (not Deleted): a second one of the same name cannot
    be created."""
    name, token = kind["operation"], None
    while True:
        budget.check(f"List{name}s")
        page = _call(client, f"list_{_snake(name)}s", f"List{name}s", ClusterArn=params["ClusterArn"],
                     NameContains=params["Name"], **({"NextToken": token} if token else {}))
        for item in page.get(f"{name}Summaries", []):
            if item["Name"] == params["Name"] and item["Status"] != "Deleted":
                return item
        token = page.get("NextToken")
        if not token:
            return None


def tags_of(client: Any, arn: str, budget: Budget) -> dict[str, str]:
    tags, token = {}, None
    while True:
        budget.check("ListTags")
        page = _call(client, "list_tags", "ListTags", ResourceArn=arn, **({"NextToken": token} if token else {}))
        tags.update({tag["Key"]: tag.get("Value", "") for tag in page.get("Tags", [])})
        token = page.get("NextToken")
        if not token:
            return tags


def adopt(client: Any, kind: dict[str, Any], namesake: dict[str, Any], params: dict[str, Any],
          event: dict[str, Any], budget: Budget) -> dict[str, Any]:
    """Take over a namesake this same stack and logical id created (its create's answer was lost): a settled
    one is updated to the config, a failed one is deleted and the deploy fails with what to do, one still
    changing fails the deploy until it settles. A namesake of anyone else fails the deploy, naming it."""
    name, resource_id, status = kind["operation"], namesake[kind["id"]], namesake["Status"]
    tags = tags_of(client, namesake[kind["arn"]], budget)
    mine = ownership(event)
    if any(tags.get(key) != value for key, value in mine.items()):
        owner = (f"by {tags.get(LOGICAL_TAG)} of {tags.get(STACK_TAG)}" if STACK_TAG in tags
                 else "outside this kit (it has no hyperpod-kit tags)")
        raise GovernanceError(f"{name} '{params['Name']}' already exists on the cluster ({resource_id}, {status}), "
                              f"made {owner}, not by {mine[LOGICAL_TAG]} of this stack; it is not taken over - "
                              "delete it, or give this one another name")
    if status.endswith("Failed"):
        delete(client, kind, resource_id, budget, conflict_ok=False)
        raise GovernanceError(f"{name} '{params['Name']}' ({resource_id}), left {status} by an earlier deployment, "
                              "is being deleted now; deploy again in a few minutes")
    if status in IN_PROGRESS:
        raise GovernanceError(f"{name} '{params['Name']}' ({resource_id}) exists and is {status}; deploy again once "
                              "it has settled")
    arn, version = update(client, kind, resource_id, params, budget)
    return {"PhysicalResourceId": resource_id, "Data": {"Id": resource_id, "Arn": arn, "Version": version}}


def current(client: Any, kind: dict[str, Any], resource_id: str, budget: Budget) -> dict[str, Any]:
    """Describe of a resource CloudFormation says exists; gone (or Deleted) fails the deployment."""
    described = describe(client, kind, resource_id, budget)
    if described is None or described.get("Status") == "Deleted":
        raise GovernanceError(f"{kind['operation']} {resource_id} no longer exists (deleted outside CloudFormation?)")
    return described


def is_complete(event: dict[str, Any], context: Any = None, client: Any = None) -> dict[str, Any]:
    """Whether the change on_event started has been applied; raises when it failed. A transient error
    (throttling, a server error, a lost connection, the budget spent) answers "not yet": the waiter
    asks again, bounded by its total timeout."""
    kind, client, budget = _setup(event, context, client)
    try:
        # An Update that replaced the resource polls with the new id on_event answered.
        confirm_caller(event, budget, replacing=True)
        return _is_complete(event, kind, client, budget)
    except Transient:
        return {"IsComplete": False}


def _is_complete(event: dict[str, Any], kind: dict[str, Any], client: Any, budget: Budget) -> dict[str, Any]:
    name, resource_id = kind["operation"], event["PhysicalResourceId"]
    if event["RequestType"] == "Delete":
        described = describe(client, kind, resource_id, budget)
        status = described["Status"] if described else "Deleted"
        if status == "Deleted":
            return {"IsComplete": True}
        if status in DELETE_STUCK:
            raise GovernanceError(f"{name} {resource_id} is {status}: {_reason(described)}")
        if status not in IN_PROGRESS:  # it settled after a create or update: now it can be deleted
            try:
                delete(client, kind, resource_id, budget, conflict_ok=False)
            except Busy:
                pass  # it started changing again: ask once it has settled
        return {"IsComplete": False}
    described = current(client, kind, resource_id, budget)
    status = described["Status"]
    data = event.get("Data", {})
    if data.get("Pending") and status in (*SETTLED, "UpdateFailed"):
        return _update_when_settled(event, kind, client, budget, described)
    if status.endswith("Failed"):
        raise GovernanceError(f"{name} {resource_id} is {status}: {_reason(described)}")
    version = described[kind["version"]]
    wanted = data.get("Version")
    if status in SETTLED and not data.get("Pending") and (wanted is None or int(version) >= int(wanted)):
        return {"IsComplete": True, "Data": {"Version": str(version)}}
    return {"IsComplete": False}


def _update_when_settled(event: dict[str, Any], kind: dict[str, Any], client: Any, budget: Budget,
                         described: dict[str, Any]) -> dict[str, Any]:
    """The update on_event deferred because the resource was still changing (Data.Pending: the version it
    saw): done once the live resource holds what the event asks for; until then, send it. Whatever was
    changing may add one version; a failure or a second version that still differs is this update's own,
    and fails with the reason instead of sending it again until the waiter's timeout."""
    params = typed(client, f"Create{kind['operation']}", event["ResourceProperties"]["Parameters"])
    wanted = {key: value for key, value in params.items() if key in kind["updatable"]}
    status, version, seen = described["Status"], int(described[kind["version"]]), int(event["Data"]["Pending"])
    if status in SETTLED and _holds(described, wanted):
        return {"IsComplete": True, "Data": {"Version": str(version)}}
    if version > seen + (0 if status == "UpdateFailed" else 1):
        raise GovernanceError(f"{kind['operation']} {event['PhysicalResourceId']} is {status} at version {version} "
                              f"without the requested values: {_reason(described)}")
    try:
        update(client, kind, event["PhysicalResourceId"], params, budget, described)
    except Busy:
        pass
    return {"IsComplete": False}


def _holds(live: Any, wanted: Any) -> bool:
    """Whether `live` has every value of `wanted` (lists item by item; fields the service adds are ignored)."""
    if isinstance(wanted, dict):
        return isinstance(live, dict) and all(_holds(live.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list):
        return isinstance(live, list) and len(live) == len(wanted) and all(map(_holds, live, wanted))
    return live == wanted


def _reason(described: dict[str, Any] | None) -> str:
    return (described or {}).get("FailureReason") or "no reason given"


def typed(client: Any, operation: str, params: dict[str, Any]) -> dict[str, Any]:
    """`params` with every scalar converted to the type the operation's input shape gives it."""
    shape = client.meta.service_model.operation_model(operation).input_shape
    return _convert(shape, params, operation)


def _convert(shape: Any, value: Any, where: str) -> Any:
    kind = shape.type_name
    try:
        if kind == "structure":
            unknown = set(value) - set(shape.members)
            if unknown:
                raise GovernanceError(f"{where}: unknown field(s) {sorted(unknown)}")
            return {k: _convert(shape.members[k], v, f"{where}.{k}") for k, v in value.items()}
        if kind == "list":
            return [_convert(shape.member, item, f"{where}[{i}]") for i, item in enumerate(value)]
        if kind in ("integer", "long"):
            return int(value)
        if kind in ("float", "double"):
            number = float(value)
            if not math.isfinite(number):
                raise ValueError(value)
            return number
        if kind == "boolean":
            return value if isinstance(value, bool) else str(value).lower() == "true"
    except (TypeError, ValueError) as err:
        raise GovernanceError(f"{where}: {value!r} is not a valid {kind}") from err
    return value


def _get(params: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        params = params.get(key) if isinstance(params, dict) else None
    return params


def replaced(kind: dict[str, Any], live: dict[str, Any], new: dict[str, Any]) -> bool:
    """True when a create-only field of the live resource differs from the new parameters: that needs a
    new resource. (Compared with the live resource, not the old properties, so that a rollback after a
    refused replacement finds nothing to replace.)"""
    return any(_get(live, path) != _get(new, path) for path in kind["create_only"])


def create(client: Any, kind: dict[str, Any], params: dict[str, Any], event: dict[str, Any],
           budget: Budget) -> tuple[str, str]:
    name = kind["operation"]
    budget.check(f"Create{name}")
    owned = ownership(event)
    tags = [tag for tag in params.get("Tags", []) if tag.get("Key") not in owned]
    tags += [{"Key": key, "Value": value} for key, value in owned.items()]
    response = _call(client, f"create_{_snake(name)}", f"Create{name}", **{**params, "Tags": tags})
    return response[kind["id"]], response[kind["arn"]]


class Busy(GovernanceError):
    """The resource is changing (ConflictException): the completion check tries again once it has settled."""


def update(client: Any, kind: dict[str, Any], resource_id: str, params: dict[str, Any], budget: Budget,
           live: dict[str, Any] | None = None) -> tuple[str, str]:
    """Update to the next version; returns the ARN and the version is_complete must see applied."""
    name = kind["operation"]
    target = int((live or current(client, kind, resource_id, budget))[kind["version"]])
    changes = {k: v for k, v in params.items() if k in kind["updatable"]}
    budget.check(f"Update{name}")
    try:
        response = getattr(client, f"update_{_snake(name)}")(**{kind["id"]: resource_id, "TargetVersion": target,
                                                                 **changes})
    except client.exceptions.ConflictException as err:
        raise Busy(f"Update{name} {resource_id}: {err}") from err
    except Exception as err:  # botocore ClientError, ParamValidationError, endpoint errors
        raise _failure(f"Update{name} failed", err) from err
    # The new version is the one Update reports; never less than one past the version it replaced.
    return response[kind["arn"]], str(max(int(response[kind["version"]]), target + 1))


def describe(client: Any, kind: dict[str, Any], resource_id: str, budget: Budget) -> dict[str, Any] | None:
    """The resource as Describe reports it, None when it does not exist."""
    name = kind["operation"]
    budget.check(f"Describe{name}")
    try:
        return getattr(client, f"describe_{_snake(name)}")(**{kind["id"]: resource_id})
    except client.exceptions.ResourceNotFound:
        return None
    except Exception as err:  # botocore ClientError and friends
        raise _failure(f"Describe{name} {resource_id} failed", err) from err


def delete(client: Any, kind: dict[str, Any], resource_id: str, budget: Budget, conflict_ok: bool = True) -> None:
    """Ask for deletion; gone already is fine. A conflict (still creating or updating) is fine when asked
    from on_event: the completion check asks again once the resource has settled."""
    name = kind["operation"]
    budget.check(f"Delete{name}")
    try:
        getattr(client, f"delete_{_snake(name)}")(**{kind["id"]: resource_id})
    except client.exceptions.ResourceNotFound:
        return
    except client.exceptions.ConflictException as err:
        if conflict_ok:
            return
        raise Busy(f"Delete{name} {resource_id} failed: {err}") from err
    except Exception as err:  # botocore ClientError and friends: the deletion did not happen
        raise _failure(f"Delete{name} {resource_id} failed", err) from err


def _failure(what: str, err: Exception) -> GovernanceError:
    """A GovernanceError for a failed call: Transient when it may pass on its own."""
    transient = isinstance(err, (EndpointConnectionFailure, HTTPClientError)) or (
        isinstance(err, ClientError) and (err.response.get("Error", {}).get("Code") in TRANSIENT_CODES
                                          or err.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) >= 500))
    return (Transient if transient else GovernanceError)(f"{what}: {err}")


def _call(client: Any, method: str, label: str, **params: Any) -> dict[str, Any]:
    try:
        return getattr(client, method)(**params)
    except GovernanceError:
        raise
    except Exception as err:  # botocore ClientError, ParamValidationError, endpoint errors
        raise _failure(f"{label} failed", err) from err


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")
