"""`hyperpod-kit init`: a new environment file from flags (or, at a terminal, from answers to prompts).

The file is checked by the kit's own loader and validator before it is written: init writes nothing the
first `validate` would refuse. Region, zone ids, instance types and `cloudformation_types` come from the
same facts the validator uses (cfn-lint's region data, the instance catalogue)."""

from __future__ import annotations

import dataclasses
import os
import re
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import click
import yaml

from cdk_app.cli.options import WHOLE_NUMBER
from cdk_app.config.model import DEFAULT_TASK_GOVERNANCE_VERSION, Eks
from cdk_app.config.types import ENVIRONMENT_PATTERN
from cdk_app.config.zone_ids import region_code
from cdk_app.domain.governance_types import GOVERNANCE_TYPES, offered_type
from cdk_app.domain.instance_types import CATALOGUE, node_vcpu
from cdk_app.domain.regions import nearest_region, region_problem, zone_names
from hyperpod_constructs.private.subnet_layout import MAX_ZONE_NUMBER, zone_number

EKS_ZONES = 2  # EKS places its control plane in two zones (HPK107, HPK122)


@dataclass(frozen=True)
class Group:
    name: str
    instance_type: str
    count: int


@dataclass(frozen=True)
class TeamAnswer:
    name: str
    quota: tuple[tuple[str, int], ...]


@dataclass
class Answers:
    environment: str | None = None
    account: str | None = None
    region: str | None = None
    zones: list[str] = field(default_factory=list)
    groups: list[Group] = field(default_factory=list)
    teams: list[TeamAnswer] = field(default_factory=list)
    admins: list[str] = field(default_factory=list)
    public_access_cidrs: list[str] = field(default_factory=list)
    priority_classes: list[tuple[str, int]] = field(default_factory=list)
    default_priority: str | None = None
    shared_pool: bool = False


def _threads_line(instance_type: str) -> list[str]:
    """threads_per_core 2 on a type whose nodes would have half its vCPU with the default 1: quotas count the
    full vCPU (SageMaker's), so a team holding most of the type would hold more than the nodes have (HPK540)."""
    if instance_type not in CATALOGUE or node_vcpu(instance_type, 1) == CATALOGUE[instance_type].vcpu:
        return []
    return ["      threads_per_core: 2  # 1 turns hyper-threading off: a node then has half the vCPU quotas count"]


def _count(text: str, what: str) -> int:
    """A count as every numeric option reads one (cdk_app/cli/options.py: ASCII digits, at most 18)."""
    try:
        return WHOLE_NUMBER.convert(text, None, None)
    except click.BadParameter as err:
        raise click.BadParameter(f"{what}: the count {err.message}") from None


def parse_group(text: str) -> Group:
    """NAME=TYPE:COUNT, e.g. gpu-workers=ml.g5.12xlarge:4."""
    name, sep, rest = text.partition("=")
    itype, colon, count = rest.rpartition(":")
    if not sep or not colon or not name or not itype:
        raise click.BadParameter(f"{text!r}: expected NAME=TYPE:COUNT, e.g. gpu-workers=ml.g5.12xlarge:4")
    return Group(name, itype, _count(count, text))


def parse_team(text: str) -> TeamAnswer:
    """NAME=TYPE:COUNT[,TYPE:COUNT...], or NAME alone for a team without quota yet."""
    name, sep, rest = text.partition("=")
    if not name or (sep and not rest):
        raise click.BadParameter(f"{text!r}: expected NAME=TYPE:COUNT[,TYPE:COUNT...], e.g. john=ml.g5.12xlarge:3")
    quota = []
    for entry in filter(None, rest.split(",")):
        itype, colon, count = entry.rpartition(":")
        if not colon or not itype:
            raise click.BadParameter(f"{text!r}: quota entry {entry!r} is not TYPE:COUNT")
        quota.append((itype, _count(count, text)))
    return TeamAnswer(name, tuple(quota))


