"""The real Kueue v0.19.2 as a simulate scheduler: OracleScheduler implements the Scheduler protocol of
cdk_app/simulate/kueue/api.py over one `kueue-oracle --session` subprocess (tests/k8s/kueue/cmd/kueue-oracle,
session.go), the source of truth the in-process scheduler is compared with.

The session reads JSON lines and answers each with one JSON line:
    setup document (first line) or {"op": "reset", ...}  the one-shot input's keys (support.kueue_oracle); `now` is
                                                         the simulation start -> {"ok": true, "validationErrors"}
    {"op": "submit", "workload": Workload}               a pending workload (creationTimestamp = its submission)
    {"op": "finish", "workload": "ns/name", "at": s}     an admitted workload finished: its quota released
    {"op": "schedule", "at": s, "maxCycles": n, "state": b} cycles at start + s until one admits and preempts nothing
        -> {"cycles", "stable", "decisions": [{"event": "admitted", "workload", "clusterQueue", "flavors",
            "borrowed"} | {"event": "preempted", "workload", "clusterQueue", "preemptor", "reason", "message"}],
            "ties": [[ns/name, ...]] (heads Kueue ordered by chance, see session.go),
            "pending": {ns/name: message}, "usage": {cq: {flavor: {resource: quantity}}} (non-zero only; both
            left out when "state" is false)}
    {"op": "state"}                                      -> {"pending", "usage"} as the last schedule left them (the
                                                         workloads submitted since pending with an empty message)
    a bad request -> {"error": "..."}, and the session goes on; EOF ends it.

setup_document(config) is the setup the kit's own config maps to (cdk_app/domain/kueue_mapping.py).
"""

from __future__ import annotations

import copy
import json
import os
import selectors
import subprocess
import tempfile
import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from cdk_app.config.model import KitConfig
from cdk_app.simulate.governance import setup_document as governance_setup
from cdk_app.simulate.kueue.api import Decision, NotSettled, Workload, cycle_bound
from support.kueue_oracle import oracle_bin, quantity

START = "2025-01-01T00:00:00Z"
# One answer takes milliseconds to a few seconds (a schedule call over thousands of pending workloads); a minute
# without one is a hung oracle.
READ_TIMEOUT = 60.0
TAIL = 4000

class OracleSessionError(Exception):
    """The session answered an error, or the oracle died, hung or printed something other than JSON."""


def setup_document(config: KitConfig, now: str = START) -> dict[str, Any]:
    """The session's setup for a kit config: the simulator's own setup document (cdk_app.simulate.governance,
    the same Kueue objects either scheduler is built from), the simulation starting at `now`."""
    return {"now": now, **governance_setup(config)}


def kueue_quantity(resource: str, amount: int) -> str:
    """An amount in Kueue's units as a request: cpu in millicores, anything else in its base unit."""
    return f"{amount}m" if resource == "cpu" else str(amount)


def kueue_amount(resource: str, text: str) -> int:
    """A quantity of an answer in Kueue's units (cpu millicores, other resources their base unit)."""
    value = quantity(text) * (1000 if resource == "cpu" else 1)
    if value.denominator != 1:
        raise OracleSessionError(f"{resource} quantity {text!r} is not a whole number of Kueue's units")
    return int(value)


def _amounts(tree: Mapping[str, Mapping[str, str]]) -> dict[str, dict[str, int]]:
    return {flavor: {r: kueue_amount(r, q) for r, q in per.items()} for flavor, per in tree.items()}


