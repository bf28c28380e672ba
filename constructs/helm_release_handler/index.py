"""Custom resource handler: install the HyperPod dependency Helm chart at a pinned revision, and apply
Kubernetes manifests (Kind "Manifests", e.g. team RBAC) - both need a cluster-admin kubeconfig.

Runs in Lambda (Python runtime, helm from the kubectl layer at /opt/helm/helm), inside the VPC so it
reaches a private EKS endpoint. Create and Update fetch the GitHub source archive of the pinned
commit, refuse it unless its SHA-256 (when pinned) and its commit id match, build the chart's
dependencies and run `helm upgrade --install`. Delete uninstalls the release. Manifests wait for the
namespaces they live in (the add-on creates team namespaces asynchronously). Any failure
raises HelmReleaseError with the tail of helm's output; the custom resource framework turns that into
the CloudFormation failure reason, so the deployment stops there.

Only the standard library and boto3 (both in the Lambda runtime) are used.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import re
import subprocess
import tarfile
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

HELM = os.environ.get("HELM_BINARY", "/opt/helm/helm")
KUBECTL = os.environ.get("KUBECTL_BINARY", "/opt/kubectl/kubectl")
ARCHIVE_URL = "https://codeload.github.com/{repository}/tar.gz/{revision}"
CHART_PATH = "helm_chart/HyperPodHelmChart"
MAX_ARCHIVE_BYTES = 512 * 1024 * 1024
# CloudFormation shows at most a few kilobytes of a failure reason; keep helm's last words.
OUTPUT_TAIL = 3000
# Lambda stops at 15 minutes; helm must give up (and report) before that.
HELM_TIMEOUT = "11m"
# The task-governance add-on creates hyperpod-ns-<team> a moment after CloudFormation has created the
# team's compute quota; manifests for that namespace wait this long for it before failing.
NAMESPACE_WAIT_SECONDS = 300
NAMESPACE_POLL_SECONDS = 5


class HelmReleaseError(Exception):
    """A failure the deployment must stop on; the message is what CloudFormation shows."""


def on_event(event: dict[str, Any], _context: Any = None) -> dict[str, Any]:
    props = event["ResourceProperties"]
    if props.get("Kind") == "Manifests":
        return on_manifests(event)
    physical_id = f"{props['ClusterName']}/{props['Namespace']}/{props['ReleaseName']}"
    with tempfile.TemporaryDirectory() as work:
        workdir = Path(work)
        kubeconfig = write_kubeconfig(workdir, props["ClusterName"], props["Region"])
        if event["RequestType"] == "Delete":
            uninstall(props, kubeconfig, workdir)
            return {"PhysicalResourceId": event.get("PhysicalResourceId", physical_id)}
        archive = download(ARCHIVE_URL.format(repository=props["Repository"], revision=props["Revision"]))
        digest = verify_archive(archive, props["Revision"], props.get("Sha256") or None)
        chart = extract_chart(archive, workdir / "src")
        install(props, chart, kubeconfig, workdir)
    return {"PhysicalResourceId": physical_id, "Data": {"ArchiveSha256": digest, "Revision": props["Revision"]}}


def on_manifests(event: dict[str, Any]) -> dict[str, Any]:
    """Apply the manifests (server-side), and delete those an update or a delete leaves out."""
    props = event["ResourceProperties"]
    physical_id = f"{props['ClusterName']}/manifests/{props['Name']}"
    current = json.loads(props["Manifests"])
    previous = json.loads(event.get("OldResourceProperties", {}).get("Manifests", "[]"))
    request = event["RequestType"]
    wanted = [] if request == "Delete" else current
    gone = removed(current if request == "Delete" else previous, wanted)
    with tempfile.TemporaryDirectory() as work:
        workdir = Path(work)
        kubeconfig = write_kubeconfig(workdir, props["ClusterName"], props["Region"])
        if wanted:
            wait_for_namespaces(wanted, kubeconfig, workdir)
            apply_manifests(wanted, kubeconfig, workdir)
        if gone:
            delete_manifests(gone, kubeconfig, workdir)
    return {"PhysicalResourceId": event.get("PhysicalResourceId", physical_id) if request == "Delete" else physical_id}


def _identity(manifest: dict[str, Any]) -> tuple[str, str, str, str]:
    meta = manifest.get("metadata", {})
    return manifest["apiVersion"], manifest["kind"], meta.get("namespace", ""), meta["name"]


def removed(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Objects in `before` that `after` no longer has (by apiVersion, kind, namespace and name)."""
    kept = {_identity(m) for m in after}
    return [m for m in before if _identity(m) not in kept]


