"""Every finding's text, word for word, over the bad-input corpora (issue 15: messages are part of the
contract, and mutation testing found most of the validator's wording unpinned: a message or hint could lose a
word, change case or vanish with every test still passing).

The other tests check which finding a config gives (code, field path, line) against the schemas, botocore and
the README; this one pins what the finding says, as reviewed output: a change of wording shows here as a diff
to read and accept with `pytest tests/test_finding_texts.py --snapshot-update`.
"""

from __future__ import annotations

import pytest
from syrupy.extensions.json import JSONSnapshotExtension

import test_bad_inputs
import test_batch_bad_inputs
import test_batch_limits
from cdk_app.validator.report import check_file
from test_adversarial import CASES as ADVERSARIAL, case_text

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
