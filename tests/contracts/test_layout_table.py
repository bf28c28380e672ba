"""CONTRIBUTING.md's layout table names every package folder of the kit and of the tests, and nothing gone."""

from __future__ import annotations

import re

from support.paths import ROOT

TABLE = (ROOT / "CONTRIBUTING.md").read_text().split("## Where things live", 1)[1].split("\n## ", 1)[0]
LISTED = set(re.findall(r"^\| `([^`]+)`", TABLE, flags=re.M))


def _folders() -> set[str]:
    found = set()
    for top in ("cdk_app", "tests"):
        for init_or_test in (ROOT / top).rglob("*.py"):
            folder = init_or_test.parent.relative_to(ROOT).as_posix()
            if "__pycache__" not in folder and "__snapshots__" not in folder:
                found.add(folder + "/")
    return found - {"tests/", "cdk_app/"}


def test_every_package_folder_is_in_the_table():
    missing = {folder for folder in _folders()
               if folder not in LISTED and not folder.startswith(("tests/unit/", "tests/support/"))}
    assert missing == set(), f"add to CONTRIBUTING.md: {sorted(missing)}"


def test_every_listed_path_exists():
    gone = {path for path in LISTED if not list(ROOT.glob(path.rstrip("/")))}
    assert gone == set()
