"""Plain-text tables for the CLI: columns padded to their widest cell."""

from __future__ import annotations

from collections.abc import Sequence


def printable(text: str) -> str:
    """`text` for a terminal: characters that are not printable (NUL, newline, ESC, ...) as Python escapes, so
    a name cannot hide text, move the cursor or split a line a CI problem matcher reads."""
    return text if text.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def aligned(rows: Sequence[Sequence[object]], indent: str = "") -> list[str]:
    """One line per row (the header is the first row), cells left-aligned, two spaces apart."""
    rows = [[printable(str(c)) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [indent + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
