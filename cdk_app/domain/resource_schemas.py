"""CloudFormation's own resource schemas, as cfn-lint ships them: which properties are create-only (a
change replaces the resource) and which IAM actions each handler calls. `plan`, `validate --live` and the
tests read them here, so the kit never keeps its own list of what replaces what. cfn-lint itself is not
imported: only its data files are read."""

from __future__ import annotations

import json
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from cdk_app.domain.regions import cfnlint_data

# Regions tried first when a type is not offered in the region asked for (its schema is the same).
FALLBACK_REGIONS = ("us-east-1", "us-west-2", "eu-west-1")


def _providers() -> Path:
    return cfnlint_data() / "schemas" / "providers"


@cache
def _provider_map(region: str) -> dict[str, str]:
    path = _providers() / f"{region}.json"
    return json.loads(path.read_text()) if path.is_file() else {}


@cache
def resource_schema(type_name: str, region: str = "us-east-1") -> dict[str, Any] | None:
    """The schema of `type_name` in `region`, else in any region that has it; None for unknown types."""
    regions = [region, *FALLBACK_REGIONS, *sorted(p.stem for p in _providers().glob("*.json"))]
    for candidate in regions:
        digest = _provider_map(candidate).get(type_name)
        if digest:
            return json.loads((cfnlint_data() / "schemas" / "resources" / f"{digest}.json").read_text())
    return None


def _path(pointer: str) -> tuple[str, ...]:
    """'/properties/VpcConfig/Subnets' -> ('VpcConfig', 'Subnets')."""
    parts = pointer.split("/")
    if parts[:2] != ["", "properties"]:
        raise ValueError(f"not a property pointer: {pointer!r}")
    return tuple(parts[2:])


def create_only_properties(type_name: str) -> tuple[tuple[str, ...], ...]:
    """Property paths whose change replaces a resource of `type_name` ('*' stands for every list item);
    empty for types cfn-lint does not know (custom resources)."""
    schema = resource_schema(type_name)
    return tuple(_path(p) for p in (schema or {}).get("createOnlyProperties", ()))


def handler_permissions(type_name: str) -> dict[str, tuple[str, ...]]:
    """IAM actions per handler (create, read, update, delete, list) of `type_name`'s CloudFormation handlers."""
    schema = resource_schema(type_name)
    if schema is None:
        raise KeyError(f"cfn-lint has no schema for {type_name}")
    return {name: tuple(handler.get("permissions", ())) for name, handler in schema.get("handlers", {}).items()}


@lru_cache(maxsize=1)
def _policies() -> dict[str, Any]:
    return json.loads((cfnlint_data() / "AdditionalSpecs" / "Policies.json").read_text())


def action_resource_types(action: str) -> tuple[str, ...] | None:
    """The IAM resource types `service:Action` accepts (empty: only '*'); None for an unknown action."""
    service, _, name = action.partition(":")
    entry = _policies().get(service, {}).get("Actions", {}).get(name.lower())
    return None if entry is None else tuple(entry.get("Resources", ()))


def resource_type_arn_formats(service: str, resource_type: str) -> tuple[str, ...]:
    """The ARN formats (regular expressions after ${...} substitution) IAM gives `resource_type` of
    `service`, e.g. arn:${Partition}:eks:${Region}:${Account}:cluster/.*"""
    entry = _policies().get(service, {}).get("Resources", {}).get(resource_type, {})
    return tuple(entry.get("ARNFormats", ()))


def stateful_types() -> frozenset[str]:
    """Types cfn-lint counts as stateful (data lost on deletion or replacement)."""
    path = cfnlint_data() / "AdditionalSpecs" / "StatefulResources.json"
    return frozenset(json.loads(path.read_text())["ResourceTypes"])
