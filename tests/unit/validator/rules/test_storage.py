"""The storage section's rules (HPK901-HPK912, HPK918-HPK920) on both sides of each edge, with the edges from botocore's FSx
model (tests/unit/domain/test_lustre.py holds cdk_app/domain/lustre.py's values to it). The base is
tests/support/adversarial/base.yaml (teams john and smith, groups in use1-az4 and use1-az6's cpu group) with one
valid PERSISTENT_2 file system of john's."""

from __future__ import annotations

import pytest
from support.paths import ROOT
from support.rule_runner import BASE

from cdk_app.validator.report import check_file

FILE_SYSTEM = """storage:
  file_systems:
    - name: checkpoints
      team: john
      storage_capacity_gib: 2400
      per_unit_storage_throughput: 250
      availability_zone_id: use1-az4
"""
FS = "storage.file_systems[0]"


def findings(write_config, *edits: tuple[str, str], extra: str = ""):
    text = FILE_SYSTEM + extra  # edits apply to the storage section only
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return check_file(write_config(BASE + text)).findings


def codes(write_config, *edits, extra: str = "") -> list[tuple[str, str]]:
    return sorted((f.code, f.path) for f in findings(write_config, *edits, extra=extra))


def test_the_base_file_system_is_valid(write_config):
    assert codes(write_config) == []


@pytest.mark.parametrize("gib, allowed", [(1200, True), (2400, True), (4800, True), (3600, False), (1201, False),
                                          (9600, True), (1199, None)])
def test_capacity_is_1200_2400_or_a_multiple_of_2400(write_config, gib, allowed):
    found = codes(write_config, ("storage_capacity_gib: 2400", f"storage_capacity_gib: {gib}"))
    # Below 1200 is the model's range (HPK013), not the increments rule.
    expected = {True: [], False: [("HPK902", f"{FS}.storage_capacity_gib")],
                None: [("HPK013", f"{FS}.storage_capacity_gib")]}[allowed]
    assert found == expected


def test_a_refused_capacity_names_the_nearest_allowed_ones(write_config):
    [finding] = findings(write_config, ("storage_capacity_gib: 2400", "storage_capacity_gib: 6000"))
    assert finding.line > 0 and finding.message == "6000 GiB is not a capacity FSx for Lustre PERSISTENT_2 takes"
    assert finding.hint == "use 1200, 2400 or a multiple of 2400 GiB; nearest: 4800 or 7200"


@pytest.mark.parametrize("kind, throughput, allowed", [
    ("PERSISTENT_2", 125, True), ("PERSISTENT_2", 200, False), ("PERSISTENT_1", 200, True),
    ("PERSISTENT_1", 250, False), ("SCRATCH_2", None, True), ("SCRATCH_2", 125, False), ("PERSISTENT_1", None, False)])
def test_throughput_per_deployment_type(write_config, kind, throughput, allowed):
    line = "" if throughput is None else f"      per_unit_storage_throughput: {throughput}\n"
    found = codes(write_config, ("      per_unit_storage_throughput: 250\n", f"      deployment_type: {kind}\n{line}"))
    assert found == ([] if allowed else [("HPK903", f"{FS}.per_unit_storage_throughput")])


@pytest.mark.parametrize("kind, iops, expected", [
    ("PERSISTENT_2", 1500, []), ("PERSISTENT_2", 24000, []), ("PERSISTENT_2", 18000, ["HPK904"]),
    ("PERSISTENT_2", 192000, []), ("PERSISTENT_2", 204000, ["HPK013"]), ("PERSISTENT_1", 1500, ["HPK904"])])
def test_metadata_iops_only_on_persistent_2_and_its_values(write_config, kind, iops, expected):
    throughput = 250 if kind == "PERSISTENT_2" else 100
    found = codes(write_config, ("      per_unit_storage_throughput: 250\n",
                                 f"      deployment_type: {kind}\n      per_unit_storage_throughput: {throughput}\n"
                                 f"      metadata_iops: {iops}\n"))
    assert found == [(code, f"{FS}.metadata_iops") for code in expected]


@pytest.mark.parametrize("lines, expected", [
    ("      automatic_backup_retention_days: 90\n      daily_automatic_backup_start_time: '23:59'\n", []),
    ("      automatic_backup_retention_days: 91\n", [("HPK013", "automatic_backup_retention_days")]),
    ("      daily_automatic_backup_start_time: '05:00'\n", [("HPK905", "daily_automatic_backup_start_time")]),
    ("      automatic_backup_retention_days: 0\n      daily_automatic_backup_start_time: '05:00'\n",
     [("HPK905", "daily_automatic_backup_start_time")]),
    ("      daily_automatic_backup_start_time: '24:00'\n", [("HPK015", "daily_automatic_backup_start_time")]),
])
def test_backups_of_persistent_file_systems(write_config, lines, expected):
    found = codes(write_config, ("      availability_zone_id: use1-az4\n", "      availability_zone_id: use1-az4\n" + lines))
    assert found == [(code, f"{FS}.{key}") for code, key in expected]