def wait_for_namespaces(manifests: list[dict[str, Any]], kubeconfig: Path, workdir: Path,
                        timeout: float = NAMESPACE_WAIT_SECONDS, poll: float = NAMESPACE_POLL_SECONDS) -> None:
    """Wait until every namespace the manifests live in (and do not create themselves) exists."""
    created = {m["metadata"]["name"] for m in manifests if m["kind"] == "Namespace"}
    needed = sorted({m.get("metadata", {}).get("namespace") or "" for m in manifests} - created - {""})
    deadline = time.monotonic() + timeout
    env = _tool_env(workdir)
    for namespace in needed:
        # A raw GET needs no API discovery, and its NotFound is the only answer worth waiting on.
        args = ["get", "--raw", f"/api/v1/namespaces/{namespace}", "--kubeconfig", str(kubeconfig)]
        while True:
            try:
                run_tool(KUBECTL, args, env, f"kubectl get namespace {namespace}")
                break
            except HelmReleaseError as err:
                if "NotFound" not in str(err):
                    raise
                if time.monotonic() >= deadline:
                    raise HelmReleaseError(f"namespace {namespace} did not appear within {timeout:.0f} s; it is "
                                           "created by the task-governance add-on with the team's compute quota") from err
            time.sleep(poll)


def apply_manifests(manifests: list[dict[str, Any]], kubeconfig: Path, workdir: Path) -> None:
    path = workdir / "apply.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": manifests}))
    run_tool(KUBECTL, ["apply", "--server-side", "--field-manager=hyperpod-kit", "--force-conflicts",
                       "--kubeconfig", str(kubeconfig), "-f", str(path)], _tool_env(workdir), "kubectl apply")


def delete_manifests(manifests: list[dict[str, Any]], kubeconfig: Path, workdir: Path) -> None:
    path = workdir / "delete.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": manifests}))
    run_tool(KUBECTL, ["delete", "--ignore-not-found", "--kubeconfig", str(kubeconfig), "-f", str(path)],
             _tool_env(workdir), "kubectl delete")


def download(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=120) as response:  # noqa: S310 (fixed https URL)
            data = response.read(MAX_ARCHIVE_BYTES + 1)
    except OSError as err:
        raise HelmReleaseError(f"cannot download {url}: {err} (does the VPC have NAT egress to GitHub?)") from err
    if len(data) > MAX_ARCHIVE_BYTES:
        raise HelmReleaseError(f"{url} is larger than {MAX_ARCHIVE_BYTES} bytes")
    return data


def verify_archive(archive: bytes, revision: str, sha256: str | None) -> str:
    """Return the archive's SHA-256 after checking it against the pin and the commit id it carries."""
    digest = hashlib.sha256(archive).hexdigest()
    if sha256 is not None and digest != sha256:
        raise HelmReleaseError(f"chart archive of revision {revision} has SHA-256 {digest}, "
                               f"but the config pins {sha256}; refusing to install it")
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        # git archive records the commit id as the pax comment; a different one means a different tree.
        commit = tar.pax_headers.get("comment")
    if commit is not None and commit != revision:
        raise HelmReleaseError(f"chart archive is of commit {commit}, not the pinned revision {revision}")
    return digest


def extract_chart(archive: bytes, target: Path) -> Path:
    """Extract only the chart folder, refusing links and paths that leave the target."""
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        members = [m for m in tar.getmembers() if _chart_relative(m.name) is not None]
        if not members:
            raise HelmReleaseError(f"the archive has no {CHART_PATH} folder")
        try:
            tar.extractall(target, members=members, filter="data")
        except tarfile.TarError as err:
            raise HelmReleaseError(f"refusing to extract the chart archive: {err}") from err
    top = members[0].name.split("/", 1)[0]
    chart = target / top / CHART_PATH
    if not (chart / "Chart.yaml").is_file():
        raise HelmReleaseError(f"{CHART_PATH}/Chart.yaml is missing from the archive")
    return chart


def _chart_relative(name: str) -> str | None:
    parts = name.split("/", 1)
    if len(parts) == 2 and (parts[1] == CHART_PATH or parts[1].startswith(CHART_PATH + "/")):
        return parts[1]
    return None


def regional_values(chart: Path, region: str) -> list[Path]:
    """Values files the chart ships for `region`: the chart's own, then each subchart's nested
    under the subchart's name so that helm applies it to that subchart."""
    found: list[Path] = []
    own = chart / "regional-values" / f"values-{region}.yaml"
    if own.is_file():
        found.append(own)
    for sub in sorted((chart / "charts").glob(f"*/regional-values/values-{region}.yaml")):
        sub_chart = sub.parent.parent
        name = _chart_name(sub_chart / "Chart.yaml") or sub_chart.name
        nested = sub.with_name(f"nested-{name}-values-{region}.yaml")
        body = "".join(f"  {line}" if line.strip() else line
                       for line in sub.read_text().splitlines(keepends=True) if line.strip() != "---")
        nested.write_text(f"{name}:\n{body}")
        found.append(nested)
    return found