def parse_priority_class(text: str) -> tuple[str, int]:
    name, sep, weight = text.partition("=")
    if not sep or not name:
        raise click.BadParameter(f"{text!r}: expected NAME=WEIGHT, e.g. training=80 (weight 0-100)")
    return name, _count(weight, text)


def _parse_each(flag: str, parse, values: tuple[str, ...], problems: list[str]) -> list:
    """Every value of a repeated flag parsed; each one that does not parse is a problem, and the rest go on."""
    parsed = []
    for value in values:
        try:
            parsed.append(parse(value))
        except click.BadParameter as err:
            problems.append(f"{flag}: {err.message}")
    return parsed


def zone_ids_text(region: str) -> str:
    """What the kit knows of `region`'s zone ids and what it cannot know. cfn-lint's region data lists the
    region's zones by name (us-east-1a ...); neither it nor botocore lists zone ids, and which name is which id
    differs in every account."""
    prefix, names = region_code(region), zone_names(region)
    if names:
        ids = ", ".join(f"{prefix}-az{n}" for n in range(1, len(names) + 1))
        known = [f"{region}: {len(names)} availability zones in cfn-lint's region data, by name: {', '.join(names)}",
                 f"zone ids there are {prefix}-az<number>: {ids} if numbered without a gap; the kit has no list of the "
                 "ids themselves (neither cfn-lint nor botocore holds one), and a region may skip a number"]
    else:
        known = [f"{region}: cfn-lint's region data lists no zones there",
                 f"zone ids there are {prefix}-az<number>; the kit has no list of them"]
    return "\n".join([
        *known,
        f"which name is which id differs in each account, so the kit cannot tell you the id of {region}a; "
        f"EC2 can (read-only): aws ec2 describe-availability-zones --region {region} "
        "--query 'AvailabilityZones[].[ZoneName,ZoneId]' --output text",
        f"a new VPC has subnet slots for az1 to az{MAX_ZONE_NUMBER} only"])


def zone_problem(region: str, zone: str) -> str | None:
    """Why `zone` cannot be a zone id of the environment in `region` (the checks HPK106 and HPK120 make)."""
    prefix = region_code(region)
    try:
        number = zone_number(zone)
    except ValueError:
        return f"{zone!r} is not a zone id (ids look like {prefix}-az1; a zone name such as {region}a is not one)"
    if zone.rsplit("-az", 1)[0] != prefix:
        return f"{zone} is not in {region} (ids there start with {prefix}-az)"
    if not 1 <= number <= MAX_ZONE_NUMBER:
        return f"{zone}: the kit places subnets for az1 to az{MAX_ZONE_NUMBER} only"
    return None


def region_flag_problem(region: str) -> str | None:
    problem = region_problem(region)
    if problem == "unknown":
        near = nearest_region(region)
        return f"region {region!r} does not exist (cfn-lint knows no such region)" + (f"; did you mean {near}?" if near else "")
    if problem == "no-hyperpod":
        return (f"SageMaker HyperPod (AWS::SageMaker::Cluster) is not offered in {region}; "
                "pick a region such as us-east-1 or us-west-2")
    return None


def check_region(region: str) -> None:
    problem = region_flag_problem(region)
    if problem:
        raise click.BadParameter(problem, param_hint="--region")


def zone_flag_problems(region: str, zones: list[str]) -> list[str]:
    problems = [p for p in (zone_problem(region, z) for z in zones) if p]
    if len(set(zones)) < EKS_ZONES:
        problems.append(f"give at least {EKS_ZONES} distinct zones (EKS places its control plane in two)")
    return problems


def check_zones(region: str, zones: list[str]) -> None:
    problems = zone_flag_problems(region, zones)
    if problems:
        raise click.BadParameter("; ".join(problems) + ".\n" + zone_ids_text(region), param_hint="--zone")


