"""Every command of the tutorials and how-to guides, run as a reader runs it: page by page, in order, in a fresh
clone of the repository, with the exit code and the output lines the page claims (docs/contributing/docs.md says
how a block is read). Blocks that need AWS or a cluster are checked by tests/contracts/test_doc_blocks.py."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from support.doc_pages import blocks, output_mismatch, run_pages
from support.paths import ROOT

# Pages with no command to run (only blocks that need AWS, or none) are left to tests/contracts/test_doc_blocks.py.
PAGES = [page for page in run_pages() if any(b.lang == "bash" and b.title is None for b in blocks(page))]
# A plan synthesizes the environment twice; nothing else in the pages comes near this.
TIMEOUT = 300


def scratch_clone(tmp_path):
    """A clone of the repository as a reader on `main` has it after `make setup`: this checkout's .venv and
    node_modules, the working tree's config/ over it. The pages' `--against-ref main` means "the commit I am on",
    so the clone's `main` is the commit under test (in CI it is main; on a branch, the branch's head)."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", "--shared", str(ROOT), str(clone)], check=True)
    on = subprocess.run(["git", "-C", str(clone), "branch", "--show-current"], capture_output=True, text=True,
                        check=True).stdout.strip()
    if on != "main":
        subprocess.run(["git", "-C", str(clone), "branch", "--force", "main", "HEAD"], check=True)
    shutil.rmtree(clone / "config")
    shutil.copytree(ROOT / "config", clone / "config")
    for linked in (".venv", "node_modules"):
        (clone / linked).symlink_to(ROOT / linked)
    return clone


def environment() -> dict[str, str]:
    """What `source .venv/bin/activate` gives a reader's shell: the kit on PATH, and not node_modules/.bin - a page
    that says a bare `cdk` would pass here and fail for the reader (issue 30: `npx cdk` finds the pinned CLI).
    JSII_NODE is what the CI workflow and the Makefile set (docs/how-to/ci.md)."""
    node_bin = str(ROOT / "node_modules" / ".bin")  # tests/conftest.py puts it first for the tests' own synths
    inherited = [entry for entry in os.environ["PATH"].split(os.pathsep) if entry != node_bin]
    path = os.pathsep.join([str(ROOT / ".venv" / "bin"), *inherited])
    return {**os.environ, "PATH": path, "JSII_NODE": str(ROOT / "node_modules" / ".bin" / "node")}


def run(command: str, cwd) -> subprocess.CompletedProcess[str]:
    if command.startswith("make "):
        command = "make -n " + command.removeprefix("make ")  # what it would run, not a second setup or synth
    return subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=cwd, env=environment(),
                          capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)


@pytest.mark.synth
@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT / "docs").as_posix() for p in PAGES])
def test_every_command_of_the_page_does_what_the_page_says(page, tmp_path):
    clone = scratch_clone(tmp_path)
    ran = 0
    for block in blocks(page):
        if block.lang != "bash" or block.title is not None:
            continue
        result = None
        for command in block.commands:
            result = run(command.text, clone)
            where = f"{page.relative_to(ROOT)}:{command.line}"
            assert result.returncode == command.expected_exit, (
                f"{where}: `{command.text}` exited {result.returncode}, the page says {command.expected_exit}\n"
                f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
            ran += 1
        if block.output is not None:
            assert result is not None, f"{block.where}: an output block after a block with no command"
            mismatch = output_mismatch(block.output.text, result.stdout + result.stderr)
            assert mismatch is None, f"{block.output.where}: {mismatch}\n{result.stdout}{result.stderr}"
    assert ran > 0, f"{page.relative_to(ROOT)} shows no command to run"
