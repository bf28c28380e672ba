"""The Kubernetes CEL libraries the guardrails use that cel-python lacks, for the in-process admission
(admission.py): the quantity library (k8s.io/apiserver pkg/cel/library/quantity.go) and the lists library's
sum() (lists.go), at the kit's Kubernetes version (v0.33.13).

A quantity is held as apimachinery's resource.Quantity holds it (k8s.io/apimachinery pkg/api/resource,
quantity.go ParseQuantity, amount.go): an int64 amount (value x 10^scale) when the text fits one, else an
arbitrary-precision decimal rounded up to nanos (and, for binary suffixes, capped at 2^63 - 1). The
representation matters: isInteger() is true only for an int64 amount of scale >= 0 ("2000m" and "1.5Gi" are
not integers there), and asApproximateFloat() multiplies the unscaled value by a power of ten as Go does.
Comparisons are exact. Not modelled: type checking (cel-python takes `sign` as a member call too, where
Kubernetes has only sign(q)), and text past MAX_EXPONENT or MAX_DIGITS."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import celpy
from celpy import celtypes

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_DIGITS = "0123456789"
# Characters apimachinery's parser reads as part of a suffix before an exponent's sign and digits.
_SUFFIX_CHARS = "eEinumkKMGTP"
# (base, exponent, binary) of each suffix the lookup tables know (suffix.go newSuffixer, fastLookup).
_SUFFIXES = {"": (10, 0, False), "n": (10, -9, False), "u": (10, -6, False), "m": (10, -3, False),
             "k": (10, 3, False), "M": (10, 6, False), "G": (10, 9, False), "T": (10, 12, False),
             "P": (10, 15, False), "E": (10, 18, False),
             "Ki": (2, 10, True), "Mi": (2, 20, True), "Gi": (2, 30, True), "Ti": (2, 40, True),
             "Pi": (2, 50, True), "Ei": (2, 60, True)}
_MAX_INT64_FACTORS = 18  # math.go maxInt64Factors
_NANO = -9
# Bounds of the in-process model, far beyond any resource: apimachinery computes with arbitrary precision (10^(2^31)
# takes it gigabytes), cel-python would take as long; text past them is an error here, not a value.
MAX_EXPONENT = 10_000
MAX_DIGITS = 1_000
_FORMAT_ERROR = ("quantities must match the regular expression "
                 "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


class QuantityError(ValueError):
    """What resource.ParseQuantity returns for text that is no quantity (its error texts)."""


def _fits(value: int) -> bool:
    return INT64_MIN <= value <= INT64_MAX


def _wrap_int32(value: int) -> int:
    return (value + 2**31) % 2**32 - 2**31


def _wrap_int64(value: int) -> int:
    return (value + 2**63) % 2**64 - 2**63


@dataclass(frozen=True)
class Quantity:
    """A resource.Quantity: `amount` (value, scale) for an int64 amount, else `dec` (unscaled, scale) for an
    inf.Dec whose value is unscaled x 10^-scale."""

    amount: tuple[int, int] | None = None
    dec: tuple[int, int] | None = None

    @property
    def exact(self) -> Fraction:
        if self.amount is not None:
            value, scale = self.amount
            return Fraction(value) * Fraction(10) ** scale
        assert self.dec is not None
        unscaled, scale = self.dec
        return Fraction(unscaled) / Fraction(10) ** scale

    def as_dec(self) -> tuple[int, int]:
        if self.dec is not None:
            return self.dec
        assert self.amount is not None
        value, scale = self.amount
        return value, -scale

    def as_int64(self) -> int | None:
        """Quantity.AsInt64: only an int64 amount of scale >= 0 whose value times 10^scale fits."""
        if self.amount is None:
            return None
        value, scale = self.amount
        if scale < 0:
            return None
        result = value * 10**scale
        return result if _fits(result) else None

    def approximate_float(self) -> float:
        """Quantity.AsApproximateFloat64: the unscaled value as a float64 times math.Pow10 of the exponent."""
        base_value, exponent = (self.amount if self.amount is not None
                                else (self.as_dec()[0], -self.as_dec()[1]))
        try:
            base = float(base_value)
        except OverflowError:
            base = float("inf") if base_value > 0 else float("-inf")
        return base if exponent == 0 else base * _pow10(exponent)

    def plus(self, other: Quantity) -> Quantity:
        """Quantity.Add: int64 amounts stay one unless apimachinery's int64 addition overflows; else decimals."""
        if self.amount is not None and other.amount is not None:
            added = _amount_add(self.amount, other.amount)
            if added is not None:
                return Quantity(amount=added)
        return _dec_sum(self.as_dec(), other.as_dec())

    def minus(self, other: Quantity) -> Quantity:
        """Quantity.Sub: int64Amount.Sub adds the negated value (Go's negation of -2^63 wraps)."""
        if self.amount is not None and other.amount is not None:
            value, scale = other.amount
            added = _amount_add(self.amount, (_wrap_int64(-value), scale))
            if added is not None:
                return Quantity(amount=added)
        unscaled, scale = other.as_dec()
        return _dec_sum(self.as_dec(), (-unscaled, scale))


