"""The guardrails' per-namespace priority class maps: the same as allowed_priority_classes gives team by
team, and built in one pass over the teams (it was one pass per team: 7 s at 5,000 teams)."""

from __future__ import annotations

import json
import re
import time

from generated_config import generated_config

from cdk_app.config.loader import load_config
from cdk_app.config.names import team_namespace
from cdk_app.kubernetes.guardrails import guardrail_manifests
from cdk_app.kubernetes.guardrails.team_scope import allowed_priority_classes, priority_label


def _priority_map(manifests: list[dict]) -> dict[str, list[str]]:
    expressions = {v["expression"] for m in manifests for v in m.get("spec", {}).get("variables", [])
                   if v["name"] == "priorityClasses"}
    assert len(expressions) == 1  # every policy that has the variable has the same map
    literal = re.fullmatch(r"(\{.*\})\[request\.namespace\]", expressions.pop(), re.S)
    return json.loads(literal.group(1))


def test_each_namespace_gets_its_teams_classes(write_config):
    text = generated_config(3).replace("teams:\n", "teams:\n  - name: special\n    priority_classes: []\n", 1)
    config = load_config(write_config(text)).config
    expected = {team_namespace(t.name): [priority_label(c) for c in allowed_priority_classes(config, t.name)]
                for t in config.teams}
    assert _priority_map(guardrail_manifests(config)) == expected
    assert expected[team_namespace("special")] == []


def test_thousands_of_teams_take_one_pass(tmp_path):
    """Growth, not a wall-clock bound (which a loaded machine breaks): 10 times the teams may cost about 10 times
    the time, far from the 100 times one pass per team cost. Sizes measured side by side, best of three each."""
    configs = {}
    for teams in (500, 5000):
        path = tmp_path / f"teams-{teams}.yaml"
        path.write_text(generated_config(teams))
        configs[teams] = load_config(path).config
    best = {teams: float("inf") for teams in configs}
    for _ in range(3):
        for teams, config in configs.items():
            start = time.perf_counter()
            manifests = guardrail_manifests(config)
            best[teams] = min(best[teams], time.perf_counter() - start)
    assert len(_priority_map(manifests)) == 5000
    assert best[5000] / best[500] < 30, best
