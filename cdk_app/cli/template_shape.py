"""Is this JSON a CloudFormation template `plan` can read? Checked before any of it is used, so a corrupt or
hand-edited baseline is refused as unreadable instead of crashing the comparison or being taken at face
value. The rules are CloudFormation's, as cfn-lint ships them: its template and resource-configuration
schemas (Resources a mapping of alphanumeric logical ids to mappings with a string Type), its
DeletionPolicy/UpdateReplacePolicy values (rules E3035/E3036), and each resource type's provider schema
for the JSON kind (mapping, list, scalar) of every property. Values are not checked: a synth may hold
intrinsic functions where the schema wants a string."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from typing import Any

from cdk_app.domain.regions import cfnlint_data
from cdk_app.domain.resource_schemas import resource_schema

# cfn-lint rules E3035 (DeletionPolicy) and E3036 (UpdateReplacePolicy); Snapshot only on types that have it,
# which plan treats the same as Retain, so it is allowed on every type here.
POLICIES = ("Delete", "Retain", "RetainExceptOnCreate", "Snapshot")
KINDS = {"object": dict, "array": list}


class TemplateShapeError(ValueError):
    """The JSON is not a CloudFormation template; the message names the field and what is allowed."""


@cache
def _schema(name: str) -> dict[str, Any]:
    return json.loads((cfnlint_data() / "schemas" / "other" / name / "configuration.json").read_text())


def _kind(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "text", bool: "true/false", type(None): "null"}.get(
        type(value), "a number")


def _intrinsic(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and next(iter(value)) in {"Ref", "Condition"} | {
        key for key in value if isinstance(key, str) and key.startswith("Fn::")}


def _function_errors(value: dict[str, Any], where: str) -> Iterator[str]:
    """The arguments plan follows for references, as cfn-lint's function schemas define them: Ref a name,
    Fn::GetAtt 'Resource.Attribute' or [resource, attribute], Fn::Sub a text or [text, mapping]."""
    (function, argument), = value.items()
    allowed = {"Ref": "a name",
               "Fn::GetAtt": "'Resource.Attribute' or a list [resource, attribute]",
               "Fn::Sub": "a text or a list [text, mapping of variables]"}.get(function)
    good = {"Ref": lambda a: isinstance(a, str),
            "Fn::GetAtt": lambda a: (isinstance(a, str) and "." in a) or (
                isinstance(a, list) and len(a) == 2 and isinstance(a[0], str)),
            "Fn::Sub": lambda a: isinstance(a, str) or (
                isinstance(a, list) and len(a) == 2 and isinstance(a[0], str) and isinstance(a[1], dict))}
    if allowed and not good[function](argument):
        yield f"{where}: {function} of {_kind(argument)}, CloudFormation wants {allowed}"


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while isinstance(schema, dict) and "$ref" in schema:
        schema = root.get("definitions", {}).get(schema["$ref"].rsplit("/", 1)[-1], {})
    return schema if isinstance(schema, dict) else {}


def _kind_errors(value: Any, schema: dict[str, Any], root: dict[str, Any], where: str, depth: int = 0) -> Iterator[str]:
    """Where `value` is a mapping or a list although the provider schema wants another JSON kind (or the
    reverse), down the schema's properties and items."""
    schema = _resolve(schema, root)
    if _intrinsic(value):
        yield from _function_errors(value, where)
        return
    if depth > 64:
        return
    wanted = schema.get("type")
    kinds = {wanted} if isinstance(wanted, str) else set(wanted or ())
    if kinds and not any(isinstance(value, KINDS[k]) for k in kinds & set(KINDS)) and (
            kinds <= set(KINDS) or isinstance(value, (dict, list))):
        yield f"{where} is {_kind(value)}, CloudFormation wants {' or '.join(sorted(kinds))}"
        return
    if isinstance(value, dict) and "properties" in schema:
        for key, item in value.items():
            if key in schema["properties"]:
                yield from _kind_errors(item, schema["properties"][key], root, f"{where}.{key}", depth + 1)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            yield from _kind_errors(item, schema["items"], root, f"{where}[{index}]", depth + 1)


def _resource_errors(logical_id: str, resource: dict[str, Any],
                     stand_ins: dict[str, tuple[str, tuple[str, ...]]]) -> Iterator[str]:
    where = f"Resources.{logical_id}"
    properties = resource.get("Properties", {})
    if not isinstance(properties, dict):
        yield f"{where}.Properties is {_kind(properties)}, CloudFormation wants a mapping"
        return
    for policy in ("DeletionPolicy", "UpdateReplacePolicy"):
        if policy in resource and resource[policy] not in POLICIES:
            yield f"{where}.{policy} is {resource[policy]!r}, CloudFormation allows {', '.join(POLICIES)}"
    native, prefix = stand_ins.get(resource["Type"], (resource["Type"], ()))
    schema = resource_schema(native)
    if schema is None:
        return
    where = f"{where}.Properties"
    for key in prefix:
        properties, where = properties.get(key, {}), f"{where}.{key}"
        if not isinstance(properties, dict):
            yield f"{where} is {_kind(properties)}, the handler wants a mapping"
            return
    yield from _kind_errors(properties, {"type": "object", "properties": schema.get("properties", {})}, schema, where)


def check_template(template: Any, stand_ins: dict[str, tuple[str, tuple[str, ...]]]) -> None:
    """Raise TemplateShapeError naming the first field that is not as CloudFormation defines it.
    `stand_ins`: custom type -> (the native type whose schema applies, the keys its properties are under)."""
    from jsonschema import Draft7Validator

    for name, value in (("template", template), ("resources", template.get("Resources") if isinstance(template, dict) else None)):
        if name == "resources" and not isinstance(template, dict):
            break
        error = next(iter(sorted(Draft7Validator(_schema(name)).iter_errors(value), key=lambda e: list(e.path))), None)
        if error is not None:
            path = ".".join(str(p) for p in error.path)
            field = ("Resources" + (f".{path}" if path else "")) if name == "resources" else (path or "the template")
            message = error.message if len(error.message) <= 120 else error.message[:100] + "..."
            raise TemplateShapeError(f"{field}: {message} (CloudFormation template anatomy, cfn-lint's "
                                     f"{name} schema)")
    for logical_id, resource in template["Resources"].items():
        for problem in _resource_errors(logical_id, resource, stand_ins):
            raise TemplateShapeError(problem)
