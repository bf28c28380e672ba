"""Load config/<env>.yaml into a KitConfig, or into findings that name file, line, field and fix."""

from __future__ import annotations

import copy
import difflib
import re
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from cdk_app.config.model import KitConfig
from cdk_app.config.scalars import ScalarFloat, ScalarInt, plain_digits, yaml12_number
from cdk_app.config.types import AZ_ID_PATTERN
from cdk_app.config.validator_cache import kit_config_validator
from cdk_app.config.yaml_source import ConfigReadError, PathKey, SourceMap, parse_yaml, read_text
from cdk_app.config.zone_ids import is_region_name, region_code
from cdk_app.findings import Finding, Severity, format_path
from hyperpod_constructs.private.subnet_layout import MAX_ZONE_NUMBER


@dataclass(frozen=True, slots=True)
class LoadedConfig:
    config: KitConfig
    source: SourceMap


class ConfigInvalid(Exception):
    """The config could not be loaded. `unreadable` is true when the file is not even a YAML mapping."""

    def __init__(self, findings: list[Finding], unreadable: bool, partial: LoadedConfig | None = None,
                 repaired: tuple[PathKey, ...] = (), stand_ins: tuple[str, ...] = (),
                 meant: tuple[str, ...] = ()) -> None:
        super().__init__("; ".join(f.render() for f in findings))
        self.findings = findings
        self.unreadable = unreadable
        # The config without the keys that have shape errors, where leaving them out still makes a config:
        # the policy rules can check the rest of the file. `repaired` lists the keys left out or stood in for,
        # `stand_ins` the values put in place of broken zone ids (a finding that names one follows from them),
        # `meant` the texts of required keys read as their fix says (a finding that names one may follow from it).
        self.partial = partial
        self.repaired = repaired
        self.stand_ins = stand_ins
        self.meant = meant


# What a format-checked field must look like, in words, by field name.
_FORMATS = {
    "environment": "lower-case letters, digits and hyphens, starting with a letter, at most 20 characters",
    "account": "12 digits in quotes, e.g. \"111122223333\"",
    "region": "an AWS region such as us-east-1",
    "subnet_id": "a subnet id such as subnet-0123456789abcdef0",
    "existing_vpc_id": "a VPC id such as vpc-0123456789abcdef0",
    "vpc_cidr": "an IPv4 CIDR from /16 to /20, e.g. 10.192.0.0/16",
    "public_access_cidrs": "an IPv4 CIDR such as 203.0.113.0/24",
    "kubernetes_version": "a quoted version such as \"1.33\"",
    "addon_version": "an EKS add-on version such as v1.6.0-eksbuild.1",
    "admin_principals": "an IAM role or user ARN such as arn:aws:iam::111122223333:role/Admin",
    "principals": "an IAM role or user ARN such as arn:aws:iam::111122223333:role/TeamA",
    "training_plan_arn": "a SageMaker training plan ARN",
    "image_id": "an AMI id such as ami-0123456789abcdef0, or default (HyperPod's latest AMI)",
    "image_release_version": "a HyperPod AMI release version MAJOR.MINOR.PATCH in quotes, e.g. \"1.2.3\"",
    "schedule_expression": ("cron(Minutes Hours Day-of-month Month Day-of-week Year) with single spaces, e.g. "
                            "cron(0 4 ? * SUN *) for Sundays at 04:00 UTC (AWS::SageMaker::Cluster's format: "
                            "Day-of-month a number or ?, Day-of-week a day, number, ?, L, 2#1 or 5L, Year 20xx or *)"),
    "rollback_alarms": "a CloudWatch alarm name: one line, not only spaces",
    "kms_key_id": ("a KMS key ARN, key id, multi-Region key id (mrk-...) or alias name (alias/...), e.g. "
                   "arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"),
    "s3_path": "an S3 bucket or prefix such as s3://my-bucket/datasets/",
    "file_system_path": "a directory of the file system with its leading slash, e.g. /datasets",
    "daily_automatic_backup_start_time": "a quoted UTC time HH:MM, e.g. \"03:00\"",
    "csi_driver_version": "an EKS add-on version such as v1.6.0-eksbuild.1",
}

