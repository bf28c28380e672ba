"""Property tests (hypothesis) over generated and mutated configs.

Invariants: loading and validating never raises; the exit code matches the findings; every finding is
located inside the file; the over-capacity verdict agrees with an integer computation written here
independently of cdk_app.domain.capacity; and a config that validate accepts builds its CDK app (a
few examples only, marked synth, since building is slow).
"""

from __future__ import annotations

import json
import os
import re
from decimal import Decimal

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support.paths import ROOT, SUPPORT

from cdk_app.cli import main as cli
from cdk_app.domain.instance_types import CATALOGUE
from cdk_app.validator.report import check_file

CONTEXT = json.loads((ROOT / "cdk.json").read_text())["context"]
BASE = (SUPPORT / "adversarial" / "base.yaml").read_text()
UNREADABLE = {"HPK001", "HPK002", "HPK003", "HPK004", "HPK005"}
# HPK_EXAMPLES=2000 searches deeper (a minute or two); the default keeps `make test` quick.
# HPK_EXAMPLES=2000 searches deeper (a minute or two); the default keeps `make test` quick.
FAST = settings(max_examples=int(os.environ.get("HPK_EXAMPLES", "120")), deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])

# Scalars YAML 1.1 reads as something other than plain text, and texts near the kit's limits.
HOSTILE = ["0x_", "0b2", "0o17", "1:30", "1:30.5", "2025-02-29", "2025-02-28", ".inf", "-.inf", ".nan", "~", "null",
           "on", "off", "yes", "no", "y", "n", "=", "<<", "1e3", "1.0e+400", "-0", "+7", "1_000", "0x10",
           "9" * 5000, "-" + "9" * 4400, "''", '""', '"a\\nb"', "|\n  block\n", "!!binary aGk=", "!!str 12", "[]",
           "{}", "[1, [2, [3]]]", "&x 5", "a" * 64, "A" * 300, "é", "\"\\u0000\"", "-1", "6759", "10000001",
           "\"\\t\"", "\"x\\n\""]


def assert_well_formed(report, text: str) -> None:
    lines = text.count("\n") + 1
    codes = {f.code for f in report.findings}
    errors = [f for f in report.findings if f.severity.value == "error"]
    assert report.exit_code == (2 if report.unreadable else 1 if errors else 0)
    assert report.unreadable == bool(codes & UNREADABLE)
    for finding in report.findings:
        assert finding.code.startswith("HPK") and 1 <= finding.line <= lines and finding.column >= 1
        assert finding.message and finding.hint


def scalar_positions(text: str) -> list[tuple[int, int]]:
    """(start, end) of every `key: value` value on a line of its own."""
    return [(m.start(2), m.end(2)) for m in re.finditer(r"^( *[-a-z_0-9/.]+: )(.+)$", text, re.M)]


POSITIONS = scalar_positions(BASE)


@FAST
@given(st.data())
def test_any_scalar_replaced_by_a_hostile_one_is_reported_not_raised(write_config, data):
    text = BASE
    for _ in range(data.draw(st.integers(1, 3))):
        start, end = data.draw(st.sampled_from(scalar_positions(text) or POSITIONS))
        value = data.draw(st.one_of(st.sampled_from(HOSTILE), st.text(min_size=0, max_size=12)))
        text = text[:start] + value + text[end:]
    assert_well_formed(check_file(write_config(text)), text)


@FAST
@given(st.lists(st.sampled_from(HOSTILE), min_size=1, max_size=4), st.data())
def test_hostile_keys_and_lines_inserted_anywhere(write_config, pieces, data):
    lines = BASE.splitlines(keepends=True)
    at = data.draw(st.integers(0, len(lines)))
    indent = data.draw(st.sampled_from(["", "  ", "    ", "      "]))
    key = data.draw(st.sampled_from(["<<", "name", "count", "quota", "labels", "x", "region", "? a"]))
    lines.insert(at, f"{indent}{key}: {' '.join(pieces)}\n")
    text = "".join(lines)
    assert_well_formed(check_file(write_config(text)), text)


# --- Generated configs: capacity against an independent integer computation ---------------------------
TYPES = ["ml.g5.12xlarge", "ml.m5.2xlarge", "ml.p5.48xlarge", "ml.c5n.large", "ml.trn1.32xlarge"]


