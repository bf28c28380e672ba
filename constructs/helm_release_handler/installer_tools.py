"""What every request of the installer needs: a time budget, helm and kubectl runs that fail with their
output as the reason, a cluster-admin kubeconfig for the EKS cluster, and YAML read through helm.

Standard library and boto3 only (the Lambda Python runtime has no YAML parser; helm has one).
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

HELM = os.environ.get("HELM_BINARY", "/opt/helm/helm")
KUBECTL = os.environ.get("KUBECTL_BINARY", "/opt/kubectl/kubectl")
# CloudFormation shows at most a few kilobytes of a failure reason; keep the tool's last words.
OUTPUT_TAIL = 3000
# A request stops this long before Lambda would kill it, so that the failure and its reason reach
# CloudFormation instead of a Lambda timeout (which the framework reports without a reason).
SAFETY_MARGIN_SECONDS = 60
# Budget when no Lambda context is given (tests, local runs): Lambda's own maximum.
DEFAULT_SECONDS = 900
# A new access entry (and its access policy) takes a moment to reach the API server: until then the installer's
# token is answered 401 or 403. Waited out this long, then the request fails naming the access entry.
ACCESS_WAIT_SECONDS, ACCESS_POLL_SECONDS = 120, 5
# How kubectl reports a token the cluster does not (yet) know, or rights not (yet) granted.
NOT_YET_AUTHORIZED = ("(Unauthorized)", "(Forbidden)", "must be logged in")


class HelmReleaseError(Exception):
    """A failure the deployment must stop on; the message is what CloudFormation shows."""


class ClusterGone(HelmReleaseError):
    """The EKS cluster does not exist (any more): there is nothing in it to change or delete."""


class Budget:
    """The time left to this request, from the Lambda context's remaining time minus a safety margin."""

    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds

    @classmethod
    def from_context(cls, context: Any) -> Budget:
        remaining_ms = context.get_remaining_time_in_millis() if context is not None else DEFAULT_SECONDS * 1000
        return cls(remaining_ms / 1000 - SAFETY_MARGIN_SECONDS)

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def require(self, what: str, seconds: float = 1) -> float:
        """The seconds left, or a failure naming `what` when fewer than `seconds` are."""
        left = self.remaining()
        if left < seconds:
            raise HelmReleaseError(f"{what}: out of time (the installer stops {SAFETY_MARGIN_SECONDS} s before "
                                   "its Lambda timeout so that CloudFormation gets this reason); retry the deployment")
        return left


