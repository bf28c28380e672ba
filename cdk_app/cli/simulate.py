"""hyperpod-kit simulate: replay a workload on an environment's task governance (and its AWS Batch queues) before
anything is deployed, and say what each job would do - run, borrow, wait, preempt or be preempted."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any, NoReturn

import click

from cdk_app.cli.options import check_output_path
from cdk_app.cli.report_table import render_table
from cdk_app.config.model import KitConfig
from cdk_app.domain.kueue_mapping import Choices
from cdk_app.findings import Finding, Severity
from cdk_app.simulate.workloads import WorkloadFile, WorkloadInvalid, load_workloads
from cdk_app.support.text_table import printable
from cdk_app.validator.report import check_file

EXIT_FINDINGS, EXIT_UNREADABLE = 1, 2


def choices_options(command: Any) -> Any:
    """The readings of what AWS leaves undocumented (kueue_mapping.Choices), each with its default."""
    defaults = Choices()
    command = click.option("--reclaim-within-cohort", type=click.Choice(["Never", "LowerPriority", "Any"]),
                           default=defaults.reclaim_within_cohort, show_default=True,
                           help="Kueue's reclaimWithinCohort for every team (AWS's walkthrough shows Any).")(command)
    command = click.option("--dont-lend-may-borrow/--dont-lend-no-borrow", default=defaults.dont_lend_may_borrow,
                           show_default=True, help="Let a DontLend team borrow others' idle compute in the simulation. An "
                                "option because AWS documents only that such a team lends nothing, not whether it "
                                "may borrow: the default (no) is the stricter reading; run both to see the "
                                "difference.")(command)
    return command


def input_options(command: Any) -> Any:
    """Where the jobs come from (simulate and explain alike): a workload file, a live snapshot, or both."""
    command = click.option("--remaining", type=click.IntRange(1, 366 * 24 * 3600), default=3600, show_default=True,
                           help="--from-cluster: seconds each snapshot job still runs (a snapshot does not say)."
                           )(command)
    command = click.option("--from-cluster", "from_cluster", default=None,
                           type=click.Path(allow_dash=True, dir_okay=True),
                           help="Start from a live cluster: the output of `kubectl get workloads -A -o json` "
                                "(running jobs stay admitted, pending ones queue), with --workload's jobs (if any) "
                                "submitted on top.")(command)
    return click.option("--workload", "workload", default=None, type=click.Path(allow_dash=True, dir_okay=True),
                        help="The jobs to replay (YAML: jobs, batch_jobs); - for standard input.")(command)


def check_inputs(workload: str | None, from_cluster: str | None) -> None:
    if workload is None and from_cluster is None:
        raise click.UsageError("give --workload FILE, --from-cluster FILE, or both")
    if workload == "-" and from_cluster == "-":
        raise click.UsageError("only one of --workload and --from-cluster can read standard input")


def choices_of(reclaim_within_cohort: str, dont_lend_may_borrow: bool) -> Choices:
    return Choices(reclaim_within_cohort=reclaim_within_cohort, dont_lend_may_borrow=dont_lend_may_borrow)


def valid_config(config_path: Path) -> KitConfig:
    """The config, validated as `validate` does; its report and exit code when it is not valid."""
    report = check_file(config_path, str(config_path))
    if report.loaded is None or report.errors:
        click.echo(render_table(report), err=True)
        sys.exit(report.exit_code)
    return report.loaded.config


def fail_workloads(err: WorkloadInvalid) -> NoReturn:
    for finding in err.findings:
        click.echo(finding.render(), err=True)
    sys.exit(EXIT_UNREADABLE if err.unreadable else EXIT_FINDINGS)


# Inputs read from standard input are saved once (a comparison with --against-ref reads them twice); a file
# name here is shown as what the user gave.
SHOWN: dict[str, str] = {}


def shown(path: str) -> str:
    return SHOWN.get(path, "standard input" if path == "-" else path)


def stdin_once(path: str | None, folder: str, limit: int) -> str | None:
    """`path`, or for - a file in `folder` holding what standard input gave (at most `limit` bytes)."""
    from cdk_app.support.bounded_read import UnreadableInput, read_bounded

    if path != "-":
        return path
    try:
        data = read_bounded("-", limit)
    except UnreadableInput as err:
        click.echo(f"standard input: {err.message} ({err.hint})", err=True)
        sys.exit(EXIT_UNREADABLE)
    saved = str(Path(folder) / "stdin")
    Path(saved).write_bytes(data)
    SHOWN[saved] = "standard input"
    return saved


def read_jobs(workload: str, config: KitConfig) -> WorkloadFile:
    try:
        return load_workloads(workload, config, shown(workload))
    except WorkloadInvalid as err:
        fail_workloads(err)


def workload_jobs(config: KitConfig, workload: str | None, from_cluster: str | None, remaining: int) -> WorkloadFile:
    """The jobs to replay: a live snapshot's, then the workload file's submitted on top."""
    from dataclasses import replace

    from cdk_app.simulate.snapshot import MAX_SNAPSHOT_BYTES, SnapshotError, parse_snapshot
    from cdk_app.support.bounded_read import UnreadableInput, read_bounded

    jobs = read_jobs(workload, config) if workload is not None else None
    if from_cluster is None:
        return jobs
    name = shown(from_cluster)
    try:
        snapshot = parse_snapshot(read_bounded(from_cluster, MAX_SNAPSHOT_BYTES,
                                               example="workloads.json (kubectl get workloads -A -o json)"),
                                  name, config, remaining)
    except UnreadableInput as err:
        click.echo(f"{printable(name)}: {err.message} ({err.hint})", err=True)
        sys.exit(EXIT_UNREADABLE)
    except SnapshotError as err:
        click.echo(printable(str(err)), err=True)
        sys.exit(EXIT_UNREADABLE)
    for why, count in sorted(snapshot.left_out.items()):
        click.echo(f"{printable(name)}: {count} workload(s) left out: {why}", err=True)
    if jobs is None:
        return WorkloadFile(name, snapshot.jobs, [], None)
    keys = {job.workload.key for job in snapshot.jobs}
    clash = [job.workload.key for job in jobs.jobs if job.workload.key in keys]
    if clash:
        click.echo(f"{printable(shown(workload))}: job(s) {', '.join(clash[:5])} are already in {printable(name)}; give the "
                   "new jobs names of their own", err=True)
        sys.exit(EXIT_FINDINGS)
    return replace(jobs, jobs=snapshot.jobs + jobs.jobs)


def run_kueue(config: KitConfig, jobs: WorkloadFile, choices: Choices) -> tuple[dict[str, Any], list[Finding]]:
    """The task-governance simulation's summary, and a finding per job that can never be admitted."""
    from cdk_app.simulate.run import not_simulated, simulate_batch_jobs, simulate_environment

    if jobs.jobs:
        summary, findings, _ = simulate_environment(config, jobs, choices)
    else:  # only Batch jobs: task governance has nothing to decide
        summary, findings = not_simulated(choices), []
    batch, batch_findings = simulate_batch_jobs(config, jobs)
    if batch is not None:
        summary["batch"] = batch
    return summary, findings + batch_findings


