"""Small CEL builders shared by the policies: literals, per-item rules and their messages."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from cdk_app.config.names import team_namespace


def lit(value: Any) -> str:
    """A CEL literal of a string or a list of strings (JSON string syntax is valid CEL)."""
    if isinstance(value, str):
        return json.dumps(value)
    return "[" + ", ".join(json.dumps(v) for v in value) + "]"


def per_namespace(values: dict[str, str | Iterable[str]]) -> str:
    """CEL: the value of this request's namespace from a map literal of every bound namespace."""
    entries = ", ".join(f"{lit(team_namespace(team))}: {lit(v if isinstance(v, str) else list(v))}"
                        for team, v in values.items())
    return "{" + entries + "}[request.namespace]"


def validation(rule: str, expression: str, message: str, message_expression: str) -> dict[str, str]:
    """One CEL check; its messages name the rule and, through messageExpression, the offending field."""
    lead = f"hyperpod-kit guardrail {rule}: "
    return {"expression": expression, "message": lead + message,
            "messageExpression": f"{lit(lead)} + {message_expression}", "reason": "Forbidden"}


def first_bad(items: str, bad: str) -> str:
    """CEL: the first element of a list variable that breaks a rule (only evaluated when one does)."""
    return f"{items}.filter(e, {bad})[0]"


def each_item(items: str, rule: str, bad: str, field: str, message: str) -> dict[str, str]:
    """A rule no element of `items` (variables.pods: e.spec; variables.containers: e.c) may break."""
    first = first_bad(items, bad)
    return validation(rule, f"!{items}.exists(e, {bad})", message, f"{first}.path + {lit(f'.{field}: {message}')}")


def container_rule(rule: str, bad: str, field: str, message: str) -> dict[str, str]:
    return each_item("variables.containers", rule, bad, field, message)


def pod_rule(rule: str, bad: str, field: str, message: str) -> dict[str, str]:
    return each_item("variables.pods", rule, bad, field, message)


def security_context(field: str) -> str:
    return f"has(e.c.securityContext) && has(e.c.securityContext.{field})"


def pod_and_container_rules(rule: str, field: str, bad: str, message: str) -> list[dict[str, str]]:
    """A securityContext field a pod and each of its containers can set; bad: CEL on `x` (the field)."""
    out = []
    for make, context in ((pod_rule, "e.spec.securityContext"), (container_rule, "e.c.securityContext")):
        test = f"has({context}) && has({context}.{field}) && {bad.replace('x.', f'{context}.{field}.')}"
        out.append(make(rule, test, f"securityContext.{field}", message))
    return out
