"""The validate command: exit codes, table and JSON shapes; the schema command keeps schema.json in sync."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from cdk_app.config.schema import config_schema_text
from handlers import load_handler

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = sorted((ROOT / "config").glob("*.yaml"))


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cdk_app", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, **(env or {})})


def test_valid_configs_exit_0_with_a_capacity_table():
    result = run("validate", "config/dev.yaml", "config/prod.yaml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ml.g5.12xlarge  4/4    16/16" in result.stdout
    assert result.stdout.count("valid: 0 error(s)") == 2
    assert result.stderr == ""


def test_policy_error_exits_1_and_json_has_the_documented_shape(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text((ROOT / "config/dev.yaml").read_text().replace("count: 3", "count: 4"))
    result = run("validate", str(bad), "config/dev.yaml", "--format", "json")
    assert result.returncode == 1
    doc = json.loads(result.stdout)
    assert set(doc) == {"ok", "errors", "warnings", "capacity", "reach"} and doc["ok"] is False
    assert [(e["code"], e["path"], e["file"]) for e in doc["errors"]] == [
        ("HPK501", "teams[0].quota[0]", str(bad)), ("HPK501", "teams[1].quota[0]", str(bad))]
    assert all({"code", "path", "file", "line", "message"} <= set(error) for error in doc["errors"])
    row = next(r for r in doc["capacity"] if r["instance_type"] == "ml.g5.12xlarge" and r["file"] == str(bad))
    assert row["capacity"] == {"count": 4, "accelerators": 16, "vcpu": 192, "memory_gib": 768}
    assert row["reserved"] == {"count": 5, "accelerators": 20, "vcpu": 240, "memory_gib": 960}
    smith = next(r for r in doc["reach"] if r["team"] == "smith" and r["instance_type"] == "ml.g5.12xlarge"
                 and r["file"] == "config/dev.yaml")
    assert (smith["quota"]["accelerators"], smith["reach"]["accelerators"], smith["capped_by"]) == (4, 8, "borrow limit")


def test_unreadable_config_exits_2_without_traceback(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"\xff\xfe\x00")
    result = run("validate", str(bad), "config/dev.yaml")
    assert result.returncode == 2
    assert "Traceback" not in result.stdout + result.stderr
    assert f"{bad}:1:1" in result.stdout and "HPK001" in result.stdout


def test_no_arguments_is_a_usage_error():
    result = run("validate")
    assert result.returncode == 2 and "Missing argument" in result.stderr


def test_schema_file_is_in_sync():
    assert (ROOT / "config" / "schema.json").read_text() == config_schema_text(), "run `make schema`"


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_configs_reference_the_schema_and_satisfy_it(path):
    text = path.read_text()
    assert text.startswith("# yaml-language-server: $schema=./schema.json\n")
    schema = json.loads((ROOT / "config" / "schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(yaml.safe_load(text))


def test_chart_sha256_of_a_downloaded_archive(tmp_path):
    archive = tmp_path / "chart.tar.gz"
    archive.write_bytes(b"archive bytes")
    result = run("chart-sha256", "--archive", str(archive))
    assert result.returncode == 0, result.stderr
    assert f"sha256: {hashlib.sha256(b'archive bytes').hexdigest()}" in result.stdout


def test_chart_sha256_without_network_says_so_and_exits_2():
    env_blocked = {"HTTPS_PROXY": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9"}
    result = run("chart-sha256", "--revision", "1" * 40, env=env_blocked)
    assert result.returncode == 2
    assert "cannot read https://codeload.github.com/aws/sagemaker-hyperpod-cli/tar.gz/" + "1" * 40 in result.stderr


def test_chart_archive_url_matches_the_installer():
    """The CLI hashes the very archive the installer Lambda downloads."""
    
    from cdk_app.chart_archive import ARCHIVE_URL, CHART_REPOSITORY

    handler = load_handler("helm_release_handler")
    assert handler.ARCHIVE_URL == ARCHIVE_URL
    from hyperpod_constructs.hyperpod_helm_release import DEFAULT_REPOSITORY
    assert DEFAULT_REPOSITORY == CHART_REPOSITORY
