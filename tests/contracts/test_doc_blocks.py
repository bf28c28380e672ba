"""The documentation's blocks that are not run (they need AWS or a cluster) are still checked: their hyperpod-kit
commands are parsed by the CLI itself - every option exists and takes the value given - their make commands name
real targets, and the rest is valid bash. How blocks are read: docs/contributing/docs.md."""

from __future__ import annotations

import re
import shlex
import subprocess

import click
import pytest
import yaml
from click.testing import CliRunner
from docs_reference import GENERATED_FROM
from support.doc_pages import (
    DRAWN,
    FRAGMENT,
    ILLUSTRATIVE,
    ILLUSTRATIVE_BLOCK,
    NEEDS_AWS,
    OUTPUT,
    USAGE,
    WORKLOAD,
    blocks,
    checked_pages,
    merged,
    output_mismatch,
    pages,
    run_pages,
)
from support.paths import ROOT

from cdk_app.cli.main import main as cli

CHECKED = [(block, command) for page in checked_pages() for block in blocks(page)
           if block.lang == "bash" and block.title is not None for command in block.commands]
# A placeholder a reader fills in (<EksClusterName>, <john's role from TeamRoleArns>) reads as one word.
PLACEHOLDER = re.compile(r"<[^<>\n]+>")
KIT = ("hyperpod-kit", ".venv/bin/hyperpod-kit")


def words(command: str) -> list[str]:
    """The command's arguments, up to a redirection or pipe."""
    out = []
    for word in shlex.split(PLACEHOLDER.sub("PLACEHOLDER", command), comments=True):
        if word in {">", "|", ">>", "2>", "<"}:
            break
        out.append(word)
    return out


def parse_with_click(args: list[str]) -> None:
    """Parse as `hyperpod-kit` would, without running: an unknown command or option, a missing option value or
    a value of the wrong type raises click's usage error. Files are not opened (they exist only in an account)."""
    root = click.Context(cli, info_name="hyperpod-kit")
    command = cli.get_command(root, args[0])
    if command is None:
        raise click.UsageError(f"no such command {args[0]!r}")
    ctx = click.Context(command, info_name=args[0], parent=root)
    values, _, _ = command.make_parser(ctx).parse_args(args[1:])
    for param in command.params:
        if param.name in values and not isinstance(param.type, click.Path | click.File):
            param.type_cast_value(ctx, values[param.name])


def test_every_block_that_is_not_run_says_what_it_needs():
    titles = {block.title for page in pages() for block in blocks(page) if block.lang == "bash"}
    assert titles <= {None, NEEDS_AWS, "needs make k8s-up", USAGE}, titles


def test_every_block_of_a_guide_or_explanation_is_run_checked_or_says_why_not():
    """The class of issue 30's copy-paste snippets (a Python edit that cut the file, a refused workload example):
    a block a reader copies is run or checked by the tool, or says in its title why it cannot be."""
    unexplained = []
    for page in checked_pages():
        run_here = page in run_pages()
        for block in blocks(page):
            title = block.title or ""
            if block.lang == "bash":
                ok = title in {NEEDS_AWS, "needs make k8s-up", USAGE} or (run_here and not title)
            elif block.lang == "text":
                ok = title == ILLUSTRATIVE
            elif block.lang == "yaml":
                ok = bool(FRAGMENT.match(title) or WORKLOAD.match(title) or ILLUSTRATIVE_BLOCK.match(title))
            else:
                ok = block.lang in DRAWN or bool(ILLUSTRATIVE_BLOCK.match(title))
            ok = ok or title.startswith(GENERATED_FROM)  # a generated part: tests/contracts/test_docs.py
            if not ok:
                unexplained.append(f"{block.where}: ```{block.lang} {title!r}")
    assert not unexplained, ("blocks that are neither run nor checked nor titled 'illustrative: <why>' "
                             "(docs/contributing/docs.md):\n" + "\n".join(unexplained))


