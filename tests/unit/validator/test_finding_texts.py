"""Every finding's text, word for word, over the bad-input corpora (messages are part of the
contract, and mutation testing found most of the validator's wording unpinned: a message or hint could lose a
word, change case or vanish with every test still passing).

The other tests check which finding a config gives (code, field path, line) against the schemas, botocore and
the README; this one pins what the finding says, as reviewed output: a change of wording shows here as a diff
to read and accept with `pytest tests/unit/validator/test_finding_texts.py --snapshot-update`.
"""

from __future__ import annotations

import pytest
from support import bad_configs as test_bad_inputs
from support import batch_bad_configs as test_batch_bad_inputs
from support import batch_limit_cases as test_batch_limits
from support.adversarial import CASES as ADVERSARIAL
from support.adversarial import case_text
from support.cli_runner import run as cli
from syrupy.extensions.json import JSONSnapshotExtension

from cdk_app.validator.report import check_file

CORPORA = {
    "adversarial": {case["id"]: case_text(case) for case in ADVERSARIAL},
    "bad_inputs": {case[0]: case[1] for case in test_bad_inputs.CASES},
    "batch_bad_inputs": {case[0]: case[1] for case in test_batch_bad_inputs.CASES},
    "batch_limits": {case[0]: case[1] for case in test_batch_limits.CASES},
}


@pytest.mark.parametrize("corpus", CORPORA)
def test_finding_texts_match_the_reviewed_ones(write_config, corpus, snapshot):
    texts = {}
    for case_id, text in CORPORA[corpus].items():
        report = check_file(write_config(text), "config/test.yaml")
        texts[case_id] = [f"{f.code} {f.severity.value} {f.path} line {f.line}: {f.message} | {f.hint}"
                          for f in report.findings]
    assert texts == snapshot(extension_class=JSONSnapshotExtension)


def test_texts_are_the_same_with_the_validator_read_from_its_cache(tmp_path):
    # The first run builds the validator and writes its cache file; the second reads it, and pydantic then
    # had not resolved KitConfig.batch: a Batch team's unknown key listed no allowed keys ("allowed keys: ").
    config = tmp_path / "batch.yaml"
    config.write_text(
        'environment: dev\naccount: "111122223333"\nregion: us-east-1\nbatch:\n  service_environments:\n'
        "    - {name: g6, capacity_limits: [{unit: NUM_INSTANCES, max_capacity: 8}]}\n"
        "  queues:\n    - {name: f, service_environment: g6}\n  teams:\n    - {name: a, queues: [f], fair_share_weight: 1}\n")
    first, second = (cli("validate", str(config), env={"XDG_CACHE_HOME": str(tmp_path / "cache")}) for _ in range(2))
    assert list((tmp_path / "cache").rglob("kitconfig-*.pickle"))
    assert first.returncode == second.returncode == 1
    assert second.stdout == first.stdout
    assert "unknown key 'fair_share_weight' (allowed keys: borrow_limit, enabled, execution_role_arn," in second.stdout
