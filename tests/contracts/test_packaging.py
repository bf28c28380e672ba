"""A wheel of the kit holds every package: pyproject.toml lists each folder with an __init__.py (an editable
install would hide a missing one; an installed kit would fail to import it)."""

from __future__ import annotations

import tomllib

from support.paths import ROOT

SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def _import_name(folder: str) -> str:
    for name, path in SETUPTOOLS["package-dir"].items():
        if folder == path or folder.startswith(path + "/"):
            return ".".join([name, *folder[len(path):].strip("/").split("/")]).rstrip(".")
    raise AssertionError(f"{folder} is under no package-dir")


def test_every_package_folder_is_listed():
    folders = {init.parent.relative_to(ROOT).as_posix() for top in ("cdk_app", "constructs")
               for init in (ROOT / top).rglob("__init__.py")}
    packages = {_import_name(folder) for folder in folders}
    # constructs/ itself has no __init__.py (it would shadow the PyPI package `constructs`) but is a package.
    assert packages | {"hyperpod_constructs"} == set(SETUPTOOLS["packages"])
