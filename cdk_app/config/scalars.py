"""Numbers as the admin wrote them: a YAML float keeps its text so that sums are exact decimals.

`vcpu: 1.1` and `vcpu: 14.9` are 1.1 and 14.9 exactly, not the nearest binary fractions, so a quota that
adds up to the capacity on paper adds up to it here too.
"""

from __future__ import annotations

import re
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


class ScalarInt(int):
    """An integer YAML 1.1 reads from a form YAML 1.2 reads otherwise (`2:24` base 60, `020` octal, `0b10`,
    `1_000`), with the text it was written as, so the loader can refuse the ambiguity instead of a silent 144."""

    text: str

    def __new__(cls, value: int, text: str) -> ScalarInt:
        number = super().__new__(cls, value)
        number.text = text
        return number

    def __getnewargs__(self) -> tuple[int, str]:
        return int(self), self.text


# YAML 1.2's core schema (what editors with config/schema.json and JSON read): its integers and floats.
_YAML12_INT = re.compile(r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+")
_YAML12_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)")


def yaml12_number(text: str) -> int | Decimal | None:
    """The number YAML 1.2 reads `text` as, or None when it reads text."""
    if _YAML12_INT.fullmatch(text):
        base = {"0o": 8, "0x": 16}.get(text[:2], 10)
        # Decimal: past Python's int-string limit (4,300 digits) int() would refuse a decimal text
        return int(Decimal(text)) if base == 10 else int(text[2:], base)
    if _YAML12_FLOAT.fullmatch(text):
        return Decimal(text.lower().replace(".inf", "inf").replace(".nan", "nan"))
    return None


# No config value comes near 40 digits; past them a number is shown in short scientific form, so a hint about
# `count: 1e99999999` does not write out 10**99999999 (100 MB of zeros; int-to-text past 4,300 digits is refused).
MAX_PLAIN_DIGITS = 40


def plain_digits(number: int | float | Decimal) -> str:
    """A number as plain digits both YAML versions read alike: 144, 0.5, 1000 (not 1E+3); one beyond
    MAX_PLAIN_DIGITS digits either way in short scientific form (9.99E+99999999)."""
    decimal = Decimal(number) if isinstance(number, int) else (
        number if isinstance(number, Decimal) else Decimal(repr(float(number))))
    if decimal.is_finite() and decimal and abs(decimal.adjusted()) > MAX_PLAIN_DIGITS:
        return format(decimal, ".3E")
    if isinstance(number, int):
        return str(int(number))
    text = format(decimal, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


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