_ZONE_ID_FORMAT = "an availability zone id such as use1-az4 (ids, not names like us-east-1a)"

_TYPE_WORDS = {
    "int": "a whole number", "float": "a number", "str": "text", "bool": "true or false",
    "dict": "a mapping of keys", "list": "a list", "NoneType": "nothing (null)", "ScalarFloat": "a number",
}


def load_config(path: Path | str, display_name: str | None = None) -> LoadedConfig:
    """Read, parse and type-check one config file; raise ConfigInvalid with located findings."""
    file_path = Path(path)
    name = display_name or str(path)
    try:
        data, source = parse_yaml(read_text(file_path, name), name)
    except ConfigReadError as err:
        raise ConfigInvalid([err.finding], unreadable=True) from None
    if not isinstance(data, dict):
        what = "empty" if data is None else f"{_describe_type(data)}, not a mapping of keys"
        raise ConfigInvalid(
            [Finding("HPK003", Severity.ERROR, name, 1, 1, "", f"the document is {what}",
                     "start from config/dev.yaml: a mapping with environment, account, region, ...")],
            unreadable=True,
        )
    errors = _ambiguous_numbers(data, ())
    try:
        config = kit_config_validator().validate_python(data)
    except ValidationError as err:
        ambiguous = {tuple(error["loc"]) for error in errors}  # their own words say more than a type error
        errors += [e for e in err.errors(include_url=False) if tuple(e["loc"]) not in ambiguous]
    if errors:
        findings = [_finding(error, source) for error in errors if not _hidden_by_items(error, errors)]
        findings.sort(key=lambda f: (f.line, f.column, f.path))
        partial, repaired, stand_ins, meant = _without_bad_keys(data, errors, source)
        raise ConfigInvalid(findings, unreadable=False, partial=LoadedConfig(partial, source) if partial else None,
                            repaired=repaired, stand_ins=stand_ins, meant=meant)
    return LoadedConfig(config, source)


def _ambiguous_numbers(node: Any, loc: PathKey) -> list[dict[str, Any]]:
    """Errors, in pydantic's form, for the numbers of number fields that YAML 1.1 (this reader) and YAML 1.2
    (editors with config/schema.json, JSON) read differently: `vcpu: 2:24` would silently be 144. A text
    field keeps its own hint (quote it), so only number fields are looked at."""
    if isinstance(node, dict):
        return [e for key, value in node.items() for e in _ambiguous_numbers(value, (*loc, key))]
    if isinstance(node, list):
        return [e for index, value in enumerate(node) for e in _ambiguous_numbers(value, (*loc, index))]
    ambiguous = isinstance(node, ScalarInt) or (isinstance(node, ScalarFloat) and yaml12_number(node.text) is None)
    if not ambiguous or not _is_number_field(loc):
        return []
    return [{"type": "yaml_readings", "loc": loc, "msg": "", "input": node,
             "ctx": {"text": node.text, "value": node}}]


def _is_number_field(loc: PathKey) -> bool:
    model = _model_at(KitConfig, loc[:-1]) if loc and isinstance(loc[-1], str) else None
    field = model.model_fields.get(loc[-1]) if model is not None else None
    if field is None:
        return False
    kind = inner_model(field.annotation)
    if typing.get_origin(kind) is typing.Literal:
        return all(isinstance(choice, int) for choice in typing.get_args(kind))
    return kind in (int, float)


