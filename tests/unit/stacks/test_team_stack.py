"""A team's ComputeQuota properties with GPU partitions and absolute borrow limits, judged by cfn-lint's own
AWS::SageMaker::ComputeQuota schema (the same properties go to CreateComputeQuota through the API custom
resource, whose request shape botocore's SageMaker model gives)."""

from __future__ import annotations

import botocore.session
import jsonschema
from support.paths import SUPPORT

from cdk_app.config.loader import load_config
from cdk_app.domain.resource_schemas import resource_schema
from cdk_app.stacks.team_stack import quota_parameters

ARN = "arn:aws:sagemaker:us-east-1:111122223333:cluster/abcdefghijkl"
BASE = (SUPPORT / "adversarial" / "base.yaml").read_text()
SMITH = "  - name: smith\n    quota:\n"
MIG = SMITH.replace("    quota:\n", "    absolute_borrow_limits:\n      - instance_type: ml.g5.12xlarge\n        accelerators: 8\n"
                    "      - instance_type: ml.p5.48xlarge\n        accelerator_partition: {type: mig-1g.10gb, count: 7}\n"
                    "    quota:\n      - instance_type: ml.p5.48xlarge\n"
                    "        accelerator_partition: {type: mig-1g.10gb, count: 14}\n")


def _smith(tmp_path):
    path = tmp_path / "env.yaml"
    path.write_text(BASE.replace(SMITH, MIG))
    config = load_config(path).config
    return config, next(t for t in config.teams if t.name == "smith")


def test_partitions_and_absolute_limits_are_written_as_the_schema_takes_them(tmp_path):
    config, smith = _smith(tmp_path)
    props = quota_parameters(config, ARN, smith, smith.quota)
    sharing = props["ComputeQuotaConfig"]["ResourceSharingConfig"]
    assert props["ComputeQuotaConfig"]["ComputeQuotaResources"][0] == {
        "InstanceType": "ml.p5.48xlarge", "AcceleratorPartition": {"Type": "mig-1g.10gb", "Count": 14}}
    assert sharing["AbsoluteBorrowLimits"] == [
        {"InstanceType": "ml.g5.12xlarge", "Accelerators": 8},
        {"InstanceType": "ml.p5.48xlarge", "AcceleratorPartition": {"Type": "mig-1g.10gb", "Count": 7}}]
    schema = resource_schema("AWS::SageMaker::ComputeQuota")
    validator = jsonschema.Draft7Validator({**schema, "required": [], "additionalProperties": False})
    assert [e.message for e in validator.iter_errors(props)] == []


def test_the_api_request_shape_takes_them_too(tmp_path):
    config, smith = _smith(tmp_path)
    props = quota_parameters(config, ARN, smith, smith.quota)
    model = botocore.session.get_session().get_service_model("sagemaker")
    request = model.operation_model("CreateComputeQuota").input_shape
    sharing = request.members["ComputeQuotaConfig"].members["ResourceSharingConfig"]
    entry = sharing.members["AbsoluteBorrowLimits"].member
    assert set(props["ComputeQuotaConfig"]["ResourceSharingConfig"]) <= set(sharing.members)
    for item in props["ComputeQuotaConfig"]["ResourceSharingConfig"]["AbsoluteBorrowLimits"]:
        assert set(item) <= set(entry.members)
        if "AcceleratorPartition" in item:
            assert set(item["AcceleratorPartition"]) == set(entry.members["AcceleratorPartition"].members)


def test_a_team_that_does_not_borrow_writes_no_limits(tmp_path):
    config, smith = _smith(tmp_path)
    lend = smith.model_copy(update={"sharing_strategy": "Lend"})  # the validator's HPK431 refuses it anyway
    sharing = quota_parameters(config, ARN, lend, lend.quota)["ComputeQuotaConfig"]["ResourceSharingConfig"]
    assert sharing == {"Strategy": "Lend"}
