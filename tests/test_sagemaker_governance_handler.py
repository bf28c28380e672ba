"""The SageMaker API handler behind the cluster policy and compute allocations where CloudFormation
lacks the types, against botocore's Stubber: every request is checked against the real SageMaker model."""

from __future__ import annotations

import boto3
import pytest
from botocore.stub import ANY, Stubber

from handlers import load_handler

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


@pytest.fixture
def sagemaker(monkeypatch):
    monkeypatch.setattr(handler, "POLL_SECONDS", 0)
    client = boto3.client("sagemaker", region_name="us-west-2", aws_access_key_id="x", aws_secret_access_key="x")
    with Stubber(client) as stub:
        yield client, stub
        stub.assert_no_pending_responses()


def event(request, params, kind="ClusterSchedulerConfig", **extra):
    return {"RequestType": request, "ResourceProperties": {"Kind": kind, "Region": "us-west-2", "Parameters": params},
            **extra}


def describe_policy(status, version=1, reason=None):
    response = {"ClusterSchedulerConfigArn": f"arn:aws:sagemaker:us-west-2:111122223333:cluster-scheduler-config/{POLICY_ID}",
                "ClusterSchedulerConfigId": POLICY_ID, "Name": "hyperpod-prod-policy",
                "ClusterSchedulerConfigVersion": version, "Status": status, "CreationTime": "2026-11-21T00:00:00Z"}
    if reason:
        response["FailureReason"] = reason
    return response


def test_create_waits_until_created_and_sends_typed_values(sagemaker):
    client, stub = sagemaker
    typed = {**POLICY_PARAMS, "SchedulerConfig": {**POLICY_PARAMS["SchedulerConfig"], "PriorityClasses": [
        {"Name": "inference", "Weight": 90}, {"Name": "training", "Weight": 50}]}}
    stub.add_response("create_cluster_scheduler_config",
                      {"ClusterSchedulerConfigArn": "arn:aws:sagemaker:us-west-2:111122223333:cluster-scheduler-config/" + POLICY_ID,
                       "ClusterSchedulerConfigId": POLICY_ID}, typed)
    stub.add_response("describe_cluster_scheduler_config", describe_policy("Creating"), {"ClusterSchedulerConfigId": POLICY_ID})
    stub.add_response("describe_cluster_scheduler_config", describe_policy("Created"), {"ClusterSchedulerConfigId": POLICY_ID})
    result = handler.on_event(event("Create", POLICY_PARAMS), client=client)
    assert result["PhysicalResourceId"] == POLICY_ID
    assert result["Data"]["Arn"].endswith(POLICY_ID)


def test_update_uses_the_described_version_as_target(sagemaker):
    client, stub = sagemaker
    new = {**POLICY_PARAMS, "SchedulerConfig": {**POLICY_PARAMS["SchedulerConfig"], "FairShare": "Disabled"}}
    stub.add_response("describe_cluster_scheduler_config", describe_policy("Created", version=3),
                      {"ClusterSchedulerConfigId": POLICY_ID})
    stub.add_response("update_cluster_scheduler_config",
                      {"ClusterSchedulerConfigArn": "arn:aws:sagemaker:us-west-2:111122223333:cluster-scheduler-config/" + POLICY_ID,
                       "ClusterSchedulerConfigVersion": 4},
                      {"ClusterSchedulerConfigId": POLICY_ID, "TargetVersion": 3, "SchedulerConfig": ANY})
    stub.add_response("describe_cluster_scheduler_config", describe_policy("Updated", version=4),
                      {"ClusterSchedulerConfigId": POLICY_ID})
    result = handler.on_event(event("Update", new, PhysicalResourceId=POLICY_ID,
                                    OldResourceProperties={"Parameters": POLICY_PARAMS}), client=client)
    assert result["PhysicalResourceId"] == POLICY_ID


