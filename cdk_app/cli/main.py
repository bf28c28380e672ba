"""hyperpod-kit command line: validate configs, write the config schema."""

from __future__ import annotations

import errno
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from cdk_app.cli.options import WHOLE_NUMBER, efa_option
from cdk_app.cli.report_table import render_table
from cdk_app.config.loader import ConfigInvalid, load_config
from cdk_app.validator.report import Report, check_file

if TYPE_CHECKING:
    from collections.abc import Callable

    from cdk_app.config.model import KitConfig

ISSUES_HINT = "please report it with the command you ran and the input (hyperpod-kit issue tracker)"
# `kubectl get nodes -o json` of the largest cluster (6758 nodes, tens of KiB each) stays well below this.
MAX_NODE_LIST_BYTES = 512 * 1024 * 1024
# What writing the output fails with when the fault is the environment's (disk full, quota, file size limit,
# the reader of a pipe gone), not the kit's.
WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EPIPE})


class _KitGroup(click.Group):
    """Any exception a command does not turn into a finding or a usage error is an internal error: exit 3
    with one line, never a traceback and never 1 (which means "the config has findings"). Commands defined
    in modules of their own load when invoked (or listed), so `validate` imports only what it needs."""

    LAZY = {"batch-job": ("cdk_app.cli.batch_job", "batch_job"), "teardown": ("cdk_app.cli.teardown", "teardown"),
            "simulate": ("cdk_app.cli.simulate", "simulate"), "explain": ("cdk_app.cli.explain", "explain"),
            "init": ("cdk_app.cli.new_environment", "init"), "instances": ("cdk_app.cli.instances", "instances"),
            "team": ("cdk_app.cli.team_view", "team"), "show": ("cdk_app.cli.show", "show"),
            "check": ("cdk_app.cli.manifest_check", "check")}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *self.LAZY])

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.LAZY:
            import importlib

            module, attribute = self.LAZY[name]
            return getattr(importlib.import_module(module), attribute)
        return super().get_command(ctx, name)

    def invoke(self, ctx: click.Context):  # type: ignore[no-untyped-def]
        try:
            result = super().invoke(ctx)
            sys.stdout.flush()  # here, not at exit: a full disk or a closed pipe is then reported like any write
            return result
        except (click.exceptions.ClickException, click.exceptions.Exit):
            raise
        except (click.exceptions.Abort, KeyboardInterrupt):
            # Ctrl-C, or standard input ending at a prompt: no verdict at all, so not 1 (findings); click would
            # make it 1.
            click.echo("Aborted: interrupted, or standard input ended before every answer", err=True)
            sys.exit(2)
        except OSError as err:
            if err.errno not in WRITE_ERRNOS:
                raise_internal(err)
            # The output could not be written (disk full, quota, pipe closed): the environment's fault, not
            # the kit's. Standard output is dropped so the interpreter's exit does not try it again.
            sys.stdout = open(os.devnull, "w")
            click.echo(f"hyperpod-kit: cannot write the output: {err.strerror or err}", err=True)
            sys.exit(2)
        except Exception as err:
            raise_internal(err)


def raise_internal(err: Exception) -> NoReturn:
    detail = str(err).splitlines()[0][:200] if str(err) else ""
    click.echo(f"hyperpod-kit: internal error ({type(err).__name__}{': ' + detail if detail else ''}); "
               f"{ISSUES_HINT}", err=True)
    sys.exit(3)


@click.group(cls=_KitGroup)
@click.version_option(package_name="hyperpod-kit")
def main() -> None:
    """Stand up and govern SageMaker HyperPod clusters from config/<env>.yaml."""


def _config_paths(_ctx, param, values: tuple[str, ...]) -> tuple[Path, ...]:
    # Path("") is ".": an empty argument would be read (and reported) as the current folder.
    if any(value == "" for value in values):
        raise click.BadParameter("an empty name is no file; name a config such as config/dev.yaml", param=param)
    return tuple(Path(value) for value in values)


@main.command()
@click.argument("configs", nargs=-1, required=True, callback=_config_paths,
                type=click.Path(dir_okay=True, allow_dash=True, path_type=str))
