"""kueue-oracle (tests/k8s/kueue): the real Kueue v0.19.2 scheduler run in-process, one scheduling cycle at a time,
the way Kueue's own pkg/scheduler/scheduler_test.go drives it - and the comparison of what it decided with what an
upstream test case expects (the cases are in support.kueue_cases).

oracle_bin() builds the oracle (tests/k8s/kueue/build.sh, a no-op when its cache has the binaries) and returns the
bin dir; run_oracle() feeds one case to it; compare() lists the differences from the case's expectation.

The oracle reads one JSON (or YAML) document on stdin and writes one JSON document on stdout.

Input:
    mode                  "schedule" (default: run scheduling cycles) | "preempt" (preemption.New(...).GetTargets
                          + IssuePreemptions for one incoming workload, as preemption_test.go does)
    now                   fake clock start (default 2025-01-01T00:00:00Z)
    featureGates          {GateName: bool} (Kueue's gates; defaults are v0.19.2's)
    fairSharing           Configuration.fairSharing (v1beta2); its presence enables fair sharing
    admissionFairSharing  Configuration.admissionFairSharing
    applyDefaults         apply the Kueue CRDs' +kubebuilder:default values (default true)
    namespaces            corev1 Namespaces (labels matter for namespaceSelector); referenced but unlisted
                          namespaces are created without labels
    resourceFlavors, cohorts, clusterQueues, localQueues, workloadPriorityClasses, priorityClasses, workloads
                          Kueue objects; apiVersion defaults to kueue.x-k8s.io/v1beta2, v1beta1 objects are
                          converted with Kueue's own conversion. An admitted workload has status.admission and
                          QuotaReserved(/Admitted) conditions.
    objects               any other object with apiVersion/kind (LimitRange, AdmissionCheck, Topology, ...)
    cycles                number of cycles (default 1) | untilStable + maxCycles (default 50)
    cycleInterval         fake-clock step between cycles (default "1s"); between cycles the harness completes
                          issued evictions (simulateEvictions, default true) and requeues, as the controllers do
    includeEvents, includeObjects   add the recorded events / the final Workload objects
    preemption            mode "preempt" only: {incoming: Workload, clusterQueue: name,
                          assignment: {podSets: [{name, count, flavors: {resource: {name, mode}}}]}}

Output:
    kueueVersion, mode, featureGates, validationErrors (Kueue's webhook validation; reported, not fatal)
    cycles[]              {cycle, keepGoing, entries[] (Kueue's per-head record: workload, clusterQueue, status,
                          message, mode, borrowing, podSets, preemptionTargets, usage), admitted[], preempted[]
                          ({workload, preemptor, reason, message}), evictionsCompleted[]}
    workloads[]           final state per workload: name, state, clusterQueue, admission, flavors, borrowing,
                          priority, pendingReason, pendingMessage, preempted {reason, message}, evictedReason, ...
    assignments           {ns/name: Admission} in Kueue's cache (upstream's wantAssignments)
    left, inadmissibleLeft  the queue manager's Dump() / DumpInadmissible() (wantLeft / wantInadmissibleLeft)
    clusterQueues         {name: {cohort, active, reservingWorkloads, admittedWorkloads, flavorsUsage, borrowing}}
    preemption            mode "preempt": {targets[{workload, preemptor, reason}], preempted, failed}
"""

from __future__ import annotations

import json
import os
import subprocess
from fractions import Fraction
from pathlib import Path
from typing import Any

from cdk_app.kubernetes.quantity import parse_quantity
from support.paths import ROOT
from support.realk8s import go_binary

BUILD_SCRIPT = ROOT / "tests" / "k8s" / "kueue" / "build.sh"
# A cold build (module download, Kueue and its dependencies compiled twice over) takes about 6 minutes on 2 cores.
BUILD_TIMEOUT = 3600
# One case takes well under a second; a case that takes a minute is a hung oracle.
RUN_TIMEOUT = 60
TAIL = 4000

class OracleError(Exception):
    """The oracle could not be built, or failed on a case."""


# ---------------------------------------------------------------------- build and run


def oracle_bin() -> Path:
    """The bin dir holding kueue-oracle (and the kueue controller), built by build.sh with the kit's Go
    (support.realk8s.go_binary, as `make k8s-build`) when its cache has none. A failed build raises."""
    try:
        proc = subprocess.run(["bash", str(BUILD_SCRIPT)], capture_output=True, text=True, timeout=BUILD_TIMEOUT,
                              env={**os.environ, "GO": go_binary()})
    except subprocess.TimeoutExpired as err:
        raise OracleError(f"{BUILD_SCRIPT} did not finish within {BUILD_TIMEOUT}s; its output ends with:\n"
                          f"{_tail(err.stderr)}") from err
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise OracleError(f"{BUILD_SCRIPT} failed (exit code {proc.returncode}); its output ends with:\n"
                          f"{_tail(proc.stderr)}{_tail(proc.stdout)}")
    bin_dir = Path(lines[-1])
    if not os.access(bin_dir / "kueue-oracle", os.X_OK):
        raise OracleError(f"{BUILD_SCRIPT} printed {bin_dir}, which holds no executable kueue-oracle")
    return bin_dir


