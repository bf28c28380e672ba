"""`hyperpod-kit batch-job`: the SubmitServiceJob request it writes is accepted by botocore's Stubber (which
validates parameters against the real batch model), its payload by the sagemaker CreateTrainingJob model;
the share, priority, retry and timeout follow the config; what the config or Batch forbids exits 1."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import boto3
import pytest
from botocore.stub import Stubber
from support.cli_runner import invoke
from support.paths import ROOT

from cdk_app.cli.batch_job import BatchJobError, BatchJobRequest, render
from cdk_app.config.loader import load_config

EXAMPLE = ROOT / "config" / "batch-example.yaml"
CONFIG = load_config(EXAMPLE).config
IMAGE = "111122223333.dkr.ecr.us-east-1.amazonaws.com/train:1"


def request(**overrides) -> BatchJobRequest:
    fields = {"team": "ProdExp1", "name": "llama-ft", "image": IMAGE, "instance_type": "ml.p4d.24xlarge",
              "output_s3": "s3://models/llama", "instance_count": 15, "priority": 90, "attempts": 3,
              "timeout_seconds": 7200}
    return BatchJobRequest(**{**fields, **overrides})


def accepted_by_batch(submit: dict) -> None:
    client = boto3.client("batch", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    with Stubber(client) as stub:
        stub.add_response("submit_service_job", {"jobName": submit["jobName"], "jobId": "1"}, submit)
        client.submit_service_job(**submit)
        stub.assert_no_pending_responses()


def accepted_by_sagemaker(payload: dict) -> None:
    client = boto3.client("sagemaker", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    with Stubber(client) as stub:
        stub.add_response("create_training_job", {"TrainingJobArn": "arn:aws:sagemaker:us-east-1:111122223333:"
                                                  "training-job/llama-ft"}, payload)
        client.create_training_job(**payload)


def test_quota_share_job_names_its_quota_share_priority_retry_and_timeout():
    submit = render(CONFIG, request())
    accepted_by_batch(submit)
    assert {k: v for k, v in submit.items() if k != "serviceRequestPayload"} == {
        "jobName": "llama-ft", "jobQueue": "prod-p4d", "serviceJobType": "SAGEMAKER_TRAINING",
        "schedulingPriority": 90, "retryStrategy": {"attempts": 3}, "quotaShareName": "ProdExp1",
        "timeoutConfig": {"attemptDurationSeconds": 7200}}
    payload = json.loads(submit["serviceRequestPayload"])
    accepted_by_sagemaker(payload)
    assert payload["RoleArn"] == "arn:aws:iam::111122223333:role/ProdExp1Training"
    assert payload["ResourceConfig"] == {"InstanceType": "ml.p4d.24xlarge", "InstanceCount": 15, "VolumeSizeInGB": 100}


def test_fair_share_job_carries_the_team_share_identifier_and_fifo_none():
    fair = render(CONFIG, request(team="sweeps", instance_type="ml.g6.12xlarge", instance_count=1, priority=5))
    accepted_by_batch(fair)
    assert fair["shareIdentifier"] == "LOWPRI" and "quotaShareName" not in fair
    assert fair["jobQueue"] == "ml-g6-12xlarge-queue"
    fifo = render(CONFIG, request(team="production", queue="ml-c5-xlarge-queue", instance_type="ml.c5.xlarge",
                                  instance_count=2, timeout_seconds=None))
    accepted_by_batch(fifo)
    assert "shareIdentifier" not in fifo and "quotaShareName" not in fifo and "timeoutConfig" not in fifo


@pytest.mark.parametrize(("overrides", "message"), [
    ({"team": "ProdExp3"}, "'ProdExp3' is not a Batch team"),
    ({"queue": "ml-g6-12xlarge-queue"}, "team ProdExp1 may submit to prod-p4d only"),
    ({"priority": 100}, "team ProdExp1 may use 0-99"),
    ({"attempts": 11}, "Batch allows 1-10"),
    ({"instance_type": "ml.p4d.24xlarg"}, "not a SageMaker Training instance type"),
    ({"instance_type": "ml.p5.48xlarge"}, "has capacity for ml.p4d.24xlarge only"),
    ({"instance_count": 101}, "more than service environment 'p4d' ever runs (100 of ml.p4d.24xlarge)"),
    ({"name": "llama_ft"}, "--name 'llama_ft' is not allowed"),
    ({"output_s3": "models/llama"}, "--output-s3 'models/llama' is not allowed"),
    ({"volume_gib": 0}, "--volume-gib 0 is not allowed (SageMaker VolumeSizeInGB: at least 1)"),
    ({"max_runtime_seconds": 0}, "--max-runtime 0 is not allowed"),
])
def test_refused_with_the_reason(overrides, message):
    with pytest.raises(BatchJobError, match=re.escape(message)):
        render(CONFIG, request(**overrides))


def test_quota_share_job_larger_than_the_share_can_ever_reach(write_config):
    """With borrow_limit 25 %, ProdExp1 (60) reaches 75 at most: a 76-instance job would wait forever."""
    text = EXAMPLE.read_text().replace("      sharing_strategy: LendAndBorrow\n      preempt_team_tasks: LowerPriority\n"
                                       "      principals: [arn:aws:iam::111122223333:role/ProdExp1Scientists]",
                                       "      sharing_strategy: LendAndBorrow\n      borrow_limit: 25\n"
                                       "      preempt_team_tasks: LowerPriority\n"
                                       "      principals: [arn:aws:iam::111122223333:role/ProdExp1Scientists]")
    assert "borrow_limit: 25" in text
    config = load_config(write_config(text)).config
    accepted_by_batch(render(config, request(instance_count=75)))
    with pytest.raises(BatchJobError, match="reaches at most 75 ml.p4d.24xlarge"):
        render(config, request(instance_count=76))


# Issue 32, class 5: a DISABLED queue, service environment or quota share takes no new job (botocore's batch
# model, CreateJobQueue and CreateQuotaShare state: new jobs can't be added / won't be accepted); batch-job wrote
# the request anyway and told a disabled share it "reaches at most 0". Each is refused naming the field.
DISABLED = [
    ("    - name: prod-p4d\n      service_environment: p4d\n",
     "    - name: prod-p4d\n      enabled: false\n      service_environment: p4d\n",
     {}, "queue 'prod-p4d' is disabled (batch.queues[0].enabled: false): Batch adds no new jobs to a DISABLED job "
     "queue"),
    ("    - name: p4d\n      capacity_limits:\n", "    - name: p4d\n      enabled: false\n      capacity_limits:\n",
     {}, "service environment 'p4d' of queue 'prod-p4d' is disabled (batch.service_environments[0].enabled: false): "
     "Batch places no jobs on a DISABLED service environment, so the job would wait RUNNABLE until its runnable "
     "timeout (86400 s) ends it"),
    ("    - name: cpu\n      capacity_limits:\n", "    - name: cpu\n      enabled: false\n      capacity_limits:\n",
     {"team": "production", "queue": "ml-c5-xlarge-queue", "instance_type": "ml.c5.xlarge", "instance_count": 1,
      "priority": 0}, "service environment 'cpu' of queue 'ml-c5-xlarge-queue' is disabled "
     "(batch.service_environments[2].enabled: false): Batch places no jobs on a DISABLED service environment, so the "
     "job would wait RUNNABLE for as long as the environment stays disabled"),
    ("    - name: ProdExp1\n      queues: [prod-p4d]\n", "    - name: ProdExp1\n      enabled: false\n"
     "      queues: [prod-p4d]\n", {}, "quota share 'ProdExp1' is disabled (batch.teams[0].enabled: false): Batch "
     "accepts no new jobs in a DISABLED quota share"),
]


@pytest.mark.parametrize("old, new, overrides, message", DISABLED, ids=["queue", "environment", "fifo-environment",
                                                                        "quota-share"])
def test_nothing_disabled_takes_a_new_job(write_config, old, new, overrides, message):
    text = EXAMPLE.read_text()
    assert text.count(old) == 1
    config = load_config(write_config(text.replace(old, new))).config
    with pytest.raises(BatchJobError) as refused:
        render(config, request(**{"instance_count": 1, **overrides}))
    assert message in str(refused.value) and "reaches at most" not in str(refused.value)


def test_a_disabled_share_leaves_the_others_on_its_queue_open(write_config):
    text = EXAMPLE.read_text().replace("    - name: ProdExp2\n      queues: [prod-p4d]\n",
                                       "    - name: ProdExp2\n      enabled: false\n      queues: [prod-p4d]\n")
    config = load_config(write_config(text)).config
    accepted_by_batch(render(config, request(instance_count=60)))  # ProdExp1's own quota


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cdk_app", "batch-job", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.slow
def test_cli_prints_the_request_and_exits_0_1_2(tmp_path):
    common = ["--team", "exploration", "--name", "mid", "--image", IMAGE, "--instance-type", "ml.g6.12xlarge",
              "--output-s3", "s3://models/mid", "--priority", "3"]
    ok = run("--config", str(EXAMPLE), *common)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["shareIdentifier"] == "MIDPRI"
    # Beyond what Batch allows any job: a usage error (2), judged before the config is read.
    refused = run("--config", str(EXAMPLE), *common[:-1], "10000")
    assert refused.returncode == 2 and "Batch allows 0-9999" in refused.stderr and "Traceback" not in refused.stderr
    disabled = tmp_path / "disabled.yaml"
    disabled.write_text(EXAMPLE.read_text().replace("    - name: g6\n      capacity_limits:\n",
                                                    "    - name: g6\n      enabled: false\n      capacity_limits:\n"))
    waits = run("--config", str(disabled), *common)
    assert waits.returncode == 1 and waits.stdout == "" and "batch.service_environments[1].enabled" in waits.stderr
    missing = run("--config", str(tmp_path / "none.yaml"), *common)
    assert missing.returncode == 2 and "HPK001" in missing.stderr and "Traceback" not in missing.stderr


# --- one line between usage errors (2) and findings (1), as for `job` -------------------------------------------

BATCH = ("batch-job", "--config", str(EXAMPLE), "--team", "ProdExp1", "--name", "j", "--image", IMAGE,
         "--instance-type", "ml.p4d.24xlarge", "--output-s3", "s3://models/j")



@pytest.mark.parametrize("args, code, message", [
    (("--instance-count", "0"), 2, "--instance-count 0"),
    (("--volume-gib", "0"), 2, "--volume-gib 0 is not allowed"),
    (("--priority", "-1"), 2, "--priority -1: Batch allows 0-9999"),
    (("--priority", "10000"), 2, "--priority 10000: Batch allows 0-9999"),
    (("--attempts", "11"), 2, "--attempts 11: Batch allows 1-10"),
    (("--timeout", "59"), 2, "--timeout 59: Batch's minimum timeout is 60 seconds"),
    (("--max-runtime", str(29 * 86400)), 2, "--max-runtime 2505600: SageMaker allows at most"),
    (("--name", "bad name"), 2, "--name 'bad name' is not allowed"),
    (("--image", "Bad/Repo"), 2, "--image 'Bad/Repo': not a container image"),
    (("--output-s3", "s3://UPPER/x"), 2, "not an S3 bucket S3 allows"),
    (("--instance-type", "ml.nope"), 2, "--instance-type 'ml.nope' is not a SageMaker Training instance type"),
    # Refused on its merits: the team, its queues, its priority limit, the capacity its queue reaches.
    (("--team", "nope"), 1, "--team 'nope' is not a Batch team"),
    (("--queue", "nope"), 1, "--queue 'nope': team ProdExp1 may submit to"),
    (("--priority", "100"), 1, "--priority 100: team ProdExp1 may use 0-99"),
    (("--instance-count", "101"), 1, "--instance-count 101 is more than service environment"),
    (("--instance-type", "ml.g6.12xlarge"), 1, "--instance-type ml.g6.12xlarge: service environment"),
])
def test_batch_job_refusals_exit_2_for_bad_options_and_1_on_their_merits(args, code, message):
    result = invoke(*BATCH, *args)
    assert (result.exit_code, message in result.output) == (code, True), result.output
    assert "Traceback" not in result.output
    if code == 2:  # judged before the config: the same refusal without one
        missing = invoke(*BATCH[:2], "config/none.yaml", *BATCH[3:], *args)
        assert missing.exit_code == 2 and message in missing.output, missing.output


@pytest.mark.parametrize("option", ["--instance-count", "--volume-gib", "--priority", "--attempts", "--timeout",
                                    "--max-runtime"])
@pytest.mark.parametrize("value", [" 1", "1 ", "1_0", "\u0661", ""])
def test_every_numeric_batch_job_option_reads_a_number_as_job_does(option, value):
    result = invoke(*BATCH, option, value)
    assert result.exit_code == 2 and repr(value) in result.output, (option, value, result.output)