def _chart_name(chart_yaml: Path) -> str | None:
    if not chart_yaml.is_file():
        return None
    match = re.search(r"^name:\s*['\"]?([A-Za-z0-9._-]+)", chart_yaml.read_text(), re.MULTILINE)
    return match.group(1) if match else None


def kit_values(props: dict[str, Any]) -> dict[str, Any]:
    """The values the kit sets: the region for the agents, and the component toggles as given."""
    values: dict[str, Any] = json.loads(props.get("Values") or "{}")
    region = props["Region"]
    values.setdefault("global", {})["region"] = region
    values.setdefault("health-monitoring-agent", {})["region"] = region
    return values


def install(props: dict[str, Any], chart: Path, kubeconfig: Path, workdir: Path) -> None:
    # The chart goes in before HyperPod creates any node, so its workloads cannot become ready yet:
    # wait for hooks only (helm's default, stated so that nobody "fixes" it into a timeout).
    env = _tool_env(workdir)
    run_helm(["dependency", "build", str(chart)], env, "helm dependency build")
    ours = workdir / "kit-values.json"
    ours.write_text(json.dumps(kit_values(props)))
    files = [*regional_values(chart, props["Region"]), ours]
    args = ["upgrade", "--install", props["ReleaseName"], str(chart), "--namespace", props["Namespace"],
            "--kubeconfig", str(kubeconfig), "--wait=hookOnly", "--timeout", HELM_TIMEOUT, "--history-max", "10"]
    for path in files:
        args += ["--values", str(path)]
    run_helm(args, env, "helm upgrade --install")


def uninstall(props: dict[str, Any], kubeconfig: Path, workdir: Path) -> None:
    args = ["uninstall", props["ReleaseName"], "--namespace", props["Namespace"], "--kubeconfig", str(kubeconfig),
            "--wait=hookOnly", "--timeout", HELM_TIMEOUT, "--ignore-not-found"]
    run_helm(args, _tool_env(workdir), "helm uninstall")


def _tool_env(workdir: Path) -> dict[str, str]:
    # Lambda's file system is read-only outside /tmp; helm and kubectl keep cache and config there.
    env = {key: value for key, value in os.environ.items() if key in ("PATH", "AWS_REGION", "LANG")}
    for name in ("HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME"):
        env[name] = str(workdir / "helm" / name.lower())
    env["HOME"] = str(workdir)
    return env


def run_helm(args: list[str], env: dict[str, str], what: str) -> str:
    return run_tool(HELM, args, env, what)


def run_tool(binary: str, args: list[str], env: dict[str, str], what: str) -> str:
    try:
        result = subprocess.run([binary, *args], env=env, capture_output=True, text=True, timeout=13 * 60, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise HelmReleaseError(f"{what} could not run: {err}") from err
    output = (result.stdout + result.stderr).strip()
    if result.returncode != 0:
        raise HelmReleaseError(f"{what} failed (exit {result.returncode}): {output[-OUTPUT_TAIL:]}")
    return output


def write_kubeconfig(workdir: Path, cluster_name: str, region: str) -> Path:
    import boto3

    cluster = boto3.client("eks", region_name=region).describe_cluster(name=cluster_name)["cluster"]
    config = kubeconfig_document(cluster["endpoint"], cluster["certificateAuthority"]["data"],
                                 eks_token(cluster_name, region))
    path = workdir / "kubeconfig.json"
    path.write_text(json.dumps(config))
    path.chmod(0o600)
    return path


def kubeconfig_document(endpoint: str, ca_data: str, token: str) -> dict[str, Any]:
    """A kubeconfig (JSON is YAML) with one cluster, one bearer-token user and one context."""
    return {
        "apiVersion": "v1", "kind": "Config", "current-context": "eks",
        "clusters": [{"name": "eks", "cluster": {"server": endpoint, "certificate-authority-data": ca_data}}],
        "users": [{"name": "installer", "user": {"token": token}}],
        "contexts": [{"name": "eks", "context": {"cluster": "eks", "user": "installer"}}],
    }


def eks_token(cluster_name: str, region: str) -> str:
    """EKS bearer token: a presigned STS GetCallerIdentity URL bound to the cluster name."""
    import boto3
    from botocore.signers import RequestSigner

    session = boto3.session.Session()
    sts = session.client("sts", region_name=region)
    signer = RequestSigner(sts.meta.service_model.service_id, region, "sts", "v4",
                           session.get_credentials(), session.events)
    url = signer.generate_presigned_url(
        {"method": "GET", "url": f"https://sts.{region}.amazonaws.com/?Action=GetCallerIdentity&Version=2011-06-15",
         "body": {}, "headers": {"x-k8s-aws-id": cluster_name}, "context": {}},
        region_name=region, expires_in=60, operation_name="")
    return "k8s-aws-v1." + base64.urlsafe_b64encode(url.encode()).decode().rstrip("=")