YAML = [block for page in checked_pages() for block in blocks(page) if block.lang == "yaml"]
FRAGMENTS = [(block, FRAGMENT.match(block.title).group(1)) for block in YAML if FRAGMENT.match(block.title or "")]
WORKLOADS = [(block, WORKLOAD.match(block.title).group(1)) for block in YAML if WORKLOAD.match(block.title or "")]


def test_the_pages_hold_checked_yaml_blocks():
    assert len(FRAGMENTS) >= 6 and WORKLOADS


@pytest.mark.parametrize(("block", "base"), FRAGMENTS, ids=[block.where for block, _ in FRAGMENTS])
def test_a_config_fragment_merged_into_its_config_validates(block, base, tmp_path):
    config = merged(yaml.safe_load((ROOT / base).read_text()), yaml.safe_load(block.text))
    path = tmp_path / base  # the same file name: validate reads the environment's name from it
    path.parent.mkdir(parents=True)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert result.exit_code == 0, f"{block.where}: merged into {base}, validate exits {result.exit_code}\n{result.output}"


@pytest.mark.parametrize(("block", "config"), WORKLOADS, ids=[block.where for block, _ in WORKLOADS])
def test_a_workload_block_is_a_workload_simulate_runs(block, config, tmp_path):
    path = tmp_path / "workload.yaml"
    path.write_text(block.text + "\n")
    result = CliRunner().invoke(cli, ["simulate", str(ROOT / config), "--workload", str(path)])
    assert result.exit_code == 0, f"{block.where}: simulate exits {result.exit_code}\n{result.output}"


@pytest.mark.parametrize(("base", "fragment", "expected"), [
    ({"a": {"b": 1, "c": 2}}, {"a": {"b": 3}}, {"a": {"b": 3, "c": 2}}),
    ({"t": [{"name": "x", "n": 1}]}, {"t": [{"name": "x", "m": 2}, {"name": "y"}]},
     {"t": [{"name": "x", "n": 1, "m": 2}, {"name": "y"}]}),
    ({"fs": [{"name": "c", "team": "a", "n": 1}, {"name": "c", "team": "b"}]}, {"fs": [{"name": "c", "team": "b", "n": 2}]},
     {"fs": [{"name": "c", "team": "a", "n": 1}, {"name": "c", "team": "b", "n": 2}]}),
    ({"zones": ["a", "b"]}, {"zones": ["c"]}, {"zones": ["c"]}),
    ({"acks": [{"code": 1}]}, {"acks": [{"code": 2}]}, {"acks": [{"code": 2}]}),
])
def test_a_fragment_merges_as_a_reader_means_it(base, fragment, expected):
    assert merged(base, fragment) == expected


def test_every_output_a_guide_shows_is_checked_or_says_it_is_illustrative():
    """Output shown after a command is either produced by the test (title "output", after a block that runs) or
    titled "illustrative output": a plain text block, or an output block under a command no test runs, would
    go stale unnoticed."""
    for page in run_pages():
        for block in blocks(page):
            if block.lang == "text":
                assert block.title == ILLUSTRATIVE, f"{block.where}: a text block that is no command's checked output"
            if block.output is not None:
                assert block.title is None and block.output.title == OUTPUT, (
                    f"{block.output.where}: output of a block no test runs: title it {ILLUSTRATIVE!r}")


@pytest.mark.parametrize(("block", "command"), CHECKED,
                         ids=[f"{block.page.relative_to(ROOT / 'docs')}:{command.line}" for block, command in CHECKED])
