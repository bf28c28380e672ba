"""Rewrite README.md's generated tables (finding codes, config reference) from the code.

Run after changing cdk_app/findings.py or the config model; tests/contracts/test_readme.py fails
until the README matches.
"""

from __future__ import annotations

import re
from pathlib import Path

from cdk_app.config.reference import codes_markdown, config_reference_markdown

README = Path(__file__).resolve().parent.parent / "README.md"


def replace_table(text: str, header: str, table: str) -> str:
    """Swap the markdown table that starts with `header` (up to the next blank line) for `table`."""
    pattern = re.compile(re.escape(header) + r"\n(?:.+\n?)*")
    if not pattern.search(text):
        raise SystemExit(f"README.md has no table starting with {header!r}")
    return pattern.sub(lambda _: table + "\n", text, count=1)


def main() -> None:
    text = README.read_text()
    text = replace_table(text, "| code | meaning |", codes_markdown())
    text = replace_table(text, "| key | default | meaning |", config_reference_markdown())
    README.write_text(text)


if __name__ == "__main__":
    main()
