"""`hyperpod-kit init`: every file it writes passes the real `validate`, reads back through the kit's loader
as the flags said, records the CloudFormation types cfn-lint's region data gives, and bad flags exit 2."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

import pytest
from click.testing import CliRunner
from support.cli_runner import run

from cdk_app.cli.main import main
from cdk_app.cli.new_environment import init as command
from cdk_app.config.loader import load_config
from cdk_app.config.zone_ids import region_code
from cdk_app.domain.regions import cfnlint_data

ZONES = ("--zone", "usw2-az1", "--zone", "usw2-az2")
BASE = ("--account", "111122223333", "--region", "us-west-2", *ZONES)
# Variants of answers an administrator gives; each must validate as written.
VARIANTS = {
    "minimal": ("--group", "gpu=ml.g5.12xlarge:2"),
    "teams": ("--group", "gpu-workers=ml.g5.12xlarge:4", "--group", "system=ml.m5.xlarge:1",
              "--team", "john=ml.g5.12xlarge:3,ml.m5.xlarge:1", "--team", "smith=ml.g5.12xlarge:1"),
    "priorities": ("--group", "gpu=ml.p5.48xlarge:2", "--team", "research=ml.p5.48xlarge:2",
                   "--priority-class", "inference=90", "--priority-class", "training=50",
                   "--default-priority", "training"),
    "shared-pool": ("--group", "gpu=ml.g5.12xlarge:4", "--team", "a=ml.g5.12xlarge:1", "--shared-pool"),
    "public-api": ("--group", "gpu=ml.g5.12xlarge:1", "--team", "a=ml.g5.12xlarge:1",
                   "--admin", "arn:aws:iam::111122223333:role/PlatformAdmin", "--public-access-cidr", "203.0.113.0/24"),
}


def init(*args: str):
    return CliRunner().invoke(main, ["init", *args])


def offered(region: str, cfn_type: str) -> bool:
    """cfn-lint's provider data for the region, read directly."""
    return cfn_type in json.loads((cfnlint_data() / "schemas" / "providers" / f"{region}.json").read_text())


def test_every_variant_is_written_and_passes_the_real_validate(tmp_path):
    files = []
    for name, flags in VARIANTS.items():
        path = tmp_path / f"{name}.yaml"
        result = init("--environment", name, *BASE, *flags, "--output", str(path))
        assert result.exit_code == 0, result.output
        files.append(str(path))
    checked = run("validate", *files, "--format", "json")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert json.loads(checked.stdout)["errors"] == []


def test_the_file_reads_back_as_the_flags_said(tmp_path):
    path = tmp_path / "teams.yaml"
    assert init("--environment", "teams", *BASE, *VARIANTS["teams"], "--output", str(path)).exit_code == 0
    config = load_config(path).config
    assert (config.environment, config.account, config.region) == ("teams", "111122223333", "us-west-2")
    assert config.availability_zone_ids == config.network.cluster_zone_ids == ("usw2-az1", "usw2-az2")
    assert config.eks.endpoint_access == "private" and config.eks.public_access_cidrs == ()
    assert [(g.name, g.instance_type, g.count) for g in config.hyperpod.instance_groups] == [
        ("gpu-workers", "ml.g5.12xlarge", 4), ("system", "ml.m5.xlarge", 1)]
    assert {t.name: [(q.instance_type, q.count) for q in t.quota] for t in config.teams} == {
        "john": [("ml.g5.12xlarge", 3), ("ml.m5.xlarge", 1)], "smith": [("ml.g5.12xlarge", 1)]}
    assert "# " in path.read_text() and "never remove or reorder" in path.read_text()


@pytest.mark.parametrize("region,zones", [("us-west-2", ("usw2-az1", "usw2-az2")),
                                          ("us-east-1", ("use1-az4", "use1-az6")),
                                          ("eu-west-1", ("euw1-az1", "euw1-az2"))])
def test_cloudformation_types_are_what_the_region_offers(tmp_path, region, zones):
    path = tmp_path / "env.yaml"
    result = init("--environment", "env", "--account", "111122223333", "--region", region,
                  *(f for z in zones for f in ("--zone", z)), "--group", "gpu=ml.g5.12xlarge:1", "--output", str(path))
    assert result.exit_code == 0, result.output
    types = load_config(path).config.task_governance.cloudformation_types
    assert types.cluster_policy == ("native" if offered(region, "AWS::SageMaker::ClusterSchedulerConfig") else "api")
    assert types.compute_quota == ("native" if offered(region, "AWS::SageMaker::ComputeQuota") else "api")


def test_an_existing_file_is_kept_unless_force(tmp_path):
    path = tmp_path / "env.yaml"
    path.write_text("keep me\n")
    args = ("--environment", "env", *BASE, *VARIANTS["minimal"], "--output", str(path))
    refused = init(*args)
    assert refused.exit_code == 2 and "exists" in refused.output and "--force" in refused.output
    assert path.read_text() == "keep me\n"
    assert init(*args, "--force").exit_code == 0
    assert load_config(path).config.environment == "env"


