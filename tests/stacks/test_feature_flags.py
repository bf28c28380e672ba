"""cdk.json sets every feature flag the pinned aws-cdk-lib reports: none is left to a default that a library
upgrade may change, and the CLI's "N feature flags are not configured" never follows a synth (issue 30)."""

from __future__ import annotations

import json

from aws_cdk import App, CfnWaitConditionHandle, Stack
from support.app_synth import CONTEXT


def test_every_flag_the_library_reports_is_set_in_cdk_json(tmp_path):
    app = App(context=CONTEXT, outdir=str(tmp_path))
    CfnWaitConditionHandle(Stack(app, "Probe"), "Resource")  # a template must hold a resource to validate
    app.synth()
    artifacts = json.loads((tmp_path / "manifest.json").read_text())["artifacts"]
    report, = (a for a in artifacts.values() if a["type"] == "cdk:feature-flag-report")
    flags = report["properties"]["flags"]
    assert len(flags) > 50  # the library's whole list, not an empty report
    assert [name for name, flag in flags.items() if "userValue" not in flag] == []
