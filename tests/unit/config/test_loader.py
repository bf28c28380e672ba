"""The config loader's findings that mutation testing of cdk_app/config/loader.py found untested.

Every shape error must name file, line, column and field, say what is wrong and what is allowed. The
expected words come from sources the loader does not own: the bounds, choices and patterns of the JSON
schema (config/schema.json, written by pydantic from the model), pydantic's own error types and `expected`
text, PyYAML's reading of the scalar (`on` is true, `011` is a number), and the README's HPK code table.
"""

from __future__ import annotations

import json
import re
import typing
from pathlib import Path
from typing import Annotated

import pytest
import yaml
from pydantic import BaseModel, Field, ValidationError
from support.paths import ROOT, SUPPORT

from cdk_app.config.loader import ConfigInvalid, _explain, _model_at, inner_model, load_config
from cdk_app.config.model import ChartDependencyPin, KitConfig, QuotaEntry, Team
from cdk_app.config.validator_cache import kit_config_validator

BASE = (SUPPORT / "adversarial" / "base.yaml").read_text()
SCHEMA = json.loads((ROOT / "config" / "schema.json").read_text())
DEFS = SCHEMA["$defs"]


def edit(old: str, new: str, text: str = BASE) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


def refused(tmp_path, text: str) -> ConfigInvalid:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigInvalid) as caught:
        load_config(path, "shown.yaml")
    return caught.value


def only(tmp_path, text: str) -> tuple[str, int, int, str, str, str]:
    err = refused(tmp_path, text)
    assert len(err.findings) == 1, [f.render() for f in err.findings]
    f = err.findings[0]
    assert (f.file, f.severity.value) == ("shown.yaml", "error")
    return f.code, f.line, f.column, f.path, f.message, f.hint


def pyyaml_line(text: str, path: tuple) -> tuple[int, int]:
    """Line and column of the key (or item) at `path`, from PyYAML's composer."""
    node = yaml.compose(text, Loader=yaml.SafeLoader)
    mark = None
    for part in path:
        if isinstance(part, int):
            node = node.value[part]
            mark = node.start_mark
        else:
            key, node = next((k, v) for k, v in node.value if k.value == part)
            mark = key.start_mark
    return mark.line + 1, mark.column + 1


def test_the_base_config_loads():
    loaded = load_config(SUPPORT / "adversarial" / "base.yaml")
    assert loaded.config.teams[0].name == "john" and loaded.source.file.endswith("base.yaml")


@pytest.mark.parametrize("text, what", [
    ("", "empty"), ("# nothing\n", "empty"), ("~\n", "empty"), ("- a\n", "a list, not a mapping of keys"),
    ("5\n", "a whole number, not a mapping of keys"), ("text\n", "text, not a mapping of keys"),
    ("1.5\n", "a number, not a mapping of keys"), ("yes\n", "true or false, not a mapping of keys"),
])
def test_a_document_that_is_no_mapping_is_unreadable(tmp_path, text, what):
    err = refused(tmp_path, text)
    assert err.unreadable and err.partial is None and err.repaired == ()
    assert [f.render() for f in err.findings] == [
        f"shown.yaml:1:1 the document is {what} (start from config/dev.yaml: a mapping with environment, "
        "account, region, ...) [HPK003 error]"]
    assert str(err) == err.findings[0].render()


def test_an_unparsable_file_is_unreadable(tmp_path):
    err = refused(tmp_path, "a: [\n")
    assert err.unreadable and [f.code for f in err.findings] == ["HPK002"] and err.findings[0].file == "shown.yaml"


