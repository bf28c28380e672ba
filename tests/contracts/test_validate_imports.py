"""`hyperpod-kit validate` runs after every edit: it imports only what it needs. Checked in a fresh
interpreter's sys.modules after the real command ran."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from support.paths import ROOT

PROBE = """
import json, sys
from cdk_app.cli.main import main
try:
    main(["validate", "config/prod.yaml", "--format", "json"])
except SystemExit as exit:
    code = exit.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def test_validate_imports_no_cdk_no_aws_sdk_and_no_other_command():
    result = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120)
    probe = json.loads(result.stdout.strip().splitlines()[-1])
    assert probe["code"] == 0, result.stderr
    top = {name.split(".")[0] for name in probe["modules"]}
    assert not top & {"aws_cdk", "jsii", "constructs", "cdk_nag", "boto3", "botocore", "cfnlint"}
    assert not {"cdk_app.cli.batch_job", "cdk_app.cli.plan", "cdk_app.cli.live", "cdk_app.cli.live_batch", "cdk_app.kubernetes.job_templates",
                "cdk_app.kubernetes.topology", "cdk_app.cli.chart_archive", "cdk_app.cli.teardown"} & set(probe["modules"])
    assert "cdk_app.stacks.layout" in probe["modules"]  # the limits are checked on the same layout the app builds


def test_validate_reads_no_field_docs_and_its_validator_from_the_cache(tmp_path):
    """Field docstrings are for the schema and README only (pydantic's use_attribute_docstrings would read
    the model's source on every import), and the second validate reads KitConfig's validator from the
    cache instead of building it (no schema generation, no search for pydantic plugins)."""
    probe = PROBE.replace('print(json.dumps({"code": code, ',
                          'from cdk_app.config.model import KitConfig\n'
                          'print(json.dumps({"described": KitConfig.model_fields["region"].description, '
                          '"code": code, ')
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True,
                           timeout=120) for _ in range(2)]
    first, second = (json.loads(run.stdout.strip().splitlines()[-1]) for run in runs)
    assert first["code"] == second["code"] == 0, runs[0].stderr + runs[1].stderr
    assert first["described"] is None and second["described"] is None
    assert list((tmp_path / "hyperpod-kit").glob("kitconfig-*.pickle"))
    assert "pydantic.plugin._loader" in first["modules"]  # built and written by the first run
    assert not {"pydantic.plugin._loader", "importlib.metadata"} & set(second["modules"])
