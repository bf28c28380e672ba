"""The environment's acknowledged warnings (config `acknowledged_warnings`): which warnings of the report they
cover, and the findings about the acknowledgements themselves (HPK030, HPK031)."""

from __future__ import annotations

from dataclasses import dataclass

from cdk_app.config.model import KitConfig
from cdk_app.findings import CODES, Finding, Severity
from cdk_app.validator.reporter import Reporter

# The acknowledgement findings cannot be acknowledged: a stale acknowledgement would excuse itself.
OWN_CODES = ("HPK030", "HPK031")


@dataclass(frozen=True, slots=True)
class Acknowledged:
    finding: Finding
    reason: str
    by: str  # the acknowledgement's path, e.g. acknowledged_warnings[0]

    def to_json(self) -> dict[str, object]:
        return {**self.finding.to_json(), "reason": self.reason, "acknowledged_by": self.by}


def acknowledge(config: KitConfig, reporter: Reporter, findings: list[Finding], held_back: list[Finding]
                ) -> tuple[list[Finding], list[Acknowledged]]:
    """(the findings that still count, the warnings acknowledged). Findings about the acknowledgements go to
    `reporter`. A held-back warning counts as matched: it is still in the file, only not judged yet."""
    acknowledged: dict[int, Acknowledged] = {}  # by id of the finding: the first acknowledgement that matches
    standing = {id(f) for f in findings}
    for i, ack in enumerate(config.acknowledged_warnings):
        path = ("acknowledged_warnings", i)
        where = f" at {ack.path}" if ack.path is not None else ""
        matches = [f for f in findings + held_back if f.code == ack.code and (ack.path is None or f.path == ack.path)]
        errors = [f for f in matches if f.severity is Severity.ERROR]
        if ack.code not in CODES or ack.code in OWN_CODES:
            what = "is no finding code of the kit" if ack.code not in CODES else "is about acknowledgements themselves"
            reporter.error("HPK030", (*path, "code"), f"{ack.code} {what}: it cannot be acknowledged",
                           "acknowledge a warning validate prints, by its code (and path)")
        elif errors:
            reporter.error("HPK030", (*path, "code"),
                           f"{ack.code}{where} is an error (line {errors[0].line}): errors cannot be acknowledged",
                           "fix the error; only warnings can be acknowledged")
        elif not matches:
            reporter.warning("HPK031", path, f"acknowledges {ack.code}{where}, but validate finds no such warning",
                             "the warning is gone (remove the acknowledgement) or the code or path is wrong "
                             "(validate prints both: code in brackets, path before the colon)")
        for finding in matches:
            if finding.severity is Severity.WARNING and id(finding) in standing:
                acknowledged.setdefault(id(finding), Acknowledged(finding, ack.reason, f"acknowledged_warnings[{i}]"))
    return [f for f in findings if id(f) not in acknowledged], list(acknowledged.values())
