"""The cached KitConfig validator (cdk_app/config/validator_cache.py) validates exactly as pydantic's own
KitConfig.model_validate does, and a stale or damaged cache file is never used."""

from __future__ import annotations

import pickle
import shutil

import pytest
import yaml
from pydantic import ValidationError
from support.paths import ROOT

from cdk_app.config import validator_cache
from cdk_app.config.model import KitConfig


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(validator_cache, "_validator", None)
    return tmp_path / "hyperpod-kit"


def _outcome(validate, data):
    try:
        return "ok", validate(data)
    except ValidationError as err:
        return "invalid", err.errors(include_url=False), err.title


def _inputs():
    prod = yaml.safe_load((ROOT / "config" / "prod.yaml").read_text())
    broken = {**prod, "region": "moon-1", "teams": [{"name": "a", "quota": [{"instance_type": 3, "vcpu": -1}]}],
              "unknown": True}
    return [prod, broken, {}, {"hyperpod": []}]


def test_read_validator_agrees_with_pydantic(cache_home):
    built = validator_cache.kit_config_validator()
    written = list(cache_home.glob("kitconfig-*.pickle"))
    assert written == [validator_cache.cache_file()]
    read = validator_cache._read_or_build(written[0])
    assert read is not built
    for data in _inputs():
        expected = _outcome(KitConfig.model_validate, data)
        assert _outcome(read.validate_python, data) == expected
        assert _outcome(built.validate_python, data) == expected
    assert type(read.validate_python(_inputs()[0])) is KitConfig


def test_damaged_file_is_rebuilt(cache_home):
    path = validator_cache.cache_file()
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a pickle")
    validator = validator_cache.kit_config_validator()
    assert _outcome(validator.validate_python, _inputs()[1]) == _outcome(KitConfig.model_validate, _inputs()[1])
    assert pickle.loads(path.read_bytes()) is not None  # replaced by a good one


def test_key_follows_the_config_sources(tmp_path, cache_home):
    copy = tmp_path / "config"
    shutil.copytree(validator_cache.CONFIG_PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    first = validator_cache.cache_file(copy)
    assert validator_cache.cache_file(copy) == first
    model = copy / "model.py"
    model.write_text(model.read_text().replace("MAX_QUOTA_AMOUNT = 10_000_000", "MAX_QUOTA_AMOUNT = 10_000_001"))
    changed = validator_cache.cache_file(copy)
    assert changed != first and changed.name.rsplit("-", 1)[0] == first.name.rsplit("-", 1)[0]


def test_key_follows_the_limits_the_model_shares_with_the_constructs(tmp_path, cache_home):
    """The model takes ranges such as the instance count's 0-6758 from the constructs' limits module: a
    validator cached before an edit there would keep the old range."""
    limits = tmp_path / "limits.py"
    shutil.copy(validator_cache.SHARED_SOURCES[0], limits)
    first = validator_cache.cache_file(shared=(limits,))
    assert "MAX_INSTANCE_COUNT = 6758" in limits.read_text()
    limits.write_text(limits.read_text().replace("MAX_INSTANCE_COUNT = 6758", "MAX_INSTANCE_COUNT = 6759"))
    assert validator_cache.cache_file(shared=(limits,)) != first


def test_new_file_replaces_the_checkouts_old_one(cache_home):
    path = validator_cache.cache_file()
    old = path.with_name(path.name.rsplit("-", 1)[0] + "-00000000000000000000.pickle")
    other_checkout = path.with_name("kitconfig-000000000000-00000000000000000000.pickle")
    path.parent.mkdir(parents=True)
    old.write_bytes(b"old")
    other_checkout.write_bytes(b"other")
    validator_cache.kit_config_validator()
    assert sorted(p.name for p in cache_home.iterdir()) == sorted([path.name, other_checkout.name])


def test_the_file_is_written_without_the_system_temporary_folder(cache_home, tmp_path, monkeypatch):
    # The temporary file is made next to the cache file: rename(2) is atomic only within one file system
    # (EXDEV across them), and the system's temporary folder may be another one, or unusable as here.
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-such-folder"))
    validator_cache.kit_config_validator()
    assert [p.name for p in cache_home.iterdir()] == [validator_cache.cache_file().name]
    assert isinstance(pickle.loads(validator_cache.cache_file().read_bytes()), type(validator_cache._validator))
