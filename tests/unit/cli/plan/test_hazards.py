"""plan's instance-group hazards on the templates' AWS::SageMaker::Cluster InstanceGroups: a group turned from
On-Demand to Spot loses its guarantee. The groups are held to cfn-lint's schema of ClusterInstanceGroup (the
CapacityRequirements {Spot: {}} / {OnDemand: {}} shape) before they are compared."""

from __future__ import annotations

import pytest

from cdk_app.cli.plan.hazards import capacity_type, group_hazards
from cdk_app.domain.resource_schemas import resource_schema

SCHEMA = resource_schema("AWS::SageMaker::Cluster")


def group(**extra) -> dict:
    entry = {"InstanceGroupName": "gpu", "InstanceType": "ml.g5.12xlarge", "InstanceCount": 4,
             "ExecutionRole": "arn:aws:iam::111122223333:role/hyperpod-exec", **extra}
    definitions = SCHEMA["definitions"]
    assert set(entry) <= set(definitions["ClusterInstanceGroup"]["properties"])
    assert set(definitions["ClusterInstanceGroup"]["required"]) <= set(entry)
    assert set(entry.get("CapacityRequirements", {})) <= set(definitions["ClusterCapacityRequirements"]["properties"])
    return entry


def hazards(old: dict, new: dict, backing: dict | None) -> list:
    return group_hazards("HyperPod-t-cluster", "Cluster", {"InstanceGroups": [old]}, {"InstanceGroups": [new]}, backing)


@pytest.mark.parametrize(("requirements", "expected"), [(None, "OnDemand"), ({"OnDemand": {}}, "OnDemand"),
                                                        ({"Spot": {}}, "Spot")])
def test_the_capacity_type_is_read_from_capacity_requirements(requirements, expected):
    assert capacity_type(group(**({"CapacityRequirements": requirements} if requirements else {}))) == expected


def test_turning_spot_with_quotas_beyond_the_on_demand_capacity_is_refused():
    [hazard] = hazards(group(), group(CapacityRequirements={"Spot": {}}), {"ml.g5.12xlarge": False})
    assert hazard.refuse and hazard.name == "Cluster/gpu"
    assert hazard.text.startswith("instance group gpu: capacity On-Demand -> Spot: its ml.g5.12xlarge instances are "
                                  "no longer guaranteed")
    assert "the teams' quotas on ml.g5.12xlarge no longer fit the On-Demand capacity (validate's HPK531)" in hazard.text


def test_turning_spot_where_the_quotas_still_fit_the_on_demand_capacity_is_said_not_refused():
    [hazard] = hazards(group(CapacityRequirements={"OnDemand": {}}), group(CapacityRequirements={"Spot": {}}),
                       {"ml.g5.12xlarge": True})
    assert not hazard.refuse and "still fit the On-Demand capacity" in hazard.text


def test_without_the_config_plan_says_it_cannot_tell_whether_the_quotas_fit():
    [hazard] = hazards(group(), group(CapacityRequirements={"Spot": {}}), None)
    assert not hazard.refuse and "run validate" in hazard.text


def test_turning_on_demand_or_staying_spot_is_no_hazard():
    spot = group(CapacityRequirements={"Spot": {}})
    assert hazards(spot, group(), {"ml.g5.12xlarge": False}) == []
    assert hazards(spot, spot, {"ml.g5.12xlarge": False}) == []
