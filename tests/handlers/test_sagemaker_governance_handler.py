"""The SageMaker API handler behind the cluster policy and compute allocations where CloudFormation
lacks the types, against botocore's Stubber: every request is checked against the real SageMaker model,
every status sequence is one the model's SchedulerResourceStatus allows. on_event starts the work and
returns the id; is_complete is what CDK's waiter calls until done (or a raise, or the total timeout: both
reach CloudFormation with the id on_event returned)."""

from __future__ import annotations

import socket
import time

import boto3
import pytest
from botocore.stub import ANY, Stubber
from support.handlers import load_handler

from cdk_app.domain.resource_schemas import create_only_properties

handler = load_handler("sagemaker_governance_handler")

CLUSTER = "arn:aws:sagemaker:us-west-2:111122223333:cluster/abcdefghijkl"
POLICY_PARAMS = {"Name": "hyperpod-prod-policy", "ClusterArn": CLUSTER,
                 "SchedulerConfig": {"PriorityClasses": [{"Name": "inference", "Weight": "90"},
                                                         {"Name": "training", "Weight": "50"}],
                                     "FairShare": "Enabled", "IdleResourceSharing": "Enabled"}}
QUOTA_PARAMS = {"Name": "hyperpod-prod-team-a", "ClusterArn": CLUSTER, "ActivationState": "Enabled",
                "ComputeQuotaConfig": {"ComputeQuotaResources": [{"InstanceType": "ml.p5.48xlarge", "Count": "2"}],
                                       "ResourceSharingConfig": {"Strategy": "LendAndBorrow", "BorrowLimit": "50"},
                                       "PreemptTeamTasks": "LowerPriority"},
                "ComputeQuotaTarget": {"TeamName": "team-a", "FairShareWeight": "10"}}
POLICY_ID, QUOTA_ID = "abcdefghij01", "abcdefghij02"


@pytest.fixture(autouse=True)
def confirmed_by_cloudformation(monkeypatch):
    """CloudFormation confirms every event of the tests below but those of the anchor section at the end, which
    run the real confirmation against a stubbed CloudFormation client (the real model)."""
    monkeypatch.setattr(handler, "confirm_caller", lambda *_args, **_kwargs: None)


@pytest.fixture
def sagemaker():
    client = boto3.client("sagemaker", region_name="us-west-2", aws_access_key_id="x", aws_secret_access_key="x")
    with Stubber(client) as stub:
        yield client, stub
        stub.assert_no_pending_responses()


STACK_ID = "arn:aws:cloudformation:us-west-2:111122223333:stack/HyperPod-prod-governance/5b6c8a70-a8f1-11ef-9f1c-0a1b2c3d4e5f"
OWNED = [{"Key": "hyperpod-kit:cloudformation-stack-id", "Value": STACK_ID},
         {"Key": "hyperpod-kit:cloudformation-logical-id", "Value": "ClusterPolicy"}]


def event(request, params, kind="ClusterSchedulerConfig", **extra):
    return {"RequestType": request, "ResourceProperties": {"Kind": kind, "Region": "us-west-2", "Parameters": params},
            "StackId": STACK_ID, "LogicalResourceId": "ClusterPolicy", **extra}


def describe_policy(status, version=1, reason=None):
    response = {"ClusterSchedulerConfigArn": f"arn:aws:sagemaker:us-west-2:111122223333:cluster-scheduler-config/{POLICY_ID}",
                "ClusterSchedulerConfigId": POLICY_ID, "Name": "hyperpod-prod-policy",
                "ClusterSchedulerConfigVersion": version, "Status": status, "CreationTime": "2026-11-21T00:00:00Z",
                "ClusterArn": CLUSTER}
    if reason:
        response["FailureReason"] = reason
    return response


