"""The fourth red team's classes (every command, no tests read), each pinned at its root by the real CLI in a
subprocess: one output-path rule, one whole-number rule, one region rule, one mount-path rule, one bucket rule,
one "has no quota" rule; Batch-only configs in `team`; an interrupted prompt is no verdict."""

from __future__ import annotations

import os
import subprocess

import pytest
from support import cli_runner
from support.paths import ROOT

B = ["--account", "111122223333", "--region", "us-west-2", "--zone", "usw2-az1", "--zone", "usw2-az2"]


def run(*args: str, stdin: str = "", cwd=ROOT) -> subprocess.CompletedProcess:
    """The shared runner, with standard input given (empty unless said) and a bound: a hang fails the test."""
    return cli_runner.run(*args, cwd=cwd, stdin=stdin, timeout=60)


def test_schema_refuses_a_fifo_as_output_instead_of_blocking(tmp_path):
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    result = run("schema", "--output", str(fifo))
    assert result.returncode == 2 and "not a regular file (a directory, FIFO or device)" in result.stderr


@pytest.mark.parametrize("name,code", [("sweeps", 0), ("nobody", 2)])
def test_team_on_a_batch_only_config_shows_its_batch_side_or_names_the_teams(name, code):
    result = run("team", "config/batch-only-example.yaml", name)
    assert result.returncode == code, result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("flag", [["--group", "g=ml.g5.12xlarge:\u00b2"], ["--group", "g=ml.g5.12xlarge:\u0664"],
                                  ["--group", "g=ml.g5.12xlarge:4", "--team", "j=ml.g5.12xlarge:\u00b2"],
                                  ["--group", "g=ml.g5.12xlarge:4", "--priority-class", "hi=\u00b9"]])
def test_init_reads_counts_as_every_numeric_option_does(tmp_path, flag):
    result = run("init", "--environment", "stg", *B, *flag, "--output", str(tmp_path / "o.yaml"))
    assert result.returncode == 2 and "is not a whole number (digits only, no spaces)" in result.stderr, result.stderr
    assert not (tmp_path / "o.yaml").exists()


def test_init_refuses_an_environment_name_before_it_becomes_a_path(tmp_path):
    result = run("init", "--environment", "a" * 300, *B, "--group", "g=ml.g5.12xlarge:4", cwd=tmp_path)
    assert result.returncode == 2 and "is not an environment name" in result.stderr


@pytest.mark.parametrize("region", ["../providers/us-east-1", "x" * 300])
def test_a_region_option_is_a_region_name_never_a_path(region):
    for args in (["instances", "--region", region], ["init", "--list-zones", "--region", region]):
        result = run(*args)
        assert result.returncode == 2 and "does not exist" in result.stderr, (args, result.stderr)


def test_an_interrupted_prompt_is_no_verdict(tmp_path):
    result = run("init", "--interactive", cwd=tmp_path)
    assert result.returncode == 2 and "Aborted" in result.stderr


@pytest.mark.parametrize("path", ["/dev", "/proc/x", "/", "/a/./b", "data"])
def test_job_volumes_follow_the_storage_sections_mount_path_rule(path):
    result = run("job", "--config", "config/prod.yaml", "--team", "research-nlp", "--name", "a", "--image", "i:1",
                 "--volume", f"other:{path}", "--", "python", "x.py")
    assert result.returncode == 2 and "the mount path must be an absolute path without" in result.stderr


def _edited(tmp_path, old: str, new: str):
    text = (ROOT / "config" / "dev.yaml").read_text()
    assert old in text
    path = tmp_path / "dev.yaml"
    path.write_text(text.replace(old, new))
    return run("validate", str(path))


@pytest.mark.parametrize("bucket", ["bkt..x", "192.168.1.1", "xn--bkt"])
def test_a_data_repository_bucket_follows_s3s_naming_rule(tmp_path, bucket):
    result = _edited(tmp_path, "s3://dev-datasets-111122223333/c4/", f"s3://{bucket}/c4/")
    assert result.returncode == 1 and "HPK912" in result.stdout, result.stdout


def test_a_mount_path_under_dev_is_refused_in_the_storage_section(tmp_path):
    result = _edited(tmp_path, "mount_path: /checkpoints\n      automatic", "mount_path: /dev/x\n      automatic")
    assert result.returncode == 1 and "HPK911" in result.stdout, result.stdout


def test_a_team_whose_every_quota_entry_is_zero_has_no_quota(tmp_path):
    result = _edited(tmp_path, "        count: 1\n      - instance_type: ml.m5.2xlarge\n        count: 1\n    principals:\n"
                               "      - arn:aws:iam::111122223333:role/TeamSmith",
                     "        count: 0\n      - instance_type: ml.m5.2xlarge\n        count: 0\n    principals:\n"
                     "      - arn:aws:iam::111122223333:role/TeamSmith")
    assert "team 'smith' has no quota" in result.stdout and "HPK411" in result.stdout, result.stdout


def test_a_zone_id_with_a_leading_zero_is_no_zone_id(tmp_path):
    """use1-az04 would take use1-az4's subnets."""
    result = _edited(tmp_path, "availability_zone_ids: [use1-az4, use1-az6]",
                     "availability_zone_ids: [use1-az4, use1-az6, use1-az04]")
    assert result.returncode == 1 and "'use1-az04' has the wrong format" in result.stdout, result.stdout