def test_the_display_name_defaults_to_the_path(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("[]\n")
    with pytest.raises(ConfigInvalid) as caught:
        load_config(path)
    assert caught.value.findings[0].file == str(path)


def test_unknown_keys_name_the_schema_s_keys_and_the_nearest(tmp_path):
    text = edit("region: us-east-1", "region: us-east-1\nregoin: x")
    allowed = ", ".join(sorted(SCHEMA["properties"]))
    assert only(tmp_path, text) == ("HPK010", 4, 1, "regoin", "unknown key 'regoin'",
                                    f"did you mean 'region'? allowed keys: {allowed}")
    text = edit("      count: 4\n", "      count: 4\n      zzzzzz: 1\n")
    allowed = ", ".join(sorted(DEFS["InstanceGroup"]["properties"]))
    assert only(tmp_path, text)[3:] == ("hyperpod.instance_groups[0].zzzzzz", "unknown key 'zzzzzz'",
                                        f"allowed keys: {allowed}")
    # A near miss inside a nested section is matched against that section's keys.
    text = edit("cluster_policy:\n", "cluster_policy:\n  priority_classes_x: 1\n")
    assert only(tmp_path, text)[4:] == ("unknown key 'priority_classes_x'", "did you mean 'priority_classes'? "
                                        f"allowed keys: {', '.join(sorted(DEFS['ClusterPolicy']['properties']))}")


def test_a_missing_required_key_is_located_at_its_mapping(tmp_path):
    text = edit("    - name: cpu\n", "    - name_: cpu\n")
    found = refused(tmp_path, text).findings
    missing = [f for f in found if f.code == "HPK011"]
    assert [(f.path, f.line, f.column, f.message, f.hint) for f in missing] == [
        ("hyperpod.instance_groups[1].name", *pyyaml_line(text, ("hyperpod", "instance_groups", 1)),
         "required key 'name' is missing", "add `name:` here")]
    assert "name" in DEFS["InstanceGroup"]["required"]


def test_a_word_outside_the_choices_names_the_choices_and_the_nearest(tmp_path):
    text = edit("endpoint_access: public_and_private", "endpoint_access: publik_and_private")
    choices = " or ".join([", ".join(f"'{c}'" for c in DEFS["Eks"]["properties"]["endpoint_access"]["enum"][:-1]),
                           f"'{DEFS['Eks']['properties']['endpoint_access']['enum'][-1]}'"])
    assert only(tmp_path, text) == (
        "HPK014", *pyyaml_line(text, ("eks", "endpoint_access")), "eks.endpoint_access",
        "text 'publik_and_private' is not allowed", f"did you mean 'public_and_private'? allowed: {choices}")
    far = edit("endpoint_access: public_and_private", "endpoint_access: zzz")
    assert only(tmp_path, far)[5] == f"allowed: {choices}"


def test_a_boolean_where_a_word_is_wanted_says_what_yaml_read(tmp_path):
    text = edit("endpoint_access: public_and_private", "endpoint_access: On")
    assert yaml.safe_load("x: On")["x"] is True
    code, _, _, _, message, hint = only(tmp_path, text)
    assert (code, message) == ("HPK014", "On (YAML reads it as true) is not allowed")
    assert hint.startswith("YAML reads On as a boolean, and endpoint_access takes a word: allowed: 'public'")


def test_a_number_where_a_word_is_wanted(tmp_path):
    text = edit("endpoint_access: public_and_private", "endpoint_access: 12")
    assert only(tmp_path, text)[4:] == ("the number 12 is not allowed",
                                        "allowed: 'public', 'private' or 'public_and_private'")


def test_a_zone_name_is_told_apart_from_a_zone_id(tmp_path):
    text = edit("      availability_zone_id: use1-az4", "      availability_zone_id: eu-west-2b")
    assert only(tmp_path, text) == (
        "HPK015", 22, 7, "hyperpod.instance_groups[0].availability_zone_id",
        "'eu-west-2b' is an availability zone name; the kit needs zone ids",
        "zone names map to different zones in each account; look up the id with `aws ec2 describe-availability-zones"
        " --region eu-west-2 --query 'AvailabilityZones[].[ZoneName,ZoneId]'` (ids look like euw2-az1; `hyperpod-kit init"
            " --list-zones --region eu-west-2` says what the kit knows of them)")
    # In the list of zone ids too; something that is no zone name gets the plain format message.
    listed = edit("availability_zone_ids: [use1-az4, use1-az6]", "availability_zone_ids: [use1-az4, us-east-1a]")
    assert only(tmp_path, listed)[3:5] == ("availability_zone_ids[1]",
                                          "'us-east-1a' is an availability zone name; the kit needs zone ids")
    other = edit("      availability_zone_id: use1-az4", "      availability_zone_id: zone1")
    assert only(tmp_path, other)[4:] == (
        "'zone1' has the wrong format", "expected an availability zone id such as use1-az4 (ids, not names like "
        "us-east-1a)")


@pytest.mark.parametrize("old, new, path, wanted", [
    ("region: us-east-1", "region: mars", ("region",), "an AWS region such as us-east-1"),
    ("vpc_cidr: 10.192.0.0/16", "vpc_cidr: 10.0.0.0/8", ("network", "vpc_cidr"),
     "an IPv4 CIDR from /16 to /20, e.g. 10.192.0.0/16"),
    ("environment: dev", "environment: Dev", ("environment",),
     "lower-case letters, digits and hyphens, starting with a letter, at most 20 characters"),
    ("    - arn:aws:iam::111122223333:role/PlatformAdmin", "    - arn:aws:iam::1:role/PlatformAdmin",
     ("eks", "admin_principals", 0), "an IAM role or user ARN such as arn:aws:iam::111122223333:role/Admin"),
])
def test_a_wrong_format_says_what_the_field_looks_like(tmp_path, old, new, path, wanted):
    text = edit(old, new)
    value = new.split(": ", 1)[-1].lstrip("- ")
    code, line, column, shown_path, message, hint = only(tmp_path, text)
    assert (code, message, hint) == ("HPK015", f"{value!r} has the wrong format", f"expected {wanted}")
    assert (line, column) == pyyaml_line(text, path)


def test_a_format_without_words_names_the_schema_pattern(tmp_path):
    text = edit("    content_sha256: c23c8e64", "    content_sha256: Z23c8e64")
    pattern = DEFS["HelmChart"]["properties"]["content_sha256"]["anyOf"][0]["pattern"]
    assert only(tmp_path, text)[4:] == (f"{'Z23c8e64' + text.split('Z23c8e64')[1].split(chr(10))[0]!r}"
                                        " has the wrong format", f"expected text matching {pattern}")


def test_a_long_wrong_value_is_cut_in_the_message(tmp_path):
    text = edit("region: us-east-1", "region: " + "a" * 100)
    assert only(tmp_path, text)[4] == f"{'a' * 80!r} has the wrong format"


@pytest.mark.parametrize("old, new, definition, field, problem, bound", [
    ("      count: 4\n", "      count: -1\n", "InstanceGroup", "count", "is below the minimum", "at least {minimum}"),
    ("      count: 4\n", "      count: 6759\n", "InstanceGroup", "count", "is above the maximum", "at most {maximum}"),
    ("      weight: 90", "      weight: 101", "PriorityClass", "weight", "is above the maximum", "at most {maximum}"),
])
def test_out_of_range_numbers_name_the_schema_bound(tmp_path, old, new, definition, field, problem, bound):
    text = edit(old, new)
    value = new.split(": ")[1].strip()
    code, _, _, path, message, hint = only(tmp_path, text)
    assert (code, path.rsplit(".", 1)[-1], message) == ("HPK013", field, f"the number {value} {problem}")
    assert hint == "allowed: " + bound.format(**DEFS[definition]["properties"][field])


def test_a_number_past_sixty_digits_is_cut(tmp_path):
    text = edit("      count: 4\n", "      count: " + "9" * 70 + "\n")
    assert only(tmp_path, text)[4] == f"the number {'9' * 60}... is above the maximum"
    text = edit("      count: 4\n", "      count: " + "9" * 60 + "\n")
    assert only(tmp_path, text)[4] == f"the number {'9' * 60} is above the maximum"
    text = edit("      count: 4\n", "      count: " + "9" * 61 + "\n")
    assert only(tmp_path, text)[4] == f"the number {'9' * 60}... is above the maximum"


@pytest.mark.parametrize("length, shown", [(58, "'" + "x" * 58 + "'"), (59, "'" + "x" * 59 + "..."),
                                           (60, "'" + "x" * 59 + "...")])
def test_a_long_value_without_yaml_text_is_cut_past_sixty_characters(length, shown):
    # repr of 58 x's is 60 characters: shown whole; one more and the message cuts it.
    assert _explain("int_type", {}, "x" * length, ("a",), "a")[1] == f"text {shown} has the wrong type"


@pytest.mark.parametrize("written, python_type", [("!!binary aGVsbG8=", "bytes")])
def test_explicitly_tagged_yaml_types_are_named(tmp_path, written, python_type):
    assert type(yaml.safe_load(f"x: {written}")["x"]).__name__ == python_type
    text = edit("environment: dev", f"environment: {written}")
    code, _, _, _, message, hint = only(tmp_path, text)
    assert (code, message.split(" ", 1)[0], hint) == ("HPK012", python_type, "expected text")


def test_list_lengths_name_the_schema_bound(tmp_path):
    zones = "[" + ", ".join(["use1-az4"] * 7) + "]"
    text = edit("availability_zone_ids: [use1-az4, use1-az6]", f"availability_zone_ids: {zones}")
    found = [f for f in refused(tmp_path, text).findings if f.path == "availability_zone_ids"]
    assert [(f.code, f.message, f.hint) for f in found] == [
        ("HPK013", "7 items has too many items", f"allowed: at most {SCHEMA['properties']['availability_zone_ids']['maxItems']}")]


def test_a_too_long_list_whose_items_fail_reports_the_items_only(tmp_path):
    zones = "[" + ", ".join(["us-east-1a"] * 7) + "]"
    text = edit("availability_zone_ids: [use1-az4, use1-az6]", f"availability_zone_ids: {zones}")
    found = refused(tmp_path, text).findings
    assert {f.code for f in found if f.path.startswith("availability_zone_ids")} == {"HPK015"}
    assert len([f for f in found if f.path.startswith("availability_zone_ids")]) == 7


@pytest.mark.parametrize("written, message, hint", [
    ("yes", "yes (YAML reads it as true) has the wrong type",
     'expected text; YAML reads yes as true: write environment in quotes, e.g. environment: "yes"'),
    ("no", "no (YAML reads it as false) has the wrong type",
     'expected text; YAML reads no as false: write environment in quotes, e.g. environment: "no"'),
    ("0123", "the number 0123 has the wrong type",
     'expected text; YAML read this as a number: write it in quotes, e.g. environment: "0123"'),
    ("1.5", "the number 1.5 has the wrong type",
     'expected text; YAML read this as a number: write it in quotes, e.g. environment: "1.5"'),
    ("[a]", "a list has the wrong type", "expected text"),
    ("{a: 1}", "a mapping of keys has the wrong type", "expected text"),
    ("~", "nothing (null) ~ has the wrong type", "expected text"),
])
def test_text_fields_given_other_yaml_types(tmp_path, written, message, hint):
    assert isinstance(yaml.safe_load(f"x: {written}")["x"], (bool, int, float, list, dict, type(None)))
    text = edit("environment: dev", f"environment: {written}")
    assert only(tmp_path, text) == ("HPK012", 1, 1, "environment", message, hint)


@pytest.mark.parametrize("written, message, hint", [
    ('" 4"', "text ' 4' has the wrong type", "expected a whole number; write it without quotes: 4"),
    ('"4x"', "text '4x' has the wrong type", "expected a whole number"),
    ("on", "on (YAML reads it as true) has the wrong type", "expected a whole number; YAML reads on as true"),
    ("4.5", "the number 4.5 has the wrong type", "expected a whole number"),
    ("[4]", "a list has the wrong type", "expected a whole number"),
])
def test_whole_number_fields_given_other_yaml_types(tmp_path, written, message, hint):
    text = edit("      count: 4\n", f"      count: {written}\n")
    assert only(tmp_path, text)[4:] == (message, hint)


@pytest.mark.parametrize("written, hint", [
    ('"true"', "expected true or false"), ("1", "expected true or false"),
    ("enabled", "expected true or false"),
])
def test_a_boolean_field_given_other_yaml_types(tmp_path, written, hint):
    assert DEFS["ClusterPolicy"]["properties"]["require_priority_class"]["type"] == "boolean"
    text = edit("cluster_policy:\n", f"cluster_policy:\n  require_priority_class: {written}\n")
    code, *_, found_hint = only(tmp_path, text)
    assert (code, found_hint) == ("HPK012", hint)


def test_a_mapping_given_a_scalar(tmp_path):
    text = edit("eks:\n", "eks: 5\nx_eks:\n")
    found = refused(tmp_path, text).findings
    assert [(f.code, f.path, f.line, f.message, f.hint) for f in found] == [
        ("HPK012", "eks", 8, "the number 5 has the wrong type", "expected a mapping of keys"),
        ("HPK010", "x_eks", 9, "unknown key 'x_eks'",
         f"did you mean 'eks'? allowed keys: {', '.join(sorted(SCHEMA['properties']))}")]


def test_findings_are_sorted_by_place(tmp_path):
    text = edit("      count: 4\n", "      count: -4\n")
    text = edit("environment: dev", "environment: Dev", text)
    text = edit("    borrow_limit: 50", "    borrow_limit: 5000", text)
    found = refused(tmp_path, text).findings
    assert [f.line for f in found] == sorted(f.line for f in found) and len(found) == 3
    assert found[0].path == "environment"


def test_a_finite_number_is_required_for_amounts(tmp_path):
    text = edit("        count: 3\n", "        accelerators: .nan\n")
    found = refused(tmp_path, text).findings
    assert [(f.code, f.message, f.hint) for f in found] == [
        ("HPK012", "the number .nan has the wrong type", "expected a whole number")]
    text = edit("        count: 3\n", "        vcpu: .inf\n")
    assert only(tmp_path, text)[0] in ("HPK013",)
    assert only(tmp_path, text)[4:] == ("the number .inf is not a finite number", "give a number (not .inf or .nan)")


def test_the_rest_is_checked_when_bad_optional_keys_are_left_out(tmp_path):
    text = edit("region: us-east-1", "region: us-east-1\nregoin: x")
    text = edit("    borrow_limit: 50", "    borrow_limit: x", text)
    err = refused(tmp_path, text)
    assert not err.unreadable
    assert set(err.repaired) == {("regoin",), ("teams", 0, "borrow_limit")}
    assert err.partial is not None and err.partial.config.teams[0].borrow_limit == Team.model_fields[
        "borrow_limit"].default
    assert err.partial.source.file == "shown.yaml"


def test_nothing_is_left_out_when_a_required_key_is_broken(tmp_path):
    text = edit("region: us-east-1", "region: us-east-1\nregoin: x")
    text = edit("account: \"111122223333\"", "account: 1", text)
    err = refused(tmp_path, text)
    assert err.partial is None and err.repaired == ()


def test_a_broken_key_inside_a_required_one_is_left_out_alone(tmp_path):
    # threads_per_core is optional inside a list item whose name is required: only it is left out.
    text = edit("      threads_per_core: 2\n", "      threads_per_core: 7\n")
    err = refused(tmp_path, text)
    assert err.repaired == (("hyperpod", "instance_groups", 0, "threads_per_core"),)
    assert err.partial.config.hyperpod.instance_groups[0].name == "gpu"


def test_a_broken_label_leaves_out_the_whole_labels_field(tmp_path):
    text = edit("        workload: gpu\n", "        workload: [gpu]\n")
    err = refused(tmp_path, text)
    assert err.repaired == (("hyperpod", "instance_groups", 0, "labels"),)
    assert err.partial.config.hyperpod.instance_groups[0].labels == {}


def test_leaving_out_a_key_can_uncover_the_next_error(tmp_path):
    # A quota entry's extra key is left out, and the entry without it is still a valid entry.
    text = edit("      - instance_type: ml.m5.2xlarge\n        count: 1\n    principals:",
                "      - instance_type: ml.m5.2xlarge\n        count: 1\n        zz: 1\n    principals:")
    err = refused(tmp_path, text)
    assert err.repaired == (("teams", 0, "quota", 1, "zz"),) and err.partial is not None


def test_model_at_walks_fields_and_skips_indexes():
    assert _model_at(KitConfig, ("teams", 3, "quota", 0)) is QuotaEntry
    assert _model_at(KitConfig, ("teams", 0, "quota", 0, "count")) is None
    assert _model_at(KitConfig, ("nope",)) is None
    assert _model_at(KitConfig, ()) is KitConfig
    assert _model_at(KitConfig, ("region", "x")) is None  # below a text field there is no model
    assert inner_model(tuple[Team, ...] | None) is Team and inner_model(int) is int


def test_explain_falls_back_for_kinds_it_has_no_words_for():
    assert _explain("json_invalid", {}, "x", ("a",), "a") == (
        "HPK012", "text 'x' is not valid", "see the config reference in README.md")
    assert _explain("int_type", {}, 2 ** 200, ("a",), "a") == (
        "HPK012", "a whole number (a number of more than 38 digits) has the wrong type", "expected a whole number")
    assert _explain("int_type", {}, "x" * 70, ("a",), "a")[1] == f"text '{'x' * 59}... has the wrong type"


def test_pydantic_s_errors_for_a_whole_config_match_the_findings(tmp_path):
    text = edit("      count: 4\n", "      count: -1\n")
    with pytest.raises(ValidationError) as caught:
        kit_config_validator().validate_python(yaml.safe_load(text))
    assert [e["type"] for e in caught.value.errors()] == ["greater_than_equal"]
    assert only(tmp_path, text)[0] == "HPK013"


def _schema_pattern(node) -> str:
    """The one `pattern` in a property's schema (under items or anyOf)."""
    found = [v for k, v in node.items() if k == "pattern"] if isinstance(node, dict) else []
    for child in (node.values() if isinstance(node, dict) else node if isinstance(node, list) else []):
        if isinstance(child, (dict, list)):
            try:
                found.append(_schema_pattern(child))
            except LookupError:
                pass
    if len(set(found)) != 1:
        raise LookupError(node)
    return found[0]


NETWORK = "network:\n  vpc_cidr: 10.192.0.0/16\n"
SUBNETS = ("network:\n  existing_vpc_id: vpc-0123456789abcdef0\n  existing_subnets:\n"
           "    - subnet_id: subnet-0123456789abcdef0\n      availability_zone_id: use1-az4\n")


@pytest.mark.parametrize("field, old, new, schema", [
    ("environment", "environment: dev", "environment: 9!", SCHEMA["properties"]["environment"]),
    ("account", 'account: "111122223333"', 'account: "9!"', SCHEMA["properties"]["account"]),
    ("region", "region: us-east-1", "region: 9!", SCHEMA["properties"]["region"]),
    ("availability_zone_ids", "availability_zone_ids: [use1-az4, use1-az6]", "availability_zone_ids: [use1-az4, 9!]", SCHEMA["properties"]["availability_zone_ids"]),
    ("availability_zone_id", "      availability_zone_id: use1-az4", "      availability_zone_id: 9!",
     DEFS["InstanceGroup"]["properties"]["availability_zone_id"]),
    ("subnet_id", NETWORK, SUBNETS.replace("subnet-0123456789abcdef0", "9!"), DEFS["ExistingSubnet"]["properties"]["subnet_id"]),
    ("existing_vpc_id", NETWORK, SUBNETS.replace("vpc-0123456789abcdef0", "9!"), DEFS["Network"]["properties"]["existing_vpc_id"]),
    ("vpc_cidr", "vpc_cidr: 10.192.0.0/16", "vpc_cidr: 9!", DEFS["Network"]["properties"]["vpc_cidr"]),
    ("public_access_cidrs", "[203.0.113.0/24]", "[9!]", DEFS["Eks"]["properties"]["public_access_cidrs"]),
    ("kubernetes_version", 'kubernetes_version: "1.33"', "kubernetes_version: 9!", DEFS["Eks"]["properties"]["kubernetes_version"]),
    ("addon_version", "addon_version: v1.6.0-eksbuild.1", "addon_version: 9!", DEFS["TaskGovernance"]["properties"]["addon_version"]),
    ("admin_principals", "role/PlatformAdmin", "role/Platform Admin", DEFS["Eks"]["properties"]["admin_principals"]),
    ("principals", "role/TeamJohn", "role/Team John", DEFS["Team"]["properties"]["principals"]),
    ("training_plan_arn", "      threads_per_core: 2\n", "      threads_per_core: 2\n      training_plan_arn: 9!\n",
     DEFS["InstanceGroup"]["properties"]["training_plan_arn"]),
])
def test_format_words_give_an_example_the_schema_accepts(tmp_path, field, old, new, schema):
    code, line, column, path, message, hint = only(tmp_path, edit(old, new))
    assert code == "HPK015" and path.split(".")[-1].split("[")[0] == field and message.endswith("has the wrong format")
    pattern = _schema_pattern(schema)
    assert hint.startswith("expected ") and pattern not in hint  # words, not the bare pattern
    example = re.search(r"(?:such as|e\.g\.) (\S+)", hint)
    if field == "environment":  # no example: the words state the length and the first character
        most = int(re.search(r"at most (\d+) characters", hint).group(1))
        assert re.fullmatch(pattern, "a" * most) and not re.fullmatch(pattern, "a" * (most + 1))
        assert "starting with a letter" in hint and not re.fullmatch(pattern, "1a")
        return
    if field == "training_plan_arn":  # no example: such an ARN names account, region and plan
        assert example is None and "training plan ARN" in hint
        return
    assert re.fullmatch(pattern, example.group(1).strip('"').rstrip(",")), (hint, pattern)


def test_two_broken_labels_leave_out_the_labels_once(tmp_path):
    # As with one broken label (above): the rest of the file is still checked (README, "Validating a config").
    text = edit("        workload: gpu\n", "        workload: [gpu]\n        other: [x]\n")
    err = refused(tmp_path, text)
    assert [f.code for f in err.findings] == ["HPK012", "HPK012"]
    assert err.repaired == (("hyperpod", "instance_groups", 0, "labels"),)
    assert err.partial.config.hyperpod.instance_groups[0].labels == {}


def test_a_missing_key_leaves_out_its_optional_section(tmp_path):
    text = edit("        - key: nvidia.com/gpu\n          value", "        - value")
    err = refused(tmp_path, text)
    assert [(f.code, f.path) for f in err.findings] == [("HPK011", "hyperpod.instance_groups[0].taints[0].key")]
    assert err.repaired == (("hyperpod", "instance_groups", 0, "taints"),)
    assert err.partial.config.hyperpod.instance_groups[0].taints == ()


def test_a_length_error_is_hidden_only_when_items_failed(tmp_path):
    # pydantic counts only the items that passed: one bad group gives "at least 1 item, not 0" too.
    text = edit("    - name: cpu\n      instance_type: ml.m5.2xlarge\n      count: 2\n", "")
    text = edit("      count: 4\n", "      count: x\n", text)
    with pytest.raises(ValidationError) as caught:
        kit_config_validator().validate_python(yaml.safe_load(text))
    assert sorted(e["type"] for e in caught.value.errors()) == ["int_type", "too_short"]
    assert [(f.code, f.path) for f in refused(tmp_path, text).findings] == [
        ("HPK012", "hyperpod.instance_groups[0].count")]
    empty = edit("  instance_groups:\n", "  instance_groups: []\n  x_groups:\n")
    assert ("HPK013", "hyperpod.instance_groups") in [(f.code, f.path) for f in refused(tmp_path, empty).findings]


# --- from the second round (wt-mut-cfg2): survivors of `make mutation-sample MODULE=cdk_app.config.loader` ----


def test_a_text_below_its_minimum_length_names_the_schema_minimum(tmp_path):
    text = edit("        - key: nvidia.com/gpu\n", "        - key: ''\n")
    with pytest.raises(ValidationError) as caught:
        kit_config_validator().validate_python(yaml.safe_load(text))
    assert [e["type"] for e in caught.value.errors()] == ["string_too_short"]
    minimum = DEFS["Taint"]["properties"]["key"]["minLength"]
    assert only(tmp_path, text) == (
        "HPK013", *pyyaml_line(text, ("hyperpod", "instance_groups", 0, "taints", 0, "key")),
        "hyperpod.instance_groups[0].taints[0].key", "text '' is too short",
        f"allowed: at least {minimum} characters")


def _hint_example(hint: str) -> tuple[str, str]:
    """`... e.g. field: "value"` -> (field, the quoted text)."""
    field, quoted = hint.rsplit("e.g. ", 1)[1].split(": ", 1)
    return field, quoted


@pytest.mark.parametrize("anchored, field, old, message, yaml_reads", [
    # A value an alias brings has no text at its place: the hint must still quote what YAML read.
    ("111122223333", "account", 'account: "111122223333"', "a whole number 111122223333 has the wrong type",
     "YAML read this as a number: write it in quotes"),
    ("yes", "environment", "environment: dev", "true or false True has the wrong type",
     "YAML reads true as true: write environment in quotes"),
])
def test_a_hint_for_an_aliased_value_quotes_what_yaml_read(tmp_path, anchored, field, old, message, yaml_reads):
    text = "x-defaults: &v " + anchored + "\n" + edit(old, f"{field}: *v")
    read = yaml.safe_load(text)
    assert read[field] == yaml.safe_load(anchored) and not isinstance(read[field], str)
    found = [f for f in refused(tmp_path, text).findings if f.path == field]
    assert [(f.code, f.message) for f in found] == [("HPK012", message)]
    assert yaml_reads in found[0].hint
    # Following the hint fixes the field: the quoted text is what YAML read, as text.
    hinted_field, quoted = _hint_example(found[0].hint)
    assert hinted_field == field
    fixed = edit(old, f"{field}: {quoted}")
    assert getattr(load_config(_written(tmp_path, fixed)).config, field) == yaml.safe_load(quoted)
    assert yaml.safe_load(quoted) == (str(read[field]).lower() if isinstance(read[field], bool) else anchored)


def _written(tmp_path, text: str) -> Path:
    path = tmp_path / "fixed.yaml"
    path.write_text(text)
    return path


def test_a_hint_for_a_merged_value_quotes_what_yaml_read(tmp_path):
    text = "x-base: &base {account: 111122223333}\n" + edit('account: "111122223333"\n', "<<: *base\n")
    assert yaml.safe_load(text)["account"] == 111122223333
    found = [f for f in refused(tmp_path, text).findings if f.path == "account"]
    assert [f.hint for f in found] == [
        'expected text; YAML read this as a number: write it in quotes, e.g. account: "111122223333"']


def test_a_number_past_a_64_bit_integer_where_a_choice_is_wanted(tmp_path):
    # pydantic refuses an integer past 64 bits for Literal[1, 2] with its own type, before the choice.
    written = "9" * 20
    text = edit("      threads_per_core: 2\n", f"      threads_per_core: {written}\n")
    with pytest.raises(ValidationError) as caught:
        kit_config_validator().validate_python(yaml.safe_load(text))
    assert [e["type"] for e in caught.value.errors()] == ["int_parsing_size"]
    assert only(tmp_path, text)[0::3] == ("HPK012", "hyperpod.instance_groups[0].threads_per_core")
    assert only(tmp_path, text)[4:] == (f"the number {written} is not valid", "see the config reference in README.md")
    # The hint names the README's config reference; its pointer table leads to the page.
    assert ("| Configuration reference, the config reference | [docs/reference/config.md](docs/reference/config.md) |"
            in (ROOT / "README.md").read_text())
    assert "# Configuration reference" in (ROOT / "docs" / "reference" / "config.md").read_text()


def test_an_unknown_key_in_a_chart_dependency_pin_names_the_pin_s_keys(tmp_path):
    dev = (ROOT / "config" / "dev.yaml").read_text()
    text = edit("      nvidia-device-plugin:\n", "      nvidia-device-plugin:\n        sha265: x\n", dev)
    path = ("hyperpod", "helm_chart", "dependencies", "nvidia-device-plugin", "sha265")
    # The schema: dependencies is a mapping whose values are ChartDependencyPin mappings.
    assert list(DEFS["HelmChart"]["properties"]["dependencies"]["anyOf"][0]["patternProperties"].values()) == [
        {"$ref": "#/$defs/ChartDependencyPin"}]
    allowed = ", ".join(sorted(DEFS["ChartDependencyPin"]["properties"]))
    assert only(tmp_path, text) == ("HPK010", *pyyaml_line(text, path), ".".join(path), "unknown key 'sha265'",
                                    f"did you mean 'sha256'? allowed keys: {allowed}")
    # Only the unknown key is left out: the pin itself is whole and still checked by the policy rules.
    err = refused(tmp_path, text)
    assert err.repaired == (path,)
    pins = yaml.safe_load(dev)["hyperpod"]["helm_chart"]["dependencies"]
    assert {name: pin.model_dump() for name, pin in err.partial.config.hyperpod.helm_chart.dependencies.items()} == pins


def test_model_at_sees_through_an_annotated_model_in_an_optional_field():
    # pydantic keeps `Annotated` inside a union in FieldInfo.annotation (it strips only an outer one).
    class Holder(BaseModel):
        pin: Annotated[ChartDependencyPin, Field(description="a pin")] | None = None

    annotation = Holder.model_fields["pin"].annotation
    assert any(typing.get_origin(arg) is Annotated for arg in typing.get_args(annotation))
    assert _model_at(Holder, ("pin",)) is ChartDependencyPin


def test_a_huge_aliased_number_in_a_text_field_is_a_finding_not_a_crash(tmp_path):
    # Python's int-string limit (4300 digits) makes str() of such a number raise; YAML reads it as a number.
    digits = "1" + "0" * 5000
    text = f"x-defaults: &v {digits}\n" + edit("environment: dev", "environment: *v")
    found = [f for f in refused(tmp_path, text).findings if f.path == "environment"]
    assert [(f.code, f.message) for f in found] == [
        ("HPK012", "a whole number (a number of more than 38 digits) has the wrong type")]


@pytest.mark.parametrize("digits, shown", [
    ("9" * 38, "9" * 38), ("-" + "9" * 38, "-" + "9" * 38),
    ("1" + "0" * 38, "(a number of more than 38 digits)"), ("-1" + "0" * 38, "(a number of more than 38 digits)"),
])
def test_an_aliased_number_is_shown_up_to_38_digits(tmp_path, digits, shown):
    # An alias carries no text at its place, so the message shows the number YAML read: whole up to the 38
    # digits the placeholder's words promise, the words past them.
    assert yaml.safe_load(f"x: {digits}")["x"] == int(digits)
    text = f"x-defaults: &v {digits}\n" + edit("environment: dev", "environment: *v")
    found = [f for f in refused(tmp_path, text).findings if f.path == "environment"]
    assert [(f.code, f.message) for f in found] == [("HPK012", f"a whole number {shown} has the wrong type")]


def test_labels_given_a_list_ask_for_a_mapping(tmp_path):
    text = edit("        workload: gpu\n", "        - workload\n")
    assert DEFS["InstanceGroup"]["properties"]["labels"]["type"] == "object"
    with pytest.raises(ValidationError) as caught:
        kit_config_validator().validate_python(yaml.safe_load(text))
    assert [e["type"] for e in caught.value.errors()] == ["dict_type"]
    assert only(tmp_path, text) == ("HPK012", *pyyaml_line(text, ("hyperpod", "instance_groups", 0, "labels")),
                                    "hyperpod.instance_groups[0].labels", "a list has the wrong type",
                                    "expected a mapping of keys")


@pytest.mark.parametrize("written", ["1e99999999", "1e99999999999", "9" * 6000, "'1e400'"])
def test_a_number_of_absurd_size_gets_a_short_message(tmp_path, written):
    # A hostile round: the hint used to write 10**N out in full (100 MB for 1e99999999, MemoryError beyond).
    from cdk_app.config.loader import ConfigInvalid, load_config

    text = (ROOT / "config" / "dev.yaml").read_text().replace("      count: 4\n", f"      count: {written}\n", 1)
    path = tmp_path / "dev.yaml"
    path.write_text(text)
    with pytest.raises(ConfigInvalid) as err:
        load_config(path)
    rendered = [f.render() for f in err.value.findings]
    assert rendered and all(len(line) < 400 for line in rendered), [line[:400] for line in rendered]
