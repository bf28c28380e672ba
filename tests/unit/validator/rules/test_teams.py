"""The team rules: behaviour mutation testing found untested, at the API models' limits."""

from __future__ import annotations

import pytest
from support.rule_runner import (
    JOHN_M5,
    K8S_LABEL,
    SAGEMAKER,
    codes,
    limit,
    run,
)


@pytest.mark.parametrize("extra", [0, 1])
def test_team_name_fits_the_localqueue_label(write_config, extra):
    # The longest name whose LocalQueue name hyperpod-ns-<team>-localqueue still fits a label, and one more.
    longest = K8S_LABEL - len("hyperpod-ns-") - len("-localqueue")
    name = "t" * (longest + extra)
    report = run(write_config, ("  - name: smith\n", f"  - name: {name}\n"))
    assert codes(report) == ([("HPK401", "teams[1].name")] if extra else [])

@pytest.mark.parametrize("extra", [0, 1])
def test_shared_pool_name_has_the_team_limit(write_config, extra):
    longest = K8S_LABEL - len("hyperpod-ns-") - len("-localqueue")
    name = "p" * (longest + extra)
    report = run(write_config, ("teams:\n", f"shared_pool:\n  name: {name}\nteams:\n"))
    refused = [(f.code, f.path, f.message, f.hint) for f in report.findings if f.code == "HPK401"]
    assert refused == ([("HPK401", "shared_pool.name", f"shared pool name {name!r} is not allowed",
                         f"lower-case letters, digits and inner hyphens, at most {longest} characters")]
                       if extra else [])

@pytest.mark.parametrize("name, allowed", [("a1-b", True), ("Team", False), ("-team", False), ("team-", False),
                                           ("te_am", False)])
def test_team_name_is_a_dns_label(write_config, name, allowed):
    report = run(write_config, ("  - name: smith\n", f"  - name: {name}\n"))
    assert codes(report) == ([] if allowed else [("HPK401", "teams[1].name")])

@pytest.mark.parametrize("extra", [0, 1])
def test_quota_entry_count_is_the_api_limit(write_config, extra):
    # Entries of zero instances on types the cluster lacks only warn (HPK502); the count is what is refused.
    most = limit(SAGEMAKER, "ComputeQuotaResourceConfigList")
    types = ["ml.m5.large", "ml.m5.xlarge", "ml.m5.4xlarge", "ml.m5.8xlarge", "ml.m5.12xlarge", "ml.m5.16xlarge",
             "ml.m5.24xlarge", "ml.c5.large", "ml.c5.xlarge", "ml.c5.2xlarge", "ml.c5.4xlarge", "ml.c5.9xlarge",
             "ml.c5.12xlarge", "ml.c5.18xlarge", "ml.c5.24xlarge", "ml.t3.medium"]
    # john has two entries (g5, m5) already.
    entries = "".join(f"      - instance_type: {t}\n        count: 0\n" for t in types[:most - 2 + extra])
    report = run(write_config, (JOHN_M5, JOHN_M5.replace("    principals:", f"{entries}    principals:")))
    assert [(f.code, f.path) for f in report.errors] == ([("HPK404", f"teams[0].quota[{most}]")] if extra else [])
    if extra:
        assert report.errors[0].message == f"team 'john' has {most + 1} quota entries"
        assert report.errors[0].hint == f"at most {most} per team"