class FlagProblems(click.UsageError):
    """Every bad or missing flag of one init run, each on its own line, and then where help is: the problems
    first, not click's usage banner above the first one only."""

    def __init__(self, problems: list[str], notes: list[str], file_errors: int = 0) -> None:
        super().__init__("; ".join(problems))
        # The validator's errors in the file the other flags give, listed after the problems: the header counts them.
        self.problems, self.notes, self.file_errors = problems, notes, file_errors

    def show(self, file=None) -> None:
        more = f" and {self.file_errors} error(s) in the file they give (below)" if self.file_errors else ""
        lines = [f"init: {len(self.problems)} problem(s) with the flags{more}, nothing written:",
                 *(f"  {problem}" for problem in self.problems), *self.notes,
                 "see hyperpod-kit init --help (exit status 2)"]
        click.echo("\n".join(lines), err=True)


def _scalar(value: object) -> str:
    """A YAML scalar, quoted only where YAML would read the plain text as something else."""
    return yaml.safe_dump(value, default_flow_style=True, width=10_000).removesuffix("\n...\n").strip()


def _flow(values: list[str]) -> str:
    return "[" + ", ".join(_scalar(v) for v in values) + "]"


def render(answers: Answers) -> str:
    """The environment file, with comments that say what to edit."""
    region, zones = answers.region or "", answers.zones
    cluster_zones = zones[:EKS_ZONES]
    lines = [
        "# yaml-language-server: $schema=./schema.json",
        f"# Environment {answers.environment}, written by `hyperpod-kit init`. Check every edit with",
        f"# `hyperpod-kit validate <this file>`; deploy with `make synth ENV={answers.environment}` (docs/how-to/new-environment.md).",
        f"environment: {_scalar(answers.environment)}",
        f"account: {_scalar(answers.account)}",
        f"region: {_scalar(region)}",
        f"# Zone ids (not names) of {region}; append to add a zone, never remove or reorder one once deployed.",
        f"availability_zone_ids: {_flow(zones)}",
        "",
        "network:",
        "  # The zones the EKS control plane and the HyperPod cluster are created in: fixed once deployed.",
        f"  cluster_zone_ids: {_flow(cluster_zones)}",
        "",
        "eks:",
        f"  kubernetes_version: {_scalar(Eks.model_fields['kubernetes_version'].default)}",
    ]
    if answers.public_access_cidrs:
        lines += ["  # The API is also reachable from these networks (the admins' kubectl).",
                  "  endpoint_access: public_and_private",
                  f"  public_access_cidrs: {_flow(answers.public_access_cidrs)}"]
    else:
        lines += ["  # Reachable from inside the VPC only; for kubectl from elsewhere use public_and_private and",
                  "  # list the admins' networks in public_access_cidrs.",
                  "  endpoint_access: private"]
    lines.append("  # IAM roles or users that become cluster administrators (EKS access entries).")
    lines += ["  admin_principals:", *(f"    - {_scalar(a)}" for a in answers.admins)] if answers.admins else \
        ["  admin_principals: []  # add e.g. arn:aws:iam::<account>:role/PlatformAdmin"]
    lines += ["", "hyperpod:", "  # Capacity: change count to resize a group; a new instance type is a new group.",
              "  instance_groups:"]
    for group in answers.groups:
        lines += [f"    - name: {_scalar(group.name)}",
                  f"      instance_type: {_scalar(group.instance_type)}",
                  f"      count: {group.count}",
                  *_threads_line(group.instance_type),
                  f"      availability_zone_id: {_scalar(zones[0] if zones else '')}"]
    # A new environment isolates GPUs at the node from its first deploy: switching later needs the GPU nodes
    # replaced, so the model's default stays off for environments deployed before the setting existed.
    lines += ["  # GPUs only from the device plugin: a container sees the GPUs it requests, whatever its image says",
              "  # (docs/explanation/guardrails.md). Keep it as it is once deployed: switching replaces GPU nodes.",
              "  lifecycle: {gpu_device_isolation: true}"]
    types = ", ".join(f"{key}: {offered_type(region, key)}" for key in GOVERNANCE_TYPES)
    lines += [
        "",
        "task_governance:",
        f"  addon_version: {DEFAULT_TASK_GOVERNANCE_VERSION}",
        f"  # What {region}'s CloudFormation offers today (cfn-lint's region data): native types, or api (a custom",
        "  # resource calling the SageMaker API). Never change them once deployed (HPK310-HPK312).",
        f"  cloudformation_types: {{{types}}}",
        "",
        "cluster_policy:",
    ]
    if answers.priority_classes:
        lines += ["  # Jobs name a class with --priority; a higher weight runs first and may preempt lower ones.",
                  "  priority_classes:",
                  *(f"    - {{name: {_scalar(n)}, weight: {w}}}" for n, w in answers.priority_classes)]
    else:
        lines.append("  # No priority classes: first come, first served. Add priority_classes: [{name, weight}].")
    lines += ["  fair_share: Enabled", "  idle_resource_sharing: Enabled", "",
              "# Each team gets namespace hyperpod-ns-<name> and a quota per instance type; members are IAM principals."]
    if not answers.teams:
        lines.append("teams: []  # add teams: [{name, quota: [{instance_type, count}], principals: [...]}]")
    else:
        lines.append("teams:")
    for team in answers.teams:
        lines += [f"  - name: {_scalar(team.name)}",
                  "    # LendAndBorrow lends idle quota and borrows up to borrow_limit percent more (default 50).",
                  "    sharing_strategy: LendAndBorrow"]
        if answers.default_priority:
            lines.append(f"    default_priority_class: {_scalar(answers.default_priority)}")
        lines += ["    quota:", *(f"      - {{instance_type: {_scalar(t)}, count: {c}}}" for t, c in team.quota)] \
            if team.quota else ["    quota: []  # add [{instance_type, count}]"]
        lines.append("    principals: []  # add the IAM roles of the team's members")
    if answers.shared_pool:
        lines += ["", "# Holds the capacity the teams leave unreserved and lends it to every team.",
                  "shared_pool:", "  name: shared"]
    lines += ["", "# AWS Batch queues for SageMaker Training jobs: add a batch section (README: Teams on AWS Batch)."]
    return "\n".join(lines) + "\n"