def test_explain_says_the_borrowing_limit_and_that_lenders_cap_it(tmp_path):
    """john (12 GPUs, borrow_limit 50 %) asking for 20: Kueue's limit allows 6 more, but only smith's 4 can be
    lent (validate's and team's reach, 16): the sentence no longer reads as if 6 were there to borrow."""
    workload = tmp_path / "w.yaml"
    workload.write_text("jobs:\n  - name: j\n    team: john\n    pods: 5\n"
                        "    per_pod: {instance_type: ml.g5.12xlarge, accelerators: 4}\n    submit_at: 0\n    runtime: 3600\n")
    result = run("explain", "config/dev.yaml", "--workload", str(workload), "--job", "j")
    assert result.returncode == 0, result.stderr
    assert ("its borrowing limit allows 6 accelerators more (borrow_limit 50 %), as far as the others lend"
            in result.stdout)
    assert "Idle quota of ml.g5.12xlarge that it could borrow now: 4 accelerators (smith 4)." in result.stdout


def test_fair_share_quotas_in_several_types_are_not_called_a_split():
    """3 + 3 instances of two sizes against 6 of one is no 50/50: HPK730 says there is no one split instead of
    contradicting itself ("ask for 50/50, the weights give 50/50")."""
    from support.paths import SUPPORT

    result = run("validate", str(SUPPORT / "data" / "batch_fair_share_several_types.yaml"))
    assert result.returncode == 1 and "HPK730" in result.stdout
    assert "quotas in several instance types (ml.g6.12xlarge, ml.g6.24xlarge) state no one split" in result.stdout
    assert "the quotas ask for" not in result.stdout


def test_an_error_that_does_not_follow_from_a_typo_is_not_held_back(tmp_path):
    """A typo'd quota entry only leaves that entry out of the sums: smith's 30 of 4 instances is over capacity
    whatever it was meant to be, so HPK501 stands beside HPK201 (a typo'd instance group would hold it back)."""
    text = (ROOT / "config" / "dev.yaml").read_text()
    john = "  - name: john\n"
    head, tail = text.split(john, 1)
    tail = tail.replace("      - instance_type: ml.g5.12xlarge\n        count: 3\n",
                        "      - instance_type: ml.g5.13xlarge\n        count: 3\n", 1)
    tail = tail.replace("      - instance_type: ml.g5.12xlarge\n        count: 1\n",
                        "      - instance_type: ml.g5.12xlarge\n        count: 30\n", 1)
    path = tmp_path / "dev.yaml"
    path.write_text(head + john + tail)
    result = run("validate", str(path))
    assert "HPK201" in result.stdout and "HPK501" in result.stdout, result.stdout
    assert "(HPK501" not in result.stdout  # not on the held-back line


def test_an_interactive_init_fed_only_empty_lines_ends(tmp_path):
    result = run("init", "--interactive", "--environment", "qq", *B, stdin="\n" * 10_000, cwd=tmp_path)
    assert result.returncode == 2 and "no valid answer for an instance group" in result.stderr


def test_validate_of_an_empty_name_is_a_usage_error_not_the_current_folder():
    result = run("validate", "")
    assert result.returncode == 2 and "an empty name is no file" in result.stderr
    assert ".:1:1" not in result.stdout


def test_data_repository_paths_compare_as_the_directories_they_name(tmp_path):
    text = (ROOT / "config" / "dev.yaml").read_text()
    one = "        - file_system_path: /datasets\n"
    assert one in text
    second = one.replace("/datasets", "/other/../datasets/.") + ("          s3_path: s3://dev-datasets-111122223333/more/\n"
                                                               "          import_events: [NEW]\n")
    path = tmp_path / "dev.yaml"
    path.write_text(text.replace(one, second + one, 1))
    result = run("validate", str(path))
    assert result.returncode == 1 and "HPK908" in result.stdout and "/datasets overlaps /other/../datasets/." in result.stdout, result.stdout


def test_three_typical_mistakes_show_in_one_run(tmp_path):
    """A newcomer's three mistakes - a zone name in a group, a typo'd type, quotas over capacity - are all
    reported at once: a group's broken zone does not change its capacity, so nothing is held back."""
    text = (ROOT / "config" / "dev.yaml").read_text()
    text = text.replace("availability_zone_id: use1-az4", "availability_zone_id: us-east-1a", 1)
    text = text.replace("      - instance_type: ml.m5.2xlarge\n        count: 1\n    principals:\n"
                        "      - arn:aws:iam::111122223333:role/TeamJohn",
                        "      - instance_type: ml.m5.2xlarg\n        count: 1\n    principals:\n"
                        "      - arn:aws:iam::111122223333:role/TeamJohn")
    text = text.replace("        count: 3\n", "        count: 9\n", 1)
    path = tmp_path / "dev.yaml"
    path.write_text(text)
    result = run("validate", str(path))
    assert all(code in result.stdout for code in ("HPK015", "HPK201", "HPK501")), result.stdout
    assert "held back" not in result.stdout


def test_a_shape_error_that_stops_every_rule_says_so(tmp_path):
    """A group's count no number: no rule can run, and the report says the rest is not checked yet."""
    result = _edited(tmp_path, "      count: 4\n", "      count: four\n")
    assert result.returncode == 1 and "HPK012" in result.stdout
    assert "not checked yet: the policy rules" in result.stdout