class Context:
    """Lambda's context: only the remaining time matters here."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def get_remaining_time_in_millis(self) -> int:
        return int(self.seconds * 1000)


POLICY_ARN = f"arn:aws:sagemaker:us-west-2:111122223333:cluster-scheduler-config/{POLICY_ID}"
QUOTA_ARN = f"arn:aws:sagemaker:us-west-2:111122223333:compute-quota/{QUOTA_ID}"
ANY_POLICY = {"Name": ANY, "ClusterArn": ANY, "SchedulerConfig": ANY, "Tags": OWNED}


def describe_quota(status, version=1, reason=None, team="team-a"):
    response = {"ComputeQuotaArn": QUOTA_ARN, "ComputeQuotaId": QUOTA_ID, "Name": f"hyperpod-prod-{team}",
                "ComputeQuotaVersion": version, "Status": status, "ComputeQuotaTarget": {"TeamName": team},
                "ActivationState": "Enabled", "CreationTime": "2026-11-21T00:00:00Z", "ClusterArn": CLUSTER}
    if reason:
        response["FailureReason"] = reason
    return response


def no_namesake(stub, kind="ClusterSchedulerConfig", name="hyperpod-prod-policy"):
    """The List* that Create is preceded by: nothing of that name on the cluster."""
    stub.add_response(f"list_{handler._snake(kind)}s", {f"{kind}Summaries": []},
                      {"ClusterArn": CLUSTER, "NameContains": name})


def complete(client, stub, request, statuses, *, kind="ClusterSchedulerConfig", data=None):
    """Call is_complete once per status, as the waiter does; returns every answer."""
    resource_id, describe = (POLICY_ID, describe_policy) if kind == "ClusterSchedulerConfig" else (QUOTA_ID, describe_quota)
    answers = []
    for status in statuses:
        if status is None:
            stub.add_client_error(f"describe_{handler._snake(kind)}", service_error_code="ResourceNotFound",
                                  expected_params={f"{kind}Id": resource_id})
        else:
            stub.add_response(f"describe_{handler._snake(kind)}", describe(*status) if isinstance(status, tuple)
                              else describe(status), {f"{kind}Id": resource_id})
        answers.append(handler.is_complete(
            event(request, POLICY_PARAMS if kind == "ClusterSchedulerConfig" else QUOTA_PARAMS, kind=kind,
                  PhysicalResourceId=resource_id, Data=data or {}), Context(60), client=client))
    return answers


def test_create_returns_the_id_at_once_and_completes_when_created(sagemaker):
    client, stub = sagemaker
    typed = {**POLICY_PARAMS, "SchedulerConfig": {**POLICY_PARAMS["SchedulerConfig"], "PriorityClasses": [
        {"Name": "inference", "Weight": 90}, {"Name": "training", "Weight": 50}]}}
    no_namesake(stub)
    stub.add_response("create_cluster_scheduler_config",
                      {"ClusterSchedulerConfigArn": POLICY_ARN, "ClusterSchedulerConfigId": POLICY_ID},
                      {**typed, "Tags": OWNED})
    result = handler.on_event(event("Create", POLICY_PARAMS), Context(300), client=client)
    assert result == {"PhysicalResourceId": POLICY_ID, "Data": {"Id": POLICY_ID, "Arn": POLICY_ARN}}
    answers = complete(client, stub, "Create", ["Creating", "Created"], data=result["Data"])
    assert answers == [{"IsComplete": False}, {"IsComplete": True, "Data": {"Version": "1"}}]


def test_create_that_fails_after_acceptance_raises_with_the_reason_and_rollback_deletes_it(sagemaker):
    """The id went to CloudFormation with on_event's answer, so the raise below reaches CloudFormation
    with it and the rollback's Delete (next) removes the failed policy instead of stranding it."""
    client, stub = sagemaker
    no_namesake(stub)
    stub.add_response("create_cluster_scheduler_config",
                      {"ClusterSchedulerConfigArn": POLICY_ARN, "ClusterSchedulerConfigId": POLICY_ID}, ANY_POLICY)
    assert handler.on_event(event("Create", POLICY_PARAMS), Context(300), client=client)["PhysicalResourceId"] == POLICY_ID
    with pytest.raises(handler.GovernanceError, match="is CreateFailed: task governance add-on is not installed"):
        complete(client, stub, "Create", ["Creating", ("CreateFailed", 1, "task governance add-on is not installed")])
    stub.add_response("delete_cluster_scheduler_config", {}, {"ClusterSchedulerConfigId": POLICY_ID})
    handler.on_event(event("Delete", POLICY_PARAMS, PhysicalResourceId=POLICY_ID), Context(300), client=client)
    assert complete(client, stub, "Delete", ["Deleting", None]) == [{"IsComplete": False}, {"IsComplete": True}]


def test_timeout_mid_create_leaves_the_id_with_cloudformation_and_rollback_deletes_once_settled(sagemaker):
    """Still Creating when the waiter's total timeout ends: the framework reports FAILED with the id
    on_event returned; the rollback Delete meets a conflict while it is still creating, and the
    completion check deletes it once it has settled."""
    client, stub = sagemaker
    no_namesake(stub, "ComputeQuota", "hyperpod-prod-team-a")
    stub.add_response("create_compute_quota", {"ComputeQuotaArn": QUOTA_ARN, "ComputeQuotaId": QUOTA_ID},
                      ANY_PARAMS_QUOTA_A)
    result = handler.on_event(event("Create", QUOTA_PARAMS, kind="ComputeQuota"), Context(300), client=client)
    assert result["PhysicalResourceId"] == QUOTA_ID
    assert complete(client, stub, "Create", ["Creating"] * 3, kind="ComputeQuota") == [{"IsComplete": False}] * 3
    stub.add_client_error("delete_compute_quota", service_error_code="ConflictException",
                          service_message="quota is being created", expected_params={"ComputeQuotaId": QUOTA_ID})
    handler.on_event(event("Delete", QUOTA_PARAMS, kind="ComputeQuota", PhysicalResourceId=QUOTA_ID), Context(300),
                     client=client)
    assert complete(client, stub, "Delete", ["Creating"], kind="ComputeQuota") == [{"IsComplete": False}]
    stub.add_response("describe_compute_quota", describe_quota("Created"), {"ComputeQuotaId": QUOTA_ID})
    stub.add_response("delete_compute_quota", {}, {"ComputeQuotaId": QUOTA_ID})
    assert handler.is_complete(event("Delete", QUOTA_PARAMS, kind="ComputeQuota", PhysicalResourceId=QUOTA_ID),
                               Context(60), client=client) == {"IsComplete": False}
    assert complete(client, stub, "Delete", ["Deleting", "Deleted"], kind="ComputeQuota") == [
        {"IsComplete": False}, {"IsComplete": True}]


