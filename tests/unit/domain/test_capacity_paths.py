"""Capacity paths the other tests do not reach: memory-only partial quotas, shared-pool gaps that are not
whole instances, exact decimals, and teams over capacity in one dimension only. Expected amounts are worked
out by hand from the public EC2 figures (ml.g5.12xlarge: 4 GPUs, 48 vCPU, 192 GiB; ml.m5.2xlarge: 8 vCPU,
32 GiB)."""

from __future__ import annotations

from fractions import Fraction

from support.paths import SUPPORT

from cdk_app.config.loader import load_config
from cdk_app.config.model import QuotaEntry
from cdk_app.domain.capacity import Resources, quota_resources, shared_pool_quota
from cdk_app.domain.instance_types import CATALOGUE
from cdk_app.validator.report import check_file

BASE = (SUPPORT / "adversarial" / "base.yaml").read_text()
M5 = CATALOGUE["ml.m5.2xlarge"]


def config_with(tmp_path, john_g5: str, john_m5: str, pool: bool = True):
    text = BASE.replace("teams:\n", "shared_pool:\n  name: pool\nteams:\n" if pool else "teams:\n")
    text = text.replace("      - instance_type: ml.g5.12xlarge\n        count: 3\n",
                        f"      - instance_type: ml.g5.12xlarge\n        {john_g5}\n")
    text = text.replace("      - instance_type: ml.m5.2xlarge\n        count: 1\n    principals:",
                        f"      - instance_type: ml.m5.2xlarge\n        {john_m5}\n    principals:")
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return path


def test_memory_only_quota_fills_vcpu_in_the_instance_ratio():
    entry = QuotaEntry(instance_type="ml.m5.2xlarge", memory_gib=8.0)
    assert quota_resources(entry, M5) == Resources(Fraction(1, 4), Fraction(0), Fraction(2), Fraction(8))


def test_shared_pool_gaps_that_are_not_whole_instances(tmp_path):
    # g5: 4 - 9/4 (john) - 1 (smith) = 3/4 of an instance = 3 whole GPUs -> an accelerators entry.
    # m5: 2 - 3/8 (john, 3 vCPU) - 1 (smith) = 5/8 of an instance -> 5 vCPU and 20 GiB.
    loaded = load_config(config_with(tmp_path, "accelerators: 9", "vcpu: 3"))
    entries = {e.instance_type: e for e in shared_pool_quota(loaded.config)}
    assert entries["ml.g5.12xlarge"].model_dump(exclude_none=True) == {"instance_type": "ml.g5.12xlarge",
                                                                       "accelerators": 3}
    assert entries["ml.m5.2xlarge"].model_dump(exclude_none=True) == {"instance_type": "ml.m5.2xlarge",
                                                                      "vcpu": 5.0, "memory_gib": 20.0}
    assert check_file(config_with(tmp_path, "accelerators: 9", "vcpu: 3")).errors == []


def test_a_vcpu_only_entry_leaves_its_gpus_to_the_pool(tmp_path):
    # g5 x 4: 16 GPUs, 192 vCPU, 768 GiB. john 118 vCPU (memory filled: 472 GiB) and, as SageMaker fills an
    # entry of vCPU alone, no GPU (CreateComputeQuota's ComputeQuotaResourceConfig.VCpu in botocore:
    # "Accelerators are set to 0"); smith 1 instance. The gap, 12 GPUs, 26 vCPU and 104 GiB, is no whole
    # number of instances nor the 12 GPUs' ratio: all three are written (for vCPU and memory alone SageMaker
    # would set the accelerators to 0).
    loaded = load_config(config_with(tmp_path, "vcpu: 118", "count: 1"))
    entry = next(e for e in shared_pool_quota(loaded.config) if e.instance_type == "ml.g5.12xlarge")
    assert (entry.count, entry.accelerators, entry.vcpu, entry.memory_gib) == (None, 12, 26, 104)


def test_over_capacity_in_memory_only_gives_no_negative_pool_entry(tmp_path):
    # john asks 1 vCPU but 60 GiB of m5 memory: the count and vCPU gaps stay positive, memory goes negative.
    path = config_with(tmp_path, "count: 3", "vcpu: 1\n        memory_gib: 60")
    report = check_file(path)
    assert sorted((f.code, f.path) for f in report.errors) == [
        ("HPK501", "teams[0].quota[1]"), ("HPK501", "teams[1].quota[1]"), ("HPK504", "shared_pool")]
    assert "GiB memory" in next(f for f in report.errors if f.code == "HPK504").message
    assert all(e.instance_type != "ml.m5.2xlarge" for e in shared_pool_quota(report.loaded.config))


def test_decimals_are_summed_as_written(tmp_path):
    # 0.1 + 0.2 != 0.3 in binary floats; as decimals 15.7 + 0.3 = 16 = 2 x 8 vCPU exactly.
    text = config_with(tmp_path, "count: 3", "vcpu: 15.7", pool=False).read_text().replace(
        "  - name: smith\n    quota:\n      - instance_type: ml.g5.12xlarge\n        count: 1\n"
        "      - instance_type: ml.m5.2xlarge\n        count: 1\n",
        "  - name: smith\n    quota:\n      - instance_type: ml.g5.12xlarge\n        count: 1\n"
        "      - instance_type: ml.m5.2xlarge\n        vcpu: 0.1\n  - name: jones\n    quota:\n"
        "      - instance_type: ml.m5.2xlarge\n        vcpu: 0.2\n")
    path = tmp_path / "d.yaml"
    path.write_text(text)
    assert check_file(path).errors == []
    path.write_text(text.replace("vcpu: 0.2", "vcpu: 0.2000000000000000001"))
    assert [f.code for f in check_file(path).errors] == ["HPK501"] * 3


