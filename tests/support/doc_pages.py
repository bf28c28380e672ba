"""The documentation as the tests read it: the pages, the fenced blocks of the tutorials and how-to guides, and the commands in them.

How a block is read is documented for writers in docs/contributing/docs.md: a ```bash block is run, one command
at a time, and must exit 0 unless the command's line ends with `# exit N`; a ```text title="output" block right
after it is what its last command prints (`...` lines stand for lines left out); a ```bash title="needs AWS" block
is checked, not run, and output no test can produce is a ```text title="illustrative output" block.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from support.paths import ROOT

DOCS = ROOT / "docs"
# The pages whose commands a reader types in order: each is run by tests/e2e/test_doc_commands.py.
RUN_SECTIONS = ("tutorials", "how-to")
NEEDS_AWS = "needs AWS"
# A bash block of commands with files a reader names (jobs.yaml): parsed by the CLI like a needs-AWS block, not run.
USAGE = "usage"
OUTPUT = "output"
# A block of output a reader sees but no test can produce (it needs AWS or a cluster): said so on the page.
ILLUSTRATIVE = "illustrative output"
# A ```yaml block is a file the tool reads, checked by tests/contracts/test_doc_blocks.py: `title="fragment of
# config/X.yaml"` is merged into that config (mappings key by key, lists of named items item by item, by name and
# team) and the result must validate; `title="workload for config/X.yaml"` must load as simulate's workload file.
FRAGMENT = re.compile(r"^fragment of (config/[\w.-]+\.yaml)$")
WORKLOAD = re.compile(r"^workload for (config/[\w.-]+\.yaml)$")
# Any other block no test can run or check says why, in its title: `title="illustrative: <why>"`.
ILLUSTRATIVE_BLOCK = re.compile(r"^illustrative: \S.*$")
# Languages that are pictures, not something a reader runs or copies into a file.
DRAWN = {"mermaid"}
# The pages whose every block is run, checked or said to be illustrative (the reference pages are generated).
CHECKED_SECTIONS = (*RUN_SECTIONS, "explanation")
ELISION = "..."  # a line of an output block that stands for lines of the output left out
_FENCE = re.compile(r"^```(\w*)\s*(.*)$")
_TITLE = re.compile(r'title="([^"]*)"')
_EXPECTED_EXIT = re.compile(r"#\s*exit (\d+)\s*$")
_HEREDOC = re.compile(r"<<-?\s*'?\"?(\w+)'?\"?")


@dataclass
class Command:
    text: str
    line: int  # of the page, 1-based, where the command starts
    expected_exit: int


@dataclass
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    lang: str
    title: str | None
    text: str
    output: Block | None = None
    commands: list[Command] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{shown(self.page)}:{self.line}"


def shown(page: Path) -> str:
    return str(page.relative_to(ROOT)) if page.is_relative_to(ROOT) else str(page)


def pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def run_pages() -> list[Path]:
    return [page for section in RUN_SECTIONS for page in sorted((DOCS / section).glob("*.md"))]


def checked_pages() -> list[Path]:
    return [page for section in CHECKED_SECTIONS for page in sorted((DOCS / section).glob("*.md"))]


def merged(base: Any, fragment: Any) -> Any:
    """`fragment` laid over `base` as a page means it: mappings merge key by key, a list of named mappings merges
    item by item (the same name - and team, where items have one - is the same item; a new one is appended),
    anything else is replaced."""
    if isinstance(base, dict) and isinstance(fragment, dict):
        return {**base, **{key: merged(base[key], value) if key in base else value for key, value in fragment.items()}}
    if isinstance(base, list) and isinstance(fragment, list) and all(
            isinstance(item, dict) and "name" in item for item in [*base, *fragment]):
        def key(item: dict) -> tuple[Any, Any]:
            return item["name"], item.get("team")
        out = list(base)
        for item in fragment:
            index = next((i for i, old in enumerate(out) if key(old) == key(item)), None)
            if index is None:
                out.append(item)
            else:
                out[index] = merged(out[index], item)
        return out
    return fragment


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of a page, each ```text title="output" block attached to the bash block just before it
    (only blank lines between)."""
    found: list[Block] = []
    lines = page.read_text().split("\n")
    i = 0
    last_closed = -2
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match or not match.group(1):
            i += 1
            continue
        start = i
        i += 1
        body = []
        while i < len(lines) and lines[i] != "```":
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise ValueError(f"{shown(page)}:{start + 1}: a fence that is never closed")
        title = _TITLE.search(match.group(2))
        block = Block(page, start + 1, match.group(1), title.group(1) if title else None, "\n".join(body))
        between_blank = all(not line.strip() for line in lines[last_closed + 1:start])
        if block.lang == "text" and block.title == OUTPUT:
            if not (found and found[-1].lang == "bash" and found[-1].output is None and between_blank):
                raise ValueError(f"{block.where}: an output block must follow its bash block, with only blank "
                                 "lines between")
            found[-1].output = block
        else:
            found.append(block)
        if block.lang == "bash":
            block.commands = commands(block.text, start + 2)
        last_closed = i
        i += 1
    return found


def commands(text: str, first_line: int) -> list[Command]:
    """Shell commands of a bash block: `\\` continues a line, a heredoc belongs to its command, full-line comments
    and blank lines are skipped."""
    out: list[Command] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        start = i
        if not line.strip() or line.lstrip().startswith("#"):
            i += 1
            continue
        parts = [line]
        while parts[-1].endswith("\\") and i + 1 < len(lines):
            i += 1
            parts.append(lines[i])
        heredoc = _HEREDOC.search(parts[-1])
        if heredoc:
            end = heredoc.group(1)
            while i + 1 < len(lines):
                i += 1
                parts.append(lines[i])
                if lines[i] == end:
                    break
            else:
                raise ValueError(f"line {first_line + start}: heredoc {end} is never closed")
        expected = _EXPECTED_EXIT.search(parts[0] if heredoc else parts[-1])
        out.append(Command("\n".join(parts), first_line + start, int(expected.group(1)) if expected else 0))
        i += 1
    return out


def output_mismatch(expected: str, actual: str) -> str | None:
    """None when `expected` is what a command printed (`actual`) as a page shows it, else what is not there.

    The block's lines are whole lines of the output (trailing spaces aside), in the output's order and with no line
    left out between two of them - except where the block has a line `...`, which stands for lines left out. A block
    without `...` at its start begins where the output begins; without one at its end, it ends where it ends. So a
    block cannot silently lose a column, a row or a line the tool now prints (issue 30: a sample table went stale)."""
    want = [line.rstrip() for line in expected.strip("\n").split("\n")]
    got = [line.rstrip() for line in actual.rstrip("\n").split("\n")]
    segments: list[list[str]] = [[]]
    for line in want:
        if line == ELISION:
            segments.append([])
        else:
            segments[-1].append(line)
    open_start, open_end = not segments[0], not segments[-1]
    segments = [segment for segment in segments if segment]
    if not segments:
        return "the block shows no line of the output"
    position = 0
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if index == 0 and not open_start:
            starts = [0]
        elif last and not open_end:
            starts = [len(got) - len(segment)]
        else:
            starts = range(position, len(got) - len(segment) + 1)
        found = next((k for k in starts if k >= position and got[k:k + len(segment)] == segment), None)
        if found is None or (last and not open_end and found + len(segment) != len(got)):
            where = "at the start" if index == 0 and not open_start else "at the end" if last and not open_end else ""
            return (f"these lines are not printed together{' ' + where if where else ''} (mark left-out lines with "
                    f"a line {ELISION!r}): {segment}")
        position = found + len(segment)
    return None
