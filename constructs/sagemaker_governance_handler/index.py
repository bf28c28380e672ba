"""Custom resource handler: a HyperPod cluster policy (ClusterSchedulerConfig) or team compute allocation
(ComputeQuota) through the SageMaker API, for regions whose CloudFormation lacks the native type.

It runs behind CDK's provider framework with a completion check: on_event starts the work and returns at
once with the resource's id; is_complete is then called every few seconds until it says done, raises, or
the framework's total timeout passes. Either failure reaches CloudFormation with the id on_event returned,
so a Create that SageMaker accepted and that then fails (CreateFailed, or still Creating at the timeout) is
deleted by the stack's rollback - the framework skips that Delete only when on_event itself failed, i.e.
before anything was made.

- Create: Create*; done when Describe says Created. A namesake on the cluster that CloudFormation does not
  know (an older handler's stranded create, or one made by hand) is taken over and updated instead of
  colliding; a failed namesake is deleted and the deploy asks to be run again.
- Update: Describe for the current version, Update* with it as TargetVersion; done only when Describe shows a
  version newer than that target and a settled status (the old version's "Created" does not count). A change
  to a create-only field (name, cluster, team name) creates a new one instead; CloudFormation deletes the old
  one afterwards. Unchanged parameters (only the custom resource's own settings changed) send nothing.
- Delete: Delete* (already gone counts as deleted, one still being created is deleted once it settles); done
  when Describe finds nothing or Deleted.
Any failed call or *Failed status raises with the API's reason. Each invocation budgets its time from the
Lambda's remaining time and stops with a reason well before the Lambda would be killed.

CloudFormation passes every scalar of a custom resource as a string; the handler converts each value
to the type the SageMaker API model gives it, so requests are valid against the real model.
"""

from __future__ import annotations

import time
from typing import Any

# Stop this long before Lambda's own limit, so the failure carries a reason instead of "Task timed out".
MARGIN_SECONDS = 20.0
# Without a Lambda context (tests, local runs): the budget of one invocation.
DEFAULT_BUDGET_SECONDS = 60.0
SETTLED = ("Created", "Updated")
IN_PROGRESS = ("Creating", "Updating", "Deleting")


class GovernanceError(Exception):
    """A failure the deployment must stop on; the message is what CloudFormation shows."""


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
    """The time one invocation may still spend: Lambda's remaining time minus a margin."""

    def __init__(self, context: Any) -> None:
        remaining = (context.get_remaining_time_in_millis() / 1000 if context is not None
                     else DEFAULT_BUDGET_SECONDS + MARGIN_SECONDS)
        self.deadline = time.monotonic() + remaining - MARGIN_SECONDS

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def check(self, step: str) -> None:
        if self.left() <= 0:
            raise GovernanceError(f"stopped {MARGIN_SECONDS:.0f} s before the Lambda time limit, before {step}; "
                                  "the SageMaker API is slow or throttling - deploy again later")


def _setup(event: dict[str, Any], context: Any, client: Any) -> tuple[dict[str, Any], Any, Budget]:
    props = event["ResourceProperties"]
    kind = KINDS.get(props.get("Kind", ""))
    if kind is None:
        raise GovernanceError(f"Kind must be one of {sorted(KINDS)}, got {props.get('Kind')!r}")
    budget = Budget(context)
    if client is None:
        import boto3
        from botocore.config import Config

        # One slow call must not eat the whole budget: bounded socket timeouts and few retries.
        timeout = max(1, min(30, int(budget.left() / 3)))
        client = boto3.client("sagemaker", region_name=props["Region"], config=Config(
            connect_timeout=timeout, read_timeout=timeout, retries={"mode": "standard", "max_attempts": 3}))
    return kind, client, budget


def on_event(event: dict[str, Any], context: Any = None, client: Any = None) -> dict[str, Any]:
    """Start the change and return the id at once; is_complete waits for it."""
    kind, client, budget = _setup(event, context, client)
    request = event["RequestType"]
    props = event["ResourceProperties"]
    if request == "Delete":
        delete(client, kind, event["PhysicalResourceId"], budget)
        return {"PhysicalResourceId": event["PhysicalResourceId"]}
    params = typed(client, f"Create{kind['operation']}", props["Parameters"])
    if request == "Update" and event["OldResourceProperties"]["Parameters"] == props["Parameters"]:
        # Only the custom resource's own settings changed (e.g. ServiceTimeout): nothing to send.
        resource_id = event["PhysicalResourceId"]
        arn = current(client, kind, resource_id, budget)[kind["arn"]]
        return {"PhysicalResourceId": resource_id, "Data": {"Id": resource_id, "Arn": arn}}
    if request == "Update" and not replaced(kind, event["OldResourceProperties"]["Parameters"], props["Parameters"]):
        resource_id = event["PhysicalResourceId"]
        arn, version = update(client, kind, resource_id, params, budget)
        return {"PhysicalResourceId": resource_id, "Data": {"Id": resource_id, "Arn": arn, "Version": version}}
    namesake = find_namesake(client, kind, params, budget)
    if namesake is not None:
        return adopt(client, kind, namesake, params, budget)
    resource_id, arn = create(client, kind, params, budget)
    return {"PhysicalResourceId": resource_id, "Data": {"Id": resource_id, "Arn": arn}}