@click.option("--format", "output_format", type=click.Choice(["table", "json"]), default="table",
              show_default=True, help="Human table or machine-readable JSON.")
@click.option("--live", is_flag=True, help="Also read the deployed cluster, quotas, policy and add-on (read-only).")
@click.option("--profile", default=None, help="AWS profile for --live. Default: the usual credential chain.")
@click.option("--strict", is_flag=True, help="Warnings fail too (exit 1), e.g. an unpinned chart in prod's CI.")
def validate(configs: tuple[Path, ...], output_format: str, live: bool, profile: str | None, strict: bool) -> None:
    """Check CONFIG files before anything is deployed.

    Exit status: 0 valid (warnings allowed unless --strict), 1 policy or shape errors (or, with --strict,
    warnings), 2 a file (or, with --live, the account) could not be read, 3 internal error. A CONFIG of - is
    read from standard input.
    """
    reports = [check_file(path, str(path)) for path in configs]
    sections: list[dict[str, object]] = []
    if live:
        for report in reports:
            if report.loaded is not None:
                sections.append(live_check(report, profile))
    if output_format == "json":
        document = reports_json(reports)
        if live:
            document["live"] = sections
            document["ok"] = document["ok"] and all(r.ok for r in reports)
        if strict:
            document["ok"] = document["ok"] and not any(r.warnings for r in reports)
        click.echo(json.dumps(document, indent=2))
    else:
        click.echo("\n\n".join(render_table(report, strict) for report in reports))
    codes = [report.exit_code for report in reports]
    warned = sum(len(report.warnings) for report in reports)
    if strict and warned:
        click.echo(f"--strict: {warned} warning(s) fail the check (exit 1); without --strict they would not", err=True)
        codes.append(1)
    if any(s.get("error") or (s.get(part) or {}).get("error") for s in sections for part in ("batch", "storage")):
        codes.append(2)  # the account could not be read (HyperPod, Batch or storage part): unreadable, not findings
    sys.exit(max(codes))


def live_check(report: Report, profile: str | None) -> dict[str, object]:
    """Run the live checks for one config; their findings join the report."""
    import boto3
    from botocore.config import Config
    from botocore.exceptions import BotoCoreError, ClientError

    from cdk_app.cli.live import RETRIES, LiveAccessError, LiveResult, compare, gather
    from cdk_app.cli.live_batch import with_batch
    from cdk_app.cli.live_storage import with_storage
    from cdk_app.findings import Finding, Severity

    loaded = report.loaded
    config = loaded.config
    try:
        session = boto3.session.Session(profile_name=profile, region_name=config.region)
        retry = Config(retries=RETRIES)
        state = None if config.hyperpod is None else gather(
            config, session.client("sagemaker", config=retry), session.client("eks", config=retry),
            session.client("cloudformation", config=retry), session.client("ec2", config=retry))
    except (LiveAccessError, BotoCoreError, ClientError) as err:  # a finding, never a traceback
        message = str(err) if isinstance(err, LiveAccessError) else f"{type(err).__name__}: {err}"
        report.findings.append(Finding("HPK606", Severity.ERROR, report.file, 1, 1, "", f"live check: {message}",
                                       "fix access and run again; the offline findings above still hold"))
        return {"file": report.file, "environment": report.environment, "error": message}
    if state is None:  # Batch only: there is no cluster, quota or add-on to read
        click.echo(f"{report.file}: no HyperPod cluster in this environment (no hyperpod section): "
                   "--live checks AWS Batch only", err=True)
        result = LiveResult(section={"hyperpod": None})
    else:
        result = compare(config, loaded.source, state)
    result = with_batch(result, config, loaded.source, session, retry)
    result = with_storage(result, config, loaded.source, session, retry, state.eks_cluster if state else None)
    report.findings.extend(result.findings)
    return {"file": report.file, "environment": report.environment, **result.section}