def _prompt_list(prompt: str, parse) -> list:
    """Ask for one item after another until an empty answer."""
    items = []
    while True:
        text = click.prompt(prompt, default="", show_default=False, err=True).strip()
        if not text:
            return items
        try:
            items.append(parse(text))
        except click.BadParameter as err:
            click.echo(f"  {err.message}", err=True)


# A wrong or empty answer is asked again, this many times: an input that never answers (a pipe of empty lines)
# must end, not loop.
ASK_TRIES = 5


def _ask_until(what: str, answered: Callable[[], bool], ask: Callable[[], None]) -> None:
    """Ask until answered, at most ASK_TRIES times; then a usage error (exit 2) naming what was missing."""
    for _ in range(ASK_TRIES):
        if answered():
            return
        ask()
    if not answered():
        raise click.UsageError(f"no valid answer for {what} after {ASK_TRIES} tries")


def ask_missing(answers: Answers) -> None:
    """At a terminal: ask for what the flags left out."""
    if answers.environment is None:
        answers.environment = click.prompt("environment name (lower-case, e.g. staging)", err=True)
    if answers.account is None:
        answers.account = click.prompt("AWS account id (12 digits)", err=True)

    def ask_region() -> None:
        region = click.prompt("region", default="us-east-1", err=True)
        try:
            check_region(region)
            answers.region = region
        except click.BadParameter as err:
            click.echo(f"  {err.message}", err=True)

    def ask_zones() -> None:
        click.echo(zone_ids_text(answers.region), err=True)
        zones = click.prompt(f"zone ids, comma-separated (at least {EKS_ZONES})", err=True)
        candidate = [z.strip() for z in zones.split(",") if z.strip()]
        try:
            check_zones(answers.region, candidate)
            answers.zones = candidate
        except click.BadParameter as err:
            click.echo(f"  {err.message}", err=True)

    def ask_groups() -> None:
        answers.groups = _prompt_list("instance group NAME=TYPE:COUNT (empty line: done)", parse_group)

    _ask_until("a region", lambda: answers.region is not None, ask_region)
    _ask_until("zone ids", lambda: bool(answers.zones), ask_zones)
    _ask_until("an instance group (at least one is needed)", lambda: bool(answers.groups), ask_groups)
    if not answers.teams:
        answers.teams = _prompt_list("team NAME=TYPE:COUNT[,TYPE:COUNT] (empty line: done)", parse_team)