@pytest.mark.parametrize("flags,says", [
    (("--region", "us-wset-2"), "did you mean us-west-2?"),
    (("--zone", "use1-az1"), "use1-az1 is not in us-west-2"),
    (("--zone", "us-west-2a"), "a zone name such as us-west-2a is not one"),
    (("--zone", "usw2-az9"), "az1 to az7"),
    (("--group", "gpu=ml.g5.12xlarge"), "expected NAME=TYPE:COUNT"),
    (("--group", "gpu=ml.g5.12xlarge:four"), "not a whole number"),
    (("--team", "john=ml.g5.12xlarge"), "is not TYPE:COUNT"),
    (("--priority-class", "high"), "expected NAME=WEIGHT"),
    (("--default-priority", "urgent"), "not one of the --priority-class names"),
])
def test_bad_flags_exit_2_saying_what_is_wrong(tmp_path, flags, says):
    # A bad zone goes with one good one; a repeated --region: the later wins.
    zones = ("--zone", "usw2-az1") if flags[0] == "--zone" else ZONES
    args = ["--environment", "env", "--account", "111122223333", "--region", "us-west-2", *zones,
            *VARIANTS["minimal"], *flags, "--output", str(tmp_path / "env.yaml")]
    result = init(*args)
    assert result.exit_code == 2, result.output
    assert says in result.output
    assert not (tmp_path / "env.yaml").exists()


def test_a_wrong_zone_lists_the_regions_zone_ids():
    result = init("--environment", "env", "--account", "111122223333", "--region", "us-east-1",
                  "--zone", "usw2-az1", "--zone", "use1-az2", "--group", "gpu=ml.g5.12xlarge:1")
    assert result.exit_code == 2
    assert "use1-az<number>" in result.output and "aws ec2 describe-availability-zones" in result.output


@pytest.mark.parametrize("region", ["us-east-1", "eu-west-1", "us-west-1"])
def test_list_zones_says_what_cfnlint_lists_and_what_the_kit_cannot_know(region):
    from cfnlint.helpers import AVAILABILITY_ZONES

    names = AVAILABILITY_ZONES[region]  # cfn-lint's region data: zones by name
    result = init("--list-zones", "--region", region)
    assert result.exit_code == 0
    prefix = region_code(region)
    lines = result.output.splitlines()
    assert lines[0] == f"{region}: {len(names)} availability zones in cfn-lint's region data, by name: {', '.join(names)}"
    assert f"{', '.join(f'{prefix}-az{n}' for n in range(1, len(names) + 1))} if numbered without a gap" in lines[1]
    assert "the kit has no list of the ids themselves" in lines[1]
    assert "differs in each account" in lines[2] and f"describe-availability-zones --region {region}" in lines[2]


def test_every_bad_flag_is_reported_in_one_run_with_what_validate_finds_in_the_rest(tmp_path):
    """The newcomer's run: zone names, a typo'd type, quotas over capacity and a malformed --group at once."""
    path = tmp_path / "euro.yaml"
    result = init("--environment", "euro", "--account", "111122223333", "--region", "eu-west-1",
                  "--zone", "eu-west-1a", "--zone", "eu-west-1b", "--group", "gpu=ml.g5.12xlage:4", "--group", "bad",
                  "--team", "john=ml.g5.12xlage:5", "--team", "smith=ml.g5.12xlage:1", "--output", str(path))
    assert result.exit_code == 2
    out = result.output
    # The header counts the validator's errors listed below as well as the flags' problems.
    assert out.startswith("init: 3 problem(s) with the flags and 5 error(s) in the file they give (below), "
                          "nothing written:\n")
    assert "--group: 'bad': expected NAME=TYPE:COUNT" in out
    assert "--zone: 'eu-west-1a' is not a zone id" in out and "--zone: 'eu-west-1b' is not a zone id" in out
    # the file the other flags give, validated in the same run: the typo and the over-capacity
    assert "HPK201" in out and "teams reserve 6 instances of ml.g5.12xlage but its instance groups have 4" in out
    assert "HPK015" not in out  # the zones were said once, as flags, not again per field of the file
    assert out.index("see hyperpod-kit init --help") < out.index("HPK201")  # problems first, then the findings
    assert not path.exists()


def test_missing_values_without_a_terminal_exit_2_naming_the_flags(tmp_path):
    result = init("--environment", "env", "--output", str(tmp_path / "env.yaml"))
    assert result.exit_code == 2
    assert "missing --account, --region, --zone, --group" in result.output


def test_answers_validate_refuses_are_not_written(tmp_path):
    path = tmp_path / "env.yaml"
    result = init("--environment", "env", *BASE, "--group", "gpu=ml.g5.12xlarge:1", "--team", "a=ml.g5.12xlarge:2",
                  "--output", str(path))
    assert result.exit_code == 2
    assert "HPK501" in result.output and "nothing written" in result.output
    assert not path.exists() and list(tmp_path.iterdir()) == []  # no temporary file left behind either


