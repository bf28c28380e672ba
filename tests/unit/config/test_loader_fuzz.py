"""Property tests: whatever a file holds, loading and validating it never raises."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.paths import ROOT

from cdk_app.validator.report import check_file

DEV = (ROOT / "config" / "dev.yaml").read_text()
PROD = (ROOT / "config" / "prod.yaml").read_text()
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12), st.floats(allow_nan=True),
                    st.text(max_size=30))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                        st.dictionaries(st.text(max_size=12), inner, max_size=4)),
                      max_leaves=20)


def _assert_reports(path: Path) -> None:
    report = check_file(path, "config/fuzz.yaml")
    assert report.exit_code in (0, 1, 2)
    for finding in report.findings:
        assert finding.file == "config/fuzz.yaml" and finding.line >= 1 and finding.column >= 1
        assert finding.code.startswith("HPK")


@SETTINGS
@given(st.binary(max_size=400))
def test_random_bytes(write_config, data):
    _assert_reports(write_config(data))


@SETTINGS
@given(st.text(alphabet=st.sampled_from(list("ab:-[]{}&*!|>'\"#%@`,? \n\t0123456789.")), max_size=200))
def test_yaml_punctuation_soup(write_config, text):
    _assert_reports(write_config(text))


@pytest.mark.slow
@SETTINGS
@given(st.data())
def test_mutated_configs(write_config, data):
    """Replace one value anywhere in a real config with a random value, or delete a key."""
    doc = yaml.safe_load(data.draw(st.sampled_from([DEV, PROD])))
    node = doc
    while True:
        keys = list(node.keys()) if isinstance(node, dict) else list(range(len(node)))
        if not keys:
            break
        key = data.draw(st.sampled_from(keys))
        child = node[key]
        if isinstance(child, (dict, list)) and child and data.draw(st.booleans()):
            node = child
            continue
        if isinstance(node, dict) and data.draw(st.booleans()):
            del node[key]
        else:
            node[key] = data.draw(values)
        break
    _assert_reports(write_config(yaml.safe_dump(doc, allow_unicode=True)))


@SETTINGS
@given(st.integers(0, len(DEV)), st.text(max_size=8))
def test_text_inserted_into_dev(write_config, at, junk):
    _assert_reports(write_config(DEV[:at] + junk + DEV[at:]))


def test_huge_file_is_refused_not_read(write_config):
    path = write_config("a: b\n" * (1_200_000))
    report = check_file(path)
    assert [f.code for f in report.findings] == ["HPK005"] and report.exit_code == 2
