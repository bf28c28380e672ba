"""The instance-group rules: behaviour mutation testing found untested, at the API models' limits."""

from __future__ import annotations

import pytest
from support.rule_runner import (
    BASE,
    JOHN_M5,
    SAGEMAKER,
    codes,
    limit,
    run,
)

from hyperpod_constructs.private.limits import SCHEDULABLE_NODE_WAIT_MINUTES


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
    assert hints["teams[0].quota[51].instance_type"].startswith("`hyperpod-kit instances` lists the HyperPod types")
    assert hints["teams[0].quota[1].instance_type"].startswith("`hyperpod-kit instances` lists the HyperPod types")


# --- HPK213: InstanceConnectivity where HyperPod cannot run it ----------------------------------------------------
# The check names are botocore's DeepHealthCheckType values. ml.g5.12xlarge has EFA and ml.g5.xlarge has none (AWS's
# EFA instance list as the EFA device plugin chart names it); the docs ask for at least 2 nodes.
GPU_GROUP = "      instance_type: ml.g5.12xlarge\n      count: 4\n"
BOTH = "[InstanceStress, InstanceConnectivity]"


@pytest.mark.parametrize("instance_type, count, refused", [
    ("ml.g5.12xlarge", 2, False), ("ml.g5.12xlarge", 1, True), ("ml.g5.12xlarge", 0, False),
    ("ml.g5.xlarge", 2, True), ("ml.g5.xlarge", 0, True),
])
def test_connectivity_needs_efa_and_two_nodes(write_config, instance_type, count, refused):
    assert set(BOTH.strip("[]").split(", ")) <= set(SAGEMAKER.shape_for("DeepHealthCheckType").enum)
    report = run(write_config, (GPU_GROUP, f"      instance_type: {instance_type}\n      count: {count}\n"
                                           f"      deep_health_checks: {BOTH}\n"))
    found = [(f.path, f.line, f.severity.value) for f in report.findings if f.code == "HPK213"]
    line = BASE.splitlines().index("      count: 4") + 2  # the line added after the count
    assert found == ([("hyperpod.instance_groups[0].deep_health_checks[1]", line, "error")] if refused else [])


@pytest.mark.parametrize("instance_type, count, reason", [
    ("ml.g5.12xlarge", 1, "the group has 1 node"), ("ml.g5.xlarge", 4, "ml.g5.xlarge has no EFA interfaces")])
def test_connectivity_refusal_says_why_and_what_is_allowed(write_config, instance_type, count, reason):
    report = run(write_config, (GPU_GROUP, f"      instance_type: {instance_type}\n      count: {count}\n"
                                           "      deep_health_checks: [InstanceConnectivity]\n"))
    [finding] = [f for f in report.findings if f.code == "HPK213"]
    assert finding.path == "hyperpod.instance_groups[0].deep_health_checks[0]"
    assert finding.message == f"InstanceConnectivity needs an instance type with EFA and a group of at least 2 nodes; {reason}"
    assert finding.hint == ("allowed here: [InstanceStress] (remove InstanceConnectivity, or leave deep_health_checks "
                            "out for this default)")


def test_connectivity_is_needed_of_each_type_a_flexible_group_may_run(write_config):
    # A flexible group may come up as its fallback type, which has no EFA: the check cannot run there.
    report = run(write_config, (GPU_GROUP, GPU_GROUP + "      fallback_instance_types: [ml.g5.xlarge]\n"
                                                       "      deep_health_checks: [InstanceConnectivity]\n"))
    [finding] = [f for f in report.findings if f.code == "HPK213"]
    assert finding.message.endswith("; ml.g5.xlarge has no EFA interfaces")


