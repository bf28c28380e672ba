"""A small client of the real API server started by controlplane.py: admin's client certificate, impersonation
of any user and groups (as `kubectl --as --as-group` does), discovery of where each kind is served, server-side
dry runs and SubjectAccessReviews. Standard library only: one HTTPS connection per request, no kubectl start-up
per call, so hundreds of admission cases take seconds."""

from __future__ import annotations

import json
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def wait_until(check: Callable[[], Any], what: str, timeout: float = 30, interval: float = 0.1) -> Any:
    """Poll `check` until it returns something true, and return that. The API server applies RBAC and
    admission-policy changes through informers, a moment after the write: tests wait for them with this."""
    deadline = time.monotonic() + timeout
    while not (result := check()):
        assert time.monotonic() < deadline, f"{what} not in effect after {timeout} s"
        time.sleep(interval)
    return result


@dataclass(frozen=True)
class Answer:
    status: int
    body: dict[str, Any]
    warnings: tuple[str, ...] = ()  # the API server's Warning headers (e.g. a Warn binding's failed validations)

    @property
    def allowed(self) -> bool:
        return 200 <= self.status < 300

    @property
    def message(self) -> str:
        return str(self.body.get("message", ""))


@dataclass(frozen=True)
class Resource:
    group_version: str
    plural: str
    namespaced: bool


def _warnings(headers: Any) -> tuple[str, ...]:
    """Warning headers are `299 - "<text>"` (RFC 7234); the text is what the API server warns."""
    found = []
    for value in headers.get_all("Warning") or ():
        text = value.split(" ", 2)[-1] if value.startswith("299") else value
        found.append(text.strip().removeprefix('"').removesuffix('"').replace('\\"', '"'))
    return tuple(found)


class Cluster:
    """The API server of one control plane directory (controlplane.py up --dir DIR)."""

    def __init__(self, state_dir: Path) -> None:
        # What kubectl (the installer's own, in handler tests) reads to reach this API server as its admin.
        self.admin_kubeconfig = state_dir / "admin.kubeconfig"
        state = json.loads((state_dir / "state.json").read_text())
        self.server = state["server"]
        pki = state_dir / "pki"
        self._context = ssl.create_default_context(cafile=str(pki / "ca.crt"))
        self._context.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
        self._resources: dict[tuple[str, str], Resource] = {}

    def request(self, method: str, path: str, body: dict[str, Any] | None = None, *, user: str | None = None,
                groups: tuple[str, ...] = (), params: dict[str, str] | None = None,
                content_type: str = "application/json") -> Answer:
        url = self.server + path + (f"?{urllib.parse.urlencode(params)}" if params else "")
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url, data=data, method=method)
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", content_type)
        if user is not None:
            request.add_header("Impersonate-User", user)
            for group in groups:
                request.add_header("Impersonate-Group", group)
        try:
            with urllib.request.urlopen(request, context=self._context, timeout=30) as response:
                return Answer(response.status, json.loads(response.read() or b"{}"), _warnings(response.headers))
        except urllib.error.HTTPError as err:
            raw = err.read()
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = {"message": raw.decode(errors="replace")}
            return Answer(err.code, body, _warnings(err.headers))

    # ---- discovery -------------------------------------------------------------------------------------

    def resource(self, api_version: str, kind: str, refresh: bool = False) -> Resource:
        """Where the API server serves `kind` of `api_version` (read from discovery; CRDs included)."""
        key = (api_version, kind)
        if key not in self._resources or refresh:
            path = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
            answer = self.request("GET", path)
            if not answer.allowed:
                raise LookupError(f"{api_version} is not served: {answer.status} {answer.message}")
            for item in answer.body.get("resources", []):
                if "/" not in item["name"]:
                    self._resources[(api_version, item["kind"])] = Resource(api_version, item["name"],
                                                                            item["namespaced"])
        if key not in self._resources:
            raise LookupError(f"{kind} is not served in {api_version}")
        return self._resources[key]

    def collection_path(self, obj: dict[str, Any], namespace: str | None = None) -> str:
        resource = self.resource(obj["apiVersion"], obj["kind"])
        base = f"/api/{resource.group_version}" if "/" not in resource.group_version else \
            f"/apis/{resource.group_version}"
        namespace = namespace or obj.get("metadata", {}).get("namespace")
        if resource.namespaced:
            if not namespace:
                raise ValueError(f"{obj['kind']} {obj.get('metadata', {}).get('name')} needs a namespace")
            return f"{base}/namespaces/{namespace}/{resource.plural}"
        return f"{base}/{resource.plural}"

    def object_path(self, obj: dict[str, Any], namespace: str | None = None) -> str:
        return f"{self.collection_path(obj, namespace)}/{obj['metadata']['name']}"

    # ---- verbs -----------------------------------------------------------------------------------------

    def create(self, obj: dict[str, Any], *, user: str | None = None, groups: tuple[str, ...] = (),
               dry_run: bool = True, namespace: str | None = None) -> Answer:
        """POST the object; a dry run by default (admission runs, nothing is stored)."""
        params = {"dryRun": "All", "fieldValidation": "Strict"} if dry_run else {"fieldValidation": "Strict"}
        return self.request("POST", self.collection_path(obj, namespace), obj, user=user, groups=groups,
                            params=params)

    def update(self, obj: dict[str, Any], *, user: str | None = None, groups: tuple[str, ...] = (),
               dry_run: bool = True) -> Answer:
        params = {"dryRun": "All", "fieldValidation": "Strict"} if dry_run else {"fieldValidation": "Strict"}
        return self.request("PUT", self.object_path(obj), obj, user=user, groups=groups, params=params)

    def delete(self, obj: dict[str, Any], *, user: str | None = None, groups: tuple[str, ...] = (),
               dry_run: bool = True, options: dict[str, Any] | None = None) -> Answer:
        body = {"apiVersion": "v1", "kind": "DeleteOptions", **(options or {})}
        if dry_run:
            body["dryRun"] = ["All"]
        return self.request("DELETE", self.object_path(obj), body, user=user, groups=groups)

    def get(self, obj: dict[str, Any]) -> Answer:
        return self.request("GET", self.object_path(obj))

    def can(self, user: str, groups: tuple[str, ...], verb: str, resource: str, *, group: str = "",
            namespace: str | None = None, name: str | None = None, subresource: str | None = None) -> bool:
        """The API server's RBAC answer (SubjectAccessReview) for one request of `user` in `groups`."""
        attributes: dict[str, Any] = {"verb": verb, "resource": resource, "group": group}
        for key, value in (("namespace", namespace), ("name", name), ("subresource", subresource)):
            if value is not None:
                attributes[key] = value
        review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                  "spec": {"user": user, "groups": list(groups), "resourceAttributes": attributes}}
        answer = self.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", review)
        if not answer.allowed:
            raise RuntimeError(f"SubjectAccessReview failed: {answer.status} {answer.message}")
        return bool(answer.body["status"].get("allowed"))
