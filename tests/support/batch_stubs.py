"""Stubbed AWS Batch answers for validate --live."""

from __future__ import annotations

from botocore.stub import Stubber

PREFIX = "arn:aws:batch:us-east-1:111122223333"


QUEUES = ["prod-p4d", "ml-g6-12xlarge-queue", "ml-c5-xlarge-queue"]


POLICIES = [f"{PREFIX}:scheduling-policy/ml-g6-12xlarge-queue-fair-share", f"{PREFIX}:scheduling-policy/prod-p4d-quota-share"]


def environment(name, unit, maximum):
    return {"serviceEnvironmentName": name, "serviceEnvironmentArn": f"{PREFIX}:service-environment/{name}",
            "serviceEnvironmentType": "SAGEMAKER_TRAINING", "state": "ENABLED", "status": "VALID",
            "capacityLimits": [{"capacityUnit": unit, "maxCapacity": maximum}]}


def queue(name, priority, policy=None, timeout=None):
    detail = {"jobQueueName": name, "jobQueueArn": f"{PREFIX}:job-queue/{name}", "state": "ENABLED", "status": "VALID",
              "priority": priority, "computeEnvironmentOrder": [], "jobQueueType": "SAGEMAKER_TRAINING",
              "serviceEnvironmentOrder": [{"order": 1, "serviceEnvironment": f"{PREFIX}:service-environment/x"}]}
    if policy:
        detail["schedulingPolicyArn"] = policy
    if timeout:
        detail["jobStateTimeLimitActions"] = [{"reason": "head of queue too long", "state": "RUNNABLE",
                                               "maxTimeSeconds": timeout, "action": "TERMINATE"}]
    return detail


def share(name, count, strategy="LEND_AND_BORROW"):
    return {"quotaShareName": name, "quotaShareArn": f"{PREFIX}:job-queue/prod-p4d/quota-share/{name}",
            "jobQueueArn": f"{PREFIX}:job-queue/prod-p4d",
            "capacityLimits": [{"capacityUnit": "ml.p4d.24xlarge", "maxCapacity": count}],
            "resourceSharingConfiguration": {"strategy": strategy, "borrowLimit": -1},
            "preemptionConfiguration": {"inSharePreemption": "ENABLED"}, "state": "ENABLED", "status": "VALID"}


def stub(batch, *, fifo_policy=None, weights=(1.0, 3.0, 5.0), shares_pages=None, gpu_kind="fairsharePolicy",
         timeout=86400):
    s = Stubber(batch)
    s.add_response("describe_service_environments", {"serviceEnvironments": [
        environment("p4d", "ml.p4d.24xlarge", 100), environment("g6", "NUM_INSTANCES", 8)], "nextToken": "e2"},
        {"serviceEnvironments": ["p4d", "g6", "cpu"]})
    s.add_response("describe_service_environments", {"serviceEnvironments": [environment("cpu", "NUM_INSTANCES", 20)]},
                   {"serviceEnvironments": ["p4d", "g6", "cpu"], "nextToken": "e2"})
    s.add_response("describe_job_queues", {"jobQueues": [queue("prod-p4d", 10, POLICIES[1], timeout),
                                                         queue("ml-g6-12xlarge-queue", 1, POLICIES[0])], "nextToken": "q2"},
                   {"jobQueues": QUEUES})
    s.add_response("describe_job_queues", {"jobQueues": [queue("ml-c5-xlarge-queue", 2, fifo_policy)]},
                   {"jobQueues": QUEUES, "nextToken": "q2"})
    gpu = {"shareDecaySeconds": 3600, "computeReservation": 10, "shareDistribution": [
        {"shareIdentifier": i, "weightFactor": w} for i, w in zip(("HIGHPRI", "MIDPRI", "LOWPRI", "ADHOC"), weights)]}
    policies = [{"name": "ml-g6-12xlarge-queue-fair-share", "arn": POLICIES[0],
                 gpu_kind: gpu if gpu_kind == "fairsharePolicy" else {"idleResourceAssignmentStrategy": "FIFO"}},
                {"name": "prod-p4d-quota-share", "arn": POLICIES[1],
                 "quotaSharePolicy": {"idleResourceAssignmentStrategy": "FIFO"}}]
    arns = sorted(set(POLICIES) | ({fifo_policy} if fifo_policy else set()))
    if fifo_policy:
        policies.append({"name": "cpu-fair-share", "arn": fifo_policy, "fairsharePolicy": {}})
    s.add_response("describe_scheduling_policies", {"schedulingPolicies": policies}, {"arns": arns})
    pages = shares_pages or [[share("ProdExp1", 60)], [share("ProdExp2", 40)]]
    for index, page in enumerate(pages):
        response = {"quotaShares": page, **({"nextToken": f"s{index + 1}"} if index + 1 < len(pages) else {})}
        s.add_response("list_quota_shares", response, {"jobQueue": f"{PREFIX}:job-queue/prod-p4d",
                                                       **({"nextToken": f"s{index}"} if index else {})})
    s.activate()
    return s