def test_an_ami_named_twice_warns(write_config):
    # botocore: ImageId is a HyperPod public AMI, a custom AMI or default; ImageReleaseVersion the version of the
    # HyperPod-managed AMI. Neither says which wins.
    members = SAGEMAKER.shape_for("ClusterInstanceGroupSpecification").members
    assert "HyperPod-managed AMI" in members["ImageReleaseVersion"].documentation
    assert "CustomAmiId" in members["ImageId"].documentation
    both = GPU_GROUP + "      image_id: ami-0123456789abcdef0\n      image_release_version: \"1.2.3\"\n"
    assert codes(run(write_config, (GPU_GROUP, both))) == [("HPK246", "hyperpod.instance_groups[0].image_release_version")]
    assert codes(run(write_config, (GPU_GROUP, GPU_GROUP + "      image_release_version: \"1.2.3\"\n"))) == []


# --- HPK214: a schedulable node within the governance stack's wait -------------------------------------------------
# SageMaker's "recommended resiliency configurations": new GPU nodes run deep health checks for about 2 hours, longer
# than the governance stack waits for a schedulable node (constructs/private/limits.py).
CPU_COUNT = "      instance_type: ml.m5.2xlarge\n      count: 2\n"
CPU_NONE = "      instance_type: ml.m5.2xlarge\n      count: 0\n"
TAINT = "      taints:\n        - key: nvidia.com/gpu\n          value: \"true\"\n          effect: NoSchedule\n"


def schedulable_warnings(report) -> list[tuple[str, int, str]]:
    return [(f.path, f.line, f.severity.value) for f in report.findings if f.code == "HPK214"]


@pytest.mark.parametrize("edits, warned", [
    ([], False),                                                                     # the CPU group has none
    ([(CPU_COUNT, CPU_NONE)], True),                                                 # only the GPU group has nodes
    # Without deep health checks the GPU group is still tainted NoSchedule: Kueue's controller cannot run there.
    ([(CPU_COUNT, CPU_NONE), (GPU_GROUP, GPU_GROUP + "      deep_health_checks: []\n")], True),
    ([(CPU_COUNT, CPU_NONE), (GPU_GROUP, GPU_GROUP + "      deep_health_checks: []\n"), (TAINT, "")], False),
    ([(CPU_COUNT, CPU_NONE), (GPU_GROUP, GPU_GROUP + "      deep_health_checks: []\n"),
      (TAINT, TAINT.replace("NoSchedule", "PreferNoSchedule"))], False),
    ([(CPU_COUNT, CPU_NONE), (GPU_GROUP, GPU_GROUP.replace("4", "0"))], True),       # no nodes at all
    ([(GPU_GROUP, GPU_GROUP.replace("4", "0"))], False),                             # the CPU group has nodes
])
def test_warns_when_no_group_gives_a_schedulable_node_in_time(write_config, edits, warned):
    report = run(write_config, *edits)
    line = BASE.splitlines().index("  instance_groups:") + 1
    assert schedulable_warnings(report) == ([("hyperpod.instance_groups", line, "warning")] if warned else [])


def test_schedulable_warning_gives_the_numbers_and_the_ways_out(write_config):
    [finding] = [f for f in run(write_config, (CPU_COUNT, CPU_NONE)).findings if f.code == "HPK214"]
    assert finding.message.startswith("no instance group with nodes can take Kueue's controller soon (gpu runs deep "
                                      "health checks, which keep new nodes unschedulable for about 2 hours)")
    assert f"waits at most {SCHEDULABLE_NODE_WAIT_MINUTES} minutes" in finding.message
    assert "first deploy fails" in finding.message
    assert finding.hint.startswith("add a small untainted group without deep health checks")
    [tainted] = [f for f in run(write_config, (CPU_COUNT, CPU_NONE),
                                (GPU_GROUP, GPU_GROUP + "      deep_health_checks: []\n")).findings if f.code == "HPK214"]
    assert "(gpu is tainted nvidia.com/gpu=true:NoSchedule)" in tainted.message
    assert "`kubectl get nodes -L sagemaker.amazonaws.com/node-health-status` shows a node Schedulable" in finding.hint
    [empty] = [f for f in run(write_config, (CPU_COUNT, CPU_NONE), (GPU_GROUP, GPU_GROUP.replace("4", "0"))).findings
               if f.code == "HPK214"]
    assert empty.message.startswith("no instance group has nodes (every count is 0)")


