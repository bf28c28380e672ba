"""`hyperpod-kit batch-job`: a batch SubmitServiceJob request for a team, from the environment's config.

The request goes to one of the team's queues, carries the team's share identifier (fair-share queue) or
quota share (quota-share queue), a scheduling priority within the team's limit, a retry strategy and a
timeout; its serviceRequestPayload is a SageMaker CreateTrainingJob request that runs as the team's
execution role. Both are checked against botocore's models (ParamValidator on the operations' input
shapes, plus the patterns ParamValidator leaves out) before anything is printed, so what
`aws batch submit-service-job --cli-input-json file://job.json` receives is a request Batch accepts.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from cdk_app.cli.options import WHOLE_NUMBER
from cdk_app.config.batch_model import NUM_INSTANCES
from cdk_app.config.model import KitConfig
from cdk_app.domain.batch_shares import (
    SERVICE_JOB_TYPE,
    environment_named,
    queue_named,
    quota_share_name,
    quota_share_reach,
    submission_refusal,
    team_named,
    training_instance_types,
)
from cdk_app.domain.image_reference import reference_problem
from cdk_app.domain.s3_names import bucket_name_problem
from cdk_app.support.refusal import OptionError

MAX_SCHEDULING_PRIORITY = 9999  # botocore batch SubmitServiceJob schedulingPriority: 0-9999
MAX_ATTEMPTS = 10  # ServiceJobRetryStrategy attempts: 1-10


class BatchJobError(Exception):
    """A job the config or the AWS API does not allow; the message says which option and what is allowed."""


class BatchJobOptionError(BatchJobError, OptionError):
    """A job no config allows: an option value the AWS API refuses whatever the config (a usage error, exit 2;
    cdk_app/support/refusal.py). `check_options` finds them all."""


@dataclass(frozen=True)
class BatchJobRequest:
    team: str
    name: str
    image: str
    instance_type: str
    output_s3: str
    queue: str | None = None  # default: the team's first queue
    instance_count: int = 1
    volume_gib: int = 100
    priority: int = 0
    attempts: int = 1
    timeout_seconds: int | None = None
    max_runtime_seconds: int = 86400


@functools.cache
def _model(service: str) -> Any:
    """The service's model, loaded once: a new session reads and parses the model's JSON again."""
    import botocore.session

    return botocore.session.get_session().get_service_model(service)


def _validated(service: str, operation: str, params: dict[str, Any]) -> dict[str, Any]:
    from botocore.validate import ParamValidator

    shape = _model(service).operation_model(operation).input_shape
    report = ParamValidator().validate(params, shape)
    if report.has_errors():  # after check_options, only what the options make of the request is left
        raise BatchJobOptionError(f"{service} {operation} would refuse the request: {report.generate_report()}")
    return params


def _check_shape(service: str, shape_name: str, value: str | int, option: str) -> None:
    """The pattern and range of the model's shape, which ParamValidator does not check."""
    metadata = _model(service).shape_for(shape_name).metadata
    pattern = metadata.get("pattern")
    if isinstance(value, str) and pattern and not re.fullmatch(pattern, value):
        raise BatchJobOptionError(f"{option} {value!r} is not allowed (SageMaker {shape_name}: {pattern})")
    low, high = metadata.get("min"), metadata.get("max")
    if isinstance(value, int) and not (low if low is not None else value) <= value <= (high if high is not None else value):
        allowed = f"{low}-{high}" if high is not None else f"at least {low}"
        raise BatchJobOptionError(f"{option} {value} is not allowed (SageMaker {shape_name}: {allowed})")


def documented_limit(service: str, shape: str, member: str, sentence: str) -> int:
    """A limit the model states only in a member's documentation, e.g. 'The maximum value is 28 days.'
    (`sentence` a regular expression with one group: the number, and optionally a unit group)."""
    text = _model(service).shape_for(shape).members[member].documentation
    found = re.search(sentence, text)
    if found is None:  # a botocore that words it otherwise: fail loudly rather than check nothing
        raise RuntimeError(f"botocore {service} {shape}.{member}: no '{sentence}' in its documentation")
    unit = found.group(2) if found.re.groups > 1 else "seconds"
    return int(found.group(1)) * {"days": 86400, "hours": 3600, "minutes": 60, "seconds": 1}[unit]


def max_runtime_seconds() -> int:
    """SageMaker's StoppingCondition.MaxRuntimeInSeconds maximum (28 days in botocore 1.44)."""
    return documented_limit("sagemaker", "StoppingCondition", "MaxRuntimeInSeconds",
                            r"The maximum value is (\d+) (days|hours|minutes|seconds)\.")


def min_timeout_seconds() -> int:
    """Batch's minimum job timeout (JobTimeout.attemptDurationSeconds: 60 seconds in botocore 1.44); the
    service job's ServiceJobTimeout documents none of its own, so Batch's job timeout minimum is used."""
    return documented_limit("batch", "JobTimeout", "attemptDurationSeconds",
                            r"The minimum value for the timeout is (\d+) (seconds)\.")




