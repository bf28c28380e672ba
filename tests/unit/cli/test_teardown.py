"""`hyperpod-kit teardown`: every `aws` command it prints names an operation (or waiter) of botocore's model
with options that are members of its input shape (all required ones given) and a --query over its output;
the steps come in the order the retention needs; the names are the config's; bad input exits 2."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

import botocore.session
import pytest
from botocore import xform_name
from support.paths import ROOT

from cdk_app.cli.teardown import render, runbook
from cdk_app.config.loader import load_config
from cdk_app.config.model import KitConfig

CONFIGS = ("dev", "prod", "batch-example", "batch-only-example")
# The AWS CLI's own options, not the operation's (aws help: global options).
GLOBAL_OPTIONS = {"--region", "--query", "--output"}
CLI_SERVICES = {"s3api": "s3"}
# Commands of the AWS CLI itself (awscli/customizations), by the operation whose input their options feed.
CLI_CUSTOMIZATIONS = {("eks", "update-kubeconfig"): "DescribeCluster"}
SESSION = botocore.session.get_session()


def config_of(name: str) -> KitConfig:
    return load_config(ROOT / "config" / f"{name}.yaml").config


def existing_vpc(config: KitConfig) -> KitConfig:
    network = config.network.model_copy(update={"existing_vpc_id": "vpc-0123456789abcdef0"})
    return config.model_copy(update={"network": network})


def team_stacks(config: KitConfig, count: int) -> KitConfig:
    governance = config.task_governance.model_copy(update={"team_stacks": count})
    return config.model_copy(update={"task_governance": governance})


VARIANTS = {**{name: config_of(name) for name in CONFIGS}, "existing-vpc": existing_vpc(config_of("dev")),
            "team-stacks": team_stacks(config_of("prod"), 3)}


def printed(config: KitConfig) -> str:
    return render(config, runbook(config, ROOT / "config" / f"{config.environment}.yaml"))


def command_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def _split_substitutions(line: str) -> tuple[str, list[str]]:
    """The line with each $(...) replaced by a placeholder, and the commands inside them (no parentheses are
    nested in the runbook's queries, which this checks)."""
    inner: list[str] = []
    while (start := line.find("$(")) >= 0:
        end = line.index(")", start)
        inner.append(line[start + 2:end])
        assert "(" not in inner[-1], inner[-1]
        line = line[:start] + "SUBSTITUTED" + line[end + 1:]
    return line, inner


def aws_commands(text: str) -> list[list[str]]:
    """Each `aws ...` invocation as its words, also those in $(...), assignments and a while loop."""
    found: list[list[str]] = []
    pending = command_lines(text)
    while pending:
        outer, inner = _split_substitutions(pending.pop())
        pending += inner
        lexer = shlex.shlex(outer, posix=True, punctuation_chars=";")
        lexer.whitespace_split = True
        words: list[str] = []
        for word in [*lexer, ";"]:
            if word != ";":
                words.append(word)
                continue
            while words and (words[0] in ("while", "do") or re.fullmatch(r"[A-Z_]+=SUBSTITUTED", words[0])):
                words.pop(0)
            if words and words[0] == "aws":
                found.append(words)
            words = []
    return found


def _options(words: list[str]) -> dict[str, str | None]:
    options: dict[str, str | None] = {}
    for index, word in enumerate(words):
        if word.startswith("--"):
            value = words[index + 1] if index + 1 < len(words) and not words[index + 1].startswith("--") else None
            options[word] = value
    return options


def _member_names(shape, seen: set[str] | None = None) -> set[str]:
    """Every member name reachable from an output shape (what a --query may name)."""
    seen = set() if seen is None else seen
    if shape is None or shape.name in seen:
        return set()
    seen.add(shape.name)
    names: set[str] = set()
    if shape.type_name == "structure":
        for name, member in shape.members.items():
            names |= {name} | _member_names(member, seen)
    elif shape.type_name == "list":
        names |= _member_names(shape.member, seen)
    return names


def check_against_model(words: list[str]) -> None:
    service = CLI_SERVICES.get(words[1], words[1])
    model = SESSION.get_service_model(service)
    if words[2] == "wait":
        waiters = SESSION.get_waiter_model(service)
        [waiter] = [name for name in waiters.waiter_names if xform_name(name, "-") == words[3]]
        operation = model.operation_model(waiters.get_waiter(waiter).operation)
        options = _options(words[4:])
    elif (custom := CLI_CUSTOMIZATIONS.get((words[1], words[2]))) is not None:
        operation = model.operation_model(custom)
        options = _options(words[3:])
    else:
        [name] = [name for name in model.operation_names if xform_name(name, "-") == words[2]]
        operation = model.operation_model(name)
        options = _options(words[3:])
    members = operation.input_shape.members
    given = set()
    for option, value in options.items():
        if option in GLOBAL_OPTIONS:
            continue
        flag = option.removeprefix("--no-") if option.startswith("--no-") else option.removeprefix("--")
        [member] = [m for m in members if xform_name(m, "-") == flag]
        if option.startswith("--no-") or members[member].type_name == "boolean":
            assert members[member].type_name == "boolean" and value is None, (words, option)
        else:
            assert value is not None, (words, option)
        given.add(member)
    missing = set(operation.input_shape.required_members) - given
    assert not missing, (words, missing)
    if (query := options.get("--query")) is not None:
        # Names the query reads (not the keys of a hash it builds, nor quoted literals) are output members.
        read = set(re.findall(r"\b([A-Za-z]+)\b(?!\s*:)", re.sub(r"'[^']*'", "", query)))
        assert read <= _member_names(operation.output_shape), (words, read - _member_names(operation.output_shape))


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_aws_command_is_an_operation_of_the_botocore_model_with_its_members(variant):
    commands = aws_commands(printed(VARIANTS[variant]))
    assert commands
    for words in commands:
        check_against_model(words)


def test_the_network_interface_filter_is_one_ec2_documents():
    [words] = [w for w in aws_commands(printed(VARIANTS["dev"])) if w[2] == "describe-network-interfaces"]
    name = _options(words)["--filters"].split(",")[0].removeprefix("Name=")
    documentation = SESSION.get_service_model("ec2").operation_model("DescribeNetworkInterfaces") \
        .input_shape.members["Filters"].documentation
    assert f"<code>{name}</code>" in documentation


def test_the_delete_objects_document_is_the_delete_shape_of_the_model():
    """The --delete JSON the query builds: {Objects: [{Key, VersionId}]}, as s3 DeleteObjects reads it."""
    delete = SESSION.get_service_model("s3").operation_model("DeleteObjects").input_shape.members["Delete"]
    for words in (w for w in aws_commands(printed(VARIANTS["dev"])) if w[2] == "list-object-versions"):
        keys = re.findall(r"\b([A-Za-z]+)\s*:", _options(words)["--query"])
        assert keys[0] in delete.members and set(keys[1:]) <= set(delete.members["Objects"].member.members)


def position(lines: list[str], pattern: str) -> int:
    [index] = [i for i, line in enumerate(lines) if re.search(pattern, line)]
    return index


def test_clusters_go_through_their_apis_before_their_stacks_and_the_network_is_released_last():
    lines = command_lines(printed(VARIANTS["team-stacks"]))
    order = [position(lines, pattern) for pattern in (
        r"^EKS=", r"destroy .* HyperPod-prod-teams-0$", r"destroy .* HyperPod-prod-governance$",
        r"^aws sagemaker delete-cluster --cluster-name ml-prod ", r"^aws eks delete-cluster ",
        r"^aws eks wait cluster-deleted ", r"destroy .* HyperPod-prod-cluster$",
        r"describe-network-interfaces", r"deploy -c env=prod -c teardown=prod HyperPod-prod-network$",
        r"destroy .* HyperPod-prod-network$", r"delete-bucket --bucket ", r"schedule-key-deletion")]
    assert order == sorted(order)
    assert {position(lines, rf"destroy .* HyperPod-prod-teams-{k}$") for k in range(3)} < set(
        range(position(lines, r"destroy .* HyperPod-prod-governance$")))


@pytest.mark.parametrize("stack", ["cluster", "network", "batch"])
def test_termination_protection_goes_off_right_before_each_protected_destroy(stack):
    lines = command_lines(printed(VARIANTS["batch-example"]))
    name = f"HyperPod-batch-example-{stack}"
    destroy = position(lines, rf"^npx cdk destroy .* {name}$")
    assert lines[destroy - 1] == (f"aws cloudformation update-termination-protection --stack-name {name} "
                                  "--no-enable-termination-protection --region us-east-1")


def why(config: KitConfig) -> str:
    return " ".join(step.why for step in runbook(config, ROOT / "config" / f"{config.environment}.yaml"))


def test_the_kept_resources_carry_the_configs_names():
    text = printed(VARIANTS["prod"])
    assert "--bucket sagemaker-hpk-prod-444455556666-us-west-2 " in text
    assert "/aws/sagemaker/Clusters/ml-prod/" in text and "--region us-west-2" in text
    assert "FLOW_LOGS" in text and "releases the NAT addresses" in why(VARIANTS["prod"])


def test_an_existing_vpc_keeps_its_vpc_and_has_no_flow_log_group():
    assert "FLOW_LOGS" not in printed(VARIANTS["existing-vpc"])
    reasons = why(VARIANTS["existing-vpc"])
    assert "existing_vpc_id" in reasons and "releases the NAT addresses" not in reasons


def test_a_batch_only_environment_has_only_the_batch_stack_to_delete():
    text = printed(VARIANTS["batch-only-example"])
    assert set(re.findall(r"HyperPod-[a-z0-9-]+", text)) == {"HyperPod-batch-only-example-batch"}
    assert "aws sagemaker" not in text and "aws eks" not in text and "HyperPod cluster" not in text


def test_a_config_outside_config_dir_is_passed_to_cdk(tmp_path):
    path = tmp_path / "dev.yaml"
    path.write_text((ROOT / "config" / "dev.yaml").read_text())
    config = load_config(path).config
    destroys = [line for line in command_lines(render(config, runbook(config, path))) if " cdk " in line]
    assert destroys and all(f"-c env=dev -c config={path} " in line for line in destroys)


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cdk_app", "teardown", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_the_command_prints_the_runbook_and_exits_0():
    result = run("config/dev.yaml")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("# Teardown of environment dev") and "WARNING: deleting the HyperPod" in result.stdout


@pytest.mark.parametrize("text, where", [("environment: [dev\n", ":1:18 "), ("environment: Dev!\naccount: 1\n", ":1:")])
def test_an_unreadable_or_invalid_config_exits_2_naming_file_and_line(tmp_path, text, where):
    path = tmp_path / "env.yaml"
    path.write_text(text)
    result = run(str(path))
    assert result.returncode == 2 and result.stdout == ""
    assert f"{path}{where}" in result.stderr and "Traceback" not in result.stderr


def test_a_missing_config_or_argument_exits_2(tmp_path):
    assert run(str(tmp_path / "none.yaml")).returncode == 2
    assert run().returncode == 2