def run_oracle(binary: Path, case: dict[str, Any], timeout: float = RUN_TIMEOUT) -> dict[str, Any]:
    """kueue-oracle's output for one case document (its `input` goes to stdin). Raises OracleError, with the
    oracle's stderr, when it fails, hangs or prints something other than JSON."""
    what = f"kueue-oracle on case {case.get('name')!r}"
    try:
        proc = subprocess.run([str(binary)], input=json.dumps(case["input"]).encode(), capture_output=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired as err:
        raise OracleError(f"{what} did not finish within {timeout}s; stderr:\n{_tail(err.stderr)}") from err
    if proc.returncode != 0:
        raise OracleError(f"{what} failed (exit code {proc.returncode}); stderr:\n{_tail(proc.stderr)}")
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError as err:
        raise OracleError(f"{what} printed no JSON ({err}); stdout:\n{_tail(proc.stdout)}\n"
                          f"stderr:\n{_tail(proc.stderr)}") from err


def _tail(output: str | bytes | None) -> str:
    if isinstance(output, bytes):
        output = output.decode(errors="replace")
    return (output or "")[-TAIL:]


# ---------------------------------------------------------------------- comparison


def quantity(q: str | int | float) -> Fraction:
    """A Kubernetes resource.Quantity as an exact Fraction ("500m" -> 1/2, "2Gi" -> 2147483648), read by the
    kit's own quantity parser (the API server's grammar)."""
    if isinstance(q, int | float):
        return Fraction(q)
    value = parse_quantity(q.strip())
    if value is None:
        raise ValueError(f"bad quantity {q!r}")
    return value


def norm_admission(a: dict[str, Any] | None) -> dict[str, Any] | None:
    """An Admission with defaults filled in and quantities made comparable ("10" == "10000m")."""
    if a is None:
        return None
    out: dict[str, Any] = {"clusterQueue": a.get("clusterQueue"), "podSetAssignments": []}
    for p in a.get("podSetAssignments") or []:
        out["podSetAssignments"].append({
            "name": p.get("name", "main"),
            "flavors": dict(sorted((p.get("flavors") or {}).items())),
            "resourceUsage": {k: str(quantity(v)) for k, v in sorted((p.get("resourceUsage") or {}).items())},
            "count": p.get("count", 1),
        })
    return out


def norm_queues(d: dict[str, list[str]] | None) -> dict[str, list[str]]:
    """A queue dump ({queue: [ns/name]}) without empty queues, each queue's workloads sorted."""
    return {k: sorted(v) for k, v in (d or {}).items() if v}


def victims_of(out: dict[str, Any]) -> list[dict[str, str]]:
    """The workloads carrying a Preempted condition in the oracle's output, by name."""
    got = []
    for w in out.get("workloads") or []:
        if w.get("preempted"):
            got.append({"workload": w["name"], "reason": w["preempted"]["reason"],
                        "message": w["preempted"].get("message", "")})
    return sorted(got, key=lambda v: v["workload"])


def compare(case: dict[str, Any], out: dict[str, Any]) -> list[str]:
    """How the oracle's output for a case differs from the case's expected outcome, one readable entry per
    difference ([] when it reproduces the expectation). Only the keys the case's `expected` holds are checked:
    preempted (number of preemptions), targets (victims' Preempted reason, and message where stated),
    assignments, left, inadmissibleLeft, workloads ({ns/name: {field: value}})."""
    exp = case["expected"]
    diffs: list[str] = []

    def check(what: str, want: Any, got: Any) -> None:
        if want != got:
            diffs.append(f"{what}:\n    want {json.dumps(want, sort_keys=True)}\n"
                         f"    got  {json.dumps(got, sort_keys=True)}")

    if "preempted" in exp:
        got = (out.get("preemption") or {}).get("preempted")
        if got is None:
            got = len(victims_of(out))
        check("number of preemptions", exp["preempted"], got)
    if "targets" in exp:
        want = sorted(exp["targets"], key=lambda v: v["workload"])
        # the message is compared only where the case states it
        got_cmp = []
        for g in victims_of(out):
            w = next((x for x in want if x["workload"] == g["workload"]), None)
            g2 = {"workload": g["workload"], "reason": g["reason"]}
            if w is not None and "message" in w:
                g2["message"] = g["message"]
            got_cmp.append(g2)
        check("preempted workloads (Preempted condition)", want, got_cmp)
    if "assignments" in exp:
        want_adm = {k: norm_admission(v) for k, v in (exp["assignments"] or {}).items()}
        got_adm = {k: norm_admission(v) for k, v in (out.get("assignments") or {}).items()}
        check("assignments in cache", want_adm, got_adm)
    if "left" in exp:
        check("left in queues", norm_queues(exp["left"]), norm_queues(out.get("left")))
    if "inadmissibleLeft" in exp:
        check("left inadmissible", norm_queues(exp["inadmissibleLeft"]), norm_queues(out.get("inadmissibleLeft")))
    if "workloads" in exp:
        byname = {w["name"]: w for w in out.get("workloads") or []}
        for name, want_fields in sorted(exp["workloads"].items()):
            got_wl = byname.get(name)
            if got_wl is None:
                diffs.append(f"workload {name} missing from output")
                continue
            for field, v in want_fields.items():
                check(f"workload {name} {field}", v, got_wl.get(field))
    return diffs