class OracleScheduler:
    """The Scheduler protocol (cdk_app.simulate.kueue.api) over a kueue-oracle session.

    The setup is sent with the first submit, finish or schedule, together with the workloads restore() gave
    (admitted before the simulation starts, as Kueue finds them at its start). pending() and usage() are the
    state after the last schedule() (a workload submitted since is pending with an empty message), asked for when
    first read after it. A setup that
    Kueue's webhook validation refuses raises, unless strict=False (upstream test tables hold such objects); the
    refusals are in validation_errors."""

    def __init__(self, setup_doc: Mapping[str, Any], binary: Path | None = None,
                 timeout: float = READ_TIMEOUT, strict: bool = True) -> None:
        self._binary = binary or oracle_bin() / "kueue-oracle"
        self._timeout = timeout
        self._strict = strict
        self.validation_errors: list[str] = []
        # stderr goes to a file: a pipe nobody reads could fill and block the oracle.
        self._stderr = tempfile.TemporaryFile()
        self._proc = subprocess.Popen([str(self._binary), "--session"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=self._stderr)
        self._buffer = bytearray()
        self._selector = selectors.DefaultSelector()
        assert self._proc.stdout is not None
        self._selector.register(self._proc.stdout, selectors.EVENT_READ)
        self._sent_setup = False
        self._load(setup_doc)
        self.ties: list[list[str]] = []

    # ---------------------------------------------------------------- the protocol

    def restore(self, workload: Workload, flavors: Mapping[str, Mapping[str, str]], admitted_at: int) -> None:
        if self._started:
            raise OracleSessionError("restore() comes before the first submit, finish or schedule")
        obj = self.workload_object(workload)
        when = self._time(admitted_at)
        obj["status"] = {
            "conditions": [{"type": kind, "status": "True", "reason": kind, "message": "",
                            "lastTransitionTime": when} for kind in ("QuotaReserved", "Admitted")],
            "admission": {"clusterQueue": workload.cluster_queue, "podSetAssignments": [
                {"name": ps.name, "count": ps.count, "flavors": dict(flavors[ps.name]),
                 "resourceUsage": {r: kueue_quantity(r, v * ps.count) for r, v in ps.requests.items()}}
                for ps in workload.pod_sets]}}
        self._restored.append(obj)
        self._live.add(workload.key)

    def submit(self, workload: Workload) -> None:
        self.request({"op": "submit", "workload": self.workload_object(workload)})
        self._live.add(workload.key)
        if self._state_known:
            self._pending.setdefault(workload.key, "")

    def finish(self, key: str, at: int) -> None:
        self.request({"op": "finish", "workload": key, "at": at})
        self._live.discard(key)

    def schedule(self, at: int) -> list[Decision]:
        # The state (pending, usage) is asked for when read: encoding and decoding it on every call was a
        # large part of a long timeline's time, and most callers read it seldom.
        answer = self.request({"op": "schedule", "at": at, "state": False,
                               "maxCycles": cycle_bound(len(self._live))})
        if not answer.get("stable"):
            raise NotSettled(at, answer["cycles"], [self._decision(at, d) for d in answer.get("decisions") or []])
        self._state_known = False
        self.ties = answer.get("ties") or []
        return [self._decision(at, d) for d in answer["decisions"]]

    def pending(self) -> Mapping[str, str]:
        self._fetch_state()
        return dict(self._pending)

    def usage(self) -> Mapping[str, Mapping[str, Mapping[str, int]]]:
        self._fetch_state()
        return copy.deepcopy(self._usage)

    def close(self) -> None:
        if self._proc.poll() is None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=self._timeout)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._selector.close()
        self._stderr.close()

    def __enter__(self) -> OracleScheduler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------------- beyond the protocol

    def reset(self, setup_doc: Mapping[str, Any]) -> None:
        """A new scenario in the same process (sent with its first request, as the first setup is)."""
        self._load(setup_doc)

    def request(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """One request's answer; an error answer raises OracleSessionError (the session goes on)."""
        if not self._started:
            self._start()
        answer = self._exchange(payload)
        if "error" in answer:
            raise OracleSessionError(f"{payload.get('op')}: {answer['error']}")
        return answer

    def raw(self, line: bytes) -> dict[str, Any]:
        """The answer to one line sent as it is (what a broken client would send)."""
        self._send(line)
        return self._answer("a raw line")

    def workload_object(self, workload: Workload) -> dict[str, Any]:
        """The Kueue Workload a job of the timeline makes: queued in the LocalQueue of its namespace that points
        at its ClusterQueue, created at start + created, one pod set per PodSet (one container with the requests
        in Kueue's units, the node selector in the pod template)."""
        namespace, _, name = workload.key.partition("/")
        queue = self._local_queues.get((namespace, workload.cluster_queue))
        if queue is None:
            raise OracleSessionError(f"{workload.key}: no LocalQueue in {namespace} points at "
                                     f"ClusterQueue {workload.cluster_queue}")
        pod_sets = []
        for ps in workload.pod_sets:
            spec: dict[str, Any] = {"containers": [{"name": "main", "resources": {
                "requests": {r: kueue_quantity(r, v) for r, v in ps.requests.items()}}}]}
            if workload.node_selector:
                spec["nodeSelector"] = dict(workload.node_selector)
            pod_sets.append({"name": ps.name, "count": ps.count, "template": {"spec": spec}})
        return {"metadata": {"name": name, "namespace": namespace,
                             "creationTimestamp": self._time(workload.created)},
                "spec": {"queueName": queue, "priority": workload.priority, "podSets": pod_sets}}

    # ---------------------------------------------------------------- internals

    def _load(self, setup_doc: Mapping[str, Any]) -> None:
        self._setup = copy.deepcopy(dict(setup_doc))
        self._start_time = datetime.fromisoformat(str(self._setup.get("now", START)).replace("Z", "+00:00"))
        self._local_queues = {(q["metadata"]["namespace"], q["spec"]["clusterQueue"]): q["metadata"]["name"]
                              for q in self._setup.get("localQueues", [])}
        self._restored: list[dict[str, Any]] = []
        self._live: set[str] = set()  # pending or admitted: what the cycle bound counts
        self._started = False
        self._pending: dict[str, str] = {}
        self._usage: dict[str, dict[str, dict[str, int]]] = {}
        # False after a schedule call until the state op is asked (before the first schedule call the state is
        # the submitted workloads, pending, and no usage).
        self._state_known = True

    def _fetch_state(self) -> None:
        if self._state_known:
            return
        answer = self.request({"op": "state"})
        self._pending = dict(answer["pending"])
        self._usage = {cq: _amounts(per) for cq, per in answer["usage"].items()}
        self._state_known = True

    def _start(self) -> None:
        doc = copy.deepcopy(self._setup)
        doc["workloads"] = [*doc.get("workloads", []), *self._restored]
        if self._sent_setup:
            doc["op"] = "reset"
        answer = self._exchange(doc)
        self._sent_setup = True
        if "error" in answer:
            raise OracleSessionError(f"setup: {answer['error']}")
        self.validation_errors = answer.get("validationErrors") or []
        if self.validation_errors and self._strict:
            raise OracleSessionError(f"setup: Kueue's validation refuses {answer['validationErrors']}")
        self._started = True

    def _time(self, seconds: int) -> str:
        return (self._start_time + timedelta(seconds=seconds)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    def _decision(self, at: int, d: Mapping[str, Any]) -> Decision:
        if d["event"] == "admitted":
            return Decision(at=at, event="admitted", workload=d["workload"], cluster_queue=d["clusterQueue"],
                            flavors={p: dict(r) for p, r in d["flavors"].items()},
                            borrowed=_amounts(d.get("borrowed") or {}))
        return Decision(at=at, event="preempted", workload=d["workload"], cluster_queue=d["clusterQueue"],
                        preemptor=d["preemptor"], reason=d["reason"], message=d.get("message", ""))

    def _exchange(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        self._send(json.dumps(payload, separators=(",", ":")).encode())
        return self._answer(str(payload.get("op", "setup")))

    def _send(self, line: bytes) -> None:
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.write(line + b"\n")
            self._proc.stdin.flush()
        except BrokenPipeError as err:
            raise self._dead("writing a request") from err

    def _answer(self, what: str) -> dict[str, Any]:
        deadline = time.monotonic() + self._timeout
        assert self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not self._selector.select(left):
                raise OracleSessionError(f"kueue-oracle gave no answer to {what} within {self._timeout}s; "
                                         f"stderr:\n{self._stderr_tail()}")
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise self._dead(f"answering {what}")
            self._buffer += chunk
        line, _, rest = self._buffer.partition(b"\n")
        self._buffer = bytearray(rest)
        try:
            return json.loads(line)
        except json.JSONDecodeError as err:
            raise OracleSessionError(f"kueue-oracle answered {what} with no JSON ({err}): {bytes(line)[:TAIL]!r}"
                                     ) from err

    def _dead(self, what: str) -> OracleSessionError:
        try:
            code = self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        return OracleSessionError(f"kueue-oracle ended while {what} (exit code {code}); stderr:\n"
                                  f"{self._stderr_tail()}")

    def _stderr_tail(self) -> str:
        self._stderr.seek(0, os.SEEK_END)
        size = self._stderr.tell()
        self._stderr.seek(max(0, size - TAIL))
        return self._stderr.read().decode(errors="replace")