# --- HPK168: the teams a taint lets tolerate it (tolerations guardrail) ------------------------------------------
GPU_TAINT = '        - key: nvidia.com/gpu\n          value: "true"\n          effect: NoSchedule\n'


@pytest.mark.parametrize(("teams", "found"), [
    ("[john, smith]", []),
    ("[jhon]", [("HPK168", "hyperpod.instance_groups[0].taints[1].teams[0]")]),
    ("[]", []),
])
def test_a_taint_lists_only_teams_the_config_has(write_config, teams, found):
    report = run(write_config, (GPU_TAINT, GPU_TAINT + f"        - key: example.com/dedicated\n          value: john\n"
                                                       f"          effect: NoSchedule\n          teams: {teams}\n"))
    assert [c for c in codes(report) if c[0] == "HPK168"] == found
    hints = [f.hint for f in report.findings if f.code == "HPK168"]
    assert all("did you mean 'john'" in h for h in hints)


def test_a_device_resource_taint_takes_no_teams(write_config):
    """The API server adds a toleration of nvidia.com/gpu to every pod that asks for GPUs (ExtendedResourceToleration)."""
    report = run(write_config, (GPU_TAINT, GPU_TAINT + "          teams: [john]\n"))
    assert [c for c in codes(report) if c[0] == "HPK168"] == [("HPK168", "hyperpod.instance_groups[0].taints[0].teams")]


# --- HPK215-HPK219: the administrators' system group (hyperpod.system_instance_group) -----------------------------
CPU_GROUP = "    - name: cpu\n      instance_type: ml.m5.2xlarge\n      count: 2\n"
SYSTEM_TAINT = '        - key: CriticalAddonsOnly\n          value: "true"\n          effect: NoSchedule\n'


def system_group(name: str = "system", *, labels: str = "      labels:\n        node-role: system\n",
                 taints: str = f"      taints:\n{SYSTEM_TAINT}", count: int = 2, itype: str = "ml.m5.xlarge") -> tuple[str, str]:
    """The base config with a system group after `cpu`, and system_instance_group naming `name`."""
    return (CPU_GROUP, CPU_GROUP + f"    - name: system\n      instance_type: {itype}\n      count: {count}\n{labels}{taints}"
            f"  system_instance_group: {name}\n")


def system_codes(report) -> list[tuple[str, str]]:
    return [c for c in codes(report) if c[0] in ("HPK215", "HPK216", "HPK217", "HPK218", "HPK219")]


def test_a_labelled_tainted_system_group_of_its_own_type_is_valid(write_config):
    report = run(write_config, system_group())
    assert report.findings == []


@pytest.mark.parametrize(("edit", "found"), [
    ({"name": "sytem"}, [("HPK215", "hyperpod.system_instance_group")]),
    ({"labels": ""}, [("HPK216", "hyperpod.instance_groups[2].labels")]),
    # gpu carries workload: gpu; a system group labelled the same would take the operators onto the GPU nodes.
    ({"labels": "      labels:\n        workload: gpu\n"}, [("HPK216", "hyperpod.instance_groups[2].labels")]),
    ({"taints": ""}, [("HPK217", "hyperpod.instance_groups[2].taints")]),
    # Taints that do not keep every team off: one the teams may tolerate, a soft one, a device resource's.
    ({"taints": f"      taints:\n{SYSTEM_TAINT}          teams: [john]\n"}, [("HPK217", "hyperpod.instance_groups[2].taints")]),
    ({"taints": "      taints:\n        - {key: CriticalAddonsOnly, effect: PreferNoSchedule}\n"},
     [("HPK217", "hyperpod.instance_groups[2].taints")]),
    ({"taints": "      taints:\n        - {key: nvidia.com/gpu, effect: NoSchedule}\n"},
     [("HPK217", "hyperpod.instance_groups[2].taints")]),
    ({"taints": "      taints:\n        - {key: dedicated, effect: NoExecute}\n"}, []),
    ({"count": 0}, [("HPK218", "hyperpod.instance_groups[2].count")]),
    # john and smith both have a quota for ml.m5.2xlarge: once each.
    ({"itype": "ml.m5.2xlarge"}, [("HPK219", "teams[0].quota[1].instance_type"),
                                  ("HPK219", "teams[1].quota[1].instance_type")]),
    # Red team (sys_flex2.yaml): a flexible system group's fallback type is system capacity too.
    ({"labels": "      fallback_instance_types: [ml.m5.2xlarge]\n      labels:\n        node-role: system\n"},
     [("HPK219", "teams[0].quota[1].instance_type"), ("HPK219", "teams[1].quota[1].instance_type")]),
    # Untainted, team pods may use its nodes: the error says what that costs, no quota warning beside it.
    ({"itype": "ml.m5.2xlarge", "taints": ""}, [("HPK217", "hyperpod.instance_groups[2].taints")]),
])
def test_a_system_group_that_does_not_hold_the_line_is_named(write_config, edit, found):
    assert system_codes(run(write_config, system_group(**edit))) == found