def tool_env(workdir: Path) -> dict[str, str]:
    # Lambda's file system is read-only outside /tmp; helm and kubectl keep cache and config there.
    env = {key: value for key, value in os.environ.items()
           if key in ("PATH", "AWS_REGION", "LANG", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY")}
    for name in ("HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME"):
        env[name] = str(workdir / "helm" / name.lower())
    env["HOME"] = str(workdir)
    return env


def run_tool(binary: str, args: list[str], env: dict[str, str], what: str, budget: Budget) -> str:
    """Run helm or kubectl; a non-zero exit, a missing binary or the end of the budget is a HelmReleaseError."""
    seconds = budget.require(what)
    try:
        result = subprocess.run([binary, *args], env=env, capture_output=True, text=True, timeout=seconds, check=False)
    except subprocess.TimeoutExpired as err:
        raise HelmReleaseError(f"{what} did not finish within the {seconds:.0f} s left; stopped so that "
                               "CloudFormation gets a reason (a helm release left pending is rolled back "
                               "by the next attempt)") from err
    except OSError as err:
        raise HelmReleaseError(f"{what} could not run: {err}") from err
    output = (result.stdout + result.stderr).strip()
    if result.returncode != 0:
        raise HelmReleaseError(f"{what} failed (exit {result.returncode}): {output[-OUTPUT_TAIL:]}")
    return output


def aws_client(service: str, region: str | None = None, read_timeout: int = 20) -> Any:
    """A boto3 client whose calls are bounded (10 s to connect, `read_timeout` to answer, three attempts), so that no
    call eats a request's budget: a hung call fails with a reason instead of outlasting the Lambda."""
    import boto3
    from botocore.config import Config

    return boto3.client(service, region_name=region, config=Config(
        connect_timeout=10, read_timeout=read_timeout, retries={"mode": "standard", "max_attempts": 3}))


def eks_client(region: str) -> Any:
    return aws_client("eks", region)


def write_kubeconfig(workdir: Path, cluster_name: str, region: str, budget: Budget) -> Path:
    """A kubeconfig for the installer's role, once the cluster accepts it (await_access); ClusterGone when EKS no
    longer knows the cluster."""
    client = eks_client(region)
    try:
        cluster = client.describe_cluster(name=cluster_name)["cluster"]
    except client.exceptions.ResourceNotFoundException as err:
        raise ClusterGone(f"EKS cluster {cluster_name} does not exist in {region}") from err
    config = kubeconfig_document(cluster["endpoint"], cluster["certificateAuthority"]["data"],
                                 eks_token(cluster_name, region))
    path = workdir / "kubeconfig.json"
    path.write_text(json.dumps(config))
    path.chmod(0o600)
    await_access(path, workdir, budget)
    return path


def await_access(kubeconfig: Path, workdir: Path, budget: Budget, limit: float = ACCESS_WAIT_SECONDS,
                 poll_seconds: float = ACCESS_POLL_SECONDS) -> None:
    """Wait until the cluster lets the installer read kube-system: right after its access entry is created (the
    cluster's first deploy) EKS answers 401/403 for a while, which must not roll back the whole create. Any
    other failure is raised at once."""
    bound = min(limit, max(budget.remaining() - poll_seconds, 0))
    deadline = time.monotonic() + bound
    while True:
        try:
            run_tool(KUBECTL, ["get", "--raw", "/api/v1/namespaces/kube-system", "--kubeconfig", str(kubeconfig)],
                     tool_env(workdir), "kubectl get namespace kube-system", budget)
            return
        except HelmReleaseError as err:
            if not any(sign in str(err) for sign in NOT_YET_AUTHORIZED):
                raise
            if time.monotonic() + poll_seconds >= deadline:
                raise HelmReleaseError(f"the cluster still refuses the installer after {bound:.0f} s ({err}); its "
                                       "access entry (AmazonEKSClusterAdminPolicy) should take seconds to apply - "
                                       "check it with aws eks list-associated-access-policies") from err
        time.sleep(poll_seconds)


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


# A chart whose only template turns the YAML files under in/ into one base64 JSON document: helm's own
# YAML parser (fromYaml), so the handler reads Chart.yaml and values files exactly as helm does.
_READER_TEMPLATE = """\
{{- $out := dict -}}
{{- range $path, $_ := .Files.Glob "in/*" -}}
{{- $_ := set $out (base $path) ($.Files.Get $path | fromYaml) -}}
{{- end -}}
apiVersion: v1
kind: ConfigMap
metadata:
  name: yaml-reader
data:
  json: {{ $out | toJson | b64enc }}
"""


def read_yaml_files(paths: list[Path], workdir: Path, budget: Budget) -> list[dict[str, Any]]:
    """Each file (a YAML mapping) as a dict, in order; a file helm cannot parse is a HelmReleaseError."""
    if not paths:
        return []
    reader = workdir / "yaml-reader"
    shutil.rmtree(reader, ignore_errors=True)
    (reader / "templates").mkdir(parents=True)
    (reader / "in").mkdir()
    (reader / "Chart.yaml").write_text(json.dumps({"apiVersion": "v2", "name": "yaml-reader", "version": "0.0.0"}))
    (reader / "templates" / "out.yaml").write_text(_READER_TEMPLATE)
    for index, path in enumerate(paths):
        shutil.copyfile(path, reader / "in" / f"{index:05d}.yaml")
    output = run_tool(HELM, ["template", "yaml-reader", str(reader)], tool_env(workdir), "helm (reading YAML)", budget)
    match = re.search(r"^  json: (\S+)$", output, re.MULTILINE)
    if match is None:
        raise HelmReleaseError(f"helm printed no YAML reading: {output[-OUTPUT_TAIL:]}")
    documents = json.loads(base64.b64decode(match.group(1)))
    parsed = []
    for index, path in enumerate(paths):
        document = documents.get(f"{index:05d}.yaml") or {}
        if set(document) == {"Error"}:
            raise HelmReleaseError(f"{path.name} is not valid YAML: {document['Error']}")
        parsed.append(document)
    return parsed
