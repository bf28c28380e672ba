"""Hostile input to the reader and the CLI: odd YAML scalars, files that never end, malformed node lists and
internal errors all end in a located finding or a documented exit code - never a traceback or a hang."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from fractions import Fraction

import pytest
from click.testing import CliRunner
from support.paths import ROOT, SUPPORT

from cdk_app.cli import main as cli
from cdk_app.domain.capacity import describe
from cdk_app.validator.report import check_file

DEV = (ROOT / "config" / "dev.yaml").read_text()


def run(*args: str, stdin: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cdk_app", *args], cwd=ROOT, capture_output=True, text=True,
                          input=stdin, timeout=timeout)


def codes(report) -> list[tuple[str, str]]:
    return [(f.code, f.path) for f in report.findings if f.severity.value == "error"]


@pytest.mark.parametrize("scalar, code", [
    ("0x_", "HPK211"),  # looks like hex to YAML 1.1, is not: text, and '_' may not end a label value
    ("9" * 5000, "HPK012"),  # past Python's int-string limit: still a number, of the wrong type
    (".inf", "HPK012"),
    (".nan", "HPK012"),
])
def test_odd_scalars_as_a_label_value_are_findings(write_config, scalar, code):
    text = DEV.replace("        workload: cpu", f"        workload: {scalar}")
    report = check_file(write_config(text))
    assert report.exit_code == 1
    assert codes(report) == [(code, "hyperpod.instance_groups[1].labels.workload")]


@pytest.mark.parametrize("date", ["2025-02-28", "2025-02-29", "2001-12-14t21:59:43.10-05:00"])
def test_a_date_is_the_text_the_admin_typed(write_config, date):
    """YAML 1.1 reads dates as timestamps (and crashes on impossible ones); a label value is text."""
    report = check_file(write_config(DEV.replace("        workload: cpu", f"        workload: {date.replace(':', '-')}")))
    assert report.exit_code == 0, [f.render() for f in report.findings]
    assert report.loaded.config.hyperpod.instance_groups[1].labels == {"workload": date.replace(":", "-")}


@pytest.mark.parametrize("amount, code", [
    (".inf", "HPK013"), (".nan", "HPK013"), ("-.inf", "HPK013"), ("1.0e+400", "HPK013"),
    ("9" * 5000, "HPK012"), ("1.0e+300", "HPK013"), ("0x_", "HPK012"),
])
def test_odd_quota_amounts_are_findings(write_config, amount, code):
    text = DEV.replace("      - instance_type: ml.m5.2xlarge\n        count: 1\n    principals:\n"
                       "      - arn:aws:iam::111122223333:role/TeamJohn",
                       f"      - instance_type: ml.m5.2xlarge\n        vcpu: {amount}\n    principals:\n"
                       "      - arn:aws:iam::111122223333:role/TeamJohn")
    assert text != DEV
    report = check_file(write_config(text))
    assert codes(report) == [(code, "teams[0].quota[1].vcpu")]


def test_a_huge_instance_count_is_out_of_range_not_a_crash(write_config):
    report = check_file(write_config(DEV.replace("count: 3", "count: " + "7" * 5000)))
    [finding] = report.errors
    assert (finding.code, finding.path) == ("HPK013", "teams[0].quota[0].count")
    assert "more than 38 digits" not in finding.message and "777" in finding.message  # the text as typed


def test_a_fifo_without_a_writer_is_refused_at_once(tmp_path):
    fifo = tmp_path / "config.yaml"
    os.mkfifo(fifo)
    result = run("validate", str(fifo), "config/dev.yaml", "--format", "json", timeout=30)
    assert result.returncode == 2
    [error] = json.loads(result.stdout)["errors"]
    assert error["code"] == "HPK001" and "pipe" in error["message"]


def test_dev_zero_is_refused_without_reading_it():
    result = run("validate", "/dev/zero", timeout=30)
    assert result.returncode == 2 and "HPK001" in result.stdout and "device" in result.stdout


def test_standard_input_is_read_with_the_same_cap():
    assert run("validate", "-", stdin=DEV).returncode == 0
    huge = run("validate", "-", stdin="a: b\n" * 1_200_000)
    assert huge.returncode == 2 and "HPK005" in huge.stdout


def test_permission_denied_is_hpk001_and_other_files_are_still_checked(monkeypatch, tmp_path):
    locked = tmp_path / "locked.yaml"
    locked.write_text(DEV)
    real_open = os.open

    def deny(path, *args, **kwargs):
        if str(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", deny)
    result = CliRunner().invoke(cli.main, ["validate", str(locked), "config/dev.yaml", "--format", "json"])
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert [(e["code"], e["file"], e["message"]) for e in doc["errors"]] == [
        ("HPK001", str(locked), "permission denied")]
    assert {r["file"] for r in doc["capacity"]} == {"config/dev.yaml"}


def test_an_internal_error_exits_3_with_one_line(monkeypatch):
    def broken(*_args, **_kwargs):
        raise KeyError("boom")

    monkeypatch.setattr(cli, "check_file", broken)
    result = CliRunner().invoke(cli.main, ["validate", "config/dev.yaml"])
    assert result.exit_code == 3
    assert result.output.count("\n") == 1 and "internal error (KeyError" in result.output
    assert "report" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("document, reason", [
    ({"items": [{"kind": "Node", "metadata": {"name": "n1", "labels": ["a", "b"]}}]}, "not a mapping"),
    ({"items": [{"kind": "Node", "metadata": {"name": 17, "labels": {}}}]}, "not text"),
    ({"items": [{"kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"nvidia.com/gpu": "²"}}}]},
     "whole number"),
    ({"items": [{"kind": "Node", "metadata": {"name": "n1", "labels": {"a": 5}}}]}, "not text"),
    ({"items": [{"kind": "Node", "metadata": "n1"}]}, "not a mapping"),
    ({"items": [{"kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"nvidia.com/gpu": True}}}]},
     "whole number"),
    ({"items": [{"kind": "Node", "metadata": {"name": "n1"}, "status": []}]}, "not a mapping"),
])
def test_malformed_node_lists_exit_2_with_a_reason(tmp_path, document, reason):
    path = tmp_path / "nodes.json"
    path.write_text(json.dumps(document))
    for args in (["topology", str(path)],
                 ["job", "--config", "config/dev.yaml", "--team", "john", "--priority", "x", "--name", "j",
                  "--image", "i", "--cluster-nodes", str(path), "--", "true"]):
        result = CliRunner().invoke(cli.main, args)
        assert result.exit_code == 2, result.output
        assert reason in result.output and "Traceback" not in result.output


def test_deeply_nested_and_huge_number_node_lists_exit_2(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    huge = tmp_path / "huge.json"
    huge.write_text('{"items": [' + "9" * 5000 + "]}")
    for path in (deep, huge):
        result = CliRunner().invoke(cli.main, ["topology", str(path)])
        assert result.exit_code == 2 and "kubectl get nodes -o json" in result.output


def test_topology_refuses_a_fifo_at_once(tmp_path):
    fifo = tmp_path / "nodes.json"
    os.mkfifo(fifo)
    result = run("topology", str(fifo), timeout=30)
    assert result.returncode == 2 and "pipe" in result.stderr


def test_yaml_merge_keys_share_team_settings(write_config):
    text = DEV.replace("  - name: john\n    fair_share_weight: 0\n    sharing_strategy: LendAndBorrow\n",
                       "  - &base\n    name: john\n    fair_share_weight: 0\n    sharing_strategy: LendAndBorrow\n")
    text = text.replace("  - name: smith\n    fair_share_weight: 100\n    sharing_strategy: LendAndBorrow\n"
                        "    borrow_limit: 100\n    preempt_team_tasks: LowerPriority\n",
                        "  - <<: *base\n    name: smith\n    fair_share_weight: 100\n")
    assert text.count("<<: *base") == 1
    report = check_file(write_config(text))
    assert report.exit_code == 0, [f.render() for f in report.findings]
    smith = report.loaded.config.teams[1]
    assert (smith.name, smith.fair_share_weight, smith.borrow_limit) == ("smith", 100, 50)  # own keys win


def test_a_merge_key_on_a_scalar_is_a_clear_finding(write_config):
    report = check_file(write_config(DEV.replace("  - name: smith\n", "  - <<: 5\n    name: smith\n")))
    [finding] = report.findings
    assert finding.code == "HPK002" and "merge key" in finding.message


def test_a_shape_error_does_not_hide_policy_errors(write_config):
    text = DEV.replace("    borrow_limit: 50\n", "    borow_limit: 50\n").replace("count: 3", "count: 9")
    report = check_file(write_config(text))
    assert codes(report) == [("HPK010", "teams[0].borow_limit"), ("HPK501", "teams[0].quota[0]"),
                             ("HPK501", "teams[1].quota[0]")]


def test_many_unknown_instance_types_stay_linear(write_config, monkeypatch):
    """A did-you-mean is a fuzzy match against the catalogue; only the first few distinct unknown types get
    one (case-insensitive exact matches are free), so 20,000 unknown types cost 20,000 cheap lookups."""
    import difflib

    from cdk_app.validator.rules import instance_groups as rules

    calls = []
    real = difflib.get_close_matches
    monkeypatch.setattr(rules.difflib, "get_close_matches", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    entries = "".join(f"      - instance_type: ml.zz{i}.xlarge\n        count: 1\n" for i in range(20_000))
    text = DEV.replace("    quota:\n      - instance_type: ml.g5.12xlarge\n        count: 3\n",
                       "    quota:\n" + entries + "      - instance_type: ml.g5.12xlarge\n        count: 3\n", 1)
    report = check_file(write_config(text))
    unknown = [f for f in report.errors if f.code == "HPK201"]
    assert len(unknown) == 20_000
    assert len(calls) == rules.MAX_FUZZY_SUGGESTIONS


def test_job_for_a_team_without_quota_on_a_cluster_type_says_so(tmp_path):
    config = tmp_path / "dev.yaml"
    base = (SUPPORT / "adversarial" / "base.yaml").read_text()
    config.write_text(base.replace("  - name: smith\n", "  - name: empty\n    quota: []\n  - name: smith\n"))
    result = CliRunner().invoke(cli.main, ["job", "--config", str(config), "--team", "empty", "--priority", "high",
                                           "--name", "j", "--image", "i", "--", "true"])
    assert result.exit_code == 1
    assert "None" not in result.output and "no quota on an instance type of the cluster" in result.output


def test_a_merge_key_on_a_scalar_is_located_and_explained(write_config):
    text = DEV.replace("  - name: smith\n", "  - name: smith\n    <<: 5\n")
    [finding] = check_file(write_config(text), "c.yaml").findings
    line = text.splitlines().index("    <<: 5") + 1
    assert (finding.file, finding.line, finding.column) == ("c.yaml", line, 5)
    assert finding.message == "`<<` (a YAML merge key) must name a mapping or a list of mappings"
    assert finding.hint == "write `<<: *anchor` where &anchor marks a mapping"


# Hostile review 4 F7: taints validate accepted and CloudFormation or Kubernetes refuse. Oracles: cfn-lint's
# AWS::SageMaker::Cluster schema (ClusterKubernetesTaints, read here, not copied) applied with jsonschema to the
# taints as the stack writes them, and Kubernetes' validateNodeTaints (pkg/apis/core/validation: "taints must be
# unique by key and effect pair").
def _taint_schema() -> dict:
    from cdk_app.domain.resource_schemas import resource_schema

    cluster = resource_schema("AWS::SageMaker::Cluster")
    return {**cluster["definitions"]["ClusterKubernetesTaints"], "definitions": cluster["definitions"]}


TAINT_SCHEMA = _taint_schema()
MAX_TAINTS = TAINT_SCHEMA["maxItems"]
TAINT_LISTS = [
    [("dedicated", "", "NoSchedule")],
    [("dedicated", None, "NoSchedule")],
    [("dedicated", "x", "NoSchedule"), ("dedicated", "y", "NoSchedule")],
    [("dedicated", "x", "NoSchedule"), ("dedicated", "x", "NoExecute")],
    [(f"k{n}", "v", "NoSchedule") for n in range(MAX_TAINTS)],
    [(f"k{n}", "v", "NoSchedule") for n in range(MAX_TAINTS + 1)],
]


@pytest.mark.parametrize("taints", TAINT_LISTS, ids=["empty-value", "no-value", "same-key-effect", "same-key-other-effect",
                                                     "at-the-limit", "over-the-limit"])
def test_taints_are_refused_exactly_when_cloudformation_or_kubernetes_would(write_config, taints):
    import jsonschema

    from cdk_app.stacks.cluster_stack import instance_group_spec

    lines = "".join(f"        - key: {k}\n" + (f"          value: \"{v}\"\n" if v is not None else "")
                    + f"          effect: {e}\n" for k, v, e in taints)
    base = (SUPPORT / "adversarial" / "base.yaml").read_text()
    text = base.replace('        - key: nvidia.com/gpu\n          value: "true"\n          effect: NoSchedule\n', lines)
    report = check_file(write_config(text))
    config = report.loaded.config
    spec = instance_group_spec(config, config.hyperpod.instance_groups[0])
    written = [{"Key": t.key, "Effect": t.effect, **({"Value": t.value} if t.value is not None else {})}
               for t in spec.taints]  # as HyperPodCluster writes ClusterKubernetesTaintProperty (None is left out)
    cloudformation_ok = jsonschema.Draft7Validator(TAINT_SCHEMA).is_valid(written)
    pairs = [(t.key, t.effect) for t in spec.taints]
    kubernetes_ok = len(pairs) == len(set(pairs))
    errors = codes(report)
    assert (errors == []) == (cloudformation_ok and kubernetes_ok), errors
    assert all(code in ("HPK162", "HPK163", "HPK164") for code, _ in errors)


@pytest.mark.parametrize("second_zone", ["use1-az6", "use1-az4"])
def test_one_subnet_listed_twice_is_refused(write_config, second_zone):
    # Hostile review 4 F11 (v024): one subnet claimed in two zones passed, and counted as EKS's two zones. EC2's
    # model (botocore) gives a subnet one AvailabilityZoneId, a string, not a list.
    import botocore.session

    subnet = botocore.session.get_session().get_service_model("ec2").shape_for("Subnet")
    assert subnet.members["AvailabilityZoneId"].type_name == "string"
    base = (SUPPORT / "adversarial" / "base.yaml").read_text()
    text = base.replace("  vpc_cidr: 10.192.0.0/16\n", "  existing_vpc_id: vpc-0123456789abcdef0\n  existing_subnets:\n"
                        "    - {subnet_id: subnet-0123456789abcdef0, availability_zone_id: use1-az4}\n"
                        f"    - {{subnet_id: subnet-0123456789abcdef0, availability_zone_id: {second_zone}}}\n"
                        "    - {subnet_id: subnet-0123456789abcdef1, availability_zone_id: use1-az6}\n")
    report = check_file(write_config(text))
    assert codes(report) == [("HPK165", "network.existing_subnets[1].subnet_id")], codes(report)
    assert "subnet-0123456789abcdef0 is listed twice" in report.errors[0].message


@pytest.mark.parametrize("name", ["h100 q4", "-plan", "plan-", "p" * 65, "a/b", "h100-q4", "p" * 64, "A--9"])
def test_a_training_plan_arn_must_end_in_a_training_plan_name(write_config, name):
    # Hostile review 4 F11 (w028). Oracle: botocore's CreateTrainingPlan TrainingPlanName (pattern, 1-64); the ARN's
    # own pattern (...:training-plan/.*) takes anything after the slash.
    import re

    import botocore.session

    shape = botocore.session.get_session().get_service_model("sagemaker").operation_model(
        "CreateTrainingPlan").input_shape.members["TrainingPlanName"]
    possible = shape.metadata["min"] <= len(name) <= shape.metadata["max"] and re.fullmatch(
        shape.metadata["pattern"], name) is not None
    base = (SUPPORT / "adversarial" / "base.yaml").read_text()
    arn = f"arn:aws:sagemaker:us-east-1:111122223333:training-plan/{name}"
    text = base.replace("      threads_per_core: 2\n", f"      threads_per_core: 2\n      training_plan_arn: \"{arn}\"\n", 1)
    assert codes(check_file(write_config(text))) == ([] if possible else
                                                     [("HPK166", "hyperpod.instance_groups[0].training_plan_arn")])


@pytest.mark.parametrize("count", [40, 41, 49])
def test_at_most_forty_public_access_cidrs(write_config, count):
    # Hostile review 4 F11 (v016). Source: Amazon EKS service quotas, "public endpoint access CIDR ranges per
    # cluster: 40" (the limit aws/containers-roadmap#2174 asks AWS to raise); no installed model carries it.
    cidrs = ", ".join(f"203.0.{n}.0/24" for n in range(count))
    base = (SUPPORT / "adversarial" / "base.yaml").read_text()
    text = base.replace("  public_access_cidrs: [203.0.113.0/24]\n", f"  public_access_cidrs: [{cidrs}]\n")
    assert codes(check_file(write_config(text))) == ([] if count <= 40 else [("HPK167", "eks.public_access_cidrs[40]")])


# Numbers YAML 1.1 (PyYAML, this reader) and YAML 1.2 may read differently: base 60, leading-zero octal, binary,
# underscores, unsigned exponents. The YAML 1.2 reading is the npm `yaml` package's, the parser of
# yaml-language-server, which editors use with config/schema.json (package.json pins it).
NUMBER_FORMS = ["4", "+4", "4.5", ".5", "4.", "0x8", "07", "010", "0o7", "0b101", "1:00", "1:00.5", "1_0", "1_0.5",
                "1e1", "1.0e+1", "1.5e0", "-0", "00", "0x_8", "-0b1"]


@functools.cache
def yaml12_readings() -> dict[str, object]:
    script = ("const Y = require('yaml'); const forms = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
              "console.log(JSON.stringify(Object.fromEntries(forms.map(f => [f, Y.parse('v: ' + f).v]))))")
    # The checkout's node_modules; mutmut runs the tests from a copy (mutants/) inside the checkout.
    home = next(folder for folder in (ROOT, *ROOT.parents) if (folder / "node_modules" / "yaml").is_dir())
    done = subprocess.run([str(home / "node_modules" / ".bin" / "node"), "-e", script], input=json.dumps(NUMBER_FORMS),
                          capture_output=True, text=True, check=True, cwd=home)
    return json.loads(done.stdout)


@pytest.mark.parametrize("form", NUMBER_FORMS)
def test_a_number_both_yaml_versions_read_alike_is_used_and_any_other_refused(write_config, form):
    import yaml

    yaml11, yaml12 = yaml.safe_load(f"v: {form}")["v"], yaml12_readings()[form]
    number = (int, float)
    agree = (isinstance(yaml11, number) and isinstance(yaml12, number) and not isinstance(yaml11, bool)
             and yaml11 == yaml12)
    for field, where in (("vcpu", "teams[0].quota[1].vcpu"), ("count", "teams[0].quota[1].count")):
        text = DEV.replace("        count: 1\n    principals:\n      - arn:aws:iam::111122223333:role/TeamJohn",
                           f"        {field}: {form}\n    principals:\n      - arn:aws:iam::111122223333:role/TeamJohn")
        assert text != DEV
        report = check_file(write_config(text))
        type_errors = [f for f in report.findings if f.path == where and f.code == "HPK012"]
        if field == "count" and agree and not isinstance(yaml11, int):
            continue  # a count takes whole numbers only: 4.5 is refused for that, not for the YAML version
        assert bool(type_errors) == (not agree), (field, form, yaml11, yaml12, [f.render() for f in report.findings])
        if not agree and isinstance(yaml11, number):
            # The message shows what was typed, what this reader makes of it and what YAML 1.2 reads.
            (finding,) = type_errors
            assert form in finding.message and f"as {yaml11}" in finding.message
            assert (f"as {yaml12}" if isinstance(yaml12, number) else "as text") in finding.hint
        elif not agree and isinstance(yaml12, number):
            # Text to this reader, a number to YAML 1.2 (1e1): the hint gives the number to write.
            (finding,) = type_errors
            assert finding.hint.endswith(f"write {yaml12:g}")


@pytest.mark.parametrize("written, hint", [
    ('"2.50"', "write it without quotes: 2.50"),  # quoted: the text unquoted is that very number
    ('"016"', "YAML 1.1 reads 016 as 14: write 16"),  # unquoted it would be octal to this reader
    ("1.44e2", "YAML 1.1 reads 1.44e2 as text: write 144"),  # a number to YAML 1.2 only
])
def test_a_number_written_as_text_gets_the_hint_that_is_true_for_it(write_config, written, hint):
    text = DEV.replace("        count: 1\n    principals:\n      - arn:aws:iam::111122223333:role/TeamJohn",
                       f"        vcpu: {written}\n    principals:\n      - arn:aws:iam::111122223333:role/TeamJohn")
    assert text != DEV
    (finding,) = [f for f in check_file(write_config(text)).findings if f.path == "teams[0].quota[1].vcpu"]
    assert finding.code == "HPK012" and finding.hint.endswith(hint)


# Issue 32, class 5: a tag on a mapping, a list or a key was dropped and the config read as if it were not there.
# A scalar's unknown tag was already refused (no safe constructor); a collection is always read as plain data, so
# every explicit tag on one is refused, with the file, line and column of the tag.
MAPPING = ("cluster_policy:\n", "cluster_policy: {tag}\n")
LIST = ("availability_zone_ids: [", "availability_zone_ids: {tag} [")
LIST_ITEM = ("    - name: gpu-workers\n", "    - {tag}\n      name: gpu-workers\n")
KEY = ("region: us-east-1\n", "{tag} region: us-east-1\n")


@pytest.mark.parametrize("place, tag, what", [
    (MAPPING, "!Policy", "a mapping"), (MAPPING, "!!python/object:os.system", "a mapping"),
    (MAPPING, "!!python/object/apply:os.system", "a mapping"), (MAPPING, "!!map", "a mapping"),
    (MAPPING, "!!omap", "a mapping"), (LIST, "!Zones", "a list"), (LIST, "!!seq", "a list"), (LIST, "!!set", "a list"),
    (LIST, "!<tag:example.com,2025:z>", "a list"), (LIST_ITEM, "!Group", "a mapping"),
    (KEY, "!Region", "a mapping key"), (KEY, "!!int", "a mapping key"),
])
def test_a_tag_on_a_mapping_a_list_or_a_key_is_refused_where_it_stands(write_config, place, tag, what):
    text = DEV.replace(place[0], place[1].format(tag=tag), 1)
    assert text.count(tag) == 1
    report = check_file(write_config(text), "c.yaml")
    assert report.exit_code == 2
    [finding] = report.findings
    line, row = next((n, row) for n, row in enumerate(text.splitlines(), 1) if tag in row)
    assert (finding.code, finding.file, finding.line, finding.column) == ("HPK002", "c.yaml", line, row.index(tag) + 1)
    written = tag[2:-1] if tag.startswith("!<") else tag  # a verbatim tag is shown as the tag it names
    assert finding.message.startswith(f"YAML tag '{written}' on {what}:")


def test_a_tag_on_the_whole_document_is_refused(write_config):
    [finding] = check_file(write_config("--- !!map\n" + DEV.split("\n", 1)[1]), "c.yaml").findings
    assert (finding.code, finding.line, finding.column) == ("HPK002", 1, 5) and "'!!map' on a mapping" in finding.message


def test_a_tagged_anchor_is_refused_before_any_alias_repeats_it(write_config):
    text = DEV.replace("cluster_policy:\n", "cluster_policy: &p !Policy\n", 1)
    [finding] = check_file(write_config(text)).findings
    assert finding.code == "HPK002" and "'!Policy' on a mapping" in finding.message


@pytest.mark.parametrize("before, after", [
    ("cluster_policy:\n", "cluster_policy: !\n"),  # YAML's non-specific tag: the node's natural kind
    ("availability_zone_ids: [", "availability_zone_ids: ! ["),
    ("region: us-east-1\n", "!!str region: us-east-1\n"),  # a key is text: !!str says just that
])
def test_tags_that_add_nothing_are_read_as_written(write_config, before, after):
    text = DEV.replace(before, after, 1)
    assert text != DEV
    report = check_file(write_config(text))
    assert report.exit_code == 0, [f.render() for f in report.findings]


SMITH_M5 = "    borrow_limit: 100\n    preempt_team_tasks: LowerPriority\n    quota:\n      - instance_type: ml.g5.12xlarge\n" \
           "        count: 1\n      - instance_type: ml.m5.2xlarge\n        count: 1\n"


@pytest.mark.parametrize("amount, total, over, table", [
    ("8.0002", "16.0002 vCPU", "0.0002 vCPU", "16.0002/16 !"),  # a rounding to 3 decimals read "16.0 of 16 ... by 0.0"
    ("8.0000001", "16.0000001 vCPU", "0.0000001 vCPU", "16.0000001/16 !"),
    ("8.1111", "16.1111 vCPU", "0.1111 vCPU", "16.1111/16 !"),
])
def test_an_amount_just_over_capacity_reads_exactly(write_config, amount, total, over, table):
    assert SMITH_M5 in DEV
    text = DEV.replace(SMITH_M5, SMITH_M5.replace("        count: 1\n", f"        vcpu: {amount}\n").replace(
        f"ml.g5.12xlarge\n        vcpu: {amount}\n", "ml.g5.12xlarge\n        count: 1\n"))
    result = run("validate", str(write_config(text)))
    assert result.returncode == 1
    [message] = [line for line in result.stdout.splitlines() if "HPK501" in line and "vCPU" in line]
    assert f"teams reserve {total} of ml.m5.2xlarge but the cluster has 16 vCPU" in message
    assert f"lower the quotas by {over} " in message
    assert table in result.stdout


def test_a_third_of_an_instance_reads_as_its_fraction():
    assert describe(Fraction(16, 3), "vcpu") == "16/3 (about 5.333) vCPU"
    assert describe(Fraction(1, 1), "count") == "1 instance" and describe(Fraction(-1, 8), "count") == "-0.125 instances"
