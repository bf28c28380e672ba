"""`validate --live` for the batch section against botocore's Stubber (every request checked against the
real batch model): every page is read, an in-sync account reports nothing, drift, a scheduling-type change
(a replacement Batch refuses in place) and shares made outside the kit are reported, read errors are findings."""

from __future__ import annotations

from types import SimpleNamespace

import boto3
import pytest
from botocore.stub import Stubber
from support.batch_stubs import PREFIX, share, stub
from support.paths import ROOT

from cdk_app.cli.live import LiveAccessError, LiveResult
from cdk_app.cli.live_batch import compare_batch, gather_batch, with_batch
from cdk_app.config.loader import load_config

LOADED = load_config(ROOT / "config" / "batch-example.yaml")
CONFIG = LOADED.config


def client():
    return boto3.client("batch", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")


def codes(result):
    return sorted(f.code for f in result.findings)


def test_in_sync_account_reports_nothing_and_reads_every_page():
    batch = client()
    s = stub(batch)
    state = gather_batch(CONFIG, batch)
    s.assert_no_pending_responses()
    result = compare_batch(CONFIG, LOADED.source, state)
    assert codes(result) == []
    assert result.section["quota_shares"] == {"prod-p4d": ["ProdExp1", "ProdExp2"]}
    assert [q["scheduling"] for q in result.section["queues"]] == ["quota_share", "fair_share", "fifo"]


def test_scheduling_type_change_is_a_replacement():
    batch = client()
    s = stub(batch, fifo_policy=f"{PREFIX}:scheduling-policy/cpu-fair-share", gpu_kind="quotaSharePolicy")
    # The GPU queue now reads as a quota-share queue, so its quota shares are listed too.
    s.add_response("list_quota_shares", {"quotaShares": []}, {"jobQueue": f"{PREFIX}:job-queue/ml-g6-12xlarge-queue"})
    result = compare_batch(CONFIG, LOADED.source, gather_batch(CONFIG, batch))
    replacements = [f for f in result.findings if f.code == "HPK716"]
    assert sorted(f.path for f in replacements) == ["batch.queues[1].scheduling", "batch.queues[2].scheduling"]
    cpu = next(f for f in replacements if f.path == "batch.queues[2].scheduling")
    assert "deployed as fair_share, the config makes it fifo" in cpu.message and "new name" in cpu.hint
    assert cpu.line == LOADED.source.locate(("batch", "queues", 2, "scheduling")).line > 1


def test_drift_and_shares_made_outside_the_kit():
    batch = client()
    stub(batch, weights=(1.0, 2.0, 5.0, 0.5), timeout=None,
         shares_pages=[[share("ProdExp1", 60), share("console-made", 10)], [share("ProdExp2", 30, "RESERVE")]])
    result = compare_batch(CONFIG, LOADED.source, gather_batch(CONFIG, batch))
    messages = {(f.code, f.path): f.message for f in result.findings}
    assert "quota share 'console-made' on queue 'prod-p4d' was made outside the kit and holds 10 ml.p4d.24xlarge" in \
        messages[("HPK718", "batch.queues[0].name")]
    assert any("share identifier 'ADHOC' (weight factor 0.5)" in m for (c, _), m in messages.items() if c == "HPK718")
    assert any("share 'MIDPRI' on queue 'ml-g6-12xlarge-queue' has weight factor 2.0 deployed, the config says 3.0" in m
               for m in messages.values())
    assert "has runnable timeout none deployed, the config says 86400" in \
        messages[("HPK717", "batch.queues[0].runnable_timeout_seconds")]
    drift = [f for f in result.findings if f.code == "HPK717" and f.path == "batch.teams[1]"]
    assert {m.message.split(" has ")[1].split(" ")[0] for m in drift} == {"capacityLimits", "resourceSharingConfiguration"}


def test_read_errors_are_findings_not_tracebacks():
    batch = client()
    s = Stubber(batch)
    s.add_client_error("describe_service_environments", service_error_code="AccessDeniedException",
                       expected_params={"serviceEnvironments": ["p4d", "g6", "cpu"]})
    s.activate()
    with pytest.raises(LiveAccessError, match="batch:DescribeServiceEnvironments"):
        gather_batch(CONFIG, batch)
    s.add_client_error("describe_service_environments", service_error_code="AccessDeniedException",
                       expected_params={"serviceEnvironments": ["p4d", "g6", "cpu"]})
    session = SimpleNamespace(client=lambda service, config=None: batch)
    result = with_batch(LiveResult(), CONFIG, LOADED.source, session, None)
    assert codes(result) == ["HPK606"] and "not allowed to call batch:DescribeServiceEnvironments" in result.section["batch"]["error"]


def test_without_a_batch_section_nothing_is_read():
    dev = load_config(ROOT / "config" / "dev.yaml")
    untouched = SimpleNamespace(client=lambda *a, **k: pytest.fail("no Batch client without a batch section"))
    result = with_batch(LiveResult(), dev.config, dev.source, untouched, None)
    assert result.findings == [] and "batch" not in result.section
