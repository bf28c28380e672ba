"""`hyperpod-kit check CONFIG --team TEAM FILE`: a manifest written or edited by hand, put through the admission
guardrails of the environment offline, with the verdict the cluster's API server gives a member of the team.

The rules are the ones the governance stack installs (guardrail_manifests), evaluated by the kit's in-process
admission model (cdk_app.kubernetes.guardrails.admission), which the tests hold to the real API server's verdicts.
What the API server checks besides them - the object's schema, the team's RBAC - is not repeated here, except
the one RBAC fact a hand edit breaks most: a team works in its own namespace only."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import yaml

from cdk_app.config.model import KitConfig
from cdk_app.config.names import team_namespace
from cdk_app.kubernetes.guardrails import guardrail_manifests
from cdk_app.kubernetes.guardrails.admission import ADMITTED_KINDS, admit, create_request
from cdk_app.kubernetes.team_rbac import team_group
from cdk_app.support.bounded_read import UnreadableInput, read_bounded
from cdk_app.support.text_table import printable

# A manifest file of a job and its helpers is a few KiB; anything past this is not one.
MAX_MANIFEST_BYTES = 16 * 1024 * 1024
EXIT_REFUSED, EXIT_UNREADABLE = 1, 2
# YAML aliases are references: a few lines can stand for billions of nodes, which evaluating the rules would walk.
MAX_EXPANDED_NODES = 1_000_000


class ManifestInputError(Exception):
    """The file is not a list of Kubernetes objects; the message names the file, line and what is expected."""


@dataclass(frozen=True)
class Outcome:
    line: int  # where the object starts in the file, 1-based
    what: str  # Kind/name
    refusals: tuple[str, ...] = ()
    note: str | None = None  # said of an object no guardrail checks

    @property
    def admitted(self) -> bool:
        return not self.refusals


def read_objects(path: str) -> list[tuple[int, dict[str, Any]]]:
    """(line, object) of every YAML document of the file (or - for standard input); empty documents skipped."""
    name = "standard input" if path == "-" else path
    try:
        text = read_bounded(path, MAX_MANIFEST_BYTES, example="job.yaml").decode("utf-8")
    except UnreadableInput as err:
        raise ManifestInputError(f"{name}: {err.message} ({err.hint})") from err
    except UnicodeDecodeError as err:
        raise ManifestInputError(f"{name}: not UTF-8 text; give a YAML or JSON manifest") from err
    try:
        nodes = [node for node in yaml.compose_all(text, Loader=yaml.SafeLoader) if node is not None]
        for node in nodes:
            if _expanded_size(node, {}) > MAX_EXPANDED_NODES:
                raise ManifestInputError(f"{name}:{node.start_mark.line + 1}: its aliases expand to more than "
                                         f"{MAX_EXPANDED_NODES} YAML nodes; no manifest is that large")
        documents = [(node.start_mark.line + 1, yaml.SafeLoader("").construct_document(node)) for node in nodes]
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"{name}:{mark.line + 1}:{mark.column + 1}" if mark else name
        raise ManifestInputError(f"{where}: not valid YAML ({err.problem or err.context})") from err
    except yaml.YAMLError as err:
        raise ManifestInputError(f"{name}: not valid YAML ({err})") from err
    objects = []
    for line, document in documents:
        # kubectl apply takes a v1 List (kubectl get -o yaml writes one) as its items.
        listed = isinstance(document, dict) and document.get("kind") == "List" and isinstance(document.get("items"), list)
        for obj in document["items"] if listed else [document]:
            if obj is not None:
                objects.append((line, _kubernetes_object(obj, name, line)))
    if not objects:
        raise ManifestInputError(f"{name}: no Kubernetes object in it")
    return objects


def _expanded_size(node: yaml.Node, sizes: dict[int, int]) -> int:
    """How many nodes `node` is once every alias is expanded (each distinct node counted once per use)."""
    if id(node) not in sizes:
        sizes[id(node)] = 0  # a recursive alias (never a manifest) counts nothing more the second time round
        children = [item for pair in node.value for item in pair] if isinstance(node, yaml.MappingNode) else \
            node.value if isinstance(node, yaml.SequenceNode) else []
        sizes[id(node)] = min(1 + sum(_expanded_size(child, sizes) for child in children), MAX_EXPANDED_NODES + 1)
    return sizes[id(node)]


def _kubernetes_object(obj: Any, name: str, line: int) -> dict[str, Any]:
    """`obj` when it has what every Kubernetes object has (apiVersion, kind, metadata), else why not."""
    if not isinstance(obj, dict) or not isinstance(obj.get("kind"), str) or not isinstance(obj.get("apiVersion"), str):
        raise ManifestInputError(f"{name}:{line}: not a Kubernetes object (expected a mapping with apiVersion "
                                 "and kind, e.g. the output of hyperpod-kit job)")
    if not isinstance(obj.get("metadata"), dict):
        raise ManifestInputError(f"{name}:{line}: {printable(obj['kind'])} has no metadata mapping "
                                 "(metadata.name is required)")
    return obj


def check_object(config: KitConfig, team: str, obj: dict[str, Any], line: int,
                 manifests: list[dict[str, Any]]) -> Outcome:
    """The verdict for one object created by a member of `team` (kubectl apply with the team's role)."""
    what = f"{printable(obj['kind'])}/{printable(str(obj['metadata'].get('name', '?')))}"
    own = team_namespace(team)
    namespace = obj["metadata"].get("namespace") or own  # left out (or empty): kubectl -n <own> puts it there
    if namespace != own:
        return Outcome(line, what, (f"namespace {printable(str(namespace))}: team {team}'s role works in {own} only "
                                    f"(leave metadata.namespace out, or write {own})",))
    kind = ADMITTED_KINDS.get(obj["kind"])
    if kind is None or f"{kind.group}/{kind.version}".lstrip("/") != obj["apiVersion"]:
        return Outcome(line, what, note=f"no guardrail checks {printable(obj['apiVersion'])} {printable(obj['kind'])} "
                                        "(the team's RBAC decides whether it may create it)")
    username = f"arn:aws:sts::{config.account}:assumed-role/{team_group(team)}/hyperpod-kit-check"
    request = create_request(obj, kind, namespace, username, (team_group(team), "system:authenticated"))
    verdict = admit(manifests, request, obj, None)
    refusals = (*verdict.denials, *(f"a guardrail could not be evaluated, which refuses the request: {e}"
                                    for e in verdict.errors))
    return Outcome(line, what, tuple(refusals))


@click.command("check")
@click.argument("config_path", metavar="CONFIG", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("manifest", metavar="FILE")
@click.option("--team", required=True, help="The team whose member applies FILE (its namespace hyperpod-ns-<team>).")
def check(config_path: Path, manifest: str, team: str) -> None:
    """Check a manifest written or edited by hand (FILE, or - for standard input) against the environment's
    admission guardrails, offline, as the cluster checks it when a member of TEAM applies it: the queue and
    priority labels, the pod security rules, GPU visibility, tolerations, services. The verdict is the API
    server's for those rules (the tests compare the two), except for fields of features Kubernetes 1.33 has
    off and drops before admission: check refuses pod-level resources above the team's caps, which take
    effect from 1.34, where the same policies refuse them. The object's schema and the team's RBAC are the
    API server's own checks.

    Exit status: 0 every object admitted, 1 an object refused (each reason printed) or the config has errors,
    2 FILE or CONFIG cannot be read, TEAM is no team of CONFIG, or bad usage.
    """
    from cdk_app.cli.report_table import render_table
    from cdk_app.validator.report import check_file

    try:
        objects = read_objects(manifest)
    except ManifestInputError as err:
        click.echo(str(err), err=True)
        sys.exit(EXIT_UNREADABLE)
    report = check_file(config_path, str(config_path))
    if report.loaded is None or report.errors:
        click.echo(render_table(report), err=True)
        sys.exit(report.exit_code)
    config = report.loaded.config
    if config.hyperpod is None or team not in {t.name for t in config.teams}:
        known = ", ".join(t.name for t in config.teams) or "none (no HyperPod teams)"
        raise click.BadParameter(f"{team!r} is no HyperPod team of {config_path} (teams: {known})", param_hint="--team")
    manifests = guardrail_manifests(config)
    name = "standard input" if manifest == "-" else manifest
    outcomes = [check_object(config, team, obj, line, manifests) for line, obj in objects]
    for outcome in outcomes:
        if outcome.admitted:
            click.echo(f"{name}:{outcome.line}: {outcome.what}: admitted" + (f" - {outcome.note}" if outcome.note else ""))
        for refusal in outcome.refusals:
            click.echo(f"{name}:{outcome.line}: {outcome.what}: refused: {refusal}")
    refused = [o for o in outcomes if not o.admitted]
    verdict = f"refused: {len(refused)} of {len(outcomes)} object(s)" if refused else f"admitted: {len(outcomes)} object(s)"
    click.echo(f"{verdict} (team {team}, environment {config.environment})")
    sys.exit(EXIT_REFUSED if refused else 0)