def _check_limits(request: BatchJobRequest) -> None:
    """What CreateTrainingJob and SubmitServiceJob refuse although the models' min/max do not say so."""
    if request.instance_count < 1:
        # The model allows 0 for requests that give ResourceConfig.InstanceGroups; this one does not.
        raise BatchJobOptionError(f"--instance-count {request.instance_count}: a training job runs on at least 1 instance")
    ceiling = max_runtime_seconds()
    if request.max_runtime_seconds > ceiling:
        raise BatchJobOptionError(f"--max-runtime {request.max_runtime_seconds}: SageMaker allows at most {ceiling} "
                            f"seconds ({ceiling // 86400} days; botocore StoppingCondition.MaxRuntimeInSeconds)")
    floor = min_timeout_seconds()
    if request.timeout_seconds is not None and request.timeout_seconds < floor:
        raise BatchJobOptionError(f"--timeout {request.timeout_seconds}: Batch's minimum timeout is {floor} seconds")
    problem = reference_problem(request.image)
    if problem:
        raise BatchJobOptionError(f"--image {request.image!r}: not a container image SageMaker can pull "
                            f"(registry/repository[:tag] or [@digest]): {problem}")
    bucket = re.match(r"s3://([^/]*)", request.output_s3)  # an https:// path is left to the model's pattern
    problem = bucket_name_problem(bucket.group(1)) if bucket else None
    if problem:
        raise BatchJobOptionError(f"--output-s3 {request.output_s3!r}: not an S3 bucket S3 allows: {problem}")


def check_options(request: BatchJobRequest) -> None:
    """What no config allows (BatchJobOptionError, a usage error): option values outside what SageMaker and
    Batch accept. Needs no config, so `batch-job` runs it before reading one."""
    for shape, value, option in (("TrainingJobName", request.name, "--name"),
                                 ("S3Uri", request.output_s3, "--output-s3"),
                                 ("TrainingInstanceCount", request.instance_count, "--instance-count"),
                                 ("VolumeSizeInGB", request.volume_gib, "--volume-gib"),
                                 ("MaxRuntimeInSeconds", request.max_runtime_seconds, "--max-runtime")):
        _check_shape("sagemaker", shape, value, option)
    _check_limits(request)
    if request.instance_type not in training_instance_types():
        raise BatchJobOptionError(f"--instance-type {request.instance_type!r} is not a SageMaker Training instance type")
    if not 0 <= request.priority <= MAX_SCHEDULING_PRIORITY:
        raise BatchJobOptionError(f"--priority {request.priority}: Batch allows 0-{MAX_SCHEDULING_PRIORITY}")
    if not 1 <= request.attempts <= MAX_ATTEMPTS:
        raise BatchJobOptionError(f"--attempts {request.attempts}: Batch allows 1-{MAX_ATTEMPTS}")


def training_request(request: BatchJobRequest, role_arn: str) -> dict[str, Any]:
    """The SageMaker CreateTrainingJob request the service job runs."""
    check_options(request)
    return _validated("sagemaker", "CreateTrainingJob", {
        "TrainingJobName": request.name,
        "RoleArn": role_arn,
        "AlgorithmSpecification": {"TrainingImage": request.image, "TrainingInputMode": "File"},
        "ResourceConfig": {"InstanceType": request.instance_type, "InstanceCount": request.instance_count,
                           "VolumeSizeInGB": request.volume_gib},
        "OutputDataConfig": {"S3OutputPath": request.output_s3},
        "StoppingCondition": {"MaxRuntimeInSeconds": request.max_runtime_seconds},
    })


def _check_capacity(config: KitConfig, request: BatchJobRequest, queue_name: str) -> None:
    """The job fits the queue's service environment, and a quota-share job fits what the share can reach."""
    batch = config.batch
    queue = queue_named(batch, queue_name)
    env = environment_named(batch, queue.service_environment)
    limits = {limit.unit: limit.max_capacity for limit in env.capacity_limits}
    unit = NUM_INSTANCES if NUM_INSTANCES in limits else request.instance_type
    if unit not in limits:
        raise BatchJobError(f"--instance-type {request.instance_type}: service environment '{env.name}' of queue "
                            f"'{queue_name}' has capacity for {', '.join(sorted(limits))} only")
    if request.instance_count > limits[unit]:
        raise BatchJobError(f"--instance-count {request.instance_count} is more than service environment "
                            f"'{env.name}' ever runs ({limits[unit]} of {unit}): the job would wait forever")
    if queue.scheduling == "quota_share":
        reach = {r.unit: r.reach for r in quota_share_reach(batch, queue_name) if r.team == request.team}
        if request.instance_count > reach.get(request.instance_type, 0):
            raise BatchJobError(f"--instance-count {request.instance_count}: quota share '{request.team}' reaches "
                                f"at most {reach.get(request.instance_type, 0)} {request.instance_type} even with "
                                "every other share idle; the job would wait forever")