def _without_bad_keys(data: dict, errors: list[Any], source: SourceMap
                      ) -> tuple[KitConfig | None, tuple[PathKey, ...], tuple[str, ...], tuple[str, ...]]:
    """The config with every key that has a shape error left out, if each such key is unknown or optional;
    else None. A broken zone id is not left out but stood in for (`_zone_stand_ins`): without its zones an
    environment would look as if it had no HyperPod cluster, and no rule of the cluster would run; nor is a
    required key whose type error says what was meant (`_meant_values`). A few rounds, since leaving a key out
    can uncover an error behind it. Returns (config, keys repaired, zone stand-ins, texts read as meant)."""
    data = copy.deepcopy(data)
    stand_ins = _zone_stand_ins(data, errors)
    meant = _meant_values(data, errors, source)
    removed: dict[PathKey, None] = dict.fromkeys([*stand_ins, *meant])  # in order; a dict: O(1) membership
    for _ in range(3):
        # A list's length error that its items' errors explain goes away with them: it names no key to leave out.
        errors = [error for error in errors
                  if tuple(error["loc"]) not in removed and not _hidden_by_items(error, errors)]
        # Every target is found before any is removed: two bad labels both lead to `labels`, which the
        # first removal would take away from under the second.
        targets = [_removable(data, tuple(error["loc"])) for error in errors]
        if None in targets:
            return None, (), (), ()
        for container, path in targets:  # type: ignore[misc]
            if path not in removed:
                container.pop(path[-1])
                removed[path] = None
        try:
            texts = tuple(dict.fromkeys(v for v in meant.values() if isinstance(v, str)))
            return (kit_config_validator().validate_python(data), tuple(removed),
                    tuple(dict.fromkeys(stand_ins.values())), texts)
        except ValidationError as err:
            errors = err.errors(include_url=False)
    return None, (), (), ()


def _zone_stand_ins(data: dict, errors: list[Any]) -> dict[PathKey, str]:
    """Put a well-formed stand-in in place of each zone id with a format error (a zone name, mostly) in a list
    or a required key (an optional one is left out, as any broken key), in `data`; return them by key. The same text gets the same stand-in, so zones that agree (a group's zone among the
    environment's) still agree and the zone rules report only what the text itself gets wrong. A stand-in is an
    id of the region's prefix that the file names nowhere, with a zone number a new VPC has a subnet slot for
    while one is free (else az99 down, which HPK120 reports), so a finding that names one follows from the
    broken id (cdk_app.validator.report holds it back)."""
    region = data.get("region")
    prefix = region_code(region) if isinstance(region, str) and is_region_name(region) else "zzz1"
    named = set(_strings(data))
    numbers = (n for n in (*range(1, MAX_ZONE_NUMBER + 1), *range(99, 9, -1)) if f"{prefix}-az{n}" not in named)
    by_text: dict[str, str] = {}
    placed: dict[PathKey, str] = {}
    for error in errors:
        loc = tuple(error["loc"])
        value = error.get("input")
        if error["type"] != "string_pattern_mismatch" or (error.get("ctx") or {}).get("pattern") != AZ_ID_PATTERN:
            continue
        container = _container(data, loc)
        if container is None or not isinstance(value, str) or _optional_key(loc):
            continue  # an optional zone key left out takes its default zone, as the rest of the file does
        if value not in by_text:
            number = next(numbers, None)
            if number is None:
                continue  # 90 distinct broken zone ids: the rest are left out as any broken key
            by_text[value] = f"{prefix}-az{number}"
        container[loc[-1]] = placed[loc] = by_text[value]
    return placed


