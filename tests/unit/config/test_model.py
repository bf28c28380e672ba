"""Config-model behaviour that mutation testing of cdk_app/config (names, field docs, the README reference,
the float fields) found untested.

Sources of truth: Kubernetes' qualified-name rules (apimachinery: name part at most 63 characters,
alphanumerics with '-', '_', '.', starting and ending alphanumeric; prefix a DNS-1123 subdomain of at most
253), pydantic's own attribute-docstring extraction (what use_attribute_docstrings would give) and pydantic's
strict float validation.
"""

from __future__ import annotations

import pickle
import shutil
import tempfile
from typing import Annotated

import pytest
from pydantic import BaseModel, ConfigDict, Strict, TypeAdapter
from pydantic._internal._docs_extraction import extract_docstrings_from_cls
from pydantic_core import SchemaValidator
from support.paths import SUPPORT

from cdk_app.config import field_docs as field_docs_module
from cdk_app.config import validator_cache
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


# The validator's cache file (cdk_app/config/validator_cache.py). The folder follows the XDG Base Directory
# specification: $XDG_CACHE_HOME, or $HOME/.cache when that is unset or empty.

@pytest.mark.parametrize("xdg", [None, ""])
def test_the_cache_folder_defaults_to_home_dot_cache(tmp_path, monkeypatch, xdg):
    monkeypatch.setenv("HOME", str(tmp_path))
    if xdg is None:
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_CACHE_HOME", xdg)
    assert validator_cache.cache_folder() == tmp_path / ".cache" / "hyperpod-kit"


def test_two_checkouts_of_the_same_sources_have_their_own_files(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    copies = []
    for name in ("one", "two"):
        copies.append(tmp_path / name / "config")
        shutil.copytree(validator_cache.CONFIG_PACKAGE, copies[-1], ignore=shutil.ignore_patterns("__pycache__"))
    first, second = (validator_cache.cache_file(copy) for copy in copies)
    assert first != second and first.name.rsplit("-", 1)[1] == second.name.rsplit("-", 1)[1]


def _built():
    KitConfig.model_rebuild()
    return KitConfig.__pydantic_validator__


def test_the_cache_folder_and_its_parents_are_made(tmp_path):
    path = tmp_path / "a" / "b" / "hyperpod-kit" / "kitconfig-x-y.pickle"
    validator_cache._write(path, _built())
    assert [p.name for p in path.parent.iterdir()] == [path.name]


def test_an_unwritable_cache_folder_means_no_file(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    validator_cache._write(blocker / "hyperpod-kit" / "kitconfig-x-y.pickle", _built())  # no exception
    assert blocker.read_text() == "not a folder"


def test_a_failed_rename_leaves_no_temporary_file(tmp_path, monkeypatch):
    path = tmp_path / "hyperpod-kit" / "kitconfig-x-y.pickle"
    path.mkdir(parents=True)  # a folder where the file should go: the rename fails
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "elsewhere"))
    (tmp_path / "elsewhere").mkdir()
    validator_cache._write(path, _built())
    assert [p.name for p in path.parent.iterdir()] == [path.name] and path.is_dir()


def test_a_folder_named_like_an_old_file_does_not_stop_the_write(tmp_path, monkeypatch):
    path = tmp_path / "hyperpod-kit" / "kitconfig-x-y.pickle"
    (path.parent / "kitconfig-x-old.pickle").mkdir(parents=True)
    scratch = tmp_path / "elsewhere"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    validator_cache._write(path, _built())
    assert isinstance(pickle.loads(path.read_bytes()), SchemaValidator)
    assert list(scratch.iterdir()) == []  # the temporary file was made next to the target, not elsewhere


def test_a_boolean_threads_per_core_fails_as_pydantic_s_own_strict_integer_does():
    # threads_per_core refuses a YAML boolean by hand (Literal[1, 2] would take True as 1); the error must be
    # the one pydantic itself gives a strict integer field for a boolean, type and words.
    from pydantic import ValidationError

    from cdk_app.config.model import InstanceGroup

    with pytest.raises(ValidationError) as strict_int:
        TypeAdapter(Annotated[int, Strict()]).validate_python(True)
    with pytest.raises(ValidationError) as by_hand:
        InstanceGroup.model_validate({"name": "a", "instance_type": "ml.m5.large", "count": 1,
                                      "threads_per_core": True})
    (native,), (ours,) = strict_int.value.errors(), by_hand.value.errors()
    assert (ours["type"], ours["msg"], ours["loc"]) == (native["type"], native["msg"], ("threads_per_core",))


def test_a_chart_at_another_revision_with_its_own_pins_is_pinned(tmp_path):
    # README "Chart pins": at a revision other than the kit's default, content_sha256 and dependencies are
    # required (HPK208, HPK220); given, they are the pins, and neither error is reported.

    from cdk_app.config.loader import load_config
    from cdk_app.validator.report import check_file

    base = (SUPPORT / "adversarial" / "base.yaml").read_text()
    revision = "0" * 40
    pinned = base.replace("  helm_chart:\n", f"  helm_chart:\n    revision: '{revision}'\n    dependencies:\n"
                          f"      nvidia-device-plugin: {{url: https://example.com/n-1.tgz, sha256: '{'c' * 64}'}}\n", 1)
    path = tmp_path / "env.yaml"
    path.write_text(pinned)
    report = check_file(path)
    assert not {"HPK208", "HPK220"} & {f.code for f in report.findings}
    config = load_config(path).config
    assert config.hyperpod.helm_chart.pins()[1]["nvidia-device-plugin"].sha256 == "c" * 64
    unpinned = base.replace("  helm_chart:\n", f"  helm_chart:\n    revision: '{revision}'\n", 1)
    path.write_text(unpinned)
    assert [f.code for f in check_file(path).findings if f.code in ("HPK208", "HPK220")] == ["HPK220"]


def test_the_default_charts_health_agent_tag_is_the_pinned_charts():
    import re
    import tarfile

    from cdk_app.config.model import DEFAULT_HELM_CHART_HEALTH_AGENT_TAG
    helpers = "HyperPodHelmChart/charts/health-monitoring-agent/templates/_helpers.tpl"
    with tarfile.open(SUPPORT / "data" / "hyperpod-chart" / "HyperPodHelmChart-a00b22d.tar.gz") as chart:
        text = chart.extractfile(helpers).read().decode()
    assert re.findall(r'\$imageTag := \.Values\.imageTag \| default "([^"]+)"', text) == [DEFAULT_HELM_CHART_HEALTH_AGENT_TAG]
