"""Plain-text tables for the CLI: columns padded to their widest cell."""

from __future__ import annotations

from collections.abc import Sequence


def aligned(rows: Sequence[Sequence[object]], indent: str = "") -> list[str]:
    """One line per row (the header is the first row), cells left-aligned, two spaces apart."""
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    return [indent + "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
