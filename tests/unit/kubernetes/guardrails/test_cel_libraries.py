"""The quantity library and lists' sum() as the in-process admission evaluates them: against Kubernetes' own
cases (k8s.io/apiserver v0.33.13 pkg/cel/library/quantity_test.go, read from the Go module cache that
`make k8s-build` fills) and apimachinery's documented parsing (pkg/api/resource: rounding up to nanos, the cap of
binary quantities, which representations count as integers). tests/realk8s/test_cel_quantity.py holds the
same expressions to the real API server's answers."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import celpy
import pytest
from support.realk8s import go_binary

from cdk_app.kubernetes.guardrails.admission import evaluate
from cdk_app.kubernetes.guardrails.cel_libraries import QuantityError, QuantityValue, parse


def value(expression: str):
    return evaluate(expression, {})


def test_a_quantity_compares_by_value_whatever_its_suffix():
    assert value("quantity('200M') == quantity('0.2G')")
    assert value("quantity('2') == quantity('2000m')")
    assert value("quantity('50M').compareTo(quantity('50Mi'))") == -1
    assert value("quantity('8e9').isLessThan(quantity('8Gi'))")
    assert value("quantity('9e9').isGreaterThan(quantity('8Gi'))")


@pytest.mark.parametrize(("text", "integer"), [("50k", True), ("2000m", False), ("1.5Gi", False), ("12Mi", True),
                                                ("0", True), ("1e3", True), ("1e-3", False)])
def test_only_an_int64_amount_of_scale_zero_or_more_is_an_integer(text, integer):
    """apimachinery keeps "2000m" as 2000 x 10^-3 and "1.5Gi" as a decimal: AsInt64 refuses both."""
    assert bool(value(f"quantity('{text}').isInteger()")) is integer


def test_values_below_a_nano_are_rounded_up_and_binary_ones_capped():
    assert parse("1e-10").exact == parse("1n").exact
    assert parse("-1e-10").exact == -parse("1n").exact  # away from zero
    assert parse("99999999999Ei").exact == 2**63 - 1
    assert parse("99999999999E").exact == 99999999999 * 10**18  # decimal quantities are not capped


# Kubernetes' invalid list (apimachinery quantity_test.go TestQuantityParse) and the library's own examples.
@pytest.mark.parametrize("text", ["1.1.M", "1+1.0M", "0.1mi", "0.1am", "aoeu", ".5i", "1i", "-3.01i", "-3.01e-",
                                  " 1", "1 ", "", "1,5", "200K", "10Mm", "10Mo", "1e", "1e+", "--1"])
def test_text_that_is_no_quantity_is_an_error(text):
    with pytest.raises(QuantityError):
        parse(text)
    assert value(f"isQuantity('{text}')") == celpy.celtypes.BoolType(False)
    assert isinstance(value(f"quantity('{text}')"), celpy.CELEvalError)


def test_a_lone_point_is_zero_as_apimachinery_parses_it():
    """TestParseQuantityString: "." is numerator 0 with an empty denominator."""
    assert parse(".").exact == 0 and parse("-.").exact == 0


def test_an_int_is_no_quantity_and_no_string_is_one():
    assert isinstance(value("quantity(4)"), celpy.CELEvalError)
    assert isinstance(value("isQuantity(quantity('4'))"), celpy.CELEvalError)
    assert isinstance(value("quantity('4').isGreaterThan(4)"), celpy.CELEvalError)


def test_sum_adds_a_lists_numbers_in_order():
    assert value("[1.0, 2.5].sum()") == 3.5
    assert value("[1, 2, 3].sum()") == 6
    assert value("[0.1, 1.1, 0.35, 0.45].sum()") == 0.1 + 1.1 + 0.35 + 0.45
    assert value("[].sum()") == 0
    assert isinstance(value("[1, 2.0].sum()"), celpy.CELEvalError)


def test_a_quantity_value_is_no_string_to_equality():
    assert isinstance(value("quantity('1')"), QuantityValue)
    assert not value("quantity('1') == quantity('2')")
    assert value("quantity('1') != quantity('2')")


# Kubernetes' own cases: {name, expr, expectValue | expectedRuntimeErr | expectedCompileErr}.
_CASE = re.compile(r"\{\s*name:\s*\"(?P<name>[^\"]+)\",\s*expr:\s*`(?P<expr>[^`]+)`,\s*(?P<rest>.*?)\n\t\t\},", re.S)
_EXPECTED = {"trueVal": True, "falseVal": False}


def _go_cases() -> list[tuple[str, str, str]]:
    modules = subprocess.run([go_binary(), "env", "GOMODCACHE"], capture_output=True, text=True, check=True).stdout.strip()
    source = Path(modules) / "k8s.io" / "apiserver@v0.33.13" / "pkg" / "cel" / "library" / "quantity_test.go"
    assert source.exists(), f"{source}: run `make k8s-build`"
    text = source.read_text()
    body = text[text.index("func TestQuantity("):]
    return [(m["name"], m["expr"], m["rest"]) for m in _CASE.finditer(body)]


@pytest.mark.slow
def test_every_case_of_kubernetes_quantity_tests_gets_kubernetes_answer():
    cases = _go_cases()
    assert len(cases) >= 30, cases
    checked = 0
    for name, expression, rest in cases:
        result = value(expression)
        if "expectedCompileErr" in rest:
            # A type-checking error there; cel-python does not type-check, so it must at least fail at run time.
            assert isinstance(result, celpy.CELEvalError), (name, result)
        elif "expectedRuntimeErr" in rest:
            pattern = re.search(r"expectedRuntimeErr:\s*[\"`](.+?)[\"`]", rest)[1]
            assert isinstance(result, celpy.CELEvalError) and re.search(pattern, str(result.args[0])), (name, result)
        else:
            expected = re.search(r"expectValue:\s*(.+?),?\s*$", rest.strip())[1].rstrip(",")
            if expected in _EXPECTED:
                assert bool(result) is _EXPECTED[expected] and not isinstance(result, celpy.CELEvalError), (name, result)
            elif match := re.fullmatch(r"types\.(Int|Double)\((-?[0-9.]+)\)", expected):
                assert float(result) == float(match[2]), (name, result)
            else:  # apiservercel.Quantity{Quantity: &twelveMi}: the parsed quantity itself
                assert "twelveMi" in expected and isinstance(result, QuantityValue), (name, result)
                assert result.quantity.exact == 12 * 2**20
        checked += 1
    assert checked == len(cases)
