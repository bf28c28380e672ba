"""Add-on and chart versions compared as numbers ("v1.10.0-eksbuild.1" is after "v1.9.2")."""

from __future__ import annotations

import re


def version_tuple(text: str) -> tuple[int, ...]:
    """The numbers of a version before any "-" suffix, e.g. (1, 6, 0) for "v1.6.0-eksbuild.1"."""
    return tuple(int(part) for part in re.findall(r"[0-9]+", text.split("-")[0]))
