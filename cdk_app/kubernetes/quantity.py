"""Kubernetes resource quantities ("500m", "16Gi", "1.5", "2e3"): parsed exactly as the API server's
grammar allows (k8s.io/apimachinery/pkg/api/resource), to a Fraction of the base unit (cores, bytes)."""

from __future__ import annotations

import math
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
# No resource of any node is within 30 orders of magnitude of 10**±40 base units, and the grammar's unbounded digits
# and exponent would make the exact value cost time and memory without bound ("1e99999999"); so the order of
# magnitude is read from the text first and anything outside this range is refused before any arithmetic.
MAX_ORDER = 40
MAX_DIGITS = 64
_SUFFIX_ORDER = {suffix: math.floor(math.log10(factor)) for suffix, factor in {**_BINARY, **_DECIMAL}.items()}


class QuantityOutOfRange(ValueError):
    """A well-formed quantity too large, too small or too long for any resource of a node. `tiny`: it is too
    small (a message then says so, not that no node has that much)."""

    def __init__(self, message: str, tiny: bool = False) -> None:
        super().__init__(message)
        self.tiny = tiny


def parse_quantity(text: str) -> Fraction | None:
    """The quantity's value in base units, or None when `text` is not a Kubernetes quantity; QuantityOutOfRange
    when it is one but its order of magnitude is beyond 10**±MAX_ORDER or it has more than MAX_DIGITS digits."""
    match = QUANTITY.fullmatch(text)
    if match is None:
        return None
    suffix = match["suffix"] or ""
    if not match["number"].lstrip("+-").replace(".", "").strip("0"):
        return Fraction(0)  # zero whatever its suffix: "0e99999999" must not compute 10**99999999
    _check_range(text, match["number"], suffix)
    value = Fraction(match["number"])
    if suffix in _BINARY:
        return value * _BINARY[suffix]
    if suffix in _DECIMAL:
        return value * _DECIMAL[suffix]
    if suffix:
        return value * Fraction(10) ** int(suffix[1:])
    return value


def _check_range(text: str, number: str, suffix: str) -> None:
    digits = number.lstrip("+-").replace(".", "")
    if len(digits) > MAX_DIGITS:
        raise QuantityOutOfRange(f"{text!r} has more than {MAX_DIGITS} digits")
    exponent_text = suffix[1:] if suffix[:1] in ("e", "E") and suffix not in _DECIMAL and suffix not in _BINARY else ""
    if len(exponent_text.lstrip("+-")) > 6:
        _out_of_range(text, exponent_text.startswith("-"))
    whole, _, fraction = number.lstrip("+-").partition(".")
    whole = whole.lstrip("0")
    # The position of the first significant digit: 10**(len(whole) - 1) for 12.5, 10**-(zeros + 1) for 0.005.
    order = len(whole) - 1 if whole else -(len(fraction) - len(fraction.lstrip("0")) + 1)
    order += int(exponent_text or 0) + _SUFFIX_ORDER.get(suffix, 0)
    if abs(order) > MAX_ORDER:
        _out_of_range(text, order < 0)


def _out_of_range(text: str, tiny: bool) -> None:
    if tiny:
        raise QuantityOutOfRange(f"{text!r} is less than 10^-{MAX_ORDER}", tiny=True)
    raise QuantityOutOfRange(f"{text!r} is more than 10^{MAX_ORDER}")
