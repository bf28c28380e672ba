"""The one reading of a whole number that every numeric option of `job` and `batch-job` shares: ASCII digits
with an optional sign and nothing around them, as a Kubernetes quantity's number is written."""

from __future__ import annotations

import click
import pytest

from cdk_app.cli.options import WHOLE_NUMBER, efa_option


@pytest.mark.parametrize("text, value", [("0", 0), ("7", 7), ("-1", -1), ("+3", 3), ("007", 7),
                                         ("9" * 18, int("9" * 18))])
def test_whole_numbers_read_as_int_reads_them(text, value):
    assert WHOLE_NUMBER.convert(text, None, None) == value
    assert efa_option(None, None, text) == value


@pytest.mark.parametrize("text", [" 1", "1 ", "\t1", "1\n", "1_000", "\u0661", "\uff11", "1.0", "1e3", "0x10", "",
                                  "--1", "+-1"])
def test_anything_else_is_a_usage_error_naming_the_text(text):
    """int() takes ' 1', '1_000', '١' and '１'; a quantity (--cpu) takes none of them, so no option does."""
    with pytest.raises(click.BadParameter, match="not a whole number") as err:
        WHOLE_NUMBER.convert(text, None, None)
    assert repr(text) in str(err.value)
    with pytest.raises(click.BadParameter, match="neither a whole number nor 'all'"):
        efa_option(None, None, text)


@pytest.mark.parametrize("text,size", [("9" * 19, "is a whole number, but"), ("-" + "9" * 19, "is negative and"),
                                       ("+" + "9" * 40, "is a whole number, but")])
def test_more_than_18_digits_is_refused_as_too_many_not_as_malformed(text, size):
    """Past any count an option holds (and int() stays cheap): said as such, for --efa too."""
    expected = f"{text!r} {size} has more than 18 digits: no cluster has anything near that many"
    with pytest.raises(click.BadParameter) as err:
        WHOLE_NUMBER.convert(text, None, None)
    assert expected in str(err.value)
    with pytest.raises(click.BadParameter) as err:
        efa_option(None, None, text)
    assert expected in str(err.value)


def test_efa_all_is_the_one_word_efa_takes():
    assert efa_option(None, None, "all") == "all"
    for word in ("ALL", " all", "all "):
        with pytest.raises(click.BadParameter):
            efa_option(None, None, word)