def _dec_sum(x: tuple[int, int], y: tuple[int, int]) -> Quantity:
    """inf.Dec.Add: exact, at the larger scale."""
    (a, sa), (b, sb) = x, y
    scale = max(sa, sb)
    return Quantity(dec=(a * 10 ** (scale - sa) + b * 10 ** (scale - sb), scale))


def _amount_add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int] | None:
    """int64Amount.Add: None where apimachinery reports overflow."""
    (av, ascale), (bv, bscale) = a, b
    if bv == 0:
        return a
    if av == 0:
        return b
    if ascale == bscale:
        total, scale = av + bv, ascale
    elif ascale > bscale:
        scaled = av * 10 ** (ascale - bscale)
        if not _fits(scaled):
            return None
        total, scale = scaled + bv, bscale
    else:
        scaled = bv * 10 ** (bscale - ascale)
        if not _fits(scaled):
            return None
        total, scale = av + scaled, ascale
    return (total, scale) if _fits(total) else None


# math.Pow10's tables: 10^n for n < 32 and 10^(32k) for k < 10, as float64.
_POW10_TAB = [float(10**i) for i in range(32)]
_POW10_POS32 = [float(10 ** (32 * k)) for k in range(10)]


def _pow10(n: int) -> float:
    if 0 <= n <= 308:
        return _POW10_POS32[n // 32] * _POW10_TAB[n % 32]
    if -323 <= n < 0:
        return 1 / (_POW10_POS32[-n // 32] * _POW10_TAB[-n % 32])
    return 0.0 if n < 0 else float("inf")


def _split(text: str) -> tuple[bool, str, str, str, str]:
    """parseQuantityString: (positive, value, numerator, denominator, suffix)."""
    positive, pos, end = True, 0, len(text)
    if text[:1] in ("-", "+"):
        positive = text[0] != "-"
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "0", "", ""
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num = text[start:pos] or "0"
    if pos >= end:
        return positive, text, num, "", ""
    denom = ""
    if text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
        if pos >= end:
            return positive, text, num, denom, ""
    value, suffix_start = text[:pos], pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(_FORMAT_ERROR)
    return positive, value, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, bool]:
    if suffix in _SUFFIXES:
        return _SUFFIXES[suffix]
    if len(suffix) > 1 and suffix[0] in "eE":
        exponent = suffix[1:]
        digits = exponent.lstrip("+-")
        if len(exponent) - len(digits) <= 1 and digits.isdigit() and digits.isascii():
            parsed = int(exponent)
            if _fits(parsed):
                return 10, _wrap_int32(parsed), False  # Go's int32(parsed) wraps
    raise QuantityError("unable to parse quantity's suffix")


def _parse_decimal(value: str) -> tuple[int, int]:
    """inf.Dec.SetString: (unscaled, scale) of [+-]digits[.digits]."""
    sign = -1 if value.startswith("-") else 1
    body = value[1:] if value[:1] in "+-" else value
    whole, dot, fraction = body.partition(".")
    digits = whole + fraction
    if not digits or not digits.isdigit() or not digits.isascii():
        raise QuantityError("unable to parse numeric part of quantity")
    return sign * int(digits), len(fraction) if dot else 0


def parse(text: str) -> Quantity:
    """resource.ParseQuantity, QuantityError where it fails."""
    if not text:
        raise QuantityError(_FORMAT_ERROR)
    if text == "0":
        return Quantity(amount=(0, 0))
    positive, value, num, denom, suffix = _split(text)
    base, exponent, binary = _interpret(suffix)
    if abs(exponent) > MAX_EXPONENT or len(num) + len(denom) > MAX_DIGITS:
        raise QuantityError(f"{text!r} is beyond what the in-process model computes (10^+-{MAX_EXPONENT}, "
                            f"{MAX_DIGITS} digits)")
    if not binary:
        scale, precision, mantissa = exponent, _MAX_INT64_FACTORS - len(num + denom), 1
    elif exponent >= 0 and not denom:
        scale, mantissa = 0, 1 << exponent
        # Go: int32(float32(exponent)*3/10)
        precision = 15 - len(num) - int(exponent * 3 / 10) - 1
    else:
        scale, precision, mantissa = 0, -1, 1
    if precision >= 0:
        scale -= len(denom)
        if scale >= _NANO:
            result = int(num + denom) * mantissa
            if _fits(result):
                return Quantity(amount=(result if positive else -result, scale))
    unscaled, dec_scale = _parse_decimal(value)
    if base == 10:
        dec_scale -= exponent
    else:
        unscaled *= 2**exponent
    negative = unscaled < 0
    unscaled = abs(unscaled)
    if unscaled != 0:
        # Round(amount, 9, RoundUp): to nine decimals, away from zero; the result has scale 9.
        if dec_scale > 9:
            quotient, remainder = divmod(unscaled, 10 ** (dec_scale - 9))
            unscaled = quotient + (1 if remainder else 0)
        else:
            unscaled *= 10 ** (9 - dec_scale)
        dec_scale = 9
    if binary and Fraction(unscaled, 10**dec_scale) > INT64_MAX:
        unscaled, dec_scale = INT64_MAX, 0
    return Quantity(dec=(-unscaled if negative else unscaled, dec_scale))


class QuantityValue(celtypes.StringType):
    """A quantity as a CEL value: cel-python's function calls pass it along unchanged."""

    quantity: Quantity

    def __new__(cls, quantity: Quantity) -> QuantityValue:
        made = super().__new__(cls, "quantity")
        made.quantity = quantity
        return made

    def __eq__(self, other: object) -> bool:
        if isinstance(other, QuantityValue):
            return self.quantity.exact == other.quantity.exact
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        if isinstance(other, QuantityValue):
            return self.quantity.exact != other.quantity.exact
        return NotImplemented

    __hash__ = celtypes.StringType.__hash__

    def __repr__(self) -> str:
        return f"QuantityValue({self.quantity!r})"


def _no_overload(name: str, *args: Any) -> celpy.CELEvalError:
    return celpy.CELEvalError(f"no such overload: {name}{tuple(type(a).__name__ for a in args)}", TypeError, None)


def _quantity_of(name: str, value: Any) -> Quantity:
    if not isinstance(value, QuantityValue):
        raise _no_overload(name, value)
    return value.quantity


def _to_quantity(text: Any) -> Any:
    if isinstance(text, QuantityValue) or not isinstance(text, celtypes.StringType):
        return _no_overload("quantity", text)
    try:
        return QuantityValue(parse(str(text)))
    except QuantityError as err:
        return celpy.CELEvalError(str(err), ValueError, None)


def _is_quantity(text: Any) -> Any:
    if isinstance(text, QuantityValue) or not isinstance(text, celtypes.StringType):
        return _no_overload("isQuantity", text)
    try:
        parse(str(text))
    except QuantityError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _unary(name: str, result: Callable[[Quantity], Any]) -> Callable[[Any], Any]:
    def call(value: Any) -> Any:
        try:
            return result(_quantity_of(name, value))
        except celpy.CELEvalError as err:
            return err
    return call


def _binary(name: str, result: Callable[[Quantity, Quantity], Any]) -> Callable[[Any, Any], Any]:
    def call(value: Any, other: Any) -> Any:
        try:
            if name in ("add", "sub") and isinstance(other, celtypes.IntType) and not isinstance(other, celtypes.BoolType):
                operand = Quantity(amount=(int(other), 0))  # resource.NewQuantity(n, DecimalExponent)
            else:
                operand = _quantity_of(name, other)
            return result(_quantity_of(name, value), operand)
        except celpy.CELEvalError as err:
            return err
    return call


def _as_integer(quantity: Quantity) -> Any:
    value = quantity.as_int64()
    if value is None:
        return celpy.CELEvalError("cannot convert value to integer", ValueError, None)
    return celtypes.IntType(value)


def _compare(a: Quantity, b: Quantity) -> int:
    return (a.exact > b.exact) - (a.exact < b.exact)


def _sign(quantity: Quantity) -> celtypes.IntType:
    return celtypes.IntType(_compare(quantity, Quantity(amount=(0, 0))))


def _sum(values: Any) -> Any:
    """lists.sum(): the elements added in order; 0 for an empty list (its element type is unknown here)."""
    if not isinstance(values, celtypes.ListType):
        return _no_overload("sum", values)
    if not values:
        return celtypes.IntType(0)
    total = values[0]
    for value in values[1:]:
        if type(value) is not type(total):
            return _no_overload("sum", total, value)
        total = type(total)(total + value)
    return total


# Function name -> implementation, as celpy's Environment.program takes them (a member call x.f(y) is f(x, y)).
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "quantity": _to_quantity,
    "isQuantity": _is_quantity,
    "isInteger": _unary("isInteger", lambda q: celtypes.BoolType(q.as_int64() is not None)),
    "asInteger": _unary("asInteger", _as_integer),
    "asApproximateFloat": _unary("asApproximateFloat", lambda q: celtypes.DoubleType(q.approximate_float())),
    "sign": _unary("sign", _sign),
    "isGreaterThan": _binary("isGreaterThan", lambda a, b: celtypes.BoolType(_compare(a, b) == 1)),
    "isLessThan": _binary("isLessThan", lambda a, b: celtypes.BoolType(_compare(a, b) == -1)),
    "compareTo": _binary("compareTo", lambda a, b: celtypes.IntType(_compare(a, b))),
    "add": _binary("add", lambda a, b: QuantityValue(a.plus(b))),
    "sub": _binary("sub", lambda a, b: QuantityValue(a.minus(b))),
    "sum": _sum,
}