def reports_json(reports: list[Report]) -> dict[str, object]:
    """One document for all files; every entry names its file."""
    return {
        "ok": all(r.ok for r in reports),
        "errors": [f.to_json() for r in reports for f in r.errors],
        "warnings": [f.to_json() for r in reports for f in r.warnings],
        # Findings that may only follow from an error above (unknown instance type, broken key): not counted.
        "held_back": [f.to_json() for r in reports for f in r.held_back],
        # The broken keys those may follow from: fix these first.
        "held_back_because": [{"file": r.file, "path": path} for r in reports for path in r.held_because],
        # Warnings the config acknowledges (acknowledged_warnings), with the reason: not counted, --strict passes.
        "acknowledged": [a.to_json() for r in reports for a in r.acknowledged],
        "capacity": [{**row.to_json(), "file": r.file, "environment": r.environment}
                     for r in reports for row in r.capacity],
        "reach": [{**row.to_json(), "file": r.file, "environment": r.environment} for r in reports for row in r.reach],
        "partitions": [{**row.to_json(), "file": r.file, "environment": r.environment}
                       for r in reports for row in r.partitions],
        "partition_reach": [{**row.to_json(), "file": r.file, "environment": r.environment}
                            for r in reports for row in r.partition_reach],
        "batch_capacity": [{**row.to_json(), "file": r.file, "environment": r.environment}
                           for r in reports for row in r.batch_capacity],
        "batch_queues": [{**row.to_json(), "file": r.file, "environment": r.environment}
                         for r in reports for row in r.batch_queues],
    }


def _input_name(path: str) -> str:
    return "standard input" if path == "-" else path


def _read_nodes(path: str) -> list:
    """A node list from `kubectl get nodes -o json` (a file, or - for standard input), read with a hard byte
    cap; bad input exits 2 with the reason, no traceback. The one reader of `topology` and `job`."""
    from cdk_app.kubernetes import topology as topo
    from cdk_app.support.bounded_read import UnreadableInput, read_bounded

    name = _input_name(path)
    try:
        return topo.parse_nodes(read_bounded(path, MAX_NODE_LIST_BYTES, example="nodes.json (kubectl get nodes -o json)").decode("utf-8"), name)
    except UnreadableInput as err:
        click.echo(f"{name}: {err.message} ({err.hint})", err=True)
    except topo.TopologyInputError as err:
        click.echo(str(err), err=True)
    except UnicodeDecodeError:
        click.echo(f"{name}: not UTF-8 text; give the output of `kubectl get nodes -o json`", err=True)
    sys.exit(2)


def exit_refused(config_path: Path, err: Exception) -> NoReturn:
    """A refused request of `job` or `batch-job`: a usage error (exit 2) when the options themselves are
    wrong (cdk_app.support.refusal.OptionError), else a finding on its merits (exit 1)."""
    from cdk_app.support.refusal import OptionError

    if isinstance(err, OptionError):
        raise click.UsageError(str(err))
    click.echo(f"{config_path}: {err}", err=True)
    sys.exit(1)


def options_then_config(config_path: Path, check_options: Callable[[], None], refusal: type[Exception]) -> KitConfig:
    """The order of `job` and `batch-job`: the request's options first (a usage error needs no config), then
    the config, whose errors end the command as `validate` reports them."""
    try:
        check_options()
    except refusal as err:
        exit_refused(config_path, err)
    report = check_file(config_path, str(config_path))
    if report.loaded is None or report.errors:
        click.echo(render_table(report), err=True)
        sys.exit(report.exit_code)
    return report.loaded.config


@main.command()
@click.argument("nodes", type=click.Path(allow_dash=True, dir_okay=True))
@click.option("--format", "output_format", type=click.Choice(["mermaid", "table", "json"]), default="table",
              show_default=True, help="Mermaid flowchart, a table of shared network nodes, or JSON.")
def topology(nodes, output_format: str) -> None:
    """Show which nodes share network nodes. NODES: `kubectl get nodes -o json` output, a file or - for stdin."""
    from cdk_app.kubernetes import topology as topo

    parsed = _read_nodes(nodes)
    if output_format == "mermaid":
        click.echo(topo.mermaid(parsed))
    elif output_format == "json":
        click.echo(json.dumps(topo.as_json(parsed), indent=2))
    else:
        click.echo(topo.table(parsed))


