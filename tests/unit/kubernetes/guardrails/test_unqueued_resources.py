"""Per-team caps on unqueued pods' CPU and memory: the config's values reach the policy of each team's namespace,
and the in-process admission (the real API server agrees on the matrix's cases: tests/realk8s/
test_guardrail_verdicts.py) refuses above them and admits up to them."""

from __future__ import annotations

from support.admission_cases import container, pod_spec, request_for, workload
from support.case_configs import case_config
from support.cel_admission import admit

from cdk_app.config.model import UnqueuedPodResources
from cdk_app.kubernetes.guardrails import guardrail_manifests
from cdk_app.kubernetes.guardrails.unqueued_resources import caps_variable

NLP, INF = "hyperpod-ns-research-nlp", "hyperpod-ns-inference"


def _config(**caps: str):
    prod = case_config("prod")
    teams = tuple(t.model_copy(update={"unqueued_pods": UnqueuedPodResources(**caps)}) if t.name == "research-nlp" else t
                  for t in prod.teams)
    return prod.model_copy(update={"teams": teams})


def _rules(config, namespace: str, resources: dict) -> set[str]:
    obj = workload("Deployment", namespace, pod_spec(container("etcd", resources=resources)), metadata_labels={})
    return admit(guardrail_manifests(config), request_for(obj), obj, None).rules


def test_each_team_namespace_gets_its_own_caps_and_the_others_the_defaults():
    variable = caps_variable(_config(container_cpu="4", pod_cpu="6", pod_memory="16Gi"))["expression"]
    assert ('"hyperpod-ns-research-nlp": {"cpu": "4", "memory": "8Gi", "ephemeralStorage": "20Gi", "podCpu": "6", '
            '"podMemory": "16Gi", "podEphemeralStorage": "20Gi"}') in variable
    assert ('"hyperpod-ns-inference": {"cpu": "2", "memory": "8Gi", "ephemeralStorage": "20Gi", "podCpu": "2", '
            '"podMemory": "8Gi", "podEphemeralStorage": "20Gi"}') in variable
    assert variable.endswith("[request.namespace]")


def test_a_team_with_larger_caps_may_ask_for_more_and_another_team_may_not():
    config = _config(container_cpu="4", pod_cpu="6")
    assert _rules(config, NLP, {"requests": {"cpu": "4"}}) == set()
    assert _rules(config, INF, {"requests": {"cpu": "4"}}) == {"unqueued-resources", "unqueued-pod-resources"}
    assert _rules(config, NLP, {"requests": {"cpu": "4001m"}}) == {"unqueued-resources"}


def test_a_cap_of_zero_refuses_any_request_of_that_resource_and_allows_none():
    config = _config(container_memory="0", pod_memory="0")
    assert _rules(config, NLP, {"requests": {"memory": "1"}}) == {"unqueued-resources", "unqueued-pod-resources"}
    assert _rules(config, NLP, {"requests": {"cpu": "1"}}) == set()


def test_a_team_with_a_larger_disk_cap_may_ask_for_more_local_disk():
    config = _config(container_ephemeral_storage="100Gi", pod_ephemeral_storage="100Gi")
    assert _rules(config, NLP, {"requests": {"ephemeral-storage": "100Gi"}}) == set()
    assert _rules(config, INF, {"requests": {"ephemeral-storage": "100Gi"}}) == {"unqueued-resources", "unqueued-pod-resources"}


def test_queued_kinds_are_not_capped():
    config = _config(container_cpu="1", pod_cpu="1")
    job = workload("Job", NLP, pod_spec(container(resources={"requests": {"cpu": "96", "memory": "1Ti"}})))
    assert admit(guardrail_manifests(config), request_for(job), job, None).allowed
