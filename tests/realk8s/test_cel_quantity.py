"""The quantity library and lists' sum() of the in-process admission (cdk_app/kubernetes/guardrails/
cel_libraries.py) against the real API server's: one ValidatingAdmissionPolicy whose messageExpression reports,
for the quantities a ConfigMap names, what the library makes of them (valid, isInteger, asInteger, sign,
compareTo, asApproximateFloat, add, sub, sum); the API server's denial message and cel-python's evaluation of the
same expression must agree field by field, over the grammar's corners."""

from __future__ import annotations

import celpy
import pytest
from support.realk8s.api import Cluster, wait_until

from cdk_app.kubernetes.guardrails.admission import evaluate

NAMESPACE = "cel-quantity"
LEAD = "quantity-probe:"


def _of(name: str) -> str:
    return f"quantity(object.data.{name})"


# Each field: a CEL string; floats through string(double), compared as numbers (cel-go and cel-python print them
# differently).
A, B = _of("a"), _of("b")
FIELDS = [
    ("valid", "string(isQuantity(object.data.a))"),
    ("isInteger", f"string({A}.isInteger())"),
    ("asInteger", f"({A}.isInteger() ? string({A}.asInteger()) : '-')"),
    ("sign", f"string(sign({A}))"),
    ("compareTo", f"string({A}.compareTo({B}))"),
    ("isGreaterThan", f"string({A}.isGreaterThan({B}))"),
    ("isLessThan", f"string({A}.isLessThan({B}))"),
    ("equal", f"string({A} == {B})"),
    ("float", f"string({A}.asApproximateFloat())"),
    ("add", f"string({A}.add({B}).asApproximateFloat())"),
    ("addInteger", f"string({A}.add({B}).isInteger())"),
    ("sub", f"string({A}.sub({B}).compareTo(quantity('0')))"),
    ("subInt", f"string({A}.sub(7).asApproximateFloat())"),
    ("sum", f"string([{A}.asApproximateFloat(), {B}.asApproximateFloat(), 0.1].sum())"),
]
FLOATS = {"float", "add", "subInt", "sum"}
MESSAGE = (f"{LEAD!r} + (isQuantity(object.data.a) && isQuantity(object.data.b) ? "
           + " + '|' + ".join(expression for _, expression in FIELDS)
           + " : 'invalid ' + string(isQuantity(object.data.a)))")

# The grammar's corners (apimachinery pkg/api/resource ParseQuantity): suffixes, exponents and their int32
# wrap (1e4294967296 is 1), signs, leading zeros, bare points, rounding below a nano, the int64 fast path's
# limits, binary caps, and text that is no quantity. Exponents past the in-process model's bounds
# (cel_libraries.MAX_EXPONENT) are errors there by design and not compared.
QUANTITIES = ["0", "1", "-1", "+1", "007", "-0", "2000m", "1.5", "1.5Gi", "12Mi", "0.5Ki", ".5", "5.", ".", "-.",
              "Mi", "1.G", "1e3", "1E3", "1e+3", "1E-3", "1e-10", "-1e-10", "1.1e-10", "0.0000000001", "8e9", "9e9",
              "8Gi", "1n", "1u", "100k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Ti", "1Pi", "1Ei", "99999999999Ei",
              "123456789012345678", "1234567890123456789", "9223372036854775807", "9223372036854775808",
              "1e4294967296", "50.703k", "0.1", "1.1", "0.35", "0.45", "10Mo", "10Mm", "1,5", "",
              " 1", "aoeu", "1e", "0.1mi", "-3.01e-"]
OTHERS = ["1", "1500m", "1Gi"]


@pytest.fixture(scope="module")
def cluster(start_cluster) -> Cluster:
    server = start_cluster("dev")
    assert server.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}, dry_run=False).allowed
    policy = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
              "metadata": {"name": "cel-quantity-probe"},
              "spec": {"failurePolicy": "Fail",
                       "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                               "resources": ["configmaps"], "operations": ["CREATE"]}]},
                       "validations": [{"expression": "false", "message": "probe", "messageExpression": MESSAGE}]}}
    binding = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
               "metadata": {"name": "cel-quantity-probe"},
               "spec": {"policyName": "cel-quantity-probe", "validationActions": ["Deny"],
                        "matchResources": {"namespaceSelector": {"matchExpressions": [
                            {"key": "kubernetes.io/metadata.name", "operator": "In", "values": [NAMESPACE]}]}}}}
    for obj in (policy, binding):
        answer = server.create(obj, dry_run=False)
        assert answer.allowed, answer.message
    wait_until(lambda: LEAD in server.create(_config_map("1", "1")).message, "the probe policy", timeout=60, interval=0.2)
    return server


def _config_map(a: str, b: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "q", "namespace": NAMESPACE},
            "data": {"a": a, "b": b}}


def _fields(text: str) -> list[str]:
    assert text.startswith(LEAD), text
    return text[len(LEAD):].split("|")


@pytest.mark.parametrize("other", OTHERS)
def test_the_in_process_quantity_library_answers_as_the_api_server_does(cluster, other):
    disagreements = []
    for text in QUANTITIES:
        obj = _config_map(text, other)
        answer = cluster.create(obj)
        assert not answer.allowed and LEAD in answer.message, (text, answer.status, answer.message)
        server = answer.message[answer.message.index(LEAD):]
        model = evaluate(MESSAGE, {"object": celpy.json_to_cel(obj)})
        assert isinstance(model, str), (text, model)
        if server.startswith(f"{LEAD}invalid") or model.startswith(f"{LEAD}invalid"):
            if server.lower() != model.lower():  # cel-python prints booleans capitalised
                disagreements.append((text, server, model))
            continue
        for (name, _), theirs, ours in zip(FIELDS, _fields(server), _fields(model), strict=True):
            same = float(theirs) == float(ours) if name in FLOATS else theirs.lower() == ours.lower()
            if not same:
                disagreements.append((text, name, theirs, ours))
    assert disagreements == []