def _job_option(parse):
    """A job option parsed by job_templates (KEY=VALUE, PVC:PATH[:ro], SIZE[:PATH]), repeatable or not; bad text
    is a usage error."""
    def callback(_ctx, _param, values: tuple[str, ...] | str | None):
        from cdk_app.kubernetes.job_templates import JobSpecError

        try:
            if values is None or isinstance(values, str):
                return None if values is None else parse(values)
            return tuple(parse(value) for value in values)
        except JobSpecError as err:
            raise click.BadParameter(str(err)) from None
    return callback


def _parse_env(text: str):
    from cdk_app.kubernetes.job_templates import parse_env
    return parse_env(text)


def _parse_mig(text: str):
    from cdk_app.kubernetes.job_templates import parse_mig_option
    return parse_mig_option(text)


def _parse_volume(text: str):
    from cdk_app.kubernetes.job_templates import parse_volume
    return parse_volume(text)


def _parse_scratch(text: str):
    from cdk_app.kubernetes.job_templates import parse_scratch
    return parse_scratch(text)


@main.command()
@click.option("--config", "config_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The environment's config file.")
@click.option("--team", required=True, help="Team that submits; the job goes to hyperpod-ns-<team>.")
@click.option("--priority", default=None,
              help="Priority class of the cluster policy. Default: the team's default_priority_class, else none.")
@click.option("--name", required=True, help="Job name (a DNS label).")
@click.option("--image", required=True, help="Container image.")
@click.option("--kind", type=click.Choice(["pytorchjob", "mpijob", "job"]), default="pytorchjob", show_default=True)
@click.option("--instance-type", default=None, help="Default: the first type of the team's quota in the cluster.")
@click.option("--nodes", type=WHOLE_NUMBER, default=1, show_default=True,
              help="Nodes, one pod each (PyTorchJob: 1 master + workers; elastic: workers; MPIJob: workers).")
@click.option("--min-nodes", type=WHOLE_NUMBER, default=None, help="Elastic PyTorchJob: fewest nodes it keeps training on.")
@click.option("--max-nodes", type=WHOLE_NUMBER, default=None, help="Elastic PyTorchJob: most nodes that may join.")
@click.option("--rdzv-backend", type=click.Choice(["c10d", "etcd"]), default=None,
              help="Elastic PyTorchJob rendezvous: c10d (default, on worker 0) or etcd (writes an etcd Service and "
                   "Deployment).")
@click.option("--accelerators", type=WHOLE_NUMBER, default=None, help="GPUs or Neuron devices per node. Default: all.")
@click.option("--mig", "mig", default=None, callback=lambda ctx, param, value: _job_option(_parse_mig)(
    ctx, param, (value,))[0] if value is not None else None, metavar="PROFILE[:COUNT]",
              help="MIG partitions per pod instead of whole GPUs, e.g. mig-1g.10gb or mig-1g.10gb:2; the team "
                   "needs a quota of them (accelerator_partition).")
@click.option("--efa", default="0", show_default=True, callback=efa_option,
              help="EFA interfaces per node, or 'all' (from --cluster-nodes, else the documented count).")
@click.option("--cpu", default=None, help="CPU request per pod, a Kubernetes quantity (e.g. 16, 500m).")
@click.option("--memory", default=None, help="Memory request per pod, a Kubernetes quantity (e.g. 64Gi).")
@click.option("--shm", default=None, help="Size of a memory-backed /dev/shm (e.g. 64Gi).")
@click.option("--scratch", "scratches", multiple=True, callback=_job_option(_parse_scratch), metavar="SIZE[:PATH]",
              help="Node-local scratch space per pod: an emptyDir of at most SIZE (e.g. 500Gi) on the node's instance-"
                   "store NVMe where it has one, else its secondary EBS volume; mounted at PATH (default /scratch).")
@click.option("--env", "env", multiple=True, callback=_job_option(_parse_env), metavar="KEY=VALUE",
              help="Environment variable of the job's containers (repeatable).")