def test_scratch_file_systems_have_no_backups(write_config):
    found = codes(write_config, ("      per_unit_storage_throughput: 250\n",
                                 "      deployment_type: SCRATCH_2\n      automatic_backup_retention_days: 1\n"))
    assert found == [("HPK905", f"{FS}.automatic_backup_retention_days")]


def test_zone_without_subnet_is_an_error_and_one_without_nodes_a_warning(write_config):
    [finding] = findings(write_config, ("      availability_zone_id: use1-az4\n", "      availability_zone_id: use1-az1\n"))
    assert (finding.code, finding.severity.value) == ("HPK906", "error")
    assert finding.hint == "use one of: use1-az4, use1-az6"
    # use1-az6 has a subnet but (the cpu group defaults to the first zone) no nodes.
    [finding] = findings(write_config, ("      availability_zone_id: use1-az4\n", "      availability_zone_id: use1-az6\n"))
    assert (finding.code, finding.severity.value) == ("HPK907", "warning")


def test_team_must_exist(write_config):
    [finding] = findings(write_config, ("      team: john\n", "      team: jon\n"))
    assert (finding.code, finding.path, finding.hint) == ("HPK901", f"{FS}.team", "use one of: 'john', 'smith'")
    assert finding.message == "file system 'checkpoints' belongs to team 'jon', which is not a team of the environment"


def test_names_and_mount_paths(write_config):
    second = FILE_SYSTEM.removeprefix("storage:\n  file_systems:\n")
    assert codes(write_config, extra=second) == [("HPK910", "storage.file_systems[1].name")]
    other = second.replace("checkpoints", "datasets")
    assert codes(write_config, extra=other) == []  # /fsx/checkpoints and /fsx/datasets
    same_path = other + "      mount_path: /fsx/checkpoints\n"
    assert codes(write_config, extra=same_path) == [("HPK910", "storage.file_systems[1].mount_path")]
    assert codes(write_config, extra=same_path.replace("team: john", "team: smith")) == []
    assert codes(write_config, extra=second.replace("team: john", "team: smith")) == []  # smith's own checkpoints


ASSOCIATIONS = "      data_repository_associations:\n"


def _associations(*entries: str) -> tuple[str, str]:
    return ("      availability_zone_id: use1-az4\n", "      availability_zone_id: use1-az4\n" + ASSOCIATIONS
            + "".join(f"        - {e}\n" for e in entries))


@pytest.mark.parametrize("entries, expected", [
    (["{file_system_path: /datasets, s3_path: s3://my-bucket/datasets/, import_events: [NEW, CHANGED, DELETED]}",
      "{file_system_path: /out, s3_path: 's3://my-bucket/out', export_events: [NEW]}"], []),
    (["{file_system_path: /ns1/, s3_path: s3://bk1}", "{file_system_path: /ns1/ns2, s3_path: s3://bk2}"],
     [("HPK908", "data_repository_associations[1].file_system_path")]),
    (["{file_system_path: /, s3_path: s3://bk1}", "{file_system_path: /x, s3_path: s3://bk2}"],
     [("HPK908", "data_repository_associations[0].file_system_path")]),
    (["{file_system_path: /a, s3_path: s3://bk1/p}", "{file_system_path: /b, s3_path: s3://bk1/p/}"],
     [("HPK908", "data_repository_associations[1].s3_path")]),
    (["{file_system_path: /a, s3_path: s3://bk1, export_events: [NEW, NEW]}"],
     [("HPK909", "data_repository_associations[0].export_events[1]")]),
    (["{file_system_path: a, s3_path: s3://bk1}"], [("HPK015", "data_repository_associations[0].file_system_path")]),
    (["{file_system_path: /a, s3_path: 'https://b1'}"], [("HPK015", "data_repository_associations[0].s3_path")]),
    (["{file_system_path: /a, s3_path: s3://bk1, import_events: [ADDED]}"],
     [("HPK014", "data_repository_associations[0].import_events[0]")]),
])
def test_data_repository_associations(write_config, entries, expected):
    assert codes(write_config, _associations(*entries)) == [(code, f"{FS}.{path}") for code, path in expected]


def test_at_most_eight_associations(write_config):
    entries = [f"{{file_system_path: /d{i}, s3_path: s3://bucket/d{i}}}" for i in range(9)]
    assert codes(write_config, _associations(*entries[:8])) == []
    assert codes(write_config, _associations(*entries)) == [("HPK013", f"{FS}.data_repository_associations")]


@pytest.mark.parametrize("path, allowed", [("/checkpoints", True), ("/data/ckpt", True), ("/a/../etc", False),
                                           ("/a/./b", False), ("/dev/shm", False), ("/proc", False), ("/sysdata", True),
                                           ("/fsx/...", True)])
def test_mount_path_a_job_can_use(write_config, path, allowed):
    found = codes(write_config, ("      availability_zone_id: use1-az4\n",
                                 f"      availability_zone_id: use1-az4\n      mount_path: '{path}'\n"))
    assert found == ([] if allowed else [("HPK911", f"{FS}.mount_path")])


