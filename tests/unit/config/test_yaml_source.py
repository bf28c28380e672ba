"""parse_yaml against PyYAML's own loader and composer: the same data, and every key and list item
located where PyYAML's (pure Python) composer puts its node."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from cdk_app.config.yaml_source import parse_yaml

scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20))
keys = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=10).filter(
    lambda k: k != "<<")
documents = st.dictionaries(keys, st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)), max_leaves=25), max_size=6)


def _node_marks(node: yaml.Node, path: tuple = (), found: dict | None = None) -> dict:
    found = {} if found is None else found
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            found[path + (key.value,)] = (key.start_mark.line + 1, key.start_mark.column + 1)
            _node_marks(value, path + (key.value,), found)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            found[path + (index,)] = (item.start_mark.line + 1, item.start_mark.column + 1)
            _node_marks(item, path + (index,), found)
    return found


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(documents, st.booleans())
def test_data_and_positions_agree_with_pyyaml(document, flow):
    text = yaml.safe_dump(document, default_flow_style=flow, allow_unicode=True, sort_keys=False)
    data, source = parse_yaml(text, "x.yaml")
    assert data == yaml.safe_load(text)
    for path, (line, column) in _node_marks(yaml.compose(text, Loader=yaml.SafeLoader)).items():
        where = source.locate(path)
        assert (where.line, where.column) == (line, column), path
