"""The task-governance rules (priority classes, add-ons, governance types): behaviour mutation testing found untested, at the API models' limits."""

from __future__ import annotations

import pytest
from support.rule_runner import (
    GOVERNANCE,
    K8S_LABEL,
    MIXED,
    SAGEMAKER,
    codes,
    limit,
    offered_in,
    run,
)


@pytest.mark.parametrize("extra", [0, 1])
def test_priority_class_name_fits_with_its_suffix(write_config, extra):
    name = "c" * (K8S_LABEL - len("-priority") + extra)
    report = run(write_config, ("    - name: low\n", f"    - name: {name}\n"))
    assert codes(report) == ([("HPK301", "cluster_policy.priority_classes[1].name")] if extra else [])
    if extra:
        assert f"at most {K8S_LABEL - len('-priority')} characters" in report.findings[0].hint

@pytest.mark.parametrize("extra", [0, 1])
def test_priority_class_count_is_the_api_limit(write_config, extra):
    most = limit(SAGEMAKER, "PriorityClassList")
    classes = "".join(f"    - name: c{i}\n      weight: {i}\n" for i in range(most + extra))
    report = run(write_config, ("    - name: high\n      weight: 90\n    - name: low\n      weight: 10\n", classes))
    assert codes(report) == ([("HPK302", f"cluster_policy.priority_classes[{most}]")] if extra else [])
    if extra:
        assert report.findings[0].message == f"{most + 1} priority classes are defined"
        assert report.findings[0].hint == f"at most {most}"

# Add-on version edges, from the reference facts: the task governance add-on has topology-aware scheduling from
# v1.2.2-eksbuild.1, cannot go from v1.3.x to v1.5 in place; amazon-cloudwatch-observability collects Kueue
# metrics from v2.4.0-eksbuild.1.
@pytest.mark.parametrize("version, expected", [
    ("v1.2.1-eksbuild.9", ["HPK305"]), ("v1.2.2-eksbuild.1", []), ("v1.3.0-eksbuild.1", ["HPK306"]),
    ("v1.3.9-eksbuild.2", ["HPK306"]), ("v1.4.0-eksbuild.1", []), ("v1.1.3-eksbuild.1", ["HPK305"]),
])
def test_task_governance_add_on_edges(write_config, version, expected):
    report = run(write_config, ("  addon_version: v1.6.0-eksbuild.1\n", f"  addon_version: {version}\n"))
    assert [(f.code, f.path) for f in report.findings] == [(c, "task_governance.addon_version") for c in expected]

@pytest.mark.parametrize("settings, refused", [
    ("  addon_version: v2.3.9-eksbuild.1\n", True), ("  addon_version: v2.4.0-eksbuild.1\n", False),
    ("  addon_version: v1.9.0-eksbuild.1\n  kueue_metrics: false\n", False),
    ("  addon_version: v1.9.0-eksbuild.1\n  enabled: false\n", False), ("  kueue_metrics: true\n", False),
])
def test_observability_add_on_edges(write_config, settings, refused):
    report = run(write_config, ("task_governance:\n", f"observability:\n{settings}task_governance:\n"))
    assert codes(report) == ([("HPK307", "observability.addon_version")] if refused else [])

@pytest.mark.parametrize("region", MIXED)
@pytest.mark.parametrize("recorded", [None, "native", "api"])
def test_governance_types_follow_the_region_data(write_config, region, recorded):
    types = "" if recorded is None else f"  cloudformation_types: {{cluster_policy: {recorded}, compute_quota: {recorded}}}\n"
    report = run(write_config, ("region: us-east-1\n", f"region: {region}\n"),
                 ("  cloudformation_types: {cluster_policy: native, compute_quota: native}\n", types))
    expected = []
    for key, cfn_type in GOVERNANCE.items():
        offered = cfn_type in offered_in(region)
        if recorded == "native" and not offered:
            expected.append(("HPK310", f"task_governance.cloudformation_types.{key}",
                             f"{cfn_type} is not a CloudFormation type in {region}"))
        elif recorded == "api" and offered:
            expected.append(("HPK311", f"task_governance.cloudformation_types.{key}",
                             f"{region} offers {cfn_type}, but this environment records api"))
    if recorded is None:
        expected.append(("HPK312", "task_governance.cloudformation_types", "cluster_policy and compute_quota not "
                         "recorded: the stacks would take the type from the installed cfn-lint's region data, which "
                         "an upgrade may change under the deployed policy and quotas"))
    assert [(f.code, f.path, f.message) for f in report.findings if f.code.startswith("HPK31")] == expected


def test_api_where_native_is_offered_advises_a_new_and_a_deployed_environment_apart(write_config):
    """The file may never have been deployed: the hint gives the advice for both cases, each for what it is."""
    report = run(write_config, ("compute_quota: native}", "compute_quota: api}"))
    finding, = [f for f in report.findings if f.code == "HPK311"]
    assert finding.hint.startswith("not deployed yet: record compute_quota: native; already deployed: keep the type "
                                   "its stacks were deployed with")
    assert "keep api" not in finding.hint  # the file may have just been edited from native: api is not the deployed type
    assert "plan --against-account" in finding.hint


@pytest.mark.parametrize("region", MIXED)
@pytest.mark.parametrize("recorded", ["", "cluster_policy: api", "compute_quota: native"])
def test_unrecorded_governance_types_are_an_error_naming_what_to_write(write_config, region, recorded):
    """The hint is the whole mapping to write: recorded values kept, the others what cfn-lint's provider
    data for the region offers (native where the type is listed)."""
    report = run(write_config, ("region: us-east-1\n", f"region: {region}\n"),
                 ("  cloudformation_types: {cluster_policy: native, compute_quota: native}\n",
                  f"  cloudformation_types: {{{recorded}}}\n"))
    kept = dict(item.split(": ") for item in recorded.split(", ") if item)
    whole = {key: kept.get(key, "native" if cfn_type in offered_in(region) else "api")
             for key, cfn_type in GOVERNANCE.items()}
    finding, = [f for f in report.findings if f.code == "HPK312"]
    assert finding.severity.value == "error" and report.exit_code == 1
    assert finding.message.startswith(" and ".join(k for k in GOVERNANCE if k not in kept) + " not recorded")
    written = ", ".join(f"{key}: {value}" for key, value in whole.items())
    assert finding.hint.startswith(f"write under task_governance: `cloudformation_types: {{{written}}}`, "
                                   f"what {region} offers today")
