"""The documentation's generated reference: `make docs-reference` writes it into the pages, the MkDocs hook and the
tests fail when a page's copy is stale.

A page asks for a generated part with a marker line, e.g. `<!-- generated: findings -->`; the part follows it in the
file, up to `<!-- end generated: findings -->`, so the reference reads in the clone and on GitHub as on the site
(issue 30: a page holding only the marker was useless without `make docs`). The part is the markdown the code gives:
finding codes from cdk_app/findings.py CODES, config fields from the pydantic model, the CLI from click, the instance
catalogue from cdk_app/domain, the pinned tools from pyproject.toml and package.json, a team's Kueue objects from
cdk_app/domain/kueue_mapping.py. An unknown marker fails. `python scripts/docs_reference.py` writes every page;
`--check` only lists the stale ones (exit 1).
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path

import click
import yaml

from cdk_app.cli.main import main as cli
from cdk_app.config.loader import load_config
from cdk_app.config.names import team_cluster_queue
from cdk_app.config.reference import codes_markdown, config_reference_markdown
from cdk_app.domain.efa_support import has_efa
from cdk_app.domain.instance_types import CATALOGUE, EFA_MAXIMUM, TOPOLOGY_LAYERS, family
from cdk_app.domain.kueue_mapping import governance_objects

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
MARKER = re.compile(r"^<!-- generated: ([a-z-]+) -->$")
END = "<!-- end generated: {name} -->"
# Any line that mentions a generated part: one the patterns do not match exactly would stay an HTML comment.
MENTION = re.compile(r"^[ \t]*<!--[ \t]*(end[ \t]+)?generated\b.*$", re.M)
# The title of a block a generated part holds: checked by the stale-page test, not by the doc block tests.
GENERATED_FROM = "generated from"
NOTE = "<!-- written by `make docs-reference` from the code: edit the code, not this part -->"
# Wide enough that click wraps no option's help mid-sentence differently from one machine to the next.
HELP_WIDTH = 100


def cli_markdown() -> str:
    """Every command's --help, as click prints it (lazy commands included)."""
    root = click.Context(cli, info_name="hyperpod-kit", terminal_width=HELP_WIDTH, max_content_width=HELP_WIDTH)
    parts = ["## hyperpod-kit", "", "```text", cli.get_help(root), "```"]
    for name in cli.list_commands(root):
        command = cli.get_command(root, name)
        ctx = click.Context(command, info_name=name, parent=root, terminal_width=HELP_WIDTH,
                            max_content_width=HELP_WIDTH)
        parts += ["", f"## hyperpod-kit {name}", "", "```text", command.get_help(ctx), "```"]
    return "\n".join(parts)


def instances_markdown() -> str:
    """One row per HyperPod instance type of the catalogue the validator sums capacity with."""
    rows = ["| instance type | vCPU | memory GiB | accelerators | EFA interfaces | topology layers |",
            "| --- | ---: | ---: | --- | --- | --- |"]
    for name, spec in sorted(CATALOGUE.items(), key=lambda item: _sort_key(item[0])):
        accelerators = f"{spec.accelerators} x {spec.accelerator_model}" if spec.has_accelerators else "-"
        efa = str(EFA_MAXIMUM[name]) if name in EFA_MAXIMUM else ("yes" if has_efa(name) else "-")
        layers = str(TOPOLOGY_LAYERS.get(family(name), "-"))
        rows.append(f"| `{name}` | {spec.vcpu} | {spec.memory_gib:g} | {accelerators} | {efa} | {layers} |")
    return "\n".join(rows)


def _sort_key(name: str) -> tuple[str, int, str]:
    """Family, then size by vCPU, so ml.p5.4xlarge comes before ml.p5.48xlarge."""
    return family(name), CATALOGUE[name].vcpu, name