@click.command("simulate")
@click.argument("config_path", type=click.Path(dir_okay=True, allow_dash=False, path_type=Path))
@input_options
@click.option("--format", "output_format", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--against-ref", default=None,
              help="Also run the config as it is at this git ref, and print how each team's waits, preemptions "
                   "and use move.")
@click.option("--plot", "plot", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write usage per team over time against quota, preemptions marked (.svg).")
@choices_options
def simulate(config_path: Path, workload: str | None, from_cluster: str | None, remaining: int, output_format: str,
             against_ref: str | None, plot: Path | None, reclaim_within_cohort: str, dont_lend_may_borrow: bool) -> None:
    """Replay the jobs of a workload file on CONFIG's governance: when each job is admitted (borrowing from
    whom), preempted (by which job, why), finishes or can never run; per team usage, waits and preemptions.

    Exit status: 0 every job ran, 1 findings (a bad workload entry, a job that can never be admitted),
    2 unreadable input, 3 internal error.
    """
    from cdk_app.config.yaml_source import MAX_FILE_BYTES
    from cdk_app.simulate.compare import render_comparison
    from cdk_app.simulate.snapshot import MAX_SNAPSHOT_BYTES

    if plot is not None and plot.suffix.lower() != ".svg":
        raise click.UsageError(f"--plot {plot}: the plot is written as SVG; give a file name ending in .svg")
    check_inputs(workload, from_cluster)
    config = valid_config(config_path)
    check_plot_path(plot)
    with tempfile.TemporaryDirectory() as folder:
        summary, findings = run_all(config, config_path, stdin_once(workload, folder, MAX_FILE_BYTES),
                                    stdin_once(from_cluster, folder, MAX_SNAPSHOT_BYTES), remaining, against_ref,
                                    choices_of(reclaim_within_cohort, dont_lend_may_borrow))
    if plot is not None:
        from cdk_app.simulate.plot import svg

        if not summary["jobs"]:
            click.echo(f"--plot {plot}: nothing to draw, the workload has no task-governance jobs (the plot shows "
                       "teams' use of the cluster; Batch shares are in the table)", err=True)
            sys.exit(EXIT_UNREADABLE)
        try:
            plot.write_text(svg(summary))
        except OSError as err:
            click.echo(f"--plot {plot}: cannot write it: {err.strerror or err}", err=True)
            sys.exit(EXIT_UNREADABLE)
    if output_format == "json":
        click.echo(json.dumps({**summary, "findings": [f.to_json() for f in findings]}, indent=2))
    else:
        from cdk_app.simulate.report import render, render_batch

        if summary["jobs"]:
            click.echo(render(summary))
        if "batch" in summary:
            click.echo(render_batch(summary["batch"]))
        if "against" in summary:
            click.echo(render_comparison(summary["against"]))
        if not summary["jobs"] and "batch" not in summary:
            click.echo("no jobs to simulate")
    for finding in findings:
        click.echo(finding.render(), err=True)
    sys.exit(EXIT_FINDINGS if any(f.severity == Severity.ERROR for f in findings) else 0)


def check_plot_path(plot: Path | None) -> None:
    """Refuse before the run what could not be written or would block (the shared output-path rule)."""
    if plot is not None:
        check_output_path("--plot", plot, "a file name ending in .svg")


def run_all(config: KitConfig, config_path: Path, workload: str | None, from_cluster: str | None, remaining: int,
            against_ref: str | None, choices: Choices) -> tuple[dict[str, Any], list[Finding]]:
    """The simulation of the config and, with --against-ref, of the config at that ref on the same jobs."""
    from cdk_app.simulate.compare import compare_runs

    summary, findings = run_kueue(config, workload_jobs(config, workload, from_cluster, remaining), choices)
    if against_ref is not None:
        baseline = _config_at_ref(config_path, against_ref)
        base_summary, _ = run_kueue(baseline, workload_jobs(baseline, workload, from_cluster, remaining), choices)
        summary = {**summary, "against": {"ref": against_ref, "teams": compare_runs(base_summary, summary)}}
    return summary, findings


def _config_at_ref(config_path: Path, ref: str) -> KitConfig:
    """The config file as it was at a git ref of its repository, loaded and validated with today's rules."""
    import subprocess

    from cdk_app.cli.plan.model import PlanInputError
    from cdk_app.cli.plan.sources import resolve_ref

    folder = config_path.resolve().parent
    top = subprocess.run(["git", "-C", str(folder), "rev-parse", "--show-toplevel"], capture_output=True, text=True)
    if top.returncode != 0:
        click.echo(f"--against-ref: {config_path} is not in a git repository", err=True)
        sys.exit(EXIT_UNREADABLE)
    repo = Path(top.stdout.strip())
    try:
        commit = resolve_ref(repo, ref)
    except PlanInputError as err:
        click.echo(str(err), err=True)
        sys.exit(EXIT_UNREADABLE)
    relative = config_path.resolve().relative_to(repo).as_posix()
    shown = subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{relative}"], capture_output=True)
    if shown.returncode != 0:
        click.echo(f"--against-ref {ref}: {relative} does not exist at that ref (a new environment has nothing "
                   "to compare with)", err=True)
        sys.exit(EXIT_UNREADABLE)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / Path(relative).name
        path.write_bytes(shown.stdout)
        report = check_file(path, f"{relative}@{ref}")
    if report.loaded is None or report.errors:
        click.echo(render_table(report), err=True)
        click.echo(f"--against-ref {ref}: the config at that ref is not valid", err=True)
        sys.exit(report.exit_code)
    return report.loaded.config
