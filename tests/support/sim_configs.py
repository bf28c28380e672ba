"""Small environments for simulation tests, written as an administrator writes config/<env>.yaml and loaded by
the kit's loader and validator (a config the validator refuses fails the test that builds it)."""

from __future__ import annotations

from pathlib import Path

import yaml

from cdk_app.config.model import KitConfig
from cdk_app.validator.report import check_file

SKELETON = """\
environment: {environment}
account: "111122223333"
region: us-east-1
availability_zone_ids: [use1-az4, use1-az6]
network: {{cluster_zone_ids: [use1-az4, use1-az6]}}
task_governance:
  cloudformation_types: {{cluster_policy: native, compute_quota: native}}
"""


def environment(tmp_path: Path, groups: dict[str, int], teams: list[dict], policy: dict | None = None,
                shared_pool: dict | None = None, name: str = "sim") -> KitConfig:
    """A valid environment with these instance groups (type -> count, no deep health checks), teams and
    cluster policy."""
    body = {"hyperpod": {"instance_groups": [
        {"name": f"g{i}", "instance_type": itype, "count": count, "availability_zone_id": "use1-az4",
         "deep_health_checks": []} for i, (itype, count) in enumerate(groups.items())]},
        "cluster_policy": policy or {}, "teams": teams}
    if shared_pool is not None:
        body["shared_pool"] = shared_pool
    path = tmp_path / f"{name}.yaml"
    path.write_text(SKELETON.format(environment=name) + yaml.safe_dump(body, sort_keys=False))
    report = check_file(path, str(path))
    assert report.loaded is not None and not report.errors, [f.render() for f in report.findings]
    return report.loaded.config


def workload_file(tmp_path: Path, jobs: list[dict], name: str = "workload") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"jobs": jobs}, sort_keys=False))
    return path