def test_storage_without_a_hyperpod_cluster_is_refused(write_config):
    """A Batch-only environment has no nodes to mount a file system on."""
    batch_only = (ROOT / "config" / "batch-only-example.yaml").read_text()
    report = check_file(write_config(batch_only + FILE_SYSTEM))
    assert [(f.code, f.path) for f in report.findings] == [("HPK720", "storage")]


HDD = ("per_unit_storage_throughput: 250", "deployment_type: PERSISTENT_1\n      storage_type: HDD\n"
       "      drive_cache_type: READ\n      per_unit_storage_throughput: 40")


@pytest.mark.parametrize("throughput, gib, expected", [
    (40, 1800, []), (40, 3600, []), (40, 2400, ["HPK902"]), (12, 6000, []), (12, 12000, []), (12, 1800, ["HPK902"]),
    (50, 1800, ["HPK903"]),  # SSD's throughput on HDD: its capacity increment is unknown, so HPK903 alone
])
def test_hdd_capacity_follows_its_throughput(write_config, throughput, gib, expected):
    found = codes(write_config, (HDD[0], HDD[1].replace("40", str(throughput))),
                  ("storage_capacity_gib: 2400", f"storage_capacity_gib: {gib}"))
    assert [code for code, _ in found] == expected


def test_a_refused_hdd_capacity_names_its_increment(write_config):
    [finding] = findings(write_config, HDD, ("storage_capacity_gib: 2400", "storage_capacity_gib: 4000"))
    assert finding.message == "4000 GiB is not a capacity FSx for Lustre PERSISTENT_1 HDD takes at 40 MB/s/TiB"
    assert finding.hint == "use a multiple of 1800 GiB; nearest: 3600 or 5400"


@pytest.mark.parametrize("edits, expected", [
    ((("PERSISTENT_1\n", "PERSISTENT_2\n"),), [("HPK918", f"{FS}.storage_type")]),
    ((("      drive_cache_type: READ\n", ""),), [("HPK918", f"{FS}.drive_cache_type")]),
    ((("storage_type: HDD", "storage_type: SSD"), ("per_unit_storage_throughput: 40", "per_unit_storage_throughput: 50"),
      ("storage_capacity_gib: 3600", "storage_capacity_gib: 4800")),
     [("HPK918", f"{FS}.drive_cache_type")]),
])
def test_hdd_is_persistent_1_with_a_drive_cache(write_config, edits, expected):
    found = codes(write_config, HDD, ("storage_capacity_gib: 2400", "storage_capacity_gib: 3600"), *edits)
    assert found == expected


KEY = "arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"


@pytest.mark.parametrize("kind, key, expected", [
    ("PERSISTENT_2", KEY, []), ("PERSISTENT_2", "alias/fsx-data", []), ("PERSISTENT_2", "mrk-1234abcd12ab34cd56ef1234567890ab", []),
    ("PERSISTENT_2", KEY.replace("us-east-1", "us-west-2"), ["HPK919"]),
    ("PERSISTENT_2", KEY.replace("arn:aws:", "arn:aws-cn:"), ["HPK919"]),
    ("SCRATCH_2", KEY, ["HPK919"]),
    ("PERSISTENT_2", "aws/fsx", ["HPK015"]),  # the model's pattern: cfn-lint's KMS formats
])
def test_customer_managed_kms_key(write_config, kind, key, expected):
    throughput = "per_unit_storage_throughput: 250" if kind.startswith("PERSISTENT") else ""
    found = codes(write_config, ("per_unit_storage_throughput: 250",
                                 f"deployment_type: {kind}\n      kms_key_id: '{key}'\n      {throughput}".rstrip()))
    assert [code for code, _ in found] == expected and all(path == f"{FS}.kms_key_id" for _, path in found)


def test_scratch_1_takes_no_associations_and_its_own_capacities(write_config):
    scratch_1 = ("per_unit_storage_throughput: 250", "deployment_type: SCRATCH_1")
    assert codes(write_config, scratch_1, ("storage_capacity_gib: 2400", "storage_capacity_gib: 3600")) == []
    assert codes(write_config, scratch_1, ("storage_capacity_gib: 2400", "storage_capacity_gib: 4800")) == [
        ("HPK902", f"{FS}.storage_capacity_gib")]
    association = ("      data_repository_associations:\n"
                   "        - {file_system_path: /datasets, s3_path: 's3://dev-datasets-111122223333/c4/'}\n")
    assert codes(write_config, scratch_1, extra=association) == [("HPK920", f"{FS}.data_repository_associations")]


@pytest.mark.parametrize(("line", "hint"), [
    ("      kms_key_id: aws/fsx\n", "expected a KMS key ARN, key id, multi-Region key id (mrk-...) or alias name"),
    ("      daily_automatic_backup_start_time: '3am'\n      automatic_backup_retention_days: 1\n",
     "expected a quoted UTC time HH:MM"),
])
def test_a_storage_format_error_says_in_words_what_is_expected(write_config, line, hint):
    [finding] = findings(write_config, ("      availability_zone_id: use1-az4\n", "      availability_zone_id: use1-az4\n" + line))
    assert finding.code == "HPK015" and finding.hint.startswith(hint)
