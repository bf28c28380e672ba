"""Which part of Kueue's pending message explain quotes as the reason (reason texts as Kueue's
flavorassigner.go formats them: checkFlavorForPodSets' mismatches, fitsResourceQuota's quota reasons)."""

from cdk_app.simulate.explain import _kueue_says

AFFINITY = "flavor ml.m5.2xlarge doesn't match node affinity"
QUOTA = "insufficient unused quota for nvidia.com/gpu in flavor ml.g5.12xlarge, 4 more needed"


def message(*reasons: str) -> str:
    return f"couldn't assign flavors to pod set main: {', '.join(reasons)}"


def test_the_quota_reason_is_quoted_first_not_the_flavor_the_job_cannot_use():
    said, = _kueue_says([(1200, message(AFFINITY, QUOTA))], 1200)
    assert said == f"  Kueue: {QUOTA} (its whole message: {message(AFFINITY, QUOTA)})"


def test_a_message_of_mismatches_only_is_marked_as_not_the_reason():
    said, = _kueue_says([(1200, message(AFFINITY, "untolerated taint {dedicated gpu NoSchedule} in flavor cpu"))], 1200)
    assert said.startswith(f"  Kueue: {message(AFFINITY, 'untolerated taint {dedicated gpu NoSchedule} in flavor cpu')}"
                           " - only flavors this job cannot use were tried")
    assert "not this" in said


def test_a_message_whose_every_reason_decides_is_quoted_whole():
    quota_two = "insufficient unused quota for cpu in flavor ml.m5.2xlarge, 2 more needed"
    assert _kueue_says([(5, message(QUOTA, quota_two))], 5) == [f"  Kueue: {message(QUOTA, quota_two)}"]
    assert _kueue_says([(5, "Workload no longer fits after processing another workload")], 5) == [
        "  Kueue: Workload no longer fits after processing another workload"]
    assert _kueue_says([(5, message(QUOTA))], 6) == []  # nothing said at that moment


def test_each_pod_sets_reasons_are_read_apart():
    """Kueue's message holds one part per pod set, joined with "; "."""
    both = f"{message(AFFINITY)}; couldn't assign flavors to pod set worker: {AFFINITY}, {QUOTA}"
    assert _kueue_says([(0, both)], 0) == [f"  Kueue: {QUOTA} (its whole message: {both})"]
