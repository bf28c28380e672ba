"""Which administrators' taints each team may not tolerate (the corpus runs the policy: admission_cases.py section 7)."""

from __future__ import annotations

from support.case_configs import TAINTED, case_config

from cdk_app.config.model import Taint
from cdk_app.kubernetes.guardrails import guardrail_manifests
from cdk_app.kubernetes.guardrails.tolerations import guarded_taints, tolerations_policies


def test_a_config_without_administrators_taints_gets_no_extra_policy():
    prod = case_config("prod")
    untainted = prod.model_copy(update={"hyperpod": prod.hyperpod.model_copy(update={"instance_groups": tuple(
        g.model_copy(update={"taints": ()}) for g in prod.hyperpod.instance_groups)})})
    for config in (case_config("dev"), untainted):
        names = [m["metadata"]["name"] for m in guardrail_manifests(config)]
        assert "hyperpod-kit-tolerations" not in names
    assert "hyperpod-kit-tolerations" in [m["metadata"]["name"] for m in guardrail_manifests(prod)]


def test_each_team_keeps_off_the_taints_that_do_not_list_it_and_device_taints_are_left_out():
    guarded = guarded_taints(case_config(TAINTED))
    system = {"key": "node-role", "value": "system", "effect": "NoSchedule",
              "text": "node-role=system:NoSchedule (instance group system)"}
    dedicated = {"key": "example.com/dedicated", "value": "research-nlp", "effect": "NoSchedule",
                 "text": "example.com/dedicated=research-nlp:NoSchedule (instance group h100-a)"}
    assert guarded["research-nlp"] == [system]
    assert guarded["inference"] == [dedicated, system]
    assert guarded["shared"] == [dedicated, system]
    manifests = guardrail_manifests(case_config(TAINTED))
    [binding] = [m for m in manifests if m["kind"] == "ValidatingAdmissionPolicyBinding"
                 and m["spec"]["policyName"] == "hyperpod-kit-tolerations"]
    assert binding["spec"]["validationActions"] == ["Deny", "Audit"]


def test_a_taint_on_several_groups_is_tolerated_only_by_teams_every_group_allows():
    config = case_config(TAINTED)
    shared = Taint(key="example.com/pool", value="a", effect="NoSchedule", teams=("research-nlp", "inference"))
    narrower = shared.model_copy(update={"teams": ("research-nlp",)})
    groups = tuple(g.model_copy(update={"taints": (shared if g.name == "h100-a" else narrower,)})
                   for g in config.hyperpod.instance_groups)
    config = config.model_copy(update={"hyperpod": config.hyperpod.model_copy(update={"instance_groups": groups})})
    guarded = guarded_taints(config)
    assert guarded["research-nlp"] == []
    assert [t["text"] for t in guarded["inference"]] == [
        "example.com/pool=a:NoSchedule (instance group h100-a, h100-b, cpu, system)"]
    assert len(tolerations_policies(config)) == 1