ANY_PARAMS_QUOTA_A = {"Name": ANY, "ClusterArn": ANY, "ActivationState": ANY, "ComputeQuotaConfig": ANY,
                      "ComputeQuotaTarget": {"TeamName": "team-a", "FairShareWeight": 10}, "Tags": OWNED}


def test_update_waits_for_the_new_version_not_the_old_created_status(sagemaker):
    client, stub = sagemaker
    new = {**POLICY_PARAMS, "SchedulerConfig": {**POLICY_PARAMS["SchedulerConfig"], "FairShare": "Disabled"}}
    stub.add_response("describe_cluster_scheduler_config", describe_policy("Created", version=3),
                      {"ClusterSchedulerConfigId": POLICY_ID})
    stub.add_response("update_cluster_scheduler_config",
                      {"ClusterSchedulerConfigArn": POLICY_ARN, "ClusterSchedulerConfigVersion": 4},
                      {"ClusterSchedulerConfigId": POLICY_ID, "TargetVersion": 3, "SchedulerConfig": ANY})
    result = handler.on_event(event("Update", new, PhysicalResourceId=POLICY_ID,
                                    OldResourceProperties={"Parameters": POLICY_PARAMS}), Context(300), client=client)
    assert result == {"PhysicalResourceId": POLICY_ID, "Data": {"Id": POLICY_ID, "Arn": POLICY_ARN, "Version": "4"}}
    # Describe still shows version 3 "Created" right after the call: not done until version 4 is applied.
    answers = complete(client, stub, "Update", [("Created", 3), ("Updating", 4), ("Updated", 4)], data=result["Data"])
    assert answers == [{"IsComplete": False}, {"IsComplete": False}, {"IsComplete": True, "Data": {"Version": "4"}}]


def test_failed_update_raises_with_the_reason(sagemaker):
    client, stub = sagemaker
    with pytest.raises(handler.GovernanceError, match="is UpdateFailed: weights must be unique"):
        complete(client, stub, "Update", [("UpdateFailed", 4, "weights must be unique")], data={"Version": "4"})


def test_team_rename_creates_a_new_quota(sagemaker):
    client, stub = sagemaker
    renamed = {**QUOTA_PARAMS, "Name": "hyperpod-prod-team-b",
               "ComputeQuotaTarget": {"TeamName": "team-b", "FairShareWeight": "10"}}
    stub.add_response("describe_compute_quota", {**describe_quota("Created"), "ComputeQuotaId": "oldquota0001"},
                      {"ComputeQuotaId": "oldquota0001"})
    no_namesake(stub, "ComputeQuota", "hyperpod-prod-team-b")
    stub.add_response("create_compute_quota", {"ComputeQuotaArn": QUOTA_ARN, "ComputeQuotaId": QUOTA_ID},
                      ANY_PARAMS_QUOTA)
    result = handler.on_event(event("Update", renamed, kind="ComputeQuota", PhysicalResourceId="oldquota0001",
                                    OldResourceProperties={"Parameters": QUOTA_PARAMS}), Context(300), client=client)
    assert result["PhysicalResourceId"] == QUOTA_ID
    assert "Version" not in result["Data"]  # a new quota: complete on Created, whatever its version


ANY_PARAMS_QUOTA = {"Name": ANY, "ClusterArn": ANY, "ActivationState": ANY, "ComputeQuotaConfig": ANY,
                    "ComputeQuotaTarget": {"TeamName": "team-b", "FairShareWeight": 10}, "Tags": OWNED}


def test_resource_deleted_outside_cloudformation_fails_the_wait(sagemaker):
    client, stub = sagemaker
    with pytest.raises(handler.GovernanceError, match="no longer exists"):
        complete(client, stub, "Create", [None])


def test_budget_stops_with_a_reason_before_the_lambda_time_limit(sagemaker, monkeypatch):
    """40 s left when invoked (20 s margin): Describe at t=10 s goes out, Update at t=30 s is not sent."""
    client, stub = sagemaker
    clock = iter([0.0, 10.0, 30.0])
    monkeypatch.setattr(handler.time, "monotonic", lambda: next(clock))
    new = {**POLICY_PARAMS, "SchedulerConfig": {**POLICY_PARAMS["SchedulerConfig"], "FairShare": "Disabled"}}
    stub.add_response("describe_cluster_scheduler_config", describe_policy("Created", version=3),
                      {"ClusterSchedulerConfigId": POLICY_ID})
    with pytest.raises(handler.GovernanceError,
                       match="stopped 20 s before the Lambda time limit, before UpdateClusterSchedulerConfig"):
        handler.on_event(event("Update", new, PhysicalResourceId=POLICY_ID,
                               OldResourceProperties={"Parameters": POLICY_PARAMS}), Context(40), client=client)