def test_the_pool_never_gets_whole_instances_a_team_entry_has_taken_memory_or_vcpu_of(tmp_path):
    # Hostile review 4 F6, by hand from ml.g5.12xlarge (4 GPUs, 48 vCPU, 192 GiB) x 4 = 16, 192, 768:
    # john vcpu 48 + memory 300 (no GPU: SageMaker sets the accelerators of such an entry to 0) and smith
    # 1 instance leave 12 GPUs and 3 instances by GPUs, but 768 - 300 - 192 = 276 GiB: 3 whole instances
    # (576 GiB) would overrun memory. The pool gets 12 GPUs, 96 vCPU, 276 GiB written out.
    loaded = load_config(config_with(tmp_path, "vcpu: 48\n        memory_gib: 300", "count: 1", pool=True))
    entry = next(e for e in shared_pool_quota(loaded.config) if e.instance_type == "ml.g5.12xlarge")
    assert (entry.count, entry.accelerators, entry.vcpu, entry.memory_gib) == (None, 12, 96, 276)
    # john accelerators 1 + vcpu 40 (memory filled: 48 GiB) and smith 1 instance: 11 GPUs left, which
    # SageMaker would fill to 132 vCPU but only 192 - 40 - 48 = 104 are left: all three are written.
    loaded = load_config(config_with(tmp_path, "accelerators: 1\n        vcpu: 40", "count: 1", pool=True))
    entry = next(e for e in shared_pool_quota(loaded.config) if e.instance_type == "ml.g5.12xlarge")
    assert (entry.count, entry.accelerators, entry.vcpu, entry.memory_gib) == (None, 11, 104, 768 - 48 - 192)
    row = next(r for r in check_file(config_with(tmp_path, "accelerators: 1\n        vcpu: 40", "count: 1")).capacity
               if r.instance_type == "ml.g5.12xlarge")
    assert row.to_json()["reserved"] == {"count": 4, "accelerators": 16, "vcpu": 192, "memory_gib": 768}


def test_a_pool_gap_that_is_not_whole_is_written_as_decimals(tmp_path):
    # m5 (8 vCPU, 32 GiB) x 2: john 0.333 vCPU (memory filled: 1.332 GiB), smith 1 instance:
    # 16 - 0.333 - 8 = 7.667 vCPU and 64 - 32 - 1.332 = 30.668 GiB are left, written as those decimals.
    loaded = load_config(config_with(tmp_path, "count: 3", "vcpu: 0.333"))
    entry = next(e for e in shared_pool_quota(loaded.config) if e.instance_type == "ml.m5.2xlarge")
    assert (entry.vcpu, entry.memory_gib) == (7.667, 30.668)


def _botocore_docs(shape: str) -> dict[str, str]:
    import botocore.session
    model = botocore.session.get_session().get_service_model("sagemaker").shape_for(shape)
    return {name: member.documentation for name, member in model.members.items()}


def test_entries_are_filled_as_botocore_documents_it():
    """CreateComputeQuota's model is the source: accelerators fill vCPU and memory in the ratio, vCPU alone
    fills memory, memory alone fills vCPU, and an entry without accelerators gets none."""
    docs = _botocore_docs("ComputeQuotaResourceConfig")
    assert "ratio-based values for those parameters" in docs["Accelerators"]
    assert "ratio-based values for MemoryInGiB" in docs["VCpu"] and "Accelerators are set to 0" in docs["VCpu"]
    assert "ratio-based value for vCPU" in docs["MemoryInGiB"] and "Accelerators are set to 0" in docs["MemoryInGiB"]
    p5 = CATALOGUE["ml.p5.48xlarge"]  # 8 GPUs, 192 vCPU, 2,048 GiB
    entry = lambda **amounts: quota_resources(QuotaEntry(instance_type=p5.name, **amounts), p5)
    assert entry(accelerators=4) == Resources(Fraction(1, 2), 4, 96, 1024)
    assert entry(vcpu=96) == Resources(0, 0, 96, 1024)
    assert entry(memory_gib=1024) == Resources(0, 0, 96, 1024)
    assert entry(vcpu=96, memory_gib=100) == Resources(0, 0, 96, 100)
    assert entry(accelerators=0, vcpu=96) == Resources(0, 0, 96, 1024)  # memory still filled from the vCPU
    assert entry(accelerators=4, vcpu=10) == Resources(Fraction(1, 2), 4, 10, 1024)
    # On a type without accelerators an instance's worth is its vCPU (or memory) share.
    assert quota_resources(QuotaEntry(instance_type=M5.name, vcpu=2), M5) == Resources(Fraction(1, 4), 0, 2, 8)


def test_a_vcpu_only_entry_on_a_gpu_type_is_warned_and_its_team_cannot_reach_gpus(tmp_path):
    from cdk_app.domain.reach import team_reach
    report = check_file(config_with(tmp_path, "vcpu: 96", "count: 1", pool=False))
    (warning,) = [f for f in report.warnings if f.code == "HPK412"]
    assert warning.path == "teams[0].quota[0]"
    assert "reserves no ml.g5.12xlarge accelerators: SageMaker sets them to 0" in warning.message
    john = next(r for r in team_reach(report.loaded.config) if r.team == "john" and r.instance_type == "ml.g5.12xlarge")
    assert john.quota.accelerators == 0 and john.quota.vcpu == 96
    assert not [f for f in check_file(config_with(tmp_path, "accelerators: 8", "count: 1")).warnings
                if f.code == "HPK412"]
