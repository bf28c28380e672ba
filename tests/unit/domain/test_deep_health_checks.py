"""Which deep health checks a group may run and runs by default, against sources the kit did not write: botocore's
SageMaker model (the check names), the HyperPod deep health check docs (quoted in the domain's docstring) and the
EFA device plugin chart's instance list (cdk_app/domain/efa_support.py, kept equal to the chart elsewhere)."""

from __future__ import annotations

import botocore.session
import pytest

from cdk_app.config.model import InstanceGroup
from cdk_app.domain import deep_health_checks as dhc
from cdk_app.domain.deep_health_checks import (
    allowed_deep_health_checks,
    connectivity_problem,
    default_deep_health_checks,
    group_deep_health_checks,
)
from cdk_app.domain.efa_support import EFA_INSTANCE_TYPES
from cdk_app.domain.instance_types import CATALOGUE

BOTH = ("InstanceStress", "InstanceConnectivity")
STRESS = ("InstanceStress",)
DOCS = ('InstanceConnectivity "requires at least 2 nodes and is only supported on instances with multi-node GPU '
        'communication capabilities"')


def test_check_names_are_the_apis():
    enum = botocore.session.get_session().get_service_model("sagemaker").shape_for("DeepHealthCheckType").enum
    assert set(BOTH) <= set(enum)
    assert (dhc.INSTANCE_STRESS, dhc.INSTANCE_CONNECTIVITY) == BOTH


def test_the_rule_quotes_the_docs():
    assert DOCS in " ".join(connectivity_problem.__doc__.split())


@pytest.mark.parametrize("instance_type, count, allowed, default", [
    ("ml.g5.12xlarge", 4, BOTH, BOTH),        # GPU with EFA, several nodes
    ("ml.g5.12xlarge", 2, BOTH, BOTH),
    ("ml.g5.12xlarge", 1, STRESS, STRESS),    # one node: nothing to connect to
    ("ml.g5.12xlarge", 0, BOTH, STRESS),      # scale-to-zero: allowed, not a default
    ("ml.g5.xlarge", 4, STRESS, STRESS),      # GPU without EFA
    ("ml.p5.48xlarge", 6, BOTH, BOTH),
    ("ml.p5.4xlarge", 2, STRESS, STRESS),     # one H100, no EFA
    ("ml.trn1.32xlarge", 2, BOTH, BOTH),      # Trainium with EFA
    ("ml.m5.2xlarge", 4, (), ()),             # CPU
    ("ml.c5n.18xlarge", 4, (), ()),           # CPU with EFA: still no deep health checks
    ("ml.zz.large", 4, (), ()),               # unknown (HPK201 reports it)
])
def test_allowed_and_default(instance_type, count, allowed, default):
    assert allowed_deep_health_checks(instance_type, count) == allowed
    assert default_deep_health_checks(instance_type, count) == default


@pytest.mark.parametrize("count", [0, 1, 2, 5])
def test_every_catalogue_type_follows_accelerators_and_efa(count):
    for name, spec in CATALOGUE.items():
        efa = name.removeprefix("ml.") in EFA_INSTANCE_TYPES
        expected = (() if not spec.has_accelerators else BOTH if efa and count != 1 else STRESS)
        assert allowed_deep_health_checks(name, count) == expected, name
        assert set(default_deep_health_checks(name, count)) <= set(expected), name


def test_problem_names_the_reason():
    assert connectivity_problem("ml.g5.xlarge", 4) == "ml.g5.xlarge has no EFA interfaces"
    assert connectivity_problem("ml.p5.48xlarge", 1) == "the group has 1 node"
    assert connectivity_problem("ml.p5.48xlarge", 0) is None


@pytest.mark.parametrize("given, expected", [(None, BOTH), ((), ()), (("InstanceStress",), STRESS)])
def test_a_groups_own_list_wins_over_the_default(given, expected):
    group = InstanceGroup(name="gpu", instance_type="ml.g5.12xlarge", count=4, deep_health_checks=given)
    assert group_deep_health_checks(group) == expected
