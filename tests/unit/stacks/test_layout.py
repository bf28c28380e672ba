"""The stack layout's size of a team's RBAC manifests, held to the manifests themselves."""

from __future__ import annotations

import json

from cdk_app.config.names import team_namespace
from cdk_app.kubernetes.team_set import team_set
from cdk_app.stacks.layout import rbac_payload


def test_the_rbac_payload_is_the_manifests_as_the_template_escapes_them_for_every_name_length():
    for length in range(1, 41):  # a team name is 1-40 characters (its local queue name is a label value)
        team = "t" * length
        assert len(team_namespace(team)) <= 63
        written = json.dumps(json.dumps(team_set(team), sort_keys=True, separators=(",", ":")))
        assert rbac_payload(team) == len(written), length


def test_the_rbac_payload_counts_each_volume_claim_of_the_team():
    for team, claims in (("t", ("c",)), ("t" * 40, ("c" * 32, "d")), ("john", ("checkpoints", "datasets"))):
        written = json.dumps(json.dumps(team_set(team, claims), sort_keys=True, separators=(",", ":")))
        assert rbac_payload(team, claims) == len(written), (team, claims)
