"""Batch share arithmetic: weight factors for a split, read against botocore's batch model documentation."""

from __future__ import annotations

import re
from fractions import Fraction

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


def test_a_queues_parts_follow_botocores_weight_factor_and_its_default(write_config):
    """(1/w_i) / sum(1/w_j): botocore's example gives weight 0.125 eight times weight 1; an unset weight is
    botocore's "default value is 1.0"."""
    from cdk_app.config.loader import load_config
    from cdk_app.domain.batch_shares import percent_text, queue_fair_shares

    assert "The default value is 1.0" in WEIGHT_DOC
    teams = "".join(f"    - {{name: t{i}, queues: [q], share_identifier: S{i}{weight}}}\n"
                    for i, weight in enumerate([", weight_factor: 0.125", ""]))
    path = write_config("environment: b\naccount: \"111122223333\"\nregion: us-east-1\nbatch:\n"
                        "  service_environments:\n    - {name: e, capacity_limits: [{unit: NUM_INSTANCES, max_capacity: 9}]}\n"
                        f"  queues:\n    - {{name: q, service_environment: e, scheduling: fair_share}}\n  teams:\n{teams}")
    parts = queue_fair_shares(load_config(path).config.batch, "q")
    assert parts == {"S0": Fraction(8, 9), "S1": Fraction(1, 9)}  # 8 times the compute of weight 1
    assert (percent_text(parts["S0"]), percent_text(Fraction(7, 10))) == ("88.89 %", "70 %")
