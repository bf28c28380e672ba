"""The instance catalogue covers exactly the types HyperPod accepts, with sane figures."""

import json
from pathlib import Path

import cfnlint

from cdk_app.domain.instance_types import CATALOGUE

SCHEMAS = Path(cfnlint.__file__).parent / "data" / "schemas"


def _hyperpod_types() -> set[str]:
    providers = json.loads((SCHEMAS / "providers" / "us-east-1.json").read_text())
    schema = json.loads((SCHEMAS / "resources" / f"{providers['AWS::SageMaker::ComputeQuota']}.json").read_text())
    prop = schema["definitions"]["ComputeQuotaResourceConfig"]["properties"]["InstanceType"]
    return set(prop["enum"])


def test_catalogue_covers_every_hyperpod_instance_type():
    types = _hyperpod_types()
    assert len(types) > 150
    assert types - set(CATALOGUE) == set(), "add these types to cdk_app/domain/instance_types.py"
    assert set(CATALOGUE) - types == set(), "these are not HyperPod instance types"


def test_figures_are_consistent():
    for name, spec in CATALOGUE.items():
        assert spec.name == name
        assert spec.vcpu >= 1 and spec.memory_gib >= 2, name
        assert (spec.accelerators > 0) == (spec.accelerator_kind is not None), name
        family = name.split(".")[1]
        if family[0] in "pg" or family.startswith("trn"):
            assert spec.accelerators > 0, f"{name} should have accelerators"


def test_known_figures():
    assert (CATALOGUE["ml.g5.12xlarge"].vcpu, CATALOGUE["ml.g5.12xlarge"].memory_gib,
            CATALOGUE["ml.g5.12xlarge"].accelerators) == (48, 192.0, 4)
    assert (CATALOGUE["ml.p5.48xlarge"].accelerators, CATALOGUE["ml.p5.48xlarge"].memory_gib) == (8, 2048.0)
    assert CATALOGUE["ml.trn1.32xlarge"].accelerator_kind == "aws-trainium"
    assert (CATALOGUE["ml.c5.2xlarge"].vcpu, CATALOGUE["ml.c5.2xlarge"].memory_gib) == (8, 16.0)
    assert CATALOGUE["ml.t3.medium"].vcpu == 2
