"""hyperpod-kit command line: validate configs, write the config schema."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from cdk_app.config.loader import ConfigInvalid, load_config
from cdk_app.validator.capacity import DIMENSIONS, Resources
from cdk_app.validator.report import Report, check_file


@click.group()
@click.version_option(package_name="hyperpod-kit")
def main() -> None:
    """Stand up and govern SageMaker HyperPod clusters from config/<env>.yaml."""


@main.command()
@click.argument("configs", nargs=-1, required=True, type=click.Path(dir_okay=True, path_type=Path))
@click.option("--format", "output_format", type=click.Choice(["table", "json"]), default="table",
              show_default=True, help="Human table or machine-readable JSON.")
def validate(configs: tuple[Path, ...], output_format: str) -> None:
    """Check CONFIG files before anything is deployed.

    Exit status: 0 valid (warnings allowed), 1 policy or shape errors, 2 a file could not be read.
    """
    reports = [check_file(path, str(path)) for path in configs]
    if output_format == "json":
        click.echo(json.dumps(reports_json(reports), indent=2))
    else:
        click.echo("\n\n".join(render_table(report) for report in reports))
    sys.exit(max(report.exit_code for report in reports))


def reports_json(reports: list[Report]) -> dict[str, object]:
    """One document for all files; every entry names its file."""
    return {
        "ok": all(r.ok for r in reports),
        "errors": [f.to_json() for r in reports for f in r.errors],
        "warnings": [f.to_json() for r in reports for f in r.warnings],
        "capacity": [{**row.to_json(), "file": r.file, "environment": r.environment}
                     for r in reports for row in r.capacity],
    }


def _cell(reserved: Resources, capacity: Resources, dim: str) -> str:
    used, total = reserved.to_json()[dim], capacity.to_json()[dim]
    return f"{used}/{total}" + (" !" if used > total else "")


def render_table(report: Report) -> str:
    lines = [f"{report.file}" + (f" (environment {report.environment})" if report.environment else "")]
    if report.capacity:
        header = ("instance type", "count", "accelerators", "vCPU", "memory GiB")
        rows = [(row.instance_type, *(_cell(row.reserved, row.capacity, d) for d in DIMENSIONS))
                for row in report.capacity]
        widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
        lines.append("  reserved/capacity (! = over capacity)")
        for r in [header, *rows]:
            lines.append("  " + "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
    for finding in report.findings:
        lines.append(finding.render())
    verdict = "unreadable" if report.unreadable else ("invalid" if report.errors else "valid")
    lines.append(f"{verdict}: {len(report.errors)} error(s), {len(report.warnings)} warning(s)")
    return "\n".join(lines)


@main.command("chart-sha256")
@click.option("--revision", default=None, help="Commit id. Default: the one CONFIG names, else the kit's pin.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
              help="Read the revision from this config's hyperpod.helm_chart.")
@click.option("--archive", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
              help="Hash this already downloaded archive instead of fetching it.")
def chart_sha256(revision: str | None, config_path: Path | None, archive: Path | None) -> None:
    """Print the SHA-256 of the HyperPod chart's source archive, to pin as hyperpod.helm_chart.sha256."""
    import urllib.error

    from cdk_app.chart_archive import archive_sha256, archive_url
    from cdk_app.config.model import DEFAULT_HELM_CHART_REVISION

    if revision is None and config_path is not None:
        try:
            revision = load_config(config_path, str(config_path)).config.hyperpod.helm_chart.revision
        except ConfigInvalid as err:
            click.echo("\n".join(f.render() for f in err.findings), err=True)
            sys.exit(2)
    revision = revision or DEFAULT_HELM_CHART_REVISION
    url = archive.resolve().as_uri() if archive else archive_url(revision)
    try:
        digest = archive_sha256(url)
    except (urllib.error.URLError, OSError) as err:
        click.echo(f"cannot read {url}: {err}", err=True)
        sys.exit(2)
    click.echo(f"# {url}\nsha256: {digest}")


@main.command()
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write here instead of standard output (config/schema.json in this repo).")
def schema(output: Path | None) -> None:
    """Print the JSON Schema of config files."""
    from cdk_app.config.schema import config_schema_text

    text = config_schema_text()
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
