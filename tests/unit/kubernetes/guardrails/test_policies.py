"""Admission guardrail objects: valid against the Kubernetes schemas of the cluster's version, named for
the installer's allow-list, bound to every team namespace and the shared pool's and nothing else, and
applied by the governance stack before any team is granted anything."""

from __future__ import annotations

import copy
import json
import subprocess
import tarfile
from pathlib import Path

import kubernetes_validate
import pytest
import yaml
from support.app_synth import governance_template
from support.handlers import layer_binary
from support.paths import ROOT, SUPPORT

from cdk_app.config.loader import load_config
from cdk_app.kubernetes.guardrails import guardrail_manifests
from cdk_app.kubernetes.guardrails.constants import (
    ALLOWED_VOLUME_TYPES,
    BASELINE_CAPABILITIES,
    EXTRA_CAPABILITIES,
    HELM_RELEASE_NAMESPACE,
    NAME_PREFIX,
    OPERATOR_INIT_IMAGES,
    REFUSED_VOLUME_TYPES,
)
from cdk_app.kubernetes.guardrails.kinds import WORKLOAD_KINDS
from cdk_app.kubernetes.guardrails.workload_queue import controller_identities
from hyperpod_constructs.hyperpod_helm_release import HyperPodHelmReleaseProps, component_values
from hyperpod_constructs.private.kubectl_layers import layer_minor

CONFIGS = {env: load_config(ROOT / "config" / f"{env}.yaml").config for env in ("dev", "prod")}


@pytest.mark.parametrize("env", CONFIGS)
def test_every_object_is_valid_for_the_cluster_version(env):
    config = CONFIGS[env]
    manifests = guardrail_manifests(config)
    kinds = [m["kind"] for m in manifests]
    # pods, queued workloads, dependents, Services, NetworkPolicies: one policy each, each with its binding; and tolerations
    # where the config has administrators' taints (prod's system group)
    expected = {"dev": 5, "prod": 6}[env]
    assert kinds.count("ValidatingAdmissionPolicy") == kinds.count("ValidatingAdmissionPolicyBinding") == expected
    for manifest in manifests:
        kubernetes_validate.validate(copy.deepcopy(manifest), config.eks.kubernetes_version, strict=True)


@pytest.mark.parametrize(("path", "value"), [
    (("spec", "validationActions"), "Deny"),  # must be a list
    (("spec", "matchResources", "namespaceSelectr"), {}),  # unknown field
])
def test_a_broken_binding_is_caught_by_the_schema_check(path, value):
    binding = copy.deepcopy(guardrail_manifests(CONFIGS["dev"])[-1])
    target = binding
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(binding, "1.33", strict=True)


def test_a_broken_policy_is_caught_by_the_schema_check():
    policy = copy.deepcopy(guardrail_manifests(CONFIGS["dev"])[0])
    policy["spec"]["validations"][0].pop("expression")  # required
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(policy, "1.33", strict=True)


@pytest.mark.parametrize("env", CONFIGS)
def test_bindings_select_exactly_the_team_namespaces_by_their_name_label(env):
    config = CONFIGS[env]
    expected = {f"hyperpod-ns-{t.name}" for t in config.teams}
    if config.shared_pool is not None:
        expected.add(f"hyperpod-ns-{config.shared_pool.name}")
    manifests = guardrail_manifests(config)
    policies = {m["metadata"]["name"] for m in manifests if m["kind"] == "ValidatingAdmissionPolicy"}
    bindings = [m for m in manifests if m["kind"] == "ValidatingAdmissionPolicyBinding"]
    assert {b["spec"]["policyName"] for b in bindings} == policies
    for binding in bindings:
        (selector,) = binding["spec"]["matchResources"]["namespaceSelector"]["matchExpressions"]
        assert selector == {"key": "kubernetes.io/metadata.name", "operator": "In", "values": sorted(expected)}
        assert "Deny" in binding["spec"]["validationActions"]
    assert all(m["metadata"]["name"].startswith(NAME_PREFIX) for m in manifests)
    assert all(m["apiVersion"] == "admissionregistration.k8s.io/v1" for m in manifests)


def test_policies_match_every_workload_kind_and_fail_closed():
    pod_security, queue = guardrail_manifests(CONFIGS["prod"])[:2]
    matched = {(g, r) for rule in pod_security["spec"]["matchConstraints"]["resourceRules"]
               for g in rule["apiGroups"] for r in rule["resources"]}
    assert matched == {(k.group, k.resource) for k in WORKLOAD_KINDS} | {("", "pods/ephemeralcontainers")}
    queued = {(g, r) for rule in queue["spec"]["matchConstraints"]["resourceRules"]
              for g in rule["apiGroups"] for r in rule["resources"]}
    assert queued == {("batch", "jobs"), ("kubeflow.org", "pytorchjobs"), ("kubeflow.org", "mpijobs")}
    assert pod_security["spec"]["failurePolicy"] == queue["spec"]["failurePolicy"] == "Fail"


