"""The guardrails' admission, evaluated in process: every ValidatingAdmissionPolicy the kit binds, applied to one
request as the API server's admission plugin applies it (match rules, namespace selector, matchConditions,
variables, validations and their messageExpression), with cel-python evaluating the CEL (and cel_libraries
the Kubernetes functions it lacks).

`hyperpod-kit check` gives a hand-edited manifest this verdict offline, and the tests hold it to the real API
server's (tests/realk8s/test_standard_manifests.py): the same rules, read from the same manifests
(guardrail_manifests), so a manifest the check admits is one the cluster's guardrails admit."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

import celpy

from cdk_app.kubernetes.guardrails.cel_libraries import FUNCTIONS
from cdk_app.kubernetes.guardrails.kinds import WORKLOAD_KINDS, WorkloadKind

# Kinds a team may create that hold no pods, and that a guardrail still checks (services, network_policies).
OTHER_KINDS = (WorkloadKind("", "v1", "services", "Service", "unqueued"),
               WorkloadKind("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", "unqueued"))
# Kind -> what an API request for it names (group, version, resource): every kind a guardrail matches.
ADMITTED_KINDS = {k.kind: k for k in (*WORKLOAD_KINDS, *OTHER_KINDS)}


CEL = celpy.Environment()


class LazyVariables(celpy.celtypes.MapType):
    """`variables` as Kubernetes binds it: each is evaluated when first used, then cached."""

    def __init__(self, programs: dict[str, Any], activation: dict[str, Any]) -> None:
        super().__init__({})
        self._programs, self._activation, self._cache = programs, activation, {}

    def __contains__(self, key: object) -> bool:
        return key in self._programs

    def __getitem__(self, key: Any) -> Any:
        if key not in self._programs:
            raise KeyError(key)
        if key not in self._cache:
            try:
                self._cache[key] = self._programs[key].evaluate(self._activation)
            except celpy.CELEvalError as err:
                self._cache[key] = err
        return self._cache[key]


@functools.cache
def program(expression: str) -> Any:
    """The compiled program of one expression: parsing is most of cel-python's time, and the matrix evaluates
    the same few hundred expressions thousands of times (a program keeps no state between evaluations). The
    Kubernetes libraries cel-python lacks (quantity, lists' sum) come from cel_libraries."""
    return CEL.program(CEL.compile(expression), functions=FUNCTIONS)


def evaluate(expression: str, activation: dict[str, Any]) -> Any:
    """A CEL result, or the CELEvalError the evaluation ended with."""
    try:
        return program(expression).evaluate(activation)
    except celpy.CELEvalError as err:
        return err


@dataclass
class Verdict:
    denials: list[str] = field(default_factory=list)  # messages of the validations that failed
    errors: list[str] = field(default_factory=list)  # expressions that could not be evaluated
    message_failures: list[str] = field(default_factory=list)  # messageExpressions that failed (message used)

    @property
    def allowed(self) -> bool:
        return not self.denials and not self.errors

    @property
    def rules(self) -> set[str]:
        return {re.match(r"hyperpod-kit guardrail ([a-z-]+):", m).group(1) for m in self.denials}


def _rule_matches(rule: dict[str, Any], request: dict[str, Any]) -> bool:
    resource = request["resource"]
    name = resource["resource"] + (f"/{request['subResource']}" if request["subResource"] else "")
    return (resource["group"] in rule["apiGroups"] and resource["version"] in rule["apiVersions"]
            and name in rule["resources"] and request["operation"] in rule["operations"])


def _namespace_matches(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    for expression in selector["matchExpressions"]:
        if expression["operator"] != "In":
            raise ValueError(f"namespace selector operator {expression['operator']}: only In is modelled")
        if labels.get(expression["key"]) not in expression["values"]:
            return False
    return True


def admit(manifests: list[dict[str, Any]], request: dict[str, Any], obj: dict[str, Any],
          old: dict[str, Any] | None) -> Verdict:
    """Apply every bound policy to one request, as the API server's admission plugin does."""
    policies = {m["metadata"]["name"]: m for m in manifests if m["kind"] == "ValidatingAdmissionPolicy"}
    namespace = {"apiVersion": "v1", "kind": "Namespace",
                 "metadata": {"name": request["namespace"], "labels": {"kubernetes.io/metadata.name": request["namespace"]}}}
    verdict = Verdict()
    for bound in (m for m in manifests if m["kind"] == "ValidatingAdmissionPolicyBinding"):
        if bound["spec"]["validationActions"][0] != "Deny":
            raise ValueError(f"binding {bound['metadata']['name']}: only Deny bindings are modelled")
        policy = policies[bound["spec"]["policyName"]]["spec"]
        if not _namespace_matches(bound["spec"]["matchResources"]["namespaceSelector"], namespace["metadata"]["labels"]):
            continue
        if not any(_rule_matches(rule, request) for rule in policy["matchConstraints"]["resourceRules"]):
            continue
        activation: dict[str, Any] = {"object": celpy.json_to_cel(obj), "oldObject": celpy.json_to_cel(old),
                                      "request": celpy.json_to_cel(request), "params": None,
                                      "namespaceObject": celpy.json_to_cel(namespace)}
        activation["variables"] = LazyVariables(
            {v["name"]: program(v["expression"]) for v in policy.get("variables", [])}, activation)
        conditions = [evaluate(c["expression"], activation) for c in policy.get("matchConditions", [])]
        if not all(isinstance(c, celpy.celtypes.BoolType) for c in conditions):
            verdict.errors.append(f"matchConditions: {conditions}")  # failurePolicy Fail: refused
            continue
        if not all(conditions):
            continue
        for validation in policy["validations"]:
            result = evaluate(validation["expression"], activation)
            if not isinstance(result, celpy.celtypes.BoolType):  # an error, or not the bool Kubernetes requires
                verdict.errors.append(f"{validation['message']}: {result!r}")
            elif not result:
                message = evaluate(validation["messageExpression"], activation)
                # The API server falls back to the static message when the expression fails.
                if not isinstance(message, str):
                    verdict.message_failures.append(f"{validation['messageExpression']}: {message!r}")
                verdict.denials.append(str(message) if isinstance(message, str) else validation["message"])
    return verdict


def create_request(obj: dict[str, Any], kind: WorkloadKind, namespace: str, username: str,
                   groups: tuple[str, ...]) -> dict[str, Any]:
    """The admission request the API server builds for a CREATE of `obj` by `username`."""
    return {"kind": {"group": kind.group, "version": kind.version, "kind": kind.kind},
            "resource": {"group": kind.group, "version": kind.version, "resource": kind.resource},
            "subResource": "", "name": obj.get("metadata", {}).get("name", ""), "namespace": namespace,
            "operation": "CREATE", "userInfo": {"username": username, "groups": list(groups)}, "dryRun": False}