def test_api_error_fails_the_deployment(sagemaker):
    client, stub = sagemaker
    no_namesake(stub)
    stub.add_client_error("create_cluster_scheduler_config", service_error_code="ValidationException",
                          service_message="Priority class weights must be unique", expected_params=ANY_POLICY)
    with pytest.raises(handler.GovernanceError, match="CreateClusterSchedulerConfig failed: .*weights must be unique"):
        handler.on_event(event("Create", POLICY_PARAMS), Context(300), client=client)


def test_delete_of_a_missing_resource_succeeds_other_errors_fail(sagemaker):
    client, stub = sagemaker
    stub.add_client_error("delete_compute_quota", service_error_code="ResourceNotFound", expected_params={"ComputeQuotaId": QUOTA_ID})
    assert handler.on_event(event("Delete", QUOTA_PARAMS, kind="ComputeQuota", PhysicalResourceId=QUOTA_ID),
                            Context(300), client=client) == {"PhysicalResourceId": QUOTA_ID}
    assert complete(client, stub, "Delete", [None], kind="ComputeQuota") == [{"IsComplete": True}]
    stub.add_client_error("delete_compute_quota", service_error_code="ResourceLimitExceeded",
                          expected_params={"ComputeQuotaId": QUOTA_ID})
    with pytest.raises(handler.GovernanceError, match="DeleteComputeQuota .* failed"):
        handler.on_event(event("Delete", QUOTA_PARAMS, kind="ComputeQuota", PhysicalResourceId=QUOTA_ID),
                         Context(300), client=client)
    with pytest.raises(handler.GovernanceError, match="is DeleteFailed: quota in use"):
        complete(client, stub, "Delete", [("DeleteFailed", 1, "quota in use")], kind="ComputeQuota")


def test_values_that_do_not_fit_the_model_are_refused(sagemaker):
    client, _ = sagemaker
    bad = {**POLICY_PARAMS, "SchedulerConfig": {"PriorityClasses": [{"Name": "x", "Weight": "heavy"}]}}
    with pytest.raises(handler.GovernanceError, match=r"SchedulerConfig.PriorityClasses\[0\].Weight: 'heavy' is not a valid integer"):
        handler.on_event(event("Create", bad), client=client)
    with pytest.raises(handler.GovernanceError, match="unknown field"):
        handler.on_event(event("Create", {**POLICY_PARAMS, "Colour": "red"}), client=client)


def test_create_only_fields_are_cloudformations():
    """The handler replaces exactly where CloudFormation's own schema (cfn-lint's copy) would."""
    for name, kind in handler.KINDS.items():
        assert set(kind["create_only"]) == set(create_only_properties(f"AWS::SageMaker::{name}"))


def summary(status, name="hyperpod-prod-policy", resource_id=POLICY_ID, version=2):
    return {"ClusterSchedulerConfigArn": POLICY_ARN, "ClusterSchedulerConfigId": resource_id, "Name": name,
            "ClusterSchedulerConfigVersion": version, "CreationTime": "2026-11-21T00:00:00Z", "Status": status,
            "ClusterArn": CLUSTER}


def test_create_takes_over_a_stranded_namesake_instead_of_colliding(sagemaker):
    """A policy this same resource created without its id reaching CloudFormation: same name on the same
    cluster (the second page of the listing), settled, tagged with this stack and logical id. It is
    updated to the config and becomes the resource."""
    client, stub = sagemaker
    stub.add_response("list_cluster_scheduler_configs", {
        "ClusterSchedulerConfigSummaries": [summary("Created", name="hyperpod-prod-policy-old", resource_id="other0000001")],
        "NextToken": "p2"}, {"ClusterArn": CLUSTER, "NameContains": "hyperpod-prod-policy"})
    stub.add_response("list_cluster_scheduler_configs", {"ClusterSchedulerConfigSummaries": [summary("Created")]},
                      {"ClusterArn": CLUSTER, "NameContains": "hyperpod-prod-policy", "NextToken": "p2"})
    stub.add_response("list_tags", {"Tags": OWNED}, {"ResourceArn": POLICY_ARN})
    stub.add_response("describe_cluster_scheduler_config", describe_policy("Created", version=2),
                      {"ClusterSchedulerConfigId": POLICY_ID})
    stub.add_response("update_cluster_scheduler_config",
                      {"ClusterSchedulerConfigArn": POLICY_ARN, "ClusterSchedulerConfigVersion": 3},
                      {"ClusterSchedulerConfigId": POLICY_ID, "TargetVersion": 2, "SchedulerConfig": ANY})
    result = handler.on_event(event("Create", POLICY_PARAMS), Context(300), client=client)
    assert result == {"PhysicalResourceId": POLICY_ID, "Data": {"Id": POLICY_ID, "Arn": POLICY_ARN, "Version": "3"}}


