"""Validate a config text and read its findings; cfn-lint's region data for the rules that use it."""

from __future__ import annotations

import json
from pathlib import Path

import cfnlint

from cdk_app.validator.report import check_file
from support.paths import SUPPORT

BASE = (SUPPORT / "adversarial" / "base.yaml").read_text()


def run(write_config, *edits: tuple[str, str]):
    text = BASE
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return check_file(write_config(text))


# --- HPK310-HPK312: governance resource types against cfn-lint's region data ----------------------------------
PROVIDERS = Path(cfnlint.__file__).parent / "data" / "schemas" / "providers"


def offered_in(region: str) -> set[str]:
    return set(json.loads((PROVIDERS / f"{region}.json").read_text()))