@click.option("--volume", "volumes", multiple=True, callback=_job_option(_parse_volume), metavar="PVC:PATH[:ro]",
              help="Mount a PersistentVolumeClaim of the team's namespace (repeatable). The team's file systems "
                   "(storage section) are mounted at their mount_path without it.")
@click.option("--cluster-nodes", type=click.Path(allow_dash=True, dir_okay=True), default=None,
              help="`kubectl get nodes -o json` output (file or -): check GPUs, EFA and node count against it.")
@click.option("--topology", type=click.Choice(["required", "preferred"]), default=None,
              help="Keep the pods on one network node of --topology-layer.")
@click.option("--topology-layer", type=WHOLE_NUMBER, default=None,
              help="Network node layer (1-4) of --topology, which it needs. Default: 3.")
@click.option("--auto-resume/--no-auto-resume", default=False,
              help="HyperPod restarts the job after node recovery (PyTorchJob only).")
@click.option("--max-retries", type=WHOLE_NUMBER, default=None,
              help="Retries before the job fails (default 3): a PyTorchJob's only with --auto-resume.")
@click.argument("command", nargs=-1, required=True)
def job(config_path: Path, team: str, priority: str | None, name: str, image: str, kind: str, instance_type: str | None,
        nodes: int, min_nodes: int | None, max_nodes: int | None, rdzv_backend: str | None, accelerators: int | None,
        mig: tuple[str, int] | None, efa: int | str, cpu: str | None, memory: str | None, shm: str | None,
        scratches: tuple[tuple[str, str], ...], env: tuple, volumes: tuple,
        cluster_nodes, topology: str | None, topology_layer: int | None, auto_resume: bool, max_retries: int | None,
        command: tuple[str, ...]) -> None:
    """Print the manifests of a job for the team's queue: hyperpod-kit job ... -- python train.py"""
    import yaml

    from cdk_app.kubernetes.job_templates import (
        JobRequest,
        JobSpecError,
        borrowing_note,
        check,
        check_options,
        manifests,
        priority_note,
        scratch_note,
    )

    if topology_layer is not None and topology is None:
        # The layer only shapes the topology annotation: alone it would be dropped without a word.
        raise click.UsageError(f"--topology-layer {topology_layer} needs --topology required or --topology "
                               "preferred; add one, or leave out --topology-layer")
    if len(scratches) > 1:
        # Taken as one option click would keep the last silently; a pod gets one scratch emptyDir.
        raise click.UsageError(f"--scratch given {len(scratches)} times: a pod has one node-local scratch space; "
                               "give --scratch once (SIZE[:PATH])")
    scratch = scratches[0] if scratches else None
    if max_retries is not None and kind == "pytorchjob" and not auto_resume:
        # A PyTorchJob's retries are HyperPod auto-resume's (its annotation); without it nothing would carry them.
        raise click.UsageError(f"--max-retries {max_retries}: a PyTorchJob retries through HyperPod auto-resume "
                               "only; add --auto-resume, or leave out --max-retries")
    request = JobRequest(team=team, priority=priority, name=name, image=image, command=command, kind=kind,
                         instance_type=instance_type, nodes=nodes, accelerators_per_node=accelerators,
                         efa_per_node=efa, topology=topology,
                         topology_layer=3 if topology_layer is None else topology_layer,
                         auto_resume=auto_resume, max_retries=3 if max_retries is None else max_retries,
                         min_nodes=min_nodes, max_nodes=max_nodes,
                         rdzv_backend=rdzv_backend, env=env, volumes=volumes, shm=shm, cpu=cpu, memory=memory,
                         mig=mig, **({"scratch": scratch[0], "scratch_path": scratch[1]} if scratch else {}))
    config = options_then_config(config_path, lambda: check_options(request), JobSpecError)
    if config.hyperpod is None:
        # A well-formed request this environment refuses on its merits (it has no queue): a finding, exit 1.
        click.echo(f"{config_path}: environment {config.environment} has no HyperPod cluster (no hyperpod section), "
                   "so there is no queue for `job`; submit SageMaker Training jobs with `hyperpod-kit batch-job`",
                   err=True)
        sys.exit(1)
    fleet = _read_nodes(cluster_nodes) if cluster_nodes is not None else None
    try:
        objects = manifests(config, request, fleet, _input_name(cluster_nodes or ""))
        placement = check(config, request, fleet, _input_name(cluster_nodes or ""))
        notes = (borrowing_note(config, request, placement), scratch_note(config, request, placement))
    except JobSpecError as err:
        exit_refused(config_path, err)
    click.echo(yaml.safe_dump_all(objects, sort_keys=False), nl=False)
    for said in (priority_note(config, request), *notes):
        if said:
            click.echo(said, err=True)


