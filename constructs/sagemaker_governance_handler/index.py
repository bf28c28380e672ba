"""Custom resource handler: a HyperPod cluster policy (ClusterSchedulerConfig) or team compute allocation
(ComputeQuota) through the SageMaker API, for regions whose CloudFormation lacks the native type.

Create calls Create*, then waits until Describe reports it created. Update calls Describe for the
current version and Update* with it as TargetVersion; a change to a create-only field (name, cluster,
team name) creates a new one instead, and CloudFormation deletes the old one afterwards. Delete calls
Delete* (already gone counts as deleted). Any failed call or a *Failed status raises, so the
deployment fails: success is reported only when the API confirmed it.

CloudFormation passes every scalar of a custom resource as a string; the handler converts each value
to the type the SageMaker API model gives it, so requests are valid against the real model.
"""

from __future__ import annotations

import time
from typing import Any

POLL_SECONDS = 5
MAX_POLLS = 150  # 12.5 minutes, inside Lambda's 15


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


def on_event(event: dict[str, Any], _context: Any = None, client: Any = None) -> dict[str, Any]:
    props = event["ResourceProperties"]
    kind = KINDS.get(props.get("Kind", ""))
    if kind is None:
        raise GovernanceError(f"Kind must be one of {sorted(KINDS)}, got {props.get('Kind')!r}")
    if client is None:
        import boto3

        client = boto3.client("sagemaker", region_name=props["Region"])
    request = event["RequestType"]
    if request == "Delete":
        delete(client, kind, event["PhysicalResourceId"])
        return {"PhysicalResourceId": event["PhysicalResourceId"]}
    operation = f"Create{kind['operation']}"
    params = typed(client, operation, props["Parameters"])
    if request == "Update" and not replaced(kind, event["OldResourceProperties"]["Parameters"], props["Parameters"]):
        resource_id = event["PhysicalResourceId"]
        arn = update(client, kind, resource_id, params)
    else:
        resource_id, arn = create(client, kind, params)
    return {"PhysicalResourceId": resource_id, "Data": {"Id": resource_id, "Arn": arn}}


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


def create(client: Any, kind: dict[str, Any], params: dict[str, Any]) -> tuple[str, str]:
    name = kind["operation"]
    response = _call(client, f"create_{_snake(name)}", f"Create{name}", **params)
    resource_id = response[kind["id"]]
    wait(client, kind, resource_id, "created")
    return resource_id, response[kind["arn"]]


def update(client: Any, kind: dict[str, Any], resource_id: str, params: dict[str, Any]) -> str:
    name = kind["operation"]
    current = _call(client, f"describe_{_snake(name)}", f"Describe{name}", **{kind["id"]: resource_id})
    changes = {k: v for k, v in params.items() if k in kind["updatable"]}
    response = _call(client, f"update_{_snake(name)}", f"Update{name}",
                     **{kind["id"]: resource_id, "TargetVersion": current[kind["version"]], **changes})
    wait(client, kind, resource_id, "updated")
    return response[kind["arn"]]


def delete(client: Any, kind: dict[str, Any], resource_id: str) -> None:
    name = kind["operation"]
    try:
        getattr(client, f"delete_{_snake(name)}")(**{kind["id"]: resource_id})
    except client.exceptions.ResourceNotFound:
        return
    except Exception as err:  # botocore ClientError and friends: the deletion did not happen
        raise GovernanceError(f"Delete{name} {resource_id} failed: {err}") from err


def wait(client: Any, kind: dict[str, Any], resource_id: str, goal: str) -> None:
    name = kind["operation"]
    for _ in range(MAX_POLLS):
        described = _call(client, f"describe_{_snake(name)}", f"Describe{name}", **{kind["id"]: resource_id})
        status = described.get("Status", "")
        if status.endswith("Failed"):
            raise GovernanceError(f"{name} {resource_id} is {status}: {described.get('FailureReason', 'no reason given')}")
        if status in ("Created", "Updated"):
            return
        time.sleep(POLL_SECONDS)
    raise GovernanceError(f"{name} {resource_id} was not {goal} within {MAX_POLLS * POLL_SECONDS} s")


def _call(client: Any, method: str, label: str, **params: Any) -> dict[str, Any]:
    try:
        return getattr(client, method)(**params)
    except GovernanceError:
        raise
    except Exception as err:  # botocore ClientError, ParamValidationError, endpoint errors
        raise GovernanceError(f"{label} failed: {err}") from err


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")
