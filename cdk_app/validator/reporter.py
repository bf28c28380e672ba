"""Collects the rules' findings, each placed at the line of its field path; helpers every rule uses."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from datetime import datetime

from cdk_app.config.model import (
    KitConfig,
)
from cdk_app.config.yaml_source import PathKey, SourceMap
from cdk_app.domain.cron_schedules import utc_naive
from cdk_app.findings import Finding, Severity, format_path


class Reporter:
    """Collects findings, placing each at the line of its field path."""

    def __init__(self, source: SourceMap, now: datetime | None = None) -> None:
        self.source = source
        # The moment the rules judge dates against (UTC, naive): the clock's unless a caller fixes it.
        self.now = utc_naive(now)
        self.findings: list[Finding] = []
        self.suggestions: dict[str, str | None] = {}  # did-you-mean per unknown instance type
        # Keys whose value no rule can read (an unknown instance type): findings that may follow from them are
        # held back (cdk_app.validator.report).
        self.unreadable: list[PathKey] = []

    def add(self, severity: Severity, code: str, path: PathKey, message: str, hint: str,
            reads: tuple[PathKey, ...] | None = None) -> None:
        where = self.source.locate(path)
        self.findings.append(
            Finding(code, severity, self.source.file, where.line, where.column, format_path(path), message, hint,
                    None if reads is None else tuple(format_path(read) for read in reads))
        )

    def error(self, code: str, path: PathKey, message: str, hint: str, reads: tuple[PathKey, ...] | None = None) -> None:
        self.add(Severity.ERROR, code, path, message, hint, reads)

    def warning(self, code: str, path: PathKey, message: str, hint: str,
                reads: tuple[PathKey, ...] | None = None) -> None:
        self.add(Severity.WARNING, code, path, message, hint, reads)


Rule = Callable[[KitConfig, Reporter], None]


def duplicates(names: Iterable[str]) -> set[str]:
    return {name for name, seen in Counter(names).items() if seen > 1}


def report_repeats(report: Reporter, code: str, items: list[tuple[PathKey, str]], what: str) -> None:
    """Report every repeat after the first of a name, pointing back at the first."""
    first: dict[str, PathKey] = {}
    for path, name in items:
        if name in first:
            report.error(code, path, f"{what} '{name}' is defined twice (first at {format_path(first[name])})",
                         f"each {what} needs a unique name")
        else:
            first[name] = path
