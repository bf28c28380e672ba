"""How far the stack layout's size estimate may be from a real synth."""

from __future__ import annotations

# The byte estimate may exceed the real template by this share plus SLACK bytes (never fall below it).
MARGIN, SLACK = 0.05, 4_000
