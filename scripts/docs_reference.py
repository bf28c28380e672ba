"""The documentation's generated reference, and the MkDocs hook that writes it into the pages at build time.

A page asks for a generated part with a marker line, e.g. `<!-- generated: findings -->`; `mkdocs build` (mkdocs.yml
`hooks:`) replaces it with the markdown the code gives today, so the reference cannot drift from the code: finding
codes from cdk_app/findings.py CODES, config fields from the pydantic model, the CLI from click, the instance
catalogue from cdk_app/domain, the pinned tools from pyproject.toml and package.json, a team's Kueue objects
from cdk_app/domain/kueue_mapping.py. An unknown marker fails the build. The tests render every page through
the same function (tests/support/doc_pages.py).
"""

from __future__ import annotations

import json
import re
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
MARKER = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.M)
# Any line that mentions a generated part: one the marker does not match exactly would stay an HTML comment.
MENTION = re.compile(r"^[ \t]*<!--[ \t]*generated\b.*$", re.M)
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
    return "\n".join(["```yaml", yaml.safe_dump(queue, sort_keys=False).rstrip(), "```"])


GENERATORS: dict[str, Callable[[], str]] = {
    "findings": codes_markdown, "config": config_reference_markdown, "cli": cli_markdown,
    "instances": instances_markdown, "pins": pins_markdown, "kueue-example": kueue_example_markdown,
}


def render(markdown: str, where: str = "page") -> str:
    """Replace every marker line of `markdown` with its generated part."""
    for line in MENTION.findall(markdown):
        if not MARKER.fullmatch(line):
            raise ValueError(f"{where}: {line!r} is not a marker line (write <!-- generated: NAME --> alone on a line)")

    def generated(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in GENERATORS:
            raise ValueError(f"{where}: unknown generated part {name!r} (known: {', '.join(GENERATORS)})")
        return GENERATORS[name]()

    return MARKER.sub(generated, markdown)


def on_page_markdown(markdown: str, page, config, files) -> str:  # MkDocs calls hooks with these names
    return render(markdown, page.file.src_path)
