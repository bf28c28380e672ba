"""Config-model behaviour that mutation testing of cdk_app/config (names, field docs, the README reference,
the float fields) found untested (issue 15).

Sources of truth: Kubernetes' qualified-name rules (apimachinery: name part at most 63 characters,
alphanumerics with '-', '_', '.', starting and ending alphanumeric; prefix a DNS-1123 subdomain of at most
253), pydantic's own attribute-docstring extraction (what use_attribute_docstrings would give) and pydantic's
strict float validation.
"""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import BaseModel, ConfigDict, Strict, TypeAdapter
from pydantic._internal._docs_extraction import extract_docstrings_from_cls

from cdk_app.config import field_docs as field_docs_module
from cdk_app.config.field_docs import field_docs, models_under
from cdk_app.config.model import KitConfig, QuotaEntry
from cdk_app.config.names import MAX_LABEL, MAX_SUBDOMAIN, label_value_problem, qualified_name_problem
from cdk_app.config.reference import _rows

CHARS = "letters, digits, '-', '_' and '.', starting and ending with a letter or digit"


@pytest.mark.parametrize("key, problem", [
    ("a" * 63, None), ("example.com/" + "a" * 63, None), ("A_b.c-D", None),
    ("a" * 64, f"the name {'a' * 64!r} must be at most 63 {CHARS}"),
    ("x" * 100, f"the name {'x' * 70!r} must be at most 63 {CHARS}"),
    ("-a", f"the name '-a' must be at most 63 {CHARS}"),
    ("/a", "the prefix before '/' is empty"),
    ("a/", "the name is empty"),
    ("", "the name is empty"),
    ("A.b/x", "the prefix 'A.b' must be a DNS subdomain: lower-case letters, digits, '-' and '.', at most 253 characters"),
    ("a" * 300 + "/x", f"the prefix {'a' * 60!r} must be a DNS subdomain: lower-case letters, digits, '-' and '.', "
                       "at most 253 characters"),
    ("a" * 253 + "/x", None), ("a" * 254 + "/x", "the prefix " + repr("a" * 60) + " must be a DNS subdomain: "
                                               "lower-case letters, digits, '-' and '.', at most 253 characters"),
])
def test_qualified_names_follow_kubernetes(key, problem):
    assert (MAX_LABEL, MAX_SUBDOMAIN) == (63, 253)
    assert qualified_name_problem(key) == problem


@pytest.mark.parametrize("value, ok", [("", True), ("a" * 63, True), ("a" * 64, False), ("-a", False), ("a.b_c", True)])
def test_label_values_follow_kubernetes(value, ok):
    assert label_value_problem(value) == (None if ok else f"at most 63 {CHARS} (or empty)")


def _pydantic_docs(model: type[BaseModel]) -> dict[str, str]:
    docs: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        if issubclass(cls, BaseModel) and cls.__module__.startswith("cdk_app."):
            docs.update(extract_docstrings_from_cls(cls, use_inspect=True))
    return docs


def test_field_docs_are_what_pydantic_s_attribute_docstrings_give():
    field_docs.cache_clear()  # the first use in this process must read the source, not a cached answer
    models = models_under(KitConfig)
    assert {"KitConfig", "Team", "QuotaEntry", "InstanceGroup"} <= set(models)
    for model in models.values():
        assert field_docs(model) == _pydantic_docs(model), model.__name__
    assert field_docs_module._own_docs(QuotaEntry) == extract_docstrings_from_cls(QuotaEntry, use_inspect=True)


class Leaf(BaseModel):
    model_config = ConfigDict(frozen=True)
    size: int = 1


class Tree(BaseModel):
    """A model that holds itself."""

    model_config = ConfigDict(frozen=True)
    children: tuple[Tree, ...] = ()
    leaf: Leaf = Leaf()


class Box(BaseModel):
    """A list of models, one that may be left out, a model with a default and undocumented fields."""

    model_config = ConfigDict(frozen=True)
    children: tuple[Leaf, ...] = ()
    leaves: tuple[Leaf, ...] | None = None
    leaf: Leaf = Leaf()
    name: str


def test_models_under_a_model_that_holds_itself():
    Tree.model_rebuild()
    assert models_under(Tree) == {"Tree": Tree, "Leaf": Leaf}


def test_reference_rows_of_lists_optional_lists_and_undocumented_fields():
    rows = _rows(Box, "")
    assert rows[:2] == ["| `children` | `()` |  |", "| `children[].size` | `1` |  |"]
    assert "| `leaves` | `None` |  |" in rows and "| `leaves[].size` | `1` |  |" in rows
    assert "| `leaf` | see below |  |" in rows and "| `leaf.size` | `1` |  |" in rows
    assert "| `name` | required |  |" in rows


def test_a_whole_number_in_a_float_field_is_a_float():
    strict_float = TypeAdapter(Annotated[float, Strict()])
    assert type(strict_float.validate_python(2)) is float
    entry = QuotaEntry.model_validate({"instance_type": "ml.m5.2xlarge", "vcpu": 2})
    assert type(entry.vcpu) is float and entry.vcpu == 2.0
