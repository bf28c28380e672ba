"""Kubernetes resource quantities ("500m", "16Gi", "1.5", "2e3"): parsed exactly as the API server's
grammar allows (k8s.io/apimachinery/pkg/api/resource), to a Fraction of the base unit (cores, bytes)."""

from __future__ import annotations

import re
from fractions import Fraction

# <number><suffix>: suffix a binary SI (Ki..Ei), decimal SI (n, u, m, "", k, M, G, T, P, E) or a decimal
# exponent (e3, E-2). Signs are allowed by the grammar; requests here must be positive anyway.
QUANTITY = re.compile(r"(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
                      r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?")
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "k": 10**3, "M": 10**6,
            "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
GIB = 2**30


def parse_quantity(text: str) -> Fraction | None:
    """The quantity's value in base units, or None when `text` is not a Kubernetes quantity."""
    match = QUANTITY.fullmatch(text)
    if match is None:
        return None
    value = Fraction(match["number"])
    suffix = match["suffix"] or ""
    if suffix in _BINARY:
        return value * _BINARY[suffix]
    if suffix in _DECIMAL:
        return value * _DECIMAL[suffix]
    if suffix:
        return value * Fraction(10) ** int(suffix[1:])
    return value