@pytest.mark.parametrize(("status", "message"), [
    ("CreateFailed", "left CreateFailed by an earlier deployment, is being deleted now; deploy again"),
    ("Creating", "exists and is Creating; deploy again once it has settled"),
])
def test_create_with_a_failed_or_busy_namesake_fails_saying_what_to_do(sagemaker, status, message):
    client, stub = sagemaker
    stub.add_response("list_cluster_scheduler_configs", {"ClusterSchedulerConfigSummaries": [summary(status)]},
                      {"ClusterArn": CLUSTER, "NameContains": "hyperpod-prod-policy"})
    stub.add_response("list_tags", {"Tags": OWNED}, {"ResourceArn": POLICY_ARN})
    if status == "CreateFailed":
        stub.add_response("delete_cluster_scheduler_config", {}, {"ClusterSchedulerConfigId": POLICY_ID})
    with pytest.raises(handler.GovernanceError, match=message):
        handler.on_event(event("Create", POLICY_PARAMS), Context(300), client=client)


def test_update_with_unchanged_parameters_sends_nothing(sagemaker):
    """E.g. only ServiceTimeout changed: Describe for the ARN, no Update, complete on the current version."""
    client, stub = sagemaker
    stub.add_response("describe_cluster_scheduler_config", describe_policy("Updated", version=5),
                      {"ClusterSchedulerConfigId": POLICY_ID})
    result = handler.on_event(event("Update", POLICY_PARAMS, PhysicalResourceId=POLICY_ID,
                                    OldResourceProperties={"Parameters": POLICY_PARAMS}), Context(300), client=client)
    assert result == {"PhysicalResourceId": POLICY_ID, "Data": {"Id": POLICY_ID, "Arn": POLICY_ARN}}
    assert complete(client, stub, "Update", [("Updated", 5)], data=result["Data"]) == [
        {"IsComplete": True, "Data": {"Version": "5"}}]


# --- report findings 5, 6, 10, 11, 13 ---------------------------------------------------------------------------

@pytest.mark.parametrize(("tags", "owner"), [
    ([{"Key": "hyperpod-kit:cloudformation-stack-id", "Value": STACK_ID.replace("HyperPod-prod", "HyperPod-dev")},
      {"Key": "hyperpod-kit:cloudformation-logical-id", "Value": "ClusterPolicy"}],
     "made by ClusterPolicy of arn:aws:cloudformation:us-west-2:111122223333:stack/HyperPod-dev-governance/"),
    ([{"Key": "hyperpod-kit:cloudformation-stack-id", "Value": STACK_ID},
      {"Key": "hyperpod-kit:cloudformation-logical-id", "Value": "QuotaTeamB"}], "made by QuotaTeamB of"),
    ([{"Key": "team", "Value": "a"}], "made outside this kit \\(it has no hyperpod-kit tags\\)"),
])
def test_a_namesake_another_stack_or_resource_made_is_not_taken_over(sagemaker, tags, owner):
    """Another environment on the same HyperPod cluster (or another resource of this stack, or a hand-made
    policy) owns the name: the deploy fails naming it; nothing is updated or deleted."""
    client, stub = sagemaker
    stub.add_response("list_cluster_scheduler_configs", {"ClusterSchedulerConfigSummaries": [summary("Created")]},
                      {"ClusterArn": CLUSTER, "NameContains": "hyperpod-prod-policy"})
    stub.add_response("list_tags", {"Tags": tags}, {"ResourceArn": POLICY_ARN})
    with pytest.raises(handler.GovernanceError, match=f"'hyperpod-prod-policy' already exists on the cluster "
                                                      f"\\({POLICY_ID}, Created\\), {owner}.*not by ClusterPolicy of "
                                                      "this stack; it is not taken over"):
        handler.on_event(event("Create", POLICY_PARAMS), Context(300), client=client)


