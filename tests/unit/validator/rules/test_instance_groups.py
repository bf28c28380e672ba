"""The instance-group rules: behaviour mutation testing found untested, at the API models' limits."""

from __future__ import annotations

import pytest
from support.rule_runner import (
    JOHN_M5,
    SAGEMAKER,
    codes,
    limit,
    run,
)


@pytest.mark.parametrize("field, shape, code, where", [
    ("cluster_name", "ClusterName", "HPK207", "hyperpod.cluster_name"),
    ("name", "ClusterInstanceGroupName", "HPK202", "hyperpod.instance_groups[1].name"),
])
@pytest.mark.parametrize("extra", [0, 1])
def test_sagemaker_names_at_the_api_limit(write_config, field, shape, code, where, extra):
    name = "n" * (limit(SAGEMAKER, shape) + extra)
    if field == "cluster_name":
        edits = [("hyperpod:\n", f"hyperpod:\n  cluster_name: {name}\n")]
    else:
        edits = [("    - name: cpu\n", f"    - name: {name}\n")]
    assert [c for c in codes(run(write_config, *edits)) if c[0] == code] == ([(code, where)] if extra else [])

# --- HPK201's did-you-mean ----------------------------------------------------------------------------------------
def test_case_only_typo_is_suggested_after_the_fuzzy_budget(write_config):
    # Past 50 distinct unknown types the fuzzy did-you-mean stops (linear time on huge files); a type that
    # differs from a real one only in case or surrounding blanks is still named. The real type is one of
    # botocore's ClusterInstanceType values.
    assert "ml.g5.12xlarge" in SAGEMAKER.shape_for("ClusterInstanceType").enum
    unknown = "".join(f"      - instance_type: ml.zz{i}.large\n        count: 1\n" for i in range(50))
    report = run(write_config, (JOHN_M5, f"{unknown}      - instance_type: ml.zz0.lage\n        count: 1\n"
                                "      - instance_type: ' ML.G5.12XLARGE'\n        count: 1\n    principals:"))
    hints = {f.path: f.hint for f in report.findings if f.code == "HPK201"}
    assert hints["teams[0].quota[52].instance_type"].startswith("did you mean ml.g5.12xlarge? ")
    assert hints["teams[0].quota[51].instance_type"].startswith("HyperPod types look like")
    assert hints["teams[0].quota[1].instance_type"].startswith("HyperPod types look like")