def test_team_rename_creates_a_new_quota(sagemaker):
    client, stub = sagemaker
    renamed = {**QUOTA_PARAMS, "ComputeQuotaTarget": {"TeamName": "team-b", "FairShareWeight": "10"}}
    stub.add_response("create_compute_quota", {"ComputeQuotaArn": "arn:aws:sagemaker:us-west-2:111122223333:compute-quota/" + QUOTA_ID,
                                               "ComputeQuotaId": QUOTA_ID}, ANY_PARAMS_QUOTA)
    stub.add_response("describe_compute_quota", {
        "ComputeQuotaArn": "arn:aws:sagemaker:us-west-2:111122223333:compute-quota/" + QUOTA_ID, "ComputeQuotaId": QUOTA_ID,
        "Name": "hyperpod-prod-team-b", "ComputeQuotaVersion": 1, "Status": "Created",
        "ComputeQuotaTarget": {"TeamName": "team-b"}, "ActivationState": "Enabled",
        "CreationTime": "2026-11-21T00:00:00Z"}, {"ComputeQuotaId": QUOTA_ID})
    result = handler.on_event(event("Update", renamed, kind="ComputeQuota", PhysicalResourceId="oldquota0001",
                                    OldResourceProperties={"Parameters": QUOTA_PARAMS}), client=client)
    assert result["PhysicalResourceId"] == QUOTA_ID


ANY_PARAMS_QUOTA = {"Name": ANY, "ClusterArn": ANY, "ActivationState": ANY, "ComputeQuotaConfig": ANY,
                    "ComputeQuotaTarget": {"TeamName": "team-b", "FairShareWeight": 10}}


def test_failed_status_fails_the_deployment_with_the_reason(sagemaker):
    client, stub = sagemaker
    stub.add_response("create_cluster_scheduler_config",
                      {"ClusterSchedulerConfigArn": "arn:aws:sagemaker:us-west-2:111122223333:cluster-scheduler-config/" + POLICY_ID,
                       "ClusterSchedulerConfigId": POLICY_ID}, ANY_POLICY)
    stub.add_response("describe_cluster_scheduler_config",
                      describe_policy("CreateFailed", reason="task governance add-on is not installed"),
                      {"ClusterSchedulerConfigId": POLICY_ID})
    with pytest.raises(handler.GovernanceError, match="is CreateFailed: task governance add-on is not installed"):
        handler.on_event(event("Create", POLICY_PARAMS), client=client)


ANY_POLICY = {"Name": ANY, "ClusterArn": ANY, "SchedulerConfig": ANY}


def test_api_error_fails_the_deployment(sagemaker):
    client, stub = sagemaker
    stub.add_client_error("create_cluster_scheduler_config", service_error_code="ValidationException",
                          service_message="Priority class weights must be unique", expected_params=ANY_POLICY)
    with pytest.raises(handler.GovernanceError, match="CreateClusterSchedulerConfig failed: .*weights must be unique"):
        handler.on_event(event("Create", POLICY_PARAMS), client=client)


def test_delete_of_a_missing_resource_succeeds_other_errors_fail(sagemaker):
    client, stub = sagemaker
    stub.add_client_error("delete_compute_quota", service_error_code="ResourceNotFound", expected_params={"ComputeQuotaId": QUOTA_ID})
    assert handler.on_event(event("Delete", QUOTA_PARAMS, kind="ComputeQuota", PhysicalResourceId=QUOTA_ID),
                            client=client) == {"PhysicalResourceId": QUOTA_ID}
    stub.add_client_error("delete_compute_quota", service_error_code="ConflictException", expected_params={"ComputeQuotaId": QUOTA_ID})
    with pytest.raises(handler.GovernanceError, match="DeleteComputeQuota .* failed"):
        handler.on_event(event("Delete", QUOTA_PARAMS, kind="ComputeQuota", PhysicalResourceId=QUOTA_ID), client=client)


def test_values_that_do_not_fit_the_model_are_refused(sagemaker):
    client, _ = sagemaker
    bad = {**POLICY_PARAMS, "SchedulerConfig": {"PriorityClasses": [{"Name": "x", "Weight": "heavy"}]}}
    with pytest.raises(handler.GovernanceError, match=r"SchedulerConfig.PriorityClasses\[0\].Weight: 'heavy' is not a valid integer"):
        handler.on_event(event("Create", bad), client=client)
    with pytest.raises(handler.GovernanceError, match="unknown field"):
        handler.on_event(event("Create", {**POLICY_PARAMS, "Colour": "red"}), client=client)
