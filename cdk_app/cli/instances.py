"""`hyperpod-kit instances`: the instance catalogue the validator checks types against (HPK201), and per
region the types HyperPod offers there (HPK210)."""

from __future__ import annotations

import json

import click

from cdk_app.domain.capacity import exact_text
from cdk_app.domain.instance_types import CATALOGUE, EFA_MAXIMUM, family
from cdk_app.domain.regions import hyperpod_instance_types, nearest_region, region_problem
from cdk_app.support.text_table import aligned


def _row(name: str) -> dict[str, object]:
    spec = CATALOGUE[name]
    return {"instance_type": name, "vcpu": spec.vcpu, "memory_gib": spec.memory_gib,
            "accelerators": spec.accelerators, "accelerator_model": spec.accelerator_model,
            "efa_interfaces": EFA_MAXIMUM.get(name)}


@click.command("instances")
@click.option("--region", default=None, help="Only the types HyperPod offers in this region (cfn-lint's region data).")
@click.option("--family", "families", multiple=True, metavar="FAMILY",
              help="Only this family, e.g. p5 or g5 (repeat for more).")
@click.option("--format", "output_format", type=click.Choice(["table", "json"]), default="table", show_default=True)
def instances(region: str | None, families: tuple[str, ...], output_format: str) -> None:
    """List the SageMaker HyperPod instance types the kit knows: vCPU, memory, accelerators and, where AWS
    documents it, the most EFA interfaces. Instance groups and quotas name these types.

    Exit status: 0 listed, 2 an unknown region or bad usage.
    """
    names = sorted(CATALOGUE, key=lambda n: (family(n), CATALOGUE[n].vcpu, n))
    if region is not None:
        if region_problem(region) == "unknown":
            near = nearest_region(region)
            raise click.BadParameter(f"region {region!r} does not exist (cfn-lint knows no such region)"
                                     + (f"; did you mean {near}?" if near else ""), param_hint="--region")
        offered = hyperpod_instance_types(region) or frozenset()
        names = [n for n in names if n in offered]
    if families:
        names = [n for n in names if family(n) in families]
    rows = [_row(n) for n in names]
    if output_format == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        where = f" in {region}" if region else ""
        click.echo(f"no HyperPod instance types{where} match" + (f" family {', '.join(families)}" if families else ""))
        return
    header = ("instance type", "vCPU", "memory GiB", "accelerators", "EFA (documented most)")
    table = [(r["instance_type"], str(r["vcpu"]), exact_text(r["memory_gib"]),
              f"{r['accelerators']} {r['accelerator_model']}" if r["accelerators"] else "-",
              str(r["efa_interfaces"]) if r["efa_interfaces"] else "-") for r in rows]
    click.echo("\n".join(aligned([header, *table])))