MISSING_FLAGS = (("environment", "--environment"), ("account", "--account"), ("region", "--region"),
                 ("zones", "--zone"), ("groups", "--group"))


def write_checked(text: str, output: Path, problems: Sequence[str] = (), notes: Sequence[str] = (),
                  said: Sequence[str] = ()) -> None:
    """Write `text` to `output` only if there are no flag `problems` and the kit's validator finds no error in it;
    else exit 2 with the problems and then the validator's findings, less those about a flag value the problems
    already name (`said`: the bad zones, which the file repeats in several fields)."""
    from cdk_app.cli.report_table import render_table
    from cdk_app.validator.report import check_file

    folder = output.parent
    if not folder.is_dir():
        raise FlagProblems([*problems, f"--output: {output}: folder {folder} does not exist"], [])
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{output.name}.", suffix=".tmp", dir=folder)
    except OSError as err:
        click.echo(f"init: --output {output}: cannot write in {folder}: {err.strerror or err}", err=True)
        sys.exit(2)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        # mkstemp makes the file private; a config file is as readable as any other the user writes.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        report = check_file(temporary, str(output))
        if said:
            named = re.compile(rf"'({'|'.join(map(re.escape, said))})'")
            report = dataclasses.replace(report, findings=[f for f in report.findings if not named.search(f.message)])
        if problems:
            FlagProblems(list(problems), list(notes), len(report.errors)).show()
        if report.errors or report.unreadable:
            click.echo(render_table(report, quote=text.splitlines()), err=True)
            click.echo(f"init: these answers give a config that validate refuses (the lines, quoted under each "
                       f"finding, are those of the file init would write); nothing written to {output}", err=True)
        if problems or report.errors or report.unreadable:
            sys.exit(2)
        os.replace(temporary, output)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    for finding in report.warnings:
        click.echo(finding.render(), err=True)


@click.command("init")
@click.option("--environment", default=None, help="Environment name: lower-case letters, digits, hyphens (at most 20).")
@click.option("--account", default=None, help="AWS account id (12 digits).")
@click.option("--region", default=None, help="AWS region, e.g. us-west-2.")
@click.option("--zone", "zones", multiple=True, metavar="ZONE_ID",
              help="Availability zone id, e.g. usw2-az1 (repeat; at least 2). The first two hold the clusters.")
@click.option("--list-zones", is_flag=True, help="Print what the kit knows of --region's zone ids, and exit.")
@click.option("--group", "groups", multiple=True, metavar="NAME=TYPE:COUNT",
              help="HyperPod instance group, e.g. gpu-workers=ml.g5.12xlarge:4 (repeat). "
                   "`hyperpod-kit instances` lists the types.")
@click.option("--team", "teams", multiple=True, metavar="NAME=TYPE:COUNT[,TYPE:COUNT]",
              help="Team and its quota per instance type, e.g. john=ml.g5.12xlarge:3 (repeat).")
@click.option("--admin", "admins", multiple=True, metavar="ARN", help="Cluster administrator (IAM role or user; repeat).")
@click.option("--public-access-cidr", "cidrs", multiple=True, metavar="CIDR",
              help="Also open the API to this network (repeat). Default: a private endpoint only.")
@click.option("--priority-class", "priority_classes", multiple=True,
              metavar="NAME=WEIGHT", help="Priority class of the cluster policy (repeat). Default: none.")
@click.option("--default-priority", default=None, metavar="NAME",
              help="Every team's default_priority_class (one of --priority-class).")
@click.option("--shared-pool", is_flag=True, help="Add a shared pool holding the capacity no team reserves.")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Where to write. Default: config/<environment>.yaml.")
@click.option("--force", is_flag=True, help="Replace an existing file.")
@click.option("--interactive/--no-input", default=None,
              help="Ask for missing values (default: only when standard input is a terminal).")
