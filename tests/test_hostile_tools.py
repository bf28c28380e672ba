"""The CLI tools (plan, chart-sha256, schema, topology, batch-job, job) under hostile input: a documented
exit code (2 unreadable input or usage) and a message naming what was typed - never a traceback, never a
file written where the user did not ask. Cases from hostile review 4 (/work/wt/attack-reports/hostile4.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cdk_app import plan as planning

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cdk_app", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          capture_output=True, text=True)


@pytest.fixture
def repo(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "README.md").write_text("base\n")
    git(repo, "add", "README.md")
    git(repo, "commit", "-qm", "base")
    git(repo, "tag", "v1")
    return repo


# --------------------------------------------------------------------------- plan --against-ref (F5)


@pytest.mark.parametrize("ref", ["--output={victim}", "-o{victim}", "--remote=x", "-", ""])
def test_a_ref_git_would_read_as_an_option_is_refused_and_writes_nothing(repo, tmp_path, ref):
    victim = tmp_path / "victim.txt"
    victim.write_text("important")
    ref = ref.format(victim=victim)
    with pytest.raises(planning.PlanInputError, match="not a git ref"):
        planning.resolve_ref(repo, ref)
    assert victim.read_text() == "important"


def test_git_itself_truncates_the_file_when_given_such_a_ref(repo, tmp_path):
    """The source of truth for the class: git's own behaviour with the argv the kit used to build."""
    victim = tmp_path / "victim.txt"
    victim.write_text("important")
    git(repo, "archive", "--format=tar", f"--output={victim}")
    assert victim.read_text() != "important"


def test_a_ref_resolves_to_the_commit_git_names(repo):
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    assert planning.resolve_ref(repo, "v1") == head
    assert planning.resolve_ref(repo, "HEAD") == head
    with pytest.raises(planning.PlanInputError, match="'nope': no such commit"):
        planning.resolve_ref(repo, "nope")
    # A tree is not a commit: git archive would take it, a baseline needs a commit.
    with pytest.raises(planning.PlanInputError, match="no such commit"):
        planning.resolve_ref(repo, "HEAD^{tree}")


def test_plan_against_an_option_shaped_ref_exits_2_and_leaves_the_file(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("important")
    result = run("plan", "config/dev.yaml", f"--against-ref=--output={victim}")
    assert result.returncode == 2, result.stderr
    assert f"--against-ref '--output={victim}': not a git ref" in result.stderr
    assert "Traceback" not in result.stderr
    assert victim.read_text() == "important"
