"""`hyperpod-kit plan` on a Batch queue whose scheduling type changes (attack batch2 M2): refused as "will FAIL",
offline, from the baseline and current templates.

Source of truth: botocore's batch model - CreateJobQueue schedulingPolicyArn: "A job queue without a fair-share
scheduling policy is scheduled as a FIFO job queue and can't have a fair-share scheduling policy added ... After a
job queue has a fair-share scheduling policy, it can be replaced but can't be removed" (and UpdateJobQueue the
same); a scheduling policy's kind is its FairsharePolicy or QuotaSharePolicy (cfn-lint's
AWS::Batch::SchedulingPolicy schema), which the kit never turns into the other on a live queue (HPK716)."""

from __future__ import annotations

import re

import botocore.session
import pytest
from support.app_synth import build, templates

from cdk_app.cli.plan import compare, render

BASE = """\
environment: pl
account: "111122223333"
region: us-east-1
batch:
  service_environments:
    - {name: p4d, capacity_limits: [{unit: ml.p4d.24xlarge, max_capacity: 100}]}
    - {name: g6, capacity_limits: [{unit: NUM_INSTANCES, max_capacity: 8}]}
    - {name: cpu, capacity_limits: [{unit: NUM_INSTANCES, max_capacity: 8}]}
  queues:
    - {name: qq, service_environment: p4d, scheduling: quota_share}
    - {name: fs, service_environment: g6, scheduling: fair_share}
    - {name: ff, service_environment: cpu, scheduling: fifo}
  teams:
    - name: A
      queues: [qq, fs, ff]
      share_identifier: AAA
      quota: [{instance_type: ml.p4d.24xlarge, count: 60}]
      principals: [arn:aws:iam::111122223333:role/A]
      execution_role_arn: arn:aws:iam::111122223333:role/ATrain
"""
STACK = "HyperPod-pl-batch"


def stack_templates(tmp_path, text: str) -> dict:
    path = tmp_path / "pl.yaml"
    path.write_text(text)
    return {name: t.to_json() for name, t in templates(build(path, tmp_path / "out")).items()}


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    return stack_templates(tmp_path_factory.mktemp("base"), BASE)


def test_the_fact_is_botocores():
    shapes = botocore.session.get_session().get_service_model("batch")
    doc = shapes.operation_model("CreateJobQueue").input_shape.members["schedulingPolicyArn"].documentation
    assert "can't have a fair-share scheduling policy added" in doc and "can't be removed" in doc


@pytest.mark.synth
@pytest.mark.parametrize(("edit", "queue", "change"), [
    (("{name: ff, service_environment: cpu, scheduling: fifo}", "{name: ff, service_environment: cpu, scheduling: fair_share}"),
     "Queue-ff", "fifo -> fair_share"),
    (("{name: fs, service_environment: g6, scheduling: fair_share}", "{name: fs, service_environment: g6, scheduling: fifo}"),
     "Queue-fs", "fair_share -> fifo"),
    (("{name: qq, service_environment: p4d, scheduling: quota_share}", "{name: qq, service_environment: p4d, scheduling: fifo}"),
     "Queue-qq", "quota_share -> fifo"),
    (("{name: qq, service_environment: p4d, scheduling: quota_share}",
      "{name: qq, service_environment: p4d, scheduling: fair_share}"), "Queue-qq", "quota_share -> fair_share"),
    (("{name: fs, service_environment: g6, scheduling: fair_share}", "{name: fs, service_environment: p4d, scheduling: quota_share}"),
     "Queue-fs", "fair_share -> quota_share"),
], ids=["fifo-to-fair", "fair-to-fifo", "quota-to-fifo", "quota-to-fair", "fair-to-quota"])
def test_scheduling_change_is_refused_as_a_failure(tmp_path, baseline, edit, queue, change):
    assert BASE.count(edit[0]) == 1
    plan = compare(baseline, stack_templates(tmp_path, BASE.replace(*edit)), "baseline")
    [hazard] = [h for h in plan.hazards if "scheduling" in h.text]
    assert hazard.fails and hazard.stack == STACK and f"{STACK}/{queue}/" in hazard.text and change in hazard.text
    # Fails: --allow-replace cannot accept it.
    assert hazard.name in plan.blocked(allowed=(hazard.name,))
    text = render(plan, (hazard.name,))
    assert re.search(rf"scheduling {change}.* - will FAIL: refused whatever --allow-replace names$", text, re.M)
    assert ("will fail: 1 change(s) CloudFormation refuses, whatever --allow-replace names: "
            f"{hazard.name}") in text.splitlines()


@pytest.mark.synth
def test_other_queue_edits_are_not_called_a_scheduling_change(tmp_path, baseline):
    """Priority, timeout, state, another environment and another team weight keep the scheduling type."""
    text = (BASE.replace("{name: ff, service_environment: cpu, scheduling: fifo}",
                         "{name: ff, service_environment: g6, scheduling: fifo, priority: 9, enabled: false, "
                         "runnable_timeout_seconds: 600}")
            .replace("share_identifier: AAA\n", "share_identifier: AAA\n      weight_factor: 2\n"))
    plan = compare(baseline, stack_templates(tmp_path, text), "baseline")
    assert plan.changes and not [h for h in plan.hazards if "scheduling" in h.text]