def test_capability_allow_list_is_the_baseline_set_plus_what_a_team_is_given():
    assert set(BASELINE_CAPABILITIES) == {"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
                                          "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"}
    assert not set(EXTRA_CAPABILITIES) & set(BASELINE_CAPABILITIES)
    variables = {v["name"]: v["expression"] for v in guardrail_manifests(CONFIGS["prod"])[0]["spec"]["variables"]}
    assert '"hyperpod-ns-research-nlp": ["IPC_LOCK"]' in variables["capabilities"]
    assert '"hyperpod-ns-inference": []' in variables["capabilities"]


@pytest.fixture(scope="module")
def governance() -> dict[str, dict]:
    return {env: governance_template(config).to_json() for env, config in CONFIGS.items()}


@pytest.mark.synth
@pytest.mark.parametrize("env", CONFIGS)
def test_guardrails_apply_before_any_team_is_granted_anything(governance, env):
    resources = governance[env]["Resources"]
    (guardrails,) = [k for k, r in resources.items()
                     if r["Type"] == "Custom::KubernetesManifests" and r["Properties"]["Name"] == "guardrails"]
    rbac = [r for r in resources.values()
            if r["Type"] == "Custom::KubernetesManifests" and r["Properties"]["Name"].startswith("team-")]
    access = [r for r in resources.values() if r["Type"] == "AWS::EKS::AccessEntry"]
    assert len(rbac) == len(CONFIGS[env].teams) and access
    for resource in rbac + access:
        assert guardrails in resource.get("DependsOn", []), resource


@pytest.mark.synth
def test_a_config_without_team_namespaces_has_no_guardrails():
    bare = CONFIGS["dev"].model_copy(update={"teams": (), "shared_pool": None})
    assert guardrail_manifests(bare) == []
    governance_template(bare).resource_count_is("Custom::KubernetesManifests", 0)


def _volume_schema(version: str) -> set[str]:
    schemas = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
    return set(json.loads((schemas / f"v{version}.0-local-strict" / "volume-v1.json").read_text())["properties"])


VERSIONS = [f"1.{minor}" for minor in range(30, 38)]  # 1.30 (the config's minimum) to kubernetes-validate's newest


def test_the_volume_allow_list_and_the_refused_types_are_the_whole_volume_schema():
    """Kubernetes' typed CEL cannot list a Volume's fields, so the policy refuses each other type by name:
    a type a new Kubernetes version adds must be sorted into one of the two lists (this test fails then)."""
    listed = {"name", *ALLOWED_VOLUME_TYPES, *REFUSED_VOLUME_TYPES}
    assert not set(ALLOWED_VOLUME_TYPES) & set(REFUSED_VOLUME_TYPES)
    schemas = {version: _volume_schema(version) for version in VERSIONS}
    for version, fields in schemas.items():
        assert fields <= listed, (version, fields - listed)
    assert set().union(*schemas.values()) == listed


MPI_SUBCHART = "HyperPodHelmChart/charts/mpi-operator"


@pytest.fixture(scope="module")
def mpi_chart(tmp_path_factory) -> tuple[Path, Path]:
    """The pinned HyperPod chart's mpi-operator subchart and the helm of the layer the installer ships."""
    target = tmp_path_factory.mktemp("chart")
    with tarfile.open(SUPPORT / "data" / "hyperpod-chart" / "HyperPodHelmChart-a00b22d.tar.gz") as tar:
        tar.extractall(target, members=[m for m in tar.getmembers() if m.name.startswith("HyperPodHelmChart/")],
                       filter="data")
    helm = layer_binary("helm/helm", target / "layer", layer_minor(CONFIGS["prod"].eks.kubernetes_version))
    return target, helm


@pytest.mark.parametrize("release", ["hyperpod-dependencies", "a" * 50, "b" * 51, "c" * 53, "team-mpi-operator-deps",
                                     "x" + "-y" * 26])