def test_a_refused_files_lines_are_quoted_under_each_finding(tmp_path):
    """Nothing is written, so the line each finding names is shown: the text of the line init would have written."""
    result = init("--environment", "env", *BASE, "--group", "gpu=ml.g5.12xlarg:4", "--team", "a=ml.g5.12xlarge:2",
                  "--output", str(tmp_path / "env.yaml"))
    assert result.exit_code == 2
    lines = result.output.splitlines()
    finding = next(i for i, line in enumerate(lines) if "[HPK201 error]" in line)
    number = int(lines[finding].split(":")[1])
    assert lines[finding + 1] == f"  {number:>4} |       instance_type: ml.g5.12xlarg"
    # a quota of 2 fits if the typo meant ml.g5.12xlarge (4 instances): held back, its line quoted too
    held = next(i for i, line in enumerate(lines) if line.startswith("held back: 1 finding(s) (HPK501 at line "))
    assert lines[held + 1].endswith("|       - {instance_type: ml.g5.12xlarge, count: 2}")
    assert f"at line {number} (hyperpod.instance_groups[0].instance_type)" in lines[held]


def test_prompts_ask_for_what_the_flags_left_out_and_retry_a_bad_answer(tmp_path):
    path = tmp_path / "asked.yaml"
    answers = "\n".join(["asked", "111122223333", "us-west-2", "usw2-az1, use1-az1", "usw2-az1, usw2-az3",
                         "gpu=ml.g5.12xlarge", "gpu=ml.g5.12xlarge:2", "", "a=ml.g5.12xlarge:2", ""]) + "\n"
    result = CliRunner().invoke(main, ["init", "--interactive", "--output", str(path)], input=answers)
    assert result.exit_code == 0, result.output
    assert "use1-az1 is not in us-west-2" in result.output and "expected NAME=TYPE:COUNT" in result.output
    config = load_config(path).config
    assert config.availability_zone_ids == ("usw2-az1", "usw2-az3")
    assert [(t.name, t.quota[0].count) for t in config.teams] == [("a", 2)]


def test_a_folder_that_cannot_be_written_exits_2_not_3():
    result = init("--environment", "env", *BASE, *VARIANTS["minimal"], "--output", "/proc/env.yaml")
    assert result.exit_code == 2 and "cannot write in /proc" in result.output


def test_the_example_in_init_help_runs_and_validates_without_findings(tmp_path):
    """The command --help shows, run as a user runs it (a subprocess in a folder with config/), then validate."""
    example = command.help.split("give everything as flags:")[1].split("\n\n")[0]
    args = shlex.split(example.replace("\\\n", " ").replace("\b", ""))
    assert args[:2] == ["hyperpod-kit", "init"]
    (tmp_path / "config").mkdir()
    wrote = subprocess.run([sys.executable, "-m", "cdk_app", *args[1:]], cwd=tmp_path, capture_output=True, text=True)
    assert wrote.returncode == 0, wrote.stderr
    checked = run("validate", str(tmp_path / "config" / "staging.yaml"), "--strict")
    assert checked.returncode == 0, checked.stdout
    assert "valid: 0 error(s), 0 warning(s)" in checked.stdout


def test_flags_that_cannot_make_a_file_are_all_named_and_a_bad_one_is_not_called_missing(tmp_path):
    result = init("--environment", "BAD", "--region", "eu-wset-1", "--zone", "x", "--group", "g", "--no-input")
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        "init: 4 problem(s) with the flags, nothing written:",
        "  --group: 'g': expected NAME=TYPE:COUNT, e.g. gpu-workers=ml.g5.12xlarge:4",
        "  --region: region 'eu-wset-1' does not exist (cfn-lint knows no such region); did you mean eu-west-1?",
        "  missing --account (standard input is not a terminal, so nothing is asked)",
        "  --environment: 'BAD' is not an environment name: a lowercase letter, then up to 19 lowercase letters, "
        "digits or '-'",
        "see hyperpod-kit init --help (exit status 2)"]


def test_groups_of_two_thread_types_get_every_vcpu_the_quotas_count(tmp_path):
    # Quotas count a type's full vCPU; threads_per_core 1 (the default) leaves a node half of it on a type with
    # two threads per core (EC2's CPU options), which HPK540 warns of. A Graviton type has one thread per core.
    path = tmp_path / "env.yaml"
    result = init("--environment", "env", *BASE, *VARIANTS["teams"], "--group", "arm=ml.m7g.xlarge:1",
                  "--output", str(path))
    assert result.exit_code == 0, result.output
    groups = {g.name: g.threads_per_core for g in load_config(path).config.hyperpod.instance_groups}
    assert groups == {"gpu-workers": 2, "system": 2, "arm": 1}
    assert "HPK540" not in run("validate", str(path)).stdout