def test_a_rollback_update_while_the_forward_update_is_still_running_waits_instead_of_conflicting(sagemaker):
    """The forward update's wait failed while SageMaker was still Updating; CloudFormation's rollback Update
    (back to the old parameters) comes at once. on_event sends nothing; the completion check sends the
    update once the quota has settled and is done when the live quota holds the old parameters."""
    client, stub = sagemaker
    new = {**QUOTA_PARAMS, "ComputeQuotaTarget": {"TeamName": "team-a", "FairShareWeight": "20"}}
    rollback = event("Update", QUOTA_PARAMS, kind="ComputeQuota", PhysicalResourceId=QUOTA_ID,
                     OldResourceProperties={"Parameters": new})
    stub.add_response("describe_compute_quota", describe_quota("Updating", version=2), {"ComputeQuotaId": QUOTA_ID})
    result = handler.on_event(rollback, Context(300), client=client)
    assert result == {"PhysicalResourceId": QUOTA_ID, "Data": {"Id": QUOTA_ID, "Arn": QUOTA_ARN, "Pending": "2"}}
    polled = {**rollback, "Data": result["Data"]}
    applied = {**describe_quota("Updated", version=2), "ComputeQuotaTarget": {"TeamName": "team-a", "FairShareWeight": 20}}
    reverted = {**describe_quota("Updated", version=3), "ComputeQuotaTarget": {"TeamName": "team-a", "FairShareWeight": 10},
                "ActivationState": "Enabled",
                "ComputeQuotaConfig": {"ComputeQuotaResources": [{"InstanceType": "ml.p5.48xlarge", "Count": 2}],
                                       "ResourceSharingConfig": {"Strategy": "LendAndBorrow", "BorrowLimit": 50},
                                       "PreemptTeamTasks": "LowerPriority"}}
    stub.add_response("describe_compute_quota", describe_quota("Updating", version=2), {"ComputeQuotaId": QUOTA_ID})
    stub.add_response("describe_compute_quota", applied, {"ComputeQuotaId": QUOTA_ID})
    stub.add_response("update_compute_quota", {"ComputeQuotaArn": QUOTA_ARN, "ComputeQuotaVersion": 3},
                      {"ComputeQuotaId": QUOTA_ID, "TargetVersion": 2, "ActivationState": "Enabled",
                       "ComputeQuotaConfig": ANY, "ComputeQuotaTarget": {"TeamName": "team-a", "FairShareWeight": 10}})
    stub.add_response("describe_compute_quota", describe_quota("Updating", version=3), {"ComputeQuotaId": QUOTA_ID})
    stub.add_response("describe_compute_quota", reverted, {"ComputeQuotaId": QUOTA_ID})
    answers = [handler.is_complete(polled, Context(60), client=client) for _ in range(4)]
    assert answers == [{"IsComplete": False}] * 3 + [{"IsComplete": True, "Data": {"Version": "3"}}]


@pytest.mark.parametrize(("status", "version"), [("UpdateFailed", 3), ("Updated", 4)])
def test_a_deferred_update_that_does_not_take_fails_instead_of_resending_until_the_timeout(sagemaker, status, version):
    client, stub = sagemaker
    pending = event("Update", QUOTA_PARAMS, kind="ComputeQuota", PhysicalResourceId=QUOTA_ID,
                    OldResourceProperties={"Parameters": QUOTA_PARAMS}, Data={"Pending": "2"})
    stub.add_response("describe_compute_quota", describe_quota(status, version=version, reason="quota too large"),
                      {"ComputeQuotaId": QUOTA_ID})
    with pytest.raises(handler.GovernanceError, match=f"is {status} at version {version} without the requested "
                                                      "values: quota too large"):
        handler.is_complete(pending, Context(60), client=client)


def test_an_update_that_meets_a_conflict_is_left_to_the_completion_check(sagemaker):
    client, stub = sagemaker
    new = {**POLICY_PARAMS, "SchedulerConfig": {**POLICY_PARAMS["SchedulerConfig"], "FairShare": "Disabled"}}
    stub.add_response("describe_cluster_scheduler_config", describe_policy("Updated", version=3),
                      {"ClusterSchedulerConfigId": POLICY_ID})
    stub.add_client_error("update_cluster_scheduler_config", service_error_code="ConflictException",
                          service_message="The cluster policy is being updated", http_status_code=409)
    result = handler.on_event(event("Update", new, PhysicalResourceId=POLICY_ID,
                                    OldResourceProperties={"Parameters": POLICY_PARAMS}), Context(300), client=client)
    assert result["Data"]["Pending"] == "3"


@pytest.mark.parametrize(("code", "status"), [("ThrottlingException", 400), ("InternalFailure", 500),
                                              ("ServiceUnavailable", 503)])
def test_a_transient_error_makes_the_completion_check_ask_again(sagemaker, code, status):
    client, stub = sagemaker
    stub.add_client_error("describe_compute_quota", service_error_code=code, http_status_code=status,
                          expected_params={"ComputeQuotaId": QUOTA_ID})
    assert handler.is_complete(event("Update", QUOTA_PARAMS, kind="ComputeQuota", PhysicalResourceId=QUOTA_ID,
                                     Data={"Version": "2"}), Context(60), client=client) == {"IsComplete": False}


def test_a_lasting_error_still_fails_the_completion_check(sagemaker):
    client, stub = sagemaker
    stub.add_client_error("describe_compute_quota", service_error_code="AccessDeniedException", http_status_code=400,
                          service_message="not authorized", expected_params={"ComputeQuotaId": QUOTA_ID})
    with pytest.raises(handler.GovernanceError, match="DescribeComputeQuota abcdefghij02 failed: .*not authorized"):
        handler.is_complete(event("Update", QUOTA_PARAMS, kind="ComputeQuota", PhysicalResourceId=QUOTA_ID),
                            Context(60), client=client)


@pytest.mark.parametrize("status", ["DeleteRollbackFailed", "DeleteFailed"])
def test_a_deletion_that_ended_without_deleting_fails_with_the_reason(sagemaker, status):
    client, stub = sagemaker
    with pytest.raises(handler.GovernanceError, match=f"is {status}: workloads still admitted"):
        complete(client, stub, "Delete", [(status, 2, "workloads still admitted")], kind="ComputeQuota")