@st.composite
def configs(draw):
    groups = draw(st.lists(st.tuples(st.sampled_from(TYPES), st.integers(0, 5)), min_size=1, max_size=4))
    teams = []
    for t in range(draw(st.integers(0, 4))):
        entries = []
        for itype in draw(st.lists(st.sampled_from(TYPES), max_size=3, unique=True)):
            spec = CATALOGUE[itype]
            kinds = ["count", "vcpu", "memory_gib"] + (["accelerators"] if spec.accelerators else [])
            kind = draw(st.sampled_from(kinds))
            if kind in ("count", "accelerators"):
                amount = draw(st.integers(0, 8 if kind == "count" else 8 * spec.accelerators))
                entries.append((itype, kind, str(amount), amount * 100))
            else:  # a decimal with up to two places, written as text: hundredths are exact integers
                hundredths = draw(st.integers(0, 300 * spec.vcpu))
                entries.append((itype, kind, f"{hundredths // 100}.{hundredths % 100:02d}", hundredths))
        teams.append((f"team{t}", entries))
    return groups, teams


def render(groups, teams) -> str:
    out = ["environment: dev", 'account: "111122223333"', "region: us-east-1", "availability_zone_ids: [use1-az4, use1-az6]",
           "task_governance:", "  cloudformation_types: {cluster_policy: native, compute_quota: native}",
           "hyperpod:", "  instance_groups:"]
    for i, (itype, count) in enumerate(groups):
        out += [f"    - name: g{i}", f"      instance_type: {itype}", f"      count: {count}"]
    out.append("teams:" if teams else "teams: []")
    for name, entries in teams:
        out += [f"  - name: {name}", "    quota:" if entries else "    quota: []"]
        for itype, kind, text, _ in entries:
            out += [f"      - instance_type: {itype}", f"        {kind}: {text}"]
    return "\n".join(out) + "\n"