@pytest.mark.slow
def test_the_mpi_operator_exemption_is_the_service_account_helm_renders(mpi_chart, release):
    """The chart's own helper names the account (trunc 63, trimSuffix, the release name when it holds the
    chart's), rendered by the real helm with the values the kit passes; the 51-53 character release names
    the config allows are cut."""
    target, helm = mpi_chart
    config = CONFIGS["prod"]
    chart = config.hyperpod.helm_chart.model_copy(update={"release_name": release})
    config = config.model_copy(update={"hyperpod": config.hyperpod.model_copy(update={"helm_chart": chart})})
    parent_values = yaml.safe_load((target / "HyperPodHelmChart" / "values.yaml").read_text())
    values = {**parent_values["mpi-operator"], **component_values(chart.components.model_dump()).get("mpi-operator", {})}
    values_file = target / f"{release}.yaml"
    values_file.write_text(json.dumps(values))
    rendered = subprocess.run([str(helm), "template", release, str(target / MPI_SUBCHART), "--namespace",
                               HyperPodHelmReleaseProps.__dataclass_fields__["namespace"].default,
                               "--values", str(values_file), "--show-only", "templates/rbac.yaml"],
                              capture_output=True, text=True, check=True, env={"HOME": str(target)}).stdout
    accounts = [o for o in yaml.safe_load_all(rendered) if o and o["kind"] == "ServiceAccount"]
    (account,) = accounts
    assert controller_identities(config) == [f"system:serviceaccount:{HELM_RELEASE_NAMESPACE}:{account['metadata']['name']}"]
    assert HELM_RELEASE_NAMESPACE == HyperPodHelmReleaseProps.__dataclass_fields__["namespace"].default


def test_the_init_container_exemption_is_the_training_operator_the_chart_runs(mpi_chart):
    """gpu-visibility exempts OPERATOR_INIT_IMAGES: the image kubeflow/training-operator v1-855e096 gives the
    init container it adds to PyTorchJob Workers when nothing overrides it (its default, pkg/config:
    PyTorchInitContainerImageDefault "alpine:3.10"; flag --pytorch-init-container-image, env
    PYTORCH_INIT_CONTAINER_IMAGE, template file /etc/config/initContainer.yaml). The real helm renders the
    pinned chart's training operator: that version, and none of the overrides."""
    target, helm = mpi_chart
    rendered = subprocess.run([str(helm), "template", "hyperpod-dependencies",
                               str(target / "HyperPodHelmChart" / "charts" / "training-operators")],
                              capture_output=True, text=True, check=True, env={"HOME": str(target)}).stdout
    (deployment,) = [o for o in yaml.safe_load_all(rendered) if o and o["kind"] == "Deployment"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "kubeflow/training-operator:v1-855e096"
    arguments = [*container.get("command", []), *container.get("args", [])]
    assert not [a for a in arguments if a.startswith("--pytorch-init-container")]
    assert "PYTORCH_INIT_CONTAINER_IMAGE" not in {e["name"] for e in container.get("env", [])}
    assert not deployment["spec"]["template"]["spec"].get("volumes")  # no /etc/config/initContainer.yaml
    assert OPERATOR_INIT_IMAGES == ("alpine:3.10",)


@pytest.mark.parametrize("isolation", [True, False])
def test_gpu_visibility_is_a_rule_only_where_the_nodes_do_not_isolate_gpus(isolation):
    """With node-level isolation the toolkit ignores NVIDIA_VISIBLE_DEVICES in unprivileged containers, so no
    manifest needs to hide the image's GPUs. Nothing is asked of a container with GPUs either way."""
    config = CONFIGS["dev"].model_copy(deep=True)
    object.__setattr__(config.hyperpod.lifecycle, "gpu_device_isolation", isolation)
    policy = next(m for m in guardrail_manifests(config) if m["metadata"]["name"] == f"{NAME_PREFIX}pod-security")
    messages = " ".join(v["message"] for v in policy["spec"]["validations"])
    assert ("hyperpod-kit guardrail gpu-visibility:" in messages) is not isolation
    assert "gpu-features" not in messages


@pytest.mark.parametrize("granted", [True, False])
def test_sys_nice_is_a_team_grant_for_numa_binding(granted):
    """The runtime's default seccomp profile allows mbind/set_mempolicy only with CAP_SYS_NICE: a team the
    administrators grant it (teams[].allowed_capabilities) may add it; any other team may not."""
    from support.admission_cases import NLP, container, pod_spec, request_for, sc, workload
    from support.cel_admission import admit

    config = CONFIGS["prod"].model_copy(deep=True)
    team = next(t for t in config.teams if f"hyperpod-ns-{t.name}" == NLP)
    object.__setattr__(team, "allowed_capabilities", (*team.allowed_capabilities, "SYS_NICE") if granted else ("IPC_LOCK",))
    job = workload("Job", NLP, pod_spec(container(**sc(capabilities={"add": ["SYS_NICE"]}))))
    verdict = admit(guardrail_manifests(config), request_for(job), job, None)
    assert verdict.allowed is granted, verdict
