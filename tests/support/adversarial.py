"""The adversarial config cases (support/adversarial/cases.yaml) and the text of each."""

from __future__ import annotations

import yaml

from support.paths import SUPPORT

HERE = SUPPORT / "adversarial"


BASE = (HERE / "base.yaml").read_text()


CASES = yaml.safe_load((HERE / "cases.yaml").read_text())


def case_text(case: dict) -> str:
    if "text" in case:
        return case["text"]
    text = BASE
    for old, new in case["edit"]:
        assert old in text, f"{case['id']}: edit target not in the base: {old!r}"
        text = text.replace(old, new, 1)
    return text