def over_types(groups, teams) -> set[str]:
    """Types whose reservations exceed capacity, in integer units of 1/(100 * vCPU * max(1, GPUs) * 4 * GiB)
    of an instance: every generated amount is a whole number of these units."""
    over = set()
    for itype in {e[0] for _, entries in teams for e in entries}:
        spec = CATALOGUE[itype]
        gib4 = int(spec.memory_gib * 4)  # memory is a multiple of 1/4 GiB in the catalogue (c5n.large: 5.25)
        unit = 100 * spec.vcpu * max(1, spec.accelerators) * gib4
        reserved = 0
        for _, entries in teams:
            for etype, kind, _, amount in entries:
                if etype != itype:
                    continue
                if kind == "count":
                    reserved += amount // 100 * unit
                elif kind == "accelerators":
                    reserved += amount // 100 * (unit // spec.accelerators)
                elif kind == "vcpu":
                    reserved += amount * (unit // (100 * spec.vcpu))
                else:  # memory hundredths of a GiB over the instance's GiB
                    reserved += amount * 4 * (unit // (100 * gib4))
        capacity = sum(count for gtype, count in groups if gtype == itype) * unit
        if reserved > capacity:
            over.add(itype)
    return over


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(configs())
def test_over_capacity_verdict_matches_integer_arithmetic(write_config, generated):
    groups, teams = generated
    text = render(groups, teams)
    report = check_file(write_config(text))
    assert_well_formed(report, text)
    flagged = set()
    for finding in report.findings:
        if finding.code == "HPK501":
            match = re.match(r"teams\[(\d+)\]\.quota\[(\d+)\]$", finding.path)
            assert match, finding.path
            flagged.add(teams[int(match[1])][1][int(match[2])][0])
    assert flagged == over_types(groups, teams)


@pytest.mark.synth
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(configs().filter(lambda g: not over_types(*g)))
# A decimal quota reaches the template as the number the admin wrote (a ScalarFloat through jsii).
@example(([("ml.m5.2xlarge", 2)], [("team0", [("ml.m5.2xlarge", "vcpu", "1.10", 110)])]))
@example(([("ml.g5.12xlarge", 0)], [("team0", [("ml.g5.12xlarge", "vcpu", "0.00", 0)])]))  # found by hypothesis
def test_a_config_validate_accepts_builds_its_app(write_config, tmp_path_factory, generated):
    """Synthesized with cdk-nag's checks, as app.py does (with cdk.json's context)."""
    from aws_cdk import App

    from cdk_app.stacks.app_builder import build_app

    report = check_file(write_config(render(*generated)))
    assert not report.errors, [f.render() for f in report.errors]
    app = App(context=CONTEXT, outdir=str(tmp_path_factory.mktemp("cdk.out")))
    build_app(app, report.loaded.config)
    assembly = app.synth()
    assert len(assembly.stacks) == 3
    governance = next(s for s in assembly.stacks if s.stack_name.endswith("-governance")).template
    written = [Decimal(str(resource["VCpu"]))
               for r in governance["Resources"].values() if r["Type"] == "AWS::SageMaker::ComputeQuota"
               for resource in r["Properties"]["ComputeQuotaConfig"]["ComputeQuotaResources"] if "VCpu" in resource]
    # The number the admin wrote, as a value (0.00 may be written 0, 2.0 may be written 2).
    assert sorted(written) == sorted(Decimal(text) for _, entries in generated[1]
                                     for _, kind, text, _ in entries if kind == "vcpu")


def test_the_cli_never_prints_a_traceback_for_hostile_node_lists(tmp_path):
    for i, text in enumerate(['{"items": [{"kind": "Node", "metadata": {"name": [1]}}]}', "[" * 50000, "\x00\xff",
                              '{"items": [{"metadata": {"labels": {"topology.k8s.aws/network-node-layer-1": 5}}}]}',
                              '{"items": [1e999]}', "NaN", '{"items": {}}']):
        path = tmp_path / f"n{i}.json"
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
        result = CliRunner().invoke(cli.main, ["topology", str(path), "--format", "json"])
        assert result.exit_code == 2 and "Traceback" not in result.output, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)


# --- The shared pool's quota, as the stack writes it, against an independent integer computation ----------
# The pool was given whole instances (or accelerators, which SageMaker fills
# to the instance's vCPU and memory) whenever the *count* gap was whole, overrunning memory or vCPU that a
# team's entry of several amounts had taken. The fill rule (README "How capacity is summed", hyperpod-facts
# "Partial quotas", CreateComputeQuota's model): Count is whole instances; Accelerators alone fill vCPU and
# memory in the instance's ratio; an amount written out is taken as written.
COMBOS = [("count",), ("accelerators",), ("accelerators", "vcpu"), ("accelerators", "memory_gib"), ("vcpu",),
          ("vcpu", "memory_gib"), ("memory_gib",)]
DIMS = ("count", "accelerators", "vcpu", "memory_gib")


def instance_units(spec) -> int:
    """Units per instance in which every amount of the test is a whole number: accelerators, thousandths of
    a vCPU (the pool's vCPU is written to 1/1000) and thousandths of a GiB over a quarter-GiB catalogue."""
    return 1000 * 100 * spec.vcpu * max(1, spec.accelerators) * int(spec.memory_gib * 4)


def thousandths(value) -> int:
    text = repr(value) if isinstance(value, float) else str(value)
    whole, _, frac = text.partition(".")
    assert len(frac) <= 3, text  # what the kit writes must be read back exactly at 1/1000
    return int(whole) * 1000 + int((frac + "000")[:3])


def filled_units(spec, amounts: dict[str, object]) -> dict[str, int]:
    """Per dimension, what SageMaker gives an entry, in instance_units of the type (an instance = S units)."""
    s = instance_units(spec)
    per = {"accelerators": spec.accelerators, "vcpu": spec.vcpu, "memory_gib": spec.memory_gib}
    if "count" in amounts:
        return {d: int(amounts["count"]) * s for d in DIMS}
    written = {d: thousandths(amounts[d]) * s // int(per[d] * 1000) for d in ("accelerators", "vcpu", "memory_gib")
               if d in amounts and (d != "accelerators" or spec.accelerators)}
    # The ratio comes from the accelerators, else the vCPU, else the memory; accelerators: 0 sets no ratio (the
    # reading that reserves the more: SageMaker's documentation does not say which it takes).
    share_from = next((d for d in ("accelerators", "vcpu", "memory_gib") if d in written
                       and (d != "accelerators" or written[d])), None)
    if share_from is None:
        return {d: 0 for d in DIMS}
    assert thousandths(amounts[share_from]) * s % int(per[share_from] * 1000) == 0
    share = written[share_from]
    # vCPU and memory are filled in the ratio; accelerators never are - an entry without them gets none
    # (botocore's ComputeQuotaResourceConfig.VCpu and MemoryInGiB: "Accelerators are set to 0"). An instance's
    # worth (count) is measured in accelerators where the type has them.
    accelerators = written.get("accelerators", 0)
    return {"count": accelerators if spec.accelerators else share, "accelerators": accelerators,
            **{d: written.get(d, share) for d in ("vcpu", "memory_gib")}}


@st.composite
def pool_configs(draw):
    groups = draw(st.lists(st.tuples(st.sampled_from(TYPES), st.integers(1, 4)), min_size=1, max_size=3))
    teams = []
    for t in range(draw(st.integers(1, 3))):
        entries = []
        for itype in draw(st.lists(st.sampled_from(TYPES), min_size=1, max_size=2, unique=True)):
            spec = CATALOGUE[itype]
            combos = [c for c in COMBOS if spec.accelerators or "accelerators" not in c]
            amounts = {}
            for kind in draw(st.sampled_from(combos)):
                if kind == "count":
                    amounts[kind] = str(draw(st.integers(0, 2)))
                elif kind == "accelerators":
                    amounts[kind] = str(draw(st.integers(0, 2 * spec.accelerators)))
                else:  # hundredths of up to one and a half instances' vCPU or memory
                    top = int((spec.vcpu if kind == "vcpu" else spec.memory_gib) * 150)
                    hundredths = draw(st.integers(0, top))
                    amounts[kind] = f"{hundredths // 100}.{hundredths % 100:02d}"
            entries.append((itype, amounts))
        teams.append((f"team{t}", entries))
    return groups, teams


def render_pool(groups, teams) -> str:
    out = render(groups, []).replace("teams: []\n", "shared_pool:\n  name: pool\nteams:\n").splitlines()
    for name, entries in teams:
        out += [f"  - name: {name}", "    quota:"]
        for itype, amounts in entries:
            out.append(f"      - instance_type: {itype}")
            out += [f"        {kind}: {text}" for kind, text in amounts.items()]
    return "\n".join(out) + "\n"


SP001 = ([("ml.g5.12xlarge", 4)], [("john", [("ml.g5.12xlarge", {"vcpu": "48", "memory_gib": "300"})])])
SP002 = ([("ml.g5.12xlarge", 4)], [("john", [("ml.g5.12xlarge", {"accelerators": "1", "vcpu": "40"})])])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.filter_too_much])
@pytest.mark.slow
@given(pool_configs())
@example(SP001)
@example(SP002)
def test_the_shared_pool_as_written_fits_what_the_teams_leave_in_every_dimension(write_config, generated):
    from hypothesis import assume

    from cdk_app.domain.capacity import shared_pool_quota
    from cdk_app.stacks.team_stack import quota_resource

    groups, teams = generated
    report = check_file(write_config(render_pool(groups, teams)))
    assume(not report.errors)
    written = [quota_resource(entry) for entry in shared_pool_quota(report.loaded.config)]
    keys = {"Count": "count", "Accelerators": "accelerators", "VCpu": "vcpu", "MemoryInGiB": "memory_gib"}
    pool = {w["InstanceType"]: {keys[k]: v for k, v in w.items() if k in keys} for w in written}
    rows = {row.to_json()["instance_type"]: row.to_json()["reserved"] for row in report.capacity}
    for itype in {t for t, _ in groups}:
        spec, s = CATALOGUE[itype], instance_units(CATALOGUE[itype])
        capacity = sum(c for t, c in groups if t == itype) * s
        taken = {d: 0 for d in DIMS}
        for _, entries in teams:
            for etype, amounts in entries:
                if etype == itype:
                    taken = {d: taken[d] + v for d, v in filled_units(spec, amounts).items()}
        gets = filled_units(spec, pool[itype]) if itype in pool else {d: 0 for d in DIMS}
        per = {"count": 1, "accelerators": spec.accelerators, "vcpu": spec.vcpu, "memory_gib": spec.memory_gib}
        for d in DIMS:
            assert taken[d] + gets[d] <= capacity, (itype, d, pool.get(itype))  # F6: never over capacity
            left = capacity - taken[d] - gets[d]
            # ... and the pool takes what is left, to a whole accelerator and 1/1000 of a vCPU or GiB.
            if d in ("vcpu", "memory_gib") or (d == "accelerators" and spec.accelerators):
                step = s // spec.accelerators if d == "accelerators" else -(-s // int(per[d] * 1000))
                assert left < step or itype not in pool and any(taken[x] >= capacity for x in DIMS), (itype, d)
            # validate's capacity table shows exactly what is reserved: the teams and the pool as written.
            if per[d]:
                assert abs(rows[itype][d] - (taken[d] + gets[d]) * per[d] / s) < 0.0006, (itype, d, rows[itype])
