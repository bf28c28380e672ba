"""KitConfig's validator, kept between runs in the user's cache folder.

Building it (pydantic's schema generation, and its search of the installed packages for plugins) is most
of what `validate` spends beyond importing pydantic, and `validate` runs after every edit. The built
pydantic-core validator pickles to a few KiB (its schema, with functions and classes by reference), so it
is written to $XDG_CACHE_HOME/hyperpod-kit (default ~/.cache/hyperpod-kit) and read back while the config
modules are unchanged.

A file is keyed by the bytes of every module of cdk_app.config and by the Python, pydantic and
pydantic-core versions, so an edit or an upgrade makes a new one (and removes the old one of the same
checkout); it is written atomically, and one that cannot be read is ignored: the validator is then built
as usual. The one difference to KitConfig.model_validate: pydantic plugins, which only observe
validation, are not looked for while the file is fresh.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
from pathlib import Path

import pydantic
import pydantic_core
from pydantic_core import SchemaValidator

from cdk_app.config import model
from hyperpod_constructs.private import limits

CONFIG_PACKAGE = Path(model.__file__).resolve().parent
# The model's ranges and patterns shared with the constructs: an edit there changes the validator too.
SHARED_SOURCES = (Path(limits.__file__).resolve(),)
_validator: SchemaValidator | None = None


def cache_folder() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hyperpod-kit"


def cache_file(package: Path = CONFIG_PACKAGE, shared: tuple[Path, ...] = SHARED_SOURCES) -> Path:
    """The validator's file for the config modules as they are now: kitconfig-<checkout>-<sources>.pickle."""
    digest = hashlib.sha256(f"{sys.version}\0{pydantic.VERSION}\0{pydantic_core.__version__}".encode())
    for source in [*sorted(package.glob("*.py")), *shared]:
        digest.update(source.name.encode() + b"\0" + source.read_bytes() + b"\0")
    checkout = hashlib.sha256(str(package).encode()).hexdigest()[:12]
    return cache_folder() / f"kitconfig-{checkout}-{digest.hexdigest()[:20]}.pickle"


def kit_config_validator(package: Path = CONFIG_PACKAGE) -> SchemaValidator:
    """KitConfig's validator: read from the cache file when there is a fresh one, else built (and written)."""
    global _validator
    if _validator is None:
        _validator = _read_or_build(cache_file(package))
    return _validator


def _read_or_build(path: Path) -> SchemaValidator:
    try:
        loaded = pickle.loads(path.read_bytes())
        if isinstance(loaded, SchemaValidator):
            return loaded
    except Exception:
        pass
    model.KitConfig.model_rebuild()
    built = model.KitConfig.__pydantic_validator__
    if isinstance(built, SchemaValidator):
        _write(path, built)
    return built  # type: ignore[return-value]


def _write(path: Path, validator: SchemaValidator) -> None:
    """Write atomically (concurrent runs each rename a whole file) and drop the files of earlier sources;
    where the folder cannot be written, there is simply no file."""
    import tempfile

    temporary = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        with os.fdopen(handle, "wb") as out:
            out.write(pickle.dumps(validator))
        os.replace(temporary, path)
        temporary = None
        for old in path.parent.glob(path.name.rsplit("-", 1)[0] + "-*.pickle"):
            if old != path:
                old.unlink(missing_ok=True)
    except (OSError, pickle.PicklingError, TypeError):
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)
