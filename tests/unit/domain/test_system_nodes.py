"""The system group's placement: which taints keep teams off, and the selector and tolerations the chart's
controllers get (Kubernetes matches a toleration without a value by operator Exists)."""

from __future__ import annotations

from support.paths import ROOT

from cdk_app.config.loader import load_config
from cdk_app.config.model import Taint
from cdk_app.domain.system_nodes import controller_placement, team_proof_taints, toleration_of

PROD = load_config(ROOT / "config" / "prod.yaml").config


def test_prods_controllers_select_the_system_groups_labels_and_tolerate_its_taint():
    assert controller_placement(PROD) == ({"node-role": "system"}, (
        {"key": "CriticalAddonsOnly", "operator": "Equal", "value": "true", "effect": "NoSchedule"},))


def test_without_a_system_group_the_controllers_run_anywhere():
    anywhere = PROD.model_copy(update={"hyperpod": PROD.hyperpod.model_copy(update={"system_instance_group": None})})
    assert controller_placement(anywhere) == ({}, ())


def test_a_taint_without_a_value_is_tolerated_by_its_key_and_effect():
    assert toleration_of(Taint(key="dedicated", effect="NoExecute")) == {
        "key": "dedicated", "operator": "Exists", "effect": "NoExecute"}


def test_only_hard_taints_no_team_may_tolerate_keep_teams_off():
    group = PROD.hyperpod.instance_groups[0].model_copy(update={"taints": (
        Taint(key="soft", effect="PreferNoSchedule"), Taint(key="shared", effect="NoSchedule", teams=("inference",)),
        Taint(key="nvidia.com/gpu", effect="NoSchedule"), Taint(key="system", effect="NoExecute"))})
    assert [t.key for t in team_proof_taints(group)] == ["system"]