def render(config: KitConfig, request: BatchJobRequest) -> dict[str, Any]:
    """The SubmitServiceJob request (botocore's parameter names), or BatchJobError saying what is wrong: its
    options first (BatchJobOptionError), then against the config."""
    check_options(request)
    batch = config.batch
    if batch is None:
        raise BatchJobError("the config has no batch section")
    team = team_named(batch, request.team)
    if team is None:
        raise BatchJobError(f"--team {request.team!r} is not a Batch team; teams: "
                            f"{', '.join(t.name for t in batch.teams) or 'none'}")
    queue_name = request.queue or team.queues[0]
    if queue_name not in team.queues:
        raise BatchJobError(f"--queue {queue_name!r}: team {team.name} may submit to {', '.join(team.queues)} only")
    if team.execution_role_arn is None:
        raise BatchJobError(f"team {team.name} has no execution_role_arn in the config: its jobs have no role to run as")
    ceiling = MAX_SCHEDULING_PRIORITY if team.max_priority is None else team.max_priority
    if request.priority > ceiling:
        raise BatchJobError(f"--priority {request.priority}: team {team.name} may use 0-{ceiling}")
    refusal = submission_refusal(batch, team, queue_name)
    if refusal:
        raise BatchJobError(f"--team {team.name} --queue {queue_name}: {refusal}")
    _check_capacity(config, request, queue_name)
    submit: dict[str, Any] = {
        "jobName": request.name,
        "jobQueue": queue_name,
        "serviceJobType": SERVICE_JOB_TYPE,
        "serviceRequestPayload": json.dumps(training_request(request, team.execution_role_arn), sort_keys=True),
        "schedulingPriority": request.priority,
        "retryStrategy": {"attempts": request.attempts},
    }
    scheduling = queue_named(batch, queue_name).scheduling
    if scheduling == "fair_share":
        submit["shareIdentifier"] = team.share_identifier
    elif scheduling == "quota_share":
        submit["quotaShareName"] = quota_share_name(team)
    if request.timeout_seconds is not None:
        submit["timeoutConfig"] = {"attemptDurationSeconds": request.timeout_seconds}
    return _validated("batch", "SubmitServiceJob", submit)


@click.command("batch-job")
@click.option("--config", "config_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The environment's config file.")
@click.option("--team", required=True, help="Batch team that submits (batch.teams[].name).")
@click.option("--queue", default=None, help="One of the team's queues. Default: its first.")
@click.option("--name", required=True, help="Job name (also the SageMaker training job's name).")
@click.option("--image", required=True, help="Training container image.")
@click.option("--instance-type", required=True, help="SageMaker Training instance type, e.g. ml.p4d.24xlarge.")
@click.option("--instance-count", type=WHOLE_NUMBER, default=1, show_default=True)
@click.option("--volume-gib", type=WHOLE_NUMBER, default=100, show_default=True, help="Storage volume per instance.")
@click.option("--output-s3", required=True, help="s3:// prefix for the model artifacts.")
@click.option("--priority", type=WHOLE_NUMBER, default=0, show_default=True,
              help="Scheduling priority (higher first; in a full quota share, preempts lower).")
@click.option("--attempts", type=WHOLE_NUMBER, default=1, show_default=True, help="Retry strategy: attempts, 1-10.")
@click.option("--timeout", "timeout_seconds", type=WHOLE_NUMBER, default=None, help="Seconds one attempt may run.")
@click.option("--max-runtime", "max_runtime_seconds", type=WHOLE_NUMBER, default=86400, show_default=True,
              help="SageMaker's stopping condition, seconds.")
def batch_job(config_path: Path, team: str, queue: str | None, name: str, image: str, instance_type: str,
              instance_count: int, volume_gib: int, output_s3: str, priority: int, attempts: int,
              timeout_seconds: int | None, max_runtime_seconds: int) -> None:
    """Print a SubmitServiceJob request for the team: aws batch submit-service-job --cli-input-json file://job.json"""
    from cdk_app.cli.main import exit_refused, options_then_config

    request = BatchJobRequest(team=team, name=name, image=image, instance_type=instance_type, output_s3=output_s3,
                              queue=queue, instance_count=instance_count, volume_gib=volume_gib, priority=priority,
                              attempts=attempts, timeout_seconds=timeout_seconds,
                              max_runtime_seconds=max_runtime_seconds)
    config = options_then_config(config_path, lambda: check_options(request), BatchJobError)
    try:
        submit = render(config, request)
    except BatchJobError as err:
        exit_refused(config_path, err)
    click.echo(json.dumps(submit, indent=2))