def _meant_values(data: dict, errors: list[Any], source: SourceMap) -> dict[PathKey, Any]:
    """A required key (which cannot be left out) whose value has the wrong type in the way its message's fix
    names - a quoted number (`count: "4"`: write it without quotes), an unquoted number or boolean where text
    belongs (`name: 123`: write it in quotes) - is read as that fix in `data`, so that the other rules still run.
    Findings at the key stay held back (it is among the keys repaired); returns the values by key."""
    placed: dict[PathKey, Any] = {}
    for error in errors:
        loc: PathKey = tuple(error["loc"])
        value = error.get("input")
        container = _container(data, loc)
        if container is None or not _required_key(loc):
            continue
        if error["type"] == "int_type" and isinstance(value, str) and re.fullmatch(r"[0-9]{1,18}", value.strip()):
            container[loc[-1]] = placed[loc] = int(value.strip())
        elif error["type"] == "string_type" and isinstance(value, (bool, int, float)):
            container[loc[-1]] = placed[loc] = source.text(loc) or _as_written(value)
    return placed


def _required_key(loc: PathKey) -> bool:
    model = _model_at(KitConfig, loc[:-1]) if loc and isinstance(loc[-1], str) else None
    field = model.model_fields.get(loc[-1]) if model is not None else None
    return field is not None and field.is_required()


def _optional_key(loc: PathKey) -> bool:
    model = _model_at(KitConfig, loc[:-1]) if loc and isinstance(loc[-1], str) else None
    field = model.model_fields.get(loc[-1]) if model is not None else None
    return field is not None and not field.is_required()


def _strings(node: Any) -> typing.Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


def _container(data: Any, loc: PathKey) -> Any:
    """The mapping or list that holds the value at `loc`, or None if the path does not lead there."""
    node = data
    for part in loc[:-1]:
        if isinstance(node, dict) and part in node or isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        else:
            return None
    last = loc[-1] if loc else None
    inside = (isinstance(node, dict) and last in node) or (isinstance(node, list) and isinstance(last, int) and 0 <= last < len(node))
    return node if inside else None


def _removable(data: Any, loc: PathKey) -> tuple[dict, PathKey] | None:
    """The key to leave out for an error at `loc`: the deepest unknown or optional model field on the way, as
    long as no required field lies below it (leaving out more than the broken key could make other rules
    report what is not wrong, e.g. a removed priority class list). Keys of plain mappings (labels) count as
    part of their field."""
    found = None
    node = data
    for depth, part in enumerate(loc):
        if isinstance(node, dict) and isinstance(part, str) and part in node:
            model = _model_at(KitConfig, loc[:depth])
            if model is not None:
                field = model.model_fields.get(part)
                found = (node, loc[: depth + 1]) if field is None or not field.is_required() else None
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        else:
            break
    return found


def _hidden_by_items(error: Any, errors: list[Any]) -> bool:
    """A list's length error counts only the items that passed; when items failed, their errors say it."""
    if error["type"] not in ("too_short", "too_long"):
        return False
    loc = tuple(error["loc"])
    return any(len(other["loc"]) > len(loc) and tuple(other["loc"][: len(loc)]) == loc for other in errors)


_ZONE_NAME = re.compile(r"[a-z]{2}(-[a-z]+)+-[0-9][a-z]")


def _describe_type(value: Any) -> str:
    return _TYPE_WORDS.get(type(value).__name__, type(value).__name__)


def _describe(value: Any, written: str | None = None) -> str:
    """What the admin wrote and what YAML made of it: `number 011122223333`, `true or false 'on'`."""
    if isinstance(value, (dict, list, tuple)):
        return _describe_type(value)
    if written is not None and isinstance(value, bool):
        return f"{written[:60]} (YAML reads it as {str(value).lower()})"
    if written is not None and isinstance(value, (int, float)):
        return f"the number {written[:60]}{'...' if len(written) > 60 else ''}"
    if written is not None:
        text = written
    elif isinstance(value, int) and abs(value) >= 10 ** 38:
        text = "(a number of more than 38 digits)"  # repr of a huge int hits Python's int-string limit
    else:
        text = repr(value)
    return f"{_describe_type(value)} {text[:60] + '...' if len(text) > 60 else text}"


def _as_written(value: Any) -> str:
    """A scalar as YAML writes it, for one an alias or merge key brought (it has no text at its place)."""
    return str(value).lower() if isinstance(value, bool) else _describe(value)[len(_describe_type(value)) + 1:]