def test_commands_that_need_aws_are_well_formed(block, command):
    args = words(command.text)
    if args[0] in KIT:
        parse_with_click(args[1:])
    elif args[0] == "make":
        result = subprocess.run(["make", "-n", "-C", str(ROOT), *args[1:]], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
    else:
        result = subprocess.run(["bash", "-n", "-c", PLACEHOLDER.sub("PLACEHOLDER", command.text)],
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr


RUN = [(block, command) for page in run_pages() for block in blocks(page)
       if block.lang == "bash" and block.title is None for command in block.commands]


def test_the_run_blocks_hold_commands():
    assert len(RUN) >= 40


@pytest.mark.parametrize(("block", "command"), RUN,
                         ids=[f"{block.page.relative_to(ROOT / 'docs')}:{command.line}" for block, command in RUN])
def test_a_run_command_does_not_rely_on_the_shell_it_ran_in(block, command):
    """Each command runs in a shell of its own (as the test runs it), so one that changes the shell for the next
    (cd, export, a function) would pass the test and mislead the reader - or the other way round. Only the
    venv's activation is mirrored: the test puts .venv/bin on PATH."""
    first = command.text.split()[0]
    assert first not in {"cd", "export", "alias", "pushd", "popd"} and not first.endswith("()"), command.text
    if first in {"source", "."}:
        assert command.text.split()[1:] == [".venv/bin/activate"], command.text


def test_click_parsing_refuses_what_the_cli_refuses():
    with pytest.raises(click.NoSuchOption):
        parse_with_click(["validate", "config/dev.yaml", "--no-such-option"])
    with pytest.raises(click.BadParameter):
        parse_with_click(["validate", "config/dev.yaml", "--format", "yaml"])
    with pytest.raises(click.UsageError):
        parse_with_click(["no-such-command"])
    parse_with_click(["validate", "config/dev.yaml", "--live", "--profile", "p"])


def test_blocks_are_read_as_the_contributors_page_says(tmp_path):
    page = tmp_path / "page.md"
    page.write_text('Text.\n\n```bash\nhyperpod-kit validate a.yaml \\\n    --strict   # exit 1\n# a comment\n'
                    "python3 - <<'EOF'\nprint(1)\nEOF\n```\n\n```text title=\"output\"\nvalid\n```\n\n"
                    '```bash title="needs AWS"\naws sts get-caller-identity\n```\n')
    run, aws = blocks(page)
    assert [(c.text, c.line, c.expected_exit) for c in run.commands] == [
        ("hyperpod-kit validate a.yaml \\\n    --strict   # exit 1", 4, 1), ("python3 - <<'EOF'\nprint(1)\nEOF", 7, 0)]
    assert run.output.text == "valid" and aws.title == NEEDS_AWS


@pytest.mark.parametrize(("shown", "printed", "agrees"), [
    ("a\nb\nc", "a\nb\nc\n", True),
    ("a\nb\nc", "a  \nb\nc", True),  # trailing spaces aside
    ("a\nc", "a\nb\nc", False),  # a line left out without saying so
    ("a\n...\nc", "a\nb\nc", True),
    ("...\nb", "a\nb\nc", False),  # ends before the output does
    ("...\nb\n...", "a\nb\nc", True),
    ("b\n...", "a\nb\nc", False),  # starts after the output does
    ("c\n...\na", "a\nb\nc", False),  # out of order
    ("...\nml.g5  4/4", "...\nml.g5  4/4    0", False),  # a column the page lost
    ("...\n  team\n...", "  team  quota", False),  # part of a line is not the line
    ("a\n...\na", "a", False),  # one printed line cannot stand for two
    ("...", "a", False),  # a block that shows nothing
])
def test_an_output_block_is_the_output_with_left_out_lines_marked(shown, printed, agrees):
    assert (output_mismatch(shown, printed) is None) is agrees


@pytest.mark.parametrize(("text", "message"), [
    ('Text.\n\n```text title="output"\nx\n```\n', "must follow its bash block"),
    ('```bash\ntrue\n```\nprose between\n```text title="output"\nx\n```\n', "must follow its bash block"),
    ("```bash\ntrue\n", "never closed")])
def test_an_output_block_without_its_command_or_an_open_fence_is_refused(tmp_path, text, message):
    page = tmp_path / "page.md"
    page.write_text(text)
    with pytest.raises(ValueError, match=message):
        blocks(page)