def test_a_quota_on_a_type_only_the_system_group_has_is_over_capacity_not_a_second_warning(write_config):
    # The system nodes are no team's capacity: john's 1 ml.m5.xlarge is beyond the 0 the teams' groups have.
    report = run(write_config, system_group(), ("      - instance_type: ml.m5.2xlarge\n        count: 1\n    principals:",
                                                "      - instance_type: ml.m5.xlarge\n        count: 1\n    principals:"))
    assert [c for c in codes(report) if c[0] in ("HPK219", "HPK501")] == [("HPK501", "teams[0].quota[1]")]


def test_without_idle_sharing_a_quota_on_the_system_groups_shared_type_is_not_lent_onto_it(write_config):
    report = run(write_config, system_group(itype="ml.m5.2xlarge"),
                 ("cluster_policy:\n", "cluster_policy:\n  idle_resource_sharing: Disabled\n"))
    assert system_codes(report) == []


def test_a_missing_system_group_suggests_the_near_name_and_says_what_stops(write_config):
    [finding] = [f for f in run(write_config, system_group("sytem")).findings if f.code == "HPK215"]
    assert "no PyTorchJob or MPIJob would start" in finding.message
    assert finding.hint.endswith("(did you mean 'system'?)")


def test_an_untainted_system_group_says_what_a_team_pod_on_it_would_get(write_config):
    [finding] = [f for f in run(write_config, system_group(taints="")).findings if f.code == "HPK217"]
    assert "list Secrets in every namespace" in finding.message and finding.severity == "error"


def test_without_a_system_group_nothing_is_checked(write_config):
    """The base config has no system_instance_group: a labelled, untainted group raises nothing."""
    assert system_codes(run(write_config, (CPU_GROUP, CPU_GROUP + "      labels:\n        node-role: system\n"))) == []


def test_a_missing_system_group_names_at_most_ten_groups(write_config):
    many = "".join(f"    - name: g{i:02d}\n      instance_type: ml.m5.2xlarge\n      count: 0\n" for i in range(20))
    [finding] = [f for f in run(write_config, (CPU_GROUP, CPU_GROUP + many + "  system_instance_group: zz\n")).findings
                 if f.code == "HPK215"]
    assert finding.hint == "name one of gpu, cpu, g00, g01, g02, g03, g04, g05, g06, g07, ..."


def test_two_threads_per_core_on_grace_is_refused_as_on_graviton(write_config):
    # EC2's CPU options: "Each vCPU is a thread of a CPU core, except for ... 64-bit ARM platforms"; p6e-gb200's
    # CPUs are NVIDIA Grace (Arm).
    from support.rule_runner import run
    report = run(write_config, ("    - name: cpu\n", "    - name: grace\n      instance_type: ml.p6e-gb200.36xlarge\n"
                                "      count: 1\n      threads_per_core: 2\n    - name: cpu\n"))
    [finding] = [f for f in report.findings if f.code == "HPK212"]
    assert finding.path == "hyperpod.instance_groups[1].threads_per_core"
    assert finding.message == "ml.p6e-gb200.36xlarge runs one thread per core (NVIDIA Grace); 2 is not possible"