def pins_markdown() -> str:
    """The direct pins of pyproject.toml (with the test extra) and package.json."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    npm = json.loads((ROOT / "package.json").read_text())["devDependencies"]
    rows = ["| package | version | from |", "| --- | --- | --- |"]
    for group, pins in (("PyPI", project["dependencies"]), ("PyPI (test extra)",
                                                              project["optional-dependencies"]["test"])):
        for pin in pins:
            name, version = pin.split("==")
            rows.append(f"| `{name}` | {version} | {group} |")
    rows += [f"| `{name}` | {version} | npm |" for name, version in npm.items()]
    return "\n".join(rows)


def kueue_example_markdown() -> str:
    """Team john's ClusterQueue in config/dev.yaml, as cdk_app/domain/kueue_mapping.py makes it."""
    config = load_config(ROOT / "config" / "dev.yaml").config
    queue, = (o for o in governance_objects(config) if o["metadata"]["name"] == team_cluster_queue("john"))
    return "\n".join([f'```yaml title="{GENERATED_FROM} config/dev.yaml"', yaml.safe_dump(queue, sort_keys=False).rstrip(),
                      "```"])


GENERATORS: dict[str, Callable[[], str]] = {
    "findings": codes_markdown, "config": config_reference_markdown, "cli": cli_markdown,
    "instances": instances_markdown, "pins": pins_markdown, "kueue-example": kueue_example_markdown,
}


def render(markdown: str, where: str = "page") -> str:
    """`markdown` with every generated part as the code gives it today: the lines between a marker and its end
    marker replaced, and a marker without one followed by its part and the end marker."""
    for line in MENTION.finditer(markdown):
        text = line.group(0)
        if not (MARKER.fullmatch(text) or re.fullmatch(r"<!-- end generated: [a-z-]+ -->", text)):
            raise ValueError(f"{where}: {text!r} is not a marker line (write <!-- generated: NAME --> alone on a line)")
    lines = markdown.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        match = MARKER.fullmatch(lines[i])
        if not match:
            if lines[i].startswith("<!-- end generated: "):
                raise ValueError(f"{where}: {lines[i]!r} ends a part that no <!-- generated: NAME --> line starts")
            out.append(lines[i])
            i += 1
            continue
        name = match.group(1)
        if name not in GENERATORS:
            raise ValueError(f"{where}: unknown generated part {name!r} (known: {', '.join(GENERATORS)})")
        end = END.format(name=name)
        closing = next((k for k in range(i + 1, len(lines)) if lines[k] == end), None)
        if closing is not None and any(MARKER.fullmatch(line) for line in lines[i + 1:closing]):
            raise ValueError(f"{where}: <!-- generated: {name} --> has no {end} before the next marker")
        # blank lines around the part: Python-Markdown would read a line right after a comment as raw HTML
        out += [lines[i], NOTE, "", GENERATORS[name](), "", end]
        i = (closing if closing is not None else i) + 1
    return "\n".join(out)


def stale_pages() -> list[Path]:
    """The pages whose generated parts are not what the code gives today."""
    return [page for page in sorted(DOCS.rglob("*.md")) if render(page.read_text(), _shown(page)) != page.read_text()]


def write_pages() -> list[Path]:
    """Write every page's generated parts; the pages that changed."""
    changed = stale_pages()
    for page in changed:
        page.write_text(render(page.read_text(), _shown(page)))
    return changed


def _shown(page: Path) -> str:
    return str(page.relative_to(ROOT))


def on_page_markdown(markdown: str, page, config, files) -> str:  # MkDocs calls hooks with these names
    """The site shows the pages as they are in the repository; a stale generated part fails the build."""
    from mkdocs.exceptions import PluginError  # mkdocs prints it as one line, not a traceback

    if render(markdown, page.file.src_path) != markdown:
        raise PluginError(f"docs/{page.file.src_path}: the generated reference is stale: run `make docs-reference`")
    return markdown


if __name__ == "__main__":
    check = sys.argv[1:] == ["--check"]
    if sys.argv[1:] not in ([], ["--check"]):
        sys.exit("usage: python scripts/docs_reference.py [--check]")
    pages = stale_pages() if check else write_pages()
    for page in pages:
        print(f"{_shown(page)}: {'stale (run make docs-reference)' if check else 'written'}")
    sys.exit(1 if check and pages else 0)
