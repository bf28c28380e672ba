"""The region rules: behaviour mutation testing found untested, at the API models' limits."""

from __future__ import annotations

import pytest
from support.rule_runner import (
    PROVIDERS,
    run,
)


@pytest.mark.parametrize("region, hint", [
    ("eu-westt-1", "did you mean eu-west-1? use an AWS region such as us-east-1"),
    # Nearest is ap-east-1 at a similarity of 0.78: too far to guess (mx-central-1 is Mexico's region).
    ("mx-east-1", "use an AWS region such as us-east-1"),
])
def test_unknown_region_suggests_only_a_near_name(write_config, region, hint):
    assert {"eu-west-1", "ap-east-1", "mx-central-1"} <= {p.stem for p in PROVIDERS.glob("*.json")}
    report = run(write_config, ("region: us-east-1\n", f"region: {region}\n"))
    assert [(f.code, f.message, f.hint) for f in report.findings if f.code == "HPK110"] == [
        ("HPK110", f"region {region!r} does not exist (cfn-lint knows no such region)", hint)]