def test_a_team_change_under_the_same_name_is_refused_and_its_rollback_updates_in_place(sagemaker):
    """TeamName is create-only (CloudFormation's schema): the quota cannot move to another team in place,
    and a new one cannot have the old one's name while it exists. The rollback that follows finds the
    live quota still on team-a and updates it in place."""
    client, stub = sagemaker
    moved = {**QUOTA_PARAMS, "ComputeQuotaTarget": {"TeamName": "team-b", "FairShareWeight": "10"}}
    forward = event("Update", moved, kind="ComputeQuota", PhysicalResourceId=QUOTA_ID,
                    OldResourceProperties={"Parameters": QUOTA_PARAMS})
    stub.add_response("describe_compute_quota", describe_quota("Created"), {"ComputeQuotaId": QUOTA_ID})
    stub.add_response("list_compute_quotas", {"ComputeQuotaSummaries": [{
        "ComputeQuotaArn": QUOTA_ARN, "ComputeQuotaId": QUOTA_ID, "Name": "hyperpod-prod-team-a", "Status": "Created",
        "ClusterArn": CLUSTER, "CreationTime": "2026-11-21T00:00:00Z", "ComputeQuotaTarget": {"TeamName": "team-a"}}]},
        {"ClusterArn": CLUSTER, "NameContains": "hyperpod-prod-team-a"})
    with pytest.raises(handler.GovernanceError, match="ComputeQuotaTarget.TeamName of ComputeQuota "
                                                      "'hyperpod-prod-team-a' .* cannot change in place"):
        handler.on_event(forward, Context(300), client=client)
    rollback = event("Update", QUOTA_PARAMS, kind="ComputeQuota", PhysicalResourceId=QUOTA_ID,
                     OldResourceProperties={"Parameters": moved})
    stub.add_response("describe_compute_quota", describe_quota("Created", version=1), {"ComputeQuotaId": QUOTA_ID})
    stub.add_response("update_compute_quota", {"ComputeQuotaArn": QUOTA_ARN, "ComputeQuotaVersion": 2},
                      {"ComputeQuotaId": QUOTA_ID, "TargetVersion": 1, "ActivationState": "Enabled",
                       "ComputeQuotaConfig": ANY, "ComputeQuotaTarget": {"TeamName": "team-a", "FairShareWeight": 10}})
    assert handler.on_event(rollback, Context(300), client=client)["Data"]["Version"] == "2"


def test_a_number_that_is_not_finite_is_refused_with_the_handler_s_reason(sagemaker):
    client, _ = sagemaker
    bad = {**QUOTA_PARAMS, "ComputeQuotaConfig": {"ComputeQuotaResources": [
        {"InstanceType": "ml.p5.48xlarge", "VCpu": "nan"}]}}
    with pytest.raises(handler.GovernanceError, match=r"ComputeQuotaResources\[0\].VCpu: 'nan' is not a valid float"):
        handler.on_event(event("Create", bad, kind="ComputeQuota"), client=client)


def test_every_call_fits_in_the_budget_left():
    """Socket timeouts and attempts of the client: one call, all attempts, within the share of the budget."""
    for seconds in (30, 60, 300, 900):
        budget = handler.Budget(Context(seconds))
        config = handler.client_config(budget)
        attempts = config.retries["total_max_attempts"]
        assert attempts * (config.connect_timeout + config.read_timeout) + 1 <= budget.call_seconds
        assert budget.call_seconds * 3 <= seconds - handler.MARGIN_SECONDS + 0.01


def test_is_complete_against_a_stalled_endpoint_ends_within_its_budget(monkeypatch):
    """Report finding 11, with real botocore: an endpoint that accepts connections and never answers. The
    completion check answers "not yet" (the waiter asks again) before its budget ends."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    monkeypatch.setenv("AWS_ENDPOINT_URL_SAGEMAKER", f"http://127.0.0.1:{server.getsockname()[1]}")
    for name, value in (("AWS_ACCESS_KEY_ID", "x"), ("AWS_SECRET_ACCESS_KEY", "x")):
        monkeypatch.setenv(name, value)
    started = time.monotonic()
    try:
        answer = handler.is_complete(event("Update", QUOTA_PARAMS, kind="ComputeQuota", PhysicalResourceId=QUOTA_ID),
                                     Context(29))
    finally:
        server.close()
    assert answer == {"IsComplete": False}
    assert time.monotonic() - started < 29 - handler.MARGIN_SECONDS


# --- only CloudFormation's own requests of this stack are acted on (cfn_anchor.py) --------------------------------

WAITING = {"Create": "CREATE_IN_PROGRESS", "Update": "UPDATE_IN_PROGRESS", "Delete": "DELETE_IN_PROGRESS"}


@pytest.fixture
def cloudformation(monkeypatch):
    """The real confirmation, the function's environment as PythonHandlerProvider writes it, and a CloudFormation
    client stubbed against the real model; yields its Stubber."""
    monkeypatch.undo()
    monkeypatch.setenv("CFN_ANCHOR_STACK_ID", STACK_ID)
    monkeypatch.setenv("AWS_REGION", "us-west-2")
    client = boto3.client("cloudformation", region_name="us-west-2", aws_access_key_id="x", aws_secret_access_key="x")
    monkeypatch.setattr(handler, "cloudformation", lambda _budget: client)
    with Stubber(client) as stub:
        yield stub
        stub.assert_no_pending_responses()


def shows(stub, request, kind="ClusterSchedulerConfig", status=None, physical_id="pending"):
    """DescribeStackResource of the event's resource: by default in the state CloudFormation gives it for `request`."""
    stub.add_response("describe_stack_resource", {"StackResourceDetail": {
        "StackId": STACK_ID, "LogicalResourceId": "ClusterPolicy", "ResourceType": f"Custom::SageMaker{kind}",
        "PhysicalResourceId": physical_id, "ResourceStatus": status or WAITING[request],
        "LastUpdatedTimestamp": "2026-11-22T12:00:00Z"}}, {"StackName": STACK_ID, "LogicalResourceId": "ClusterPolicy"})