@main.command("chart-sha256")
@click.option("--revision", default=None, help="Commit id. Default: the one CONFIG names, else the kit's pin.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
              help="Read the revision from this config's hyperpod.helm_chart.")
@click.option("--archive", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
              help="Read this already downloaded archive instead of fetching the commit's.")
@click.option("--index", "indexes", multiple=True, metavar="NAME=PATH_OR_URL",
              help="Read a dependency's index.yaml from here instead of its repository (repeatable).")
def chart_sha256(revision: str | None, config_path: Path | None, archive: Path | None, indexes: tuple[str, ...]) -> None:
    """Print the pins of the HyperPod chart for hyperpod.helm_chart: the chart folder's content digest and
    each remote dependency's .tgz URL and published SHA-256. Needs internet access (GitHub and the
    dependencies' repositories) unless --archive and --index name local copies."""
    from cdk_app.cli.chart_archive import ChartPinError, archive_url, chart_pins, read_url
    from cdk_app.config.model import DEFAULT_HELM_CHART_REVISION

    if revision is None and config_path is not None:
        try:
            hyperpod = load_config(config_path, str(config_path)).config.hyperpod
            if hyperpod is None:
                click.echo(f"{config_path}: no HyperPod cluster in this environment (no hyperpod section), so no "
                           "chart to pin; pass --revision", err=True)
                sys.exit(2)
            revision = hyperpod.helm_chart.revision
        except ConfigInvalid as err:
            click.echo("\n".join(f.render() for f in err.findings), err=True)
            sys.exit(2)
    revision = revision or DEFAULT_HELM_CHART_REVISION
    sources = {}
    for entry in indexes:
        name, sep, where = entry.partition("=")
        if not sep or not name or not where:
            click.echo(f"--index {entry!r}: expected NAME=PATH_OR_URL", err=True)
            sys.exit(2)
        sources[name] = Path(where).resolve().as_uri() if Path(where).exists() else where
    url = archive.resolve().as_uri() if archive else archive_url(revision)
    try:
        pins = chart_pins(read_url(url), url, revision, sources)
    except ChartPinError as err:
        click.echo(str(err), err=True)
        sys.exit(2)
    click.echo(f"# pins of {url}\n{pins.to_yaml()}", nl=False)


@main.command()
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write here instead of standard output (config/schema.json in this repo).")
def schema(output: Path | None) -> None:
    """Print the JSON Schema of config files."""
    from cdk_app.config.schema import config_schema_text

    text = config_schema_text()
    if output is not None:
        from cdk_app.cli.options import check_output_path

        check_output_path("--output", output, "a file name")
    if output is None:
        click.echo(text, nl=False)
    else:
        try:
            output.write_text(text, encoding="utf-8")
        except OSError as err:
            click.echo(f"schema: --output {output}: cannot write it: {err.strerror or err}", err=True)
            sys.exit(2)


@main.command()
@click.argument("config_path", metavar="CONFIG", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--against-ref", "ref", default=None, metavar="REF",
              help="Baseline: the same config file synthesized as the repository was at this git ref (e.g. main).")