def _finding(error: Any, source: SourceMap) -> Finding:
    loc: PathKey = tuple(error["loc"])
    kind: str = error["type"]
    ctx: dict[str, Any] = error.get("ctx") or {}
    value = error.get("input")
    field = next((part for part in reversed(loc) if isinstance(part, str)), "")
    code, message, hint = _explain(kind, ctx, value, loc, field, source.text(loc))
    where = source.locate(loc)
    return Finding(code, Severity.ERROR, source.file, where.line, where.column, format_path(loc), message, hint)


def _explain(kind: str, ctx: dict[str, Any], value: Any, loc: PathKey, field: str,
             written: str | None = None) -> tuple[str, str, str]:
    if kind == "extra_forbidden":
        allowed = sorted(_allowed_keys(loc[:-1]))
        near = difflib.get_close_matches(str(loc[-1]), allowed, n=1, cutoff=0.6)
        lead = f"did you mean '{near[0]}'? " if near else ""
        return "HPK010", f"unknown key '{loc[-1]}'", f"{lead}allowed keys: {', '.join(allowed)}"
    if kind == "missing":
        return "HPK011", f"required key '{loc[-1]}' is missing", f"add `{loc[-1]}:` here"
    if kind == "literal_error":
        expected = ctx.get("expected", "")
        choices = re.findall(r"'([^']*)'", expected)
        typed = value if isinstance(value, str) else (written or "")
        near = difflib.get_close_matches(typed[:80], choices, n=1, cutoff=0.6) if choices else []
        lead = f"did you mean '{near[0]}'? " if near else ""
        if isinstance(value, bool) and written is not None:
            lead = f"YAML reads {written} as a boolean, and {field} takes a word: "
        return "HPK014", f"{_describe(value, written)} is not allowed", f"{lead}allowed: {expected}"
    # Every zone-id field (the environment's, the clusters', a group's, a subnet's, a file system's) has the
    # same pattern, so the pattern, not the field's name, says the value is meant as a zone id.
    zone_id_field = ctx.get("pattern") == AZ_ID_PATTERN
    if kind == "string_pattern_mismatch" and zone_id_field and _ZONE_NAME.fullmatch(str(value)):
        region = str(value)[:-1]
        return ("HPK015", f"{value!r} is an availability zone name; the kit needs zone ids",
                f"zone names map to different zones in each account; look up the id with `aws ec2 "
                f"describe-availability-zones --region {region} --query 'AvailabilityZones[].[ZoneName,ZoneId]'` "
                f"(ids look like {region_code(region)}-az1; `hyperpod-kit init --list-zones --region {region}` "
                "says what the kit knows of them)")
    if kind == "string_pattern_mismatch":
        wanted = (_ZONE_ID_FORMAT if zone_id_field
                  else _FORMATS.get(field, f"text matching {ctx.get('pattern')}"))
        return "HPK015", f"{value[:80]!r} has the wrong format", f"expected {wanted}"
    bounds = {
        "greater_than_equal": ("is below the minimum", "at least {ge}"),
        "less_than_equal": ("is above the maximum", "at most {le}"),
        "too_short": ("has too few items", "at least {min_length}"),
        "too_long": ("has too many items", "at most {max_length}"),
        "string_too_short": ("is too short", "at least {min_length} characters"),
        "string_too_long": ("is too long", "at most {max_length} characters"),
    }
    if kind in bounds:
        problem, allowed = bounds[kind]
        shown = _describe(value, written) if not isinstance(value, (list, tuple, dict)) else f"{len(value)} items"
        return "HPK013", f"{shown} {problem}", f"allowed: {allowed.format(**ctx)}"
    expected = {
        "int_type": "a whole number", "float_type": "a number", "string_type": "text",
        "bool_type": "true or false", "model_type": "a mapping of keys", "dict_type": "a mapping of keys",
        "tuple_type": "a list",
    }.get(kind)
    if expected is not None:
        hint = f"expected {expected}"
        shown = written if written is not None else _as_written(value)
        if kind == "string_type" and isinstance(value, bool):
            hint += (f"; YAML reads {shown} as {str(value).lower()}: write {field} in quotes, "
                     f"e.g. {field}: \"{shown}\"")
        elif kind == "string_type" and isinstance(value, (int, float)):
            hint += f"; YAML read this as a number: write it in quotes, e.g. {field}: \"{shown}\""
        elif isinstance(value, bool) and written is not None:
            hint += f"; YAML reads {written} as {str(value).lower()}"
        if kind == "int_type" and isinstance(value, str) and value.strip().isdigit():
            hint += f"; write it without quotes: {value.strip()}"
        elif kind in ("int_type", "float_type") and isinstance(value, str) \
                and (number := yaml12_number(value)) is not None and (isinstance(number, int) or number.is_finite()):
            # A quoted number (its text is what to write), or 1.44e2: a number to YAML 1.2, text to this reader
            # (YAML 1.1 wants 1.44e+2); the text, unquoted, as this reader reads it tells which.
            text, digits = value.strip(), plain_digits(number)
            if "E" in digits:  # beyond MAX_PLAIN_DIGITS: no field takes a number that size, say so instead
                return "HPK012", f"{_describe(value, written)} has the wrong type", \
                    f"{hint}; {text} is a number far beyond anything {field} allows"
            unquoted = parse_yaml(f"v: {text}", "")[0]["v"]
            if isinstance(unquoted, (int, float)) and not isinstance(unquoted, bool) and plain_digits(unquoted) == digits:
                hint += f"; write it without quotes: {text}"
            else:
                read = "text" if isinstance(unquoted, str) else plain_digits(unquoted)
                hint += f"; YAML 1.1 reads {text} as {read}: write {digits}"
        return "HPK012", f"{_describe(value, written)} has the wrong type", hint
    if kind == "yaml_readings":
        text, other = ctx["text"], yaml12_number(ctx["text"])
        elsewhere = f"as {plain_digits(other)}" if other is not None else "as text"
        return ("HPK012", f"{text} is read as {plain_digits(ctx['value'])} here, a YAML 1.1 number form",
                f"YAML 1.2 - editors with config/schema.json, JSON - reads {text} {elsewhere}; write the number "
                f"in plain digits, e.g. {field}: {plain_digits(ctx['value'])}")
    if kind == "finite_number":
        return "HPK013", f"{_describe(value, written)} is not a finite number", "give a number (not .inf or .nan)"
    return "HPK012", f"{_describe(value, written)} is not valid", "see the config reference in README.md"


def _allowed_keys(loc: PathKey) -> set[str]:
    model = _model_at(KitConfig, loc)
    return set(model.model_fields) if model else set()


def _model_at(model: type[BaseModel], loc: PathKey) -> type[BaseModel] | None:
    """The model class describing the mapping at `loc` (list indexes are skipped)."""
    # With the validator read from its cache file, pydantic has not resolved KitConfig.batch (a forward
    # reference to batch_model); resolve it here, on the error path only, so batch keys are found too.
    model.model_rebuild()
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        if typing.get_origin(current) is dict:  # `part` is a key of a mapping of models (chart dependency pins)
            current = inner_model(typing.get_args(current)[1])
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)) or part not in current.model_fields:
            return None
        current = inner_model(current.model_fields[part].annotation)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def inner_model(annotation: Any) -> Any:
    """tuple[Team, ...] | None -> Team; Annotated[...] is unwrapped."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            annotation = next(a for a in typing.get_args(annotation) if a is not type(None))
        elif origin in (tuple, list):
            annotation = typing.get_args(annotation)[0]
        else:
            return annotation
