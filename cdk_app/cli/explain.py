"""hyperpod-kit explain: why one job of a simulated workload waits or was preempted, in its team's terms."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from cdk_app.cli.simulate import (
    EXIT_FINDINGS,
    EXIT_UNREADABLE,
    check_inputs,
    choices_of,
    choices_options,
    input_options,
    valid_config,
    workload_jobs,
)
from cdk_app.support.text_table import printable


@click.command("explain")
@click.argument("config_path", type=click.Path(dir_okay=True, path_type=Path))
@input_options
@click.option("--job", "job_name", required=True, help="The job's name.")
@click.option("--team", default=None, help="The job's team, when two teams have a job of that name.")
@choices_options
def explain(config_path: Path, workload: str | None, from_cluster: str | None, remaining: int, job_name: str,
            team: str | None, reclaim_within_cohort: str, dont_lend_may_borrow: bool) -> None:
    """Say, one sentence per reason, why a job of the workload waits or was preempted in the simulation:
    what it needs, its team's quota and use, what it may borrow, who holds the idle capacity, Kueue's message.

    Exit status: 0 explained, 2 no such job or unreadable input, 3 internal error.
    """
    from cdk_app.simulate.explain import explain_job
    from cdk_app.simulate.run import simulate_environment

    check_inputs(workload, from_cluster)
    config = valid_config(config_path)
    jobs = workload_jobs(config, workload, from_cluster, remaining)
    matches = [j for j in jobs.jobs if j.name == job_name and (team is None or j.team == team)]
    batch_names = {item.get("name") for item in jobs.batch_items if isinstance(item, dict)}
    if not matches and job_name in batch_names:
        click.echo(f"{printable(job_name)} is an AWS Batch job: explain tells task-governance jobs' stories; "
                   "`hyperpod-kit simulate` lists each Batch job's admissions, borrowing and preemptions with their "
                   "reasons", err=True)
        sys.exit(EXIT_UNREADABLE)
    if len(matches) != 1:
        names = sorted({f"{j.name} ({j.team})" for j in jobs.jobs})
        why = "no job" if not matches else f"{len(matches)} jobs (give --team)"
        shown = ", ".join(names[:20]) + (" ..." if len(names) > 20 else "")
        click.echo(f"{printable(jobs.file)}: {why} named {printable(job_name)}"
                   + (f" in team {printable(team)}" if team else "") + f"; the jobs: {shown}", err=True)
        sys.exit(EXIT_UNREADABLE)
    _, findings, timeline = simulate_environment(config, jobs, choices_of(reclaim_within_cohort, dont_lend_may_borrow),
                                                 trace=True)
    if timeline is None:  # the start itself is impossible (HPK806): there is no story to tell
        for finding in findings:
            click.echo(finding.render(), err=True)
        sys.exit(EXIT_FINDINGS)
    record = next((r for r in timeline.jobs if r.job is matches[0]), None)
    if record is None:
        click.echo(f"job {printable(job_name)} of team {matches[0].team}: one of its pods is larger than any "
                   "instance it may run on, so it was not simulated (simulate reports it as HPK803)")
        return
    click.echo(f"job {printable(job_name)} of team {record.job.team}:")
    for line in explain_job(config, timeline, record):
        click.echo(printable(line))
