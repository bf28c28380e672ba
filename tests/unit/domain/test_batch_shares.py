"""Batch share arithmetic: weight factors for a split, read against botocore's batch model documentation."""

from __future__ import annotations

import re

import botocore.session

from cdk_app.domain.batch_shares import fair_share_fractions, weight_factors_for

WEIGHT_DOC = botocore.session.get_session().get_service_model("batch").shape_for("ShareAttributes") \
    .members["weightFactor"].documentation


def test_derived_weight_factors_follow_botocores_example_and_range():
    # "a weight factor of 0.125 (1/8) get 8 times the compute resources of ... a weight factor of 1"
    assert "0.125 (1/8) get 8 times" in WEIGHT_DOC
    assert weight_factors_for({"a": 8, "b": 1}) == {"a": 1, "b": 8}
    weights = weight_factors_for({"a": 3, "b": 2, "c": 1})
    assert {k: round(float(v), 3) for k, v in fair_share_fractions(weights).items()} == {"a": 0.5, "b": 0.333, "c": 0.167}
    largest = float(re.search(r"largest supported value is ([0-9]+\.[0-9]+)", WEIGHT_DOC)[1])
    assert weight_factors_for({"a": int(largest), "b": 1}) == {"a": 1, "b": float(int(largest))}
    assert weight_factors_for({"a": int(largest) + 1, "b": 1}) is None  # beyond Batch's range
    assert weight_factors_for({"a": 3, "b": 0}) is None