@pytest.mark.parametrize(("forged", "status", "message"), [
    (event("Delete", QUOTA_PARAMS, kind="ComputeQuota", PhysicalResourceId=QUOTA_ID), "CREATE_COMPLETE",
     "is CREATE_COMPLETE .*; CloudFormation is not sending a Delete"),
    (event("Create", POLICY_PARAMS), "UPDATE_COMPLETE", "is UPDATE_COMPLETE"),
    (event("Update", POLICY_PARAMS, PhysicalResourceId="abcdefghij99", OldResourceProperties={"Parameters": {}}),
     "UPDATE_IN_PROGRESS", "CloudFormation is not sending a Update for 'abcdefghij99'"),
])
def test_an_event_cloudformation_does_not_confirm_calls_no_sagemaker_api(sagemaker, cloudformation, forged, status, message):
    """Anyone allowed lambda:InvokeFunction could otherwise delete or rewrite any team's quota."""
    client, _stub = sagemaker  # nothing queued: a SageMaker call fails the test
    # CloudFormation holds the quota's id for the Delete, the policy's for the Update.
    held = forged.get("PhysicalResourceId") if forged["RequestType"] == "Delete" else POLICY_ID
    shows(cloudformation, forged["RequestType"], forged["ResourceProperties"]["Kind"], status, physical_id=held)
    with pytest.raises(handler.GovernanceError, match="refusing the event: .*" + message):
        handler.on_event(forged, Context(300), client=client)


def test_an_event_of_another_stack_is_refused_without_asking(sagemaker, cloudformation):
    client, _stub = sagemaker
    other = event("Create", POLICY_PARAMS, StackId=STACK_ID.replace("HyperPod-prod-governance", "HyperPod-prod-team-0"))
    with pytest.raises(handler.GovernanceError, match="refusing the event: .* is not this handler's stack"):
        handler.on_event(other, Context(300), client=client)


def test_a_confirmed_create_goes_ahead(sagemaker, cloudformation):
    client, stub = sagemaker
    shows(cloudformation, "Create")
    no_namesake(stub)
    stub.add_response("create_cluster_scheduler_config", {
        "ClusterSchedulerConfigArn": f"arn:aws:sagemaker:us-west-2:111122223333:cluster-scheduler-config/{POLICY_ID}",
        "ClusterSchedulerConfigId": POLICY_ID}, {"Name": ANY, "ClusterArn": CLUSTER, "SchedulerConfig": ANY, "Tags": OWNED})
    assert handler.on_event(event("Create", POLICY_PARAMS), Context(300), client=client)["PhysicalResourceId"] == POLICY_ID


def test_the_completion_check_is_confirmed_too_and_accepts_a_replacement_s_new_id(sagemaker, cloudformation):
    """is_complete deletes and updates as well; the waiter passes it the id on_event answered, which an Update
    that replaced the quota made new (CloudFormation still holds the old one until it cleans up)."""
    client, stub = sagemaker
    shows(cloudformation, "Update", "ComputeQuota", physical_id="oldquota0001")
    stub.add_response("describe_compute_quota", describe_quota("Created"), {"ComputeQuotaId": QUOTA_ID})
    polled = event("Update", QUOTA_PARAMS, kind="ComputeQuota", PhysicalResourceId=QUOTA_ID, Data={})
    assert handler.is_complete(polled, Context(60), client=client)["IsComplete"] is True
    shows(cloudformation, "Delete", "ComputeQuota", status="DELETE_COMPLETE", physical_id=QUOTA_ID)
    with pytest.raises(handler.GovernanceError, match="refusing the event: .*is DELETE_COMPLETE"):
        handler.is_complete(event("Delete", QUOTA_PARAMS, kind="ComputeQuota", PhysicalResourceId=QUOTA_ID),
                            Context(60), client=client)


def test_cloudformation_throttling_makes_the_completion_check_ask_again(sagemaker, cloudformation):
    client, _stub = sagemaker
    cloudformation.add_client_error("describe_stack_resource", service_error_code="Throttling", http_status_code=400)
    polled = event("Delete", QUOTA_PARAMS, kind="ComputeQuota", PhysicalResourceId=QUOTA_ID)
    assert handler.is_complete(polled, Context(60), client=client) == {"IsComplete": False}