@click.option("--baseline", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Baseline: a saved cdk.out folder (or a folder of *.template.json).")
@click.option("--against-account", is_flag=True,
              help="Baseline: the templates deployed in the config's account (read-only; needs credentials).")
@click.option("--profile", default=None, help="AWS profile for --against-account.")
@click.option("--current", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="This synth of CONFIG (e.g. cdk.out after make synth) instead of synthesizing it here.")
@click.option("--allow-replace", "allowed", multiple=True, metavar="LOGICAL_ID",
              help="Accept the replacement or deletion of this stateful resource (repeat for each).")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
def plan(config_path: Path, ref: str | None, baseline: Path | None, against_account: bool, profile: str | None,
         current: Path | None, allowed: tuple[str, ...], output_format: str) -> None:
    """Show what deploying CONFIG will do: teams and quotas changed, and every stateful resource replaced
    or deleted - refused unless named with --allow-replace.

    Exit status: 0 nothing stateful is replaced or deleted without --allow-replace, 1 something is (or the
    config has errors), 2 a baseline, synth, config or the account could not be read, or bad usage.
    """
    import subprocess
    import tempfile

    from cdk_app.cli import plan as planning

    if sum((ref is not None, baseline is not None, against_account)) != 1:
        raise click.UsageError("give exactly one baseline: --against-ref REF, --baseline DIR or --against-account")
    report = check_file(config_path, str(config_path))
    if report.loaded is None or report.errors:
        click.echo(render_table(report), err=True)
        sys.exit(report.exit_code)
    config = report.loaded.config
    with tempfile.TemporaryDirectory(prefix="hyperpod-kit-plan-") as tmp:
        try:
            if current is not None:
                after = planning.environment_stacks(planning.read_templates(current), config.environment, str(current))
                planning.check_digest(after, config, str(current))
            else:
                current = planning.synthesize(config, Path(tmp) / "current")
                after = planning.environment_stacks(planning.read_templates(current), config.environment, "the synth")
            protection = ({}, planning.termination_protection(current))
            if baseline is not None:
                before = planning.environment_stacks(planning.read_templates(baseline), config.environment,
                                                     str(baseline))
                protection = (planning.termination_protection(baseline), protection[1])
                label = f"saved synth {baseline}"
            elif ref is not None:
                top = subprocess.run(["git", "-C", str(config_path.resolve().parent), "rev-parse", "--show-toplevel"],
                                     capture_output=True, text=True)
                if top.returncode != 0:
                    raise planning.PlanInputError(f"{config_path}: not in a git repository ({top.stderr.strip()})")
                repo = Path(top.stdout.strip())
                relative = str(config_path.resolve().relative_to(repo))
                assembly = planning.synthesize_ref(repo, ref, relative, config.environment, Path(tmp) / "ref")
                # A config added since the ref is a new environment: nothing of it is deployed yet.
                before = planning.read_templates(assembly) if assembly is not None else {}
                if assembly is not None:
                    protection = (planning.termination_protection(assembly), protection[1])
                label = f"git ref {ref} ({relative}{'' if assembly is not None else ': new environment'})"
            else:
                import boto3
                from botocore.exceptions import BotoCoreError

                try:
                    session = boto3.session.Session(profile_name=profile, region_name=config.region)
                    client, sts = session.client("cloudformation"), session.client("sts")
                except BotoCoreError as err:
                    raise planning.PlanInputError(f"--against-account: {err}") from err
                planning.check_account(sts, config.account)
                before = planning.deployed_templates(client, sorted(after))
                protection = (planning.deployed_protection(client, sorted(before)), protection[1])
                label = f"account {config.account} {config.region} (deployed templates)"
        except planning.PlanInputError as err:
            click.echo(f"plan: {err}", err=True)
            sys.exit(2)
    from cdk_app.domain.capacity import spot_backing

    result = planning.compare(before, after, label, protection, spot_backing(config))
    unknown = sorted(set(allowed) - result.names())
    if output_format == "json":
        click.echo(json.dumps({**result.to_json(allowed), "allow_replace_unmatched": unknown}, indent=2))
    else:
        click.echo(planning.render(result, allowed))
    if unknown:
        click.echo(f"plan: --allow-replace {', '.join(unknown)}: no such stateful replacement or deletion in this "
                   "plan (check the logical id)", err=True)
    sys.exit(1 if result.blocked(allowed) else 0)
