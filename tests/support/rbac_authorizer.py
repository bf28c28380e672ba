"""A small Kubernetes RBAC authorizer for tests, following the API server's own rules
(plugin/pkg/auth/authorizer/rbac and pkg/apis/rbac/v1/evaluation_helpers.go):

- a rule allows a resource request when its verbs, apiGroups, resources and resourceNames all match;
  "*" matches any verb, group or resource, "*/<sub>" any resource's subresource <sub>; a resource with
  a subresource is matched as "<resource>/<subresource>" (so "pods" does not grant "pods/log"); an
  empty resourceNames matches every name, a non-empty one only requests that name an object (a list
  without a metadata.name field selector names none);
- a ClusterRoleBinding grants its role everywhere; a RoleBinding only for requests in its namespace,
  whether it binds a Role of that namespace or a ClusterRole;
- for the namespaces resource itself, the request's namespace is the one named (GET
  /api/v1/namespaces/x is in namespace x), so a Role can grant reading its own namespace;
- there is no deny: a request is allowed when any rule of any binding of the subject allows it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Request:
    verb: str
    group: str
    resource: str  # "pods" or "pods/exec"
    namespace: str = ""  # "" for cluster-scoped requests
    name: str = ""

    @classmethod
    def of(cls, verb: str, group: str, resource: str, namespace: str = "", name: str = "") -> Request:
        if resource == "namespaces" and name:
            namespace = name  # the API server's request info for /api/v1/namespaces/<name>
        return cls(verb, group, resource, namespace, name)


def _rule_allows(rule: dict[str, Any], request: Request) -> bool:
    verbs, groups = rule.get("verbs") or [], rule.get("apiGroups") or []
    if "*" not in verbs and request.verb not in verbs:
        return False
    if "*" not in groups and request.group not in groups:
        return False
    sub = request.resource.partition("/")[2]
    if not any(granted in ("*", request.resource) or (sub and granted == f"*/{sub}")
               for granted in rule.get("resources") or []):
        return False
    names = rule.get("resourceNames") or []
    return not names or request.name in names


def _subject_matches(subjects: list[dict[str, Any]], user: str, groups: set[str]) -> bool:
    for subject in subjects or []:
        if subject.get("kind") == "Group" and subject.get("name") in groups:
            return True
        if subject.get("kind") == "User" and subject.get("name") == user:
            return True
    return False


class Authorizer:
    """Decides requests against a set of Role, ClusterRole, RoleBinding and ClusterRoleBinding objects."""

    def __init__(self, objects: list[dict[str, Any]]):
        self.roles = {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in objects if o["kind"] == "Role"}
        self.cluster_roles = {o["metadata"]["name"]: o for o in objects if o["kind"] == "ClusterRole"}
        self.bindings = [o for o in objects if o["kind"] in ("RoleBinding", "ClusterRoleBinding")]

    def _rules(self, binding: dict[str, Any]) -> list[dict[str, Any]]:
        ref = binding["roleRef"]
        if ref["kind"] == "ClusterRole":
            role = self.cluster_roles.get(ref["name"])
        elif binding["kind"] == "RoleBinding":  # a ClusterRoleBinding cannot reference a Role
            role = self.roles.get((binding["metadata"]["namespace"], ref["name"]))
        else:
            role = None
        return (role or {}).get("rules") or []

    def allows(self, request: Request, groups: set[str], user: str = "someone") -> bool:
        for binding in self.bindings:
            if binding["kind"] == "RoleBinding" and binding["metadata"]["namespace"] != request.namespace:
                continue
            if not _subject_matches(binding.get("subjects"), user, groups):
                continue
            if any(_rule_allows(rule, request) for rule in self._rules(binding)):
                return True
        return False
