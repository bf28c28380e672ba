"""Native or API type per governance resource: stacks use only the recorded choice; the derived one (what the
validator names in HPK312) is read from cfn-lint's provider data for the region."""

from __future__ import annotations

import pytest
from support.paths import SUPPORT
from support.rule_runner import GOVERNANCE, MIXED, offered_in

from cdk_app.config.loader import load_config
from cdk_app.domain.governance_types import derived_type, estimated_native, uses_native

BASE = (SUPPORT / "adversarial" / "base.yaml").read_text()
RECORDED = "  cloudformation_types: {cluster_policy: native, compute_quota: native}\n"


def config_in(write_config, region: str, types: str):
    assert RECORDED in BASE
    return load_config(write_config(BASE.replace(RECORDED, types).replace("region: us-east-1", f"region: {region}"))).config


@pytest.mark.parametrize("region", MIXED)
def test_derived_type_is_native_exactly_where_the_region_data_lists_the_type(write_config, region):
    config = config_in(write_config, region, "")
    for key, cfn_type in GOVERNANCE.items():
        assert derived_type(config, key) == ("native" if cfn_type in offered_in(region) else "api")
        assert estimated_native(config, key) is (cfn_type in offered_in(region))


@pytest.mark.parametrize("region", MIXED)
def test_stacks_take_the_recorded_type_whatever_the_region_data_says(write_config, region):
    config = config_in(write_config, region, "  cloudformation_types: {cluster_policy: api, compute_quota: native}\n")
    assert (uses_native(config, "cluster_policy"), uses_native(config, "compute_quota")) == (False, True)
    assert (estimated_native(config, "cluster_policy"), estimated_native(config, "compute_quota")) == (False, True)


def test_an_unrecorded_type_is_never_derived_for_a_stack(write_config):
    config = config_in(write_config, "us-east-1", "  cloudformation_types: {cluster_policy: native}\n")
    assert uses_native(config, "cluster_policy")
    with pytest.raises(ValueError, match=r"compute_quota is not recorded \(HPK312\)"):
        uses_native(config, "compute_quota")