def init(environment: str | None, account: str | None, region: str | None, zones: tuple[str, ...], list_zones: bool,
         groups: tuple[str, ...], teams: tuple[str, ...], admins: tuple[str, ...], cidrs: tuple[str, ...],
         priority_classes: tuple[str, ...], default_priority: str | None, shared_pool: bool,
         output: Path | None, force: bool, interactive: bool | None) -> None:
    """Write a new environment file (config/<environment>.yaml) that passes `validate`.

    \b
    In CI, give everything as flags:
      hyperpod-kit init --environment staging --account 111122223333 --region us-west-2 \\
        --zone usw2-az1 --zone usw2-az2 --group gpu-workers=ml.g5.12xlarge:4 \\
        --group system=ml.m5.xlarge:1 --team john=ml.g5.12xlarge:3,ml.m5.xlarge:1 \\
        --team smith=ml.g5.12xlarge:1

    At a terminal, missing values are asked for. The file is validated before it is written (nothing is
    written if validate would refuse it) and an existing file is kept unless --force.

    Exit status: 0 written (or --list-zones printed), 2 bad or missing flags, an existing file or answers
    that validate refuses. Every bad flag is reported in the one run, and so is what validate would find in
    the file the other flags give.
    """
    if list_zones:
        if region is None:
            raise click.UsageError("--list-zones needs --region")
        check_region(region)
        click.echo(zone_ids_text(region))
        return
    problems: list[str] = []
    answers = Answers(environment, account, region, list(zones), _parse_each("--group", parse_group, groups, problems),
                      _parse_each("--team", parse_team, teams, problems), list(admins), list(cidrs),
                      _parse_each("--priority-class", parse_priority_class, priority_classes, problems),
                      default_priority, shared_pool)
    asking = interactive if interactive is not None else sys.stdin.isatty()
    region_problem = region_flag_problem(region) if region is not None else None
    if region_problem:
        answers.region = None
        if asking:
            click.echo(f"  --region: {region_problem}", err=True)  # and the prompt asks again
        else:
            problems.append(f"--region: {region_problem}")
    if asking:
        ask_missing(answers)
    # A flag given but refused above (a bad --region, no --group that parses) is a problem already, not missing.
    refused = {"--region"} if region_problem else set()
    refused |= {"--group"} if groups else set()
    missing = [flag for attribute, flag in MISSING_FLAGS if not getattr(answers, attribute) and flag not in refused]
    if missing:
        problems.append(f"missing {', '.join(missing)} (standard input is not a terminal, so nothing is asked)")
    notes: list[str] = []
    bad_zones = zone_flag_problems(answers.region, answers.zones) if answers.region and answers.zones else []
    if bad_zones:
        problems += [f"--zone: {problem}" for problem in bad_zones]
        notes += [f"  {line}" for line in zone_ids_text(answers.region).splitlines()]
    said = [z for z in answers.zones if answers.region and zone_problem(answers.region, z)]
    if default_priority is not None and default_priority not in {n for n, _ in answers.priority_classes}:
        problems.append(f"--default-priority: {default_priority!r} is not one of the --priority-class names")
        said.append(default_priority)
    if output is None and not re.fullmatch(ENVIRONMENT_PATTERN, answers.environment or ""):
        # The name becomes the default file name: refused here, before it is part of any path.
        problems.append(f"--environment: {(answers.environment or '')[:80]!r} is not an environment name: a lowercase "
                        "letter, then up to 19 lowercase letters, digits or '-'")
    output = output or Path("config") / f"{answers.environment}.yaml"
    if output.exists() and not force and not missing:
        problems.append(f"--output: {output} exists; init never overwrites a file unless --force")
    if problems and (missing or answers.region is None or not answers.groups):
        raise FlagProblems(problems, notes)  # no file can be built without these
    # Bad zones still make a file: validate it too, so that what the other flags get wrong shows in this run.
    write_checked(render(answers), output, problems, notes, said)
    click.echo(f"wrote {output}; next: hyperpod-kit validate {output}", err=True)
