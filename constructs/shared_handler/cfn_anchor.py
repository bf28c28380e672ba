"""Anchor every custom-resource request in CloudFormation itself. A custom-resource Lambda cannot tell
CloudFormation from any other principal allowed lambda:InvokeFunction, so before it acts a handler asks
CloudFormation whether the event describes a real request of a stack it serves. Shared by the kit's
handlers (shared_handler/: PythonHandlerProvider puts it next to each handler's index.py in its asset):

- the event's StackId is a stack of this account, partition and region whose name starts with the kit's
  stack-name prefix (HyperPod-<env>-, fixed in the function's environment at synth), or, for a handler
  that serves one stack only, exactly that stack's id;
- DescribeStackResource(StackId, LogicalResourceId) shows that resource of the type the Kind belongs to,
  in the state CloudFormation gives a custom resource while it waits for this request: CREATE_IN_PROGRESS
  for Create, UPDATE_IN_PROGRESS for Update (a rollback updates the resource again, with its stack in
  UPDATE_ROLLBACK_IN_PROGRESS), DELETE_IN_PROGRESS for Delete (also a failed create's rollback);
- Update and Delete name the physical id CloudFormation holds - except the Delete of a replaced copy
  while the stack is in a *_CLEANUP_IN_PROGRESS state, the only time CloudFormation deletes an id it no
  longer holds, and an Update's completion check (CDK's waiter passes it the id on_event answered, which
  is new when the update replaces the resource: `replacing=True`).

DescribeStackResource does not return properties, so the content of an event is checked by the handler
itself (scope pins and manifest_policy). Standard library and boto3 only (both in the Lambda runtime).
"""

from __future__ import annotations

import os
import re
from typing import Any

STACK_ARN = re.compile(r"arn:(?P<partition>[a-z-]+):cloudformation:(?P<region>[a-z0-9-]+):(?P<account>\d{12}):"
                       r"stack/(?P<name>[A-Za-z][-A-Za-z0-9]*)/[-0-9a-f]+")
# UPDATE_ROLLBACK_IN_PROGRESS is in the ResourceStatus enum of the model: accepted for Update as well, so
# that a rollback shown that way never ends in UPDATE_ROLLBACK_FAILED.
IN_PROGRESS = {"Create": ("CREATE_IN_PROGRESS",), "Update": ("UPDATE_IN_PROGRESS", "UPDATE_ROLLBACK_IN_PROGRESS"),
               "Delete": ("DELETE_IN_PROGRESS",)}
CLEANUP = ("UPDATE_COMPLETE_CLEANUP_IN_PROGRESS", "UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS")


class NotAnchored(Exception):
    """The event is not a request CloudFormation is making of one of the kit's stacks."""


def stack_refusal(stack_id: Any, stacks: dict[str, str], region: str | None) -> str | None:
    """Why `stack_id` is not one of the kit's stacks (`stacks`: Partition, Account, StackPrefix; or StackId,
    the one stack a handler serves), or None."""
    if "StackId" in stacks:
        return None if stack_id == stacks["StackId"] else f"StackId {stack_id!r} is not this handler's stack"
    match = STACK_ARN.fullmatch(stack_id) if isinstance(stack_id, str) else None
    if match is None:
        return f"StackId {stack_id!r} is not a CloudFormation stack id"
    expected = {"partition": stacks["Partition"], "region": region, "account": stacks["Account"]}
    for part, value in expected.items():
        if match[part] != value:
            return f"StackId {stack_id!r} is in {part} {match[part]!r}, not this installer's ({value!r})"
    if not match["name"].startswith(stacks["StackPrefix"]):
        return f"StackId {stack_id!r} is not one of the kit's stacks ({stacks['StackPrefix']}*)"
    return None


def confirm(event: dict[str, Any], stacks: dict[str, str], region: str | None, resource_type: str,
            cloudformation: Any, replacing: bool = False) -> None:
    """Raise NotAnchored unless CloudFormation is making exactly this request now."""
    request, stack_id, logical_id = event.get("RequestType"), event.get("StackId"), event.get("LogicalResourceId")
    refusal = stack_refusal(stack_id, stacks, region)
    if refusal:
        raise NotAnchored(refusal)
    if request not in IN_PROGRESS or not isinstance(logical_id, str) or not logical_id:
        raise NotAnchored(f"RequestType {request!r} with LogicalResourceId {logical_id!r} is no CloudFormation request")
    try:
        detail = cloudformation.describe_stack_resource(StackName=stack_id,
                                                        LogicalResourceId=logical_id)["StackResourceDetail"]
    except Exception as err:  # botocore ClientError (no such stack or resource, access denied) and friends
        raise NotAnchored(f"CloudFormation does not confirm {logical_id} of {stack_id}: {err}") from err
    what = f"{logical_id} of {stack_id}"
    if detail.get("ResourceType") != resource_type:
        raise NotAnchored(f"{what} is a {detail.get('ResourceType')}, not a {resource_type}")
    status = detail.get("ResourceStatus")
    same_id = (request == "Create" or replacing and request == "Update"
               or event.get("PhysicalResourceId") == detail.get("PhysicalResourceId"))
    if status in IN_PROGRESS[request] and same_id:
        return
    if request == "Delete" and not same_id and _stack_status(cloudformation, stack_id) in CLEANUP:
        return  # the old copy of a replaced resource
    raise NotAnchored(f"{what} is {status} with physical id {detail.get('PhysicalResourceId')!r}; CloudFormation "
                      f"is not sending a {request} for {event.get('PhysicalResourceId')!r}")


def _stack_status(cloudformation: Any, stack_id: str) -> str | None:
    try:
        [stack] = cloudformation.describe_stacks(StackName=stack_id)["Stacks"]
    except Exception as err:  # botocore ClientError and friends
        raise NotAnchored(f"CloudFormation does not describe {stack_id}: {err}") from err
    return stack.get("StackStatus")


# A handler that serves its own stack only finds that stack's id here (PythonHandlerProvider writes it).
STACK_ENV = "CFN_ANCHOR_STACK_ID"


def confirm_own_stack(event: dict[str, Any], resource_type: str, cloudformation: Any, replacing: bool = False) -> None:
    """confirm() for the one stack in the function's environment."""
    confirm(event, {"StackId": os.environ[STACK_ENV]}, os.environ.get("AWS_REGION"), resource_type, cloudformation,
            replacing)
