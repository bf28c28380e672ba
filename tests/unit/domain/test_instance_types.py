"""The instance catalogue covers exactly the types HyperPod accepts, with sane figures."""

import json
from pathlib import Path

import cfnlint

from cdk_app.domain.instance_types import (
    CATALOGUE,
    ONE_THREAD_PER_CORE_FAMILIES,
    UNKNOWN_THREADS_FAMILIES,
    family,
    node_vcpu,
)

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


# EC2 User Guide, "CPU options for Amazon EC2 instances": "an m5.xlarge instance type has two CPU cores and two
# threads per core by default - four vCPUs in total"; "Rules for specifying CPU options": "The number of vCPUs for
# the instance is the number of CPU cores multiplied by the threads per core".
def test_one_thread_per_core_leaves_an_m5_xlarge_its_two_cores():
    assert CATALOGUE["ml.m5.xlarge"].vcpu == 4
    assert (node_vcpu("ml.m5.xlarge", 1), node_vcpu("ml.m5.xlarge", 2)) == (2, 4)


def test_every_two_thread_type_has_whole_cores_and_one_thread_per_core_halves_it():
    two_threads = [n for n in CATALOGUE if family(n) not in ONE_THREAD_PER_CORE_FAMILIES | UNKNOWN_THREADS_FAMILIES]
    assert "ml.p5.48xlarge" in two_threads and "ml.g5.12xlarge" in two_threads
    for name in two_threads:
        assert CATALOGUE[name].vcpu % 2 == 0, f"{name}: vCPU = cores x 2 threads is even"
        assert node_vcpu(name, 1) * 2 == node_vcpu(name, 2) == CATALOGUE[name].vcpu, name


def test_arm_types_keep_every_vcpu_with_one_thread_per_core():
    # "Each vCPU is a thread of a CPU core, except for ... 64-bit ARM platforms such as instances powered by AWS
    # Graviton processors": Graviton families and the Grace CPUs of p6e-gb200.
    arm = [n for n in CATALOGUE if family(n) in ONE_THREAD_PER_CORE_FAMILIES]
    assert {family(n) for n in arm} == {"c6g", "c7g", "c8g", "m6g", "m7g", "m8g", "p6e-gb200"}
    assert all(node_vcpu(n, 1) == CATALOGUE[n].vcpu for n in arm)


def test_types_of_unknown_threads_are_never_halved():
    assert all(node_vcpu(n, 1) == CATALOGUE[n].vcpu for n in CATALOGUE if family(n) in UNKNOWN_THREADS_FAMILIES)
    assert {family(n) for n in CATALOGUE if family(n) in UNKNOWN_THREADS_FAMILIES} == {"c8a", "m8a"}