def find_namesake(client: Any, kind: dict[str, Any], params: dict[str, Any], budget: Budget) -> dict[str, Any] | None:
    """A policy or quota of this name on this cluster that CloudFormation does not know: one whose create
    never reported its id (an older handler failed after SageMaker accepted it), or one made by hand.
    Creating another of the same name would fail on every deploy."""
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


def adopt(client: Any, kind: dict[str, Any], namesake: dict[str, Any], params: dict[str, Any],
          budget: Budget) -> dict[str, Any]:
    """Take over a settled namesake (updated to the config); a failed one is deleted and the deploy fails
    with what to do; one still changing fails the deploy until it settles."""
    name, resource_id, status = kind["operation"], namesake[kind["id"]], namesake["Status"]
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
    """Whether the change on_event started has been applied; raises when it failed."""
    kind, client, budget = _setup(event, context, client)
    name, resource_id = kind["operation"], event["PhysicalResourceId"]
    if event["RequestType"] == "Delete":
        described = describe(client, kind, resource_id, budget)
        status = described["Status"] if described else "Deleted"
        if status == "Deleted":
            return {"IsComplete": True}
        if status == "DeleteFailed":
            raise GovernanceError(f"{name} {resource_id} is DeleteFailed: {_reason(described)}")
        if status not in IN_PROGRESS:  # it settled after a create or update: now it can be deleted
            delete(client, kind, resource_id, budget, conflict_ok=False)
        return {"IsComplete": False}
    described = current(client, kind, resource_id, budget)
    status = described["Status"]
    if status.endswith("Failed"):
        raise GovernanceError(f"{name} {resource_id} is {status}: {_reason(described)}")
    version = described[kind["version"]]
    wanted = event.get("Data", {}).get("Version")
    if status in SETTLED and (wanted is None or int(version) >= int(wanted)):
        return {"IsComplete": True, "Data": {"Version": str(version)}}
    return {"IsComplete": False}


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
            return float(value)
        if kind == "boolean":
            return value if isinstance(value, bool) else str(value).lower() == "true"
    except (TypeError, ValueError) as err:
        raise GovernanceError(f"{where}: {value!r} is not a valid {kind}") from err
    return value


def replaced(kind: dict[str, Any], old: dict[str, Any], new: dict[str, Any]) -> bool:
    """True when a create-only field changed, which needs a new resource."""
    def get(params: dict[str, Any], path: tuple[str, ...]) -> Any:
        for key in path:
            params = params.get(key, {}) if isinstance(params, dict) else {}
        return params
    return any(get(old, path) != get(new, path) for path in kind["create_only"])


def create(client: Any, kind: dict[str, Any], params: dict[str, Any], budget: Budget) -> tuple[str, str]:
    name = kind["operation"]
    budget.check(f"Create{name}")
    response = _call(client, f"create_{_snake(name)}", f"Create{name}", **params)
    return response[kind["id"]], response[kind["arn"]]


def update(client: Any, kind: dict[str, Any], resource_id: str, params: dict[str, Any],
           budget: Budget) -> tuple[str, str]:
    """Update to the next version; returns the ARN and the version is_complete must see applied."""
    name = kind["operation"]
    target = int(current(client, kind, resource_id, budget)[kind["version"]])
    changes = {k: v for k, v in params.items() if k in kind["updatable"]}
    budget.check(f"Update{name}")
    response = _call(client, f"update_{_snake(name)}", f"Update{name}",
                     **{kind["id"]: resource_id, "TargetVersion": target, **changes})
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
        raise GovernanceError(f"Describe{name} {resource_id} failed: {err}") from err


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
        raise GovernanceError(f"Delete{name} {resource_id} failed: {err}") from err
    except Exception as err:  # botocore ClientError and friends: the deletion did not happen
        raise GovernanceError(f"Delete{name} {resource_id} failed: {err}") from err


def _call(client: Any, method: str, label: str, **params: Any) -> dict[str, Any]:
    try:
        return getattr(client, method)(**params)
    except GovernanceError:
        raise
    except Exception as err:  # botocore ClientError, ParamValidationError, endpoint errors
        raise GovernanceError(f"{label} failed: {err}") from err


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")
