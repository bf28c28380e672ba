"""Numbers as the admin wrote them: a YAML float keeps its text so that sums are exact decimals.

`vcpu: 1.1` and `vcpu: 14.9` are 1.1 and 14.9 exactly, not the nearest binary fractions, so a quota that
adds up to the capacity on paper adds up to it here too.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from fractions import Fraction


MAX_EXPONENT = 330


class ScalarFloat(float):
    """A float read from YAML, with the text it was written as."""

    text: str

    def __new__(cls, value: float, text: str) -> ScalarFloat:
        number = super().__new__(cls, value)
        number.text = text
        return number

    def __getnewargs__(self) -> tuple[float, str]:  # copy and pickle keep the text
        return float(self), self.text


def exact(value: float | int) -> Fraction:
    """The exact decimal value: from the YAML text when there is one, else the float's shortest repr."""
    if isinstance(value, int):
        return Fraction(value)
    text = getattr(value, "text", None)
    for candidate in (text, repr(float(value))):
        if candidate is None:
            continue
        try:
            number = Decimal(candidate.strip())
        except InvalidOperation:  # YAML 1.1 forms Decimal does not read (1:30.5 sexagesimal)
            continue
        # Past a double's range the float is 0 or infinite anyway; an exponent like 1e-999999999 would
        # otherwise build a billion-digit denominator.
        if number.is_finite() and (number.is_zero() or abs(number.adjusted()) <= MAX_EXPONENT):
            return Fraction(number)
    raise ValueError(f"{value!r} is not a finite number")
