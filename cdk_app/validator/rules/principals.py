"""IAM principals in the config: administrators, team roles, and ARNs in the environment's account."""

from __future__ import annotations

import re

from cdk_app.config.model import (
    KitConfig,
)
from cdk_app.config.yaml_source import PathKey
from cdk_app.findings import format_path
from cdk_app.validator.reporter import Reporter
from cdk_app.validator.rules.kinds import has_cluster
from cdk_app.validator.rules.region import partition
from hyperpod_constructs.private.access_entry_keys import admin_entry_key
from hyperpod_constructs.private.role_trust import TRUST_POLICY_LIMIT, policy_size, trust_policy

_PRINCIPAL = re.compile(r"arn:(?P<partition>aws[a-z-]*):(?P<service>iam|sts)::(?P<account>[0-9]{12}):"
                        r"(?P<kind>[a-z-]+)(?P<rest>/.*)?")


MAX_IAM_NAME = 64


def principal_problem(arn: str, config: KitConfig, cross_account: bool) -> str | None:
    """Why `arn` may not be a team or admin principal, or None. Only IAM roles and users can be access entries
    and trust-policy principals that name one identity."""
    match = _PRINCIPAL.fullmatch(arn)
    if match is None:
        return "not an IAM role or user ARN"
    kind, rest = match["kind"], match["rest"] or ""
    if match["service"] == "sts":
        return ("an STS session (assumed-role), which ends when the session does; "
                "name the role: arn:aws:iam::<account>:role/<name>")
    if kind == "root":
        return "the account root, which lets every IAM identity of the account in; name a role or user"
    if kind == "group":
        return "an IAM group, which cannot be a principal; name its users or a role"
    if kind not in ("role", "user") or not rest.strip("/"):
        return f"an IAM {kind}, not a role or user"
    if len(rest.rsplit("/", 1)[-1]) > MAX_IAM_NAME:
        return f"the {kind} name is longer than {MAX_IAM_NAME} characters"
    if match["partition"] != partition(config.region):
        return f"partition {match['partition']} is not the one of {config.region} ({partition(config.region)})"
    if match["account"] != config.account and not cross_account:
        return f"account {match['account']} is not the config's account {config.account}"
    return None


def check_principals(config: KitConfig, report: Reporter) -> None:
    """Admins and HyperPod teams (with a cluster), and Batch teams: the same rule for every principal."""
    for i, team in enumerate(config.batch.teams if config.batch is not None else ()):
        for j, arn in enumerate(team.principals):
            why = principal_problem(arn, config, cross_account=False)
            if why:
                report.error("HPK111", ("batch", "teams", i, "principals", j), f"{arn[:120]!r} cannot act as "
                             f"Batch team '{team.name}': {why}", f"name an IAM role or user of account {config.account}")
    if not has_cluster(config):
        return
    for j, arn in enumerate(config.eks.admin_principals):
        why = principal_problem(arn, config, cross_account=False)
        if why:
            report.error("HPK111", ("eks", "admin_principals", j), f"{arn[:120]!r} cannot be a cluster administrator: {why}",
                         f"administrators are IAM roles or users of account {config.account} (same account only)")
    _check_admin_entries(config.eks.admin_principals, report)
    for i, team in enumerate(config.teams):
        for j, arn in enumerate(team.principals):
            why = principal_problem(arn, config, cross_account=team.allow_cross_account)
            if why:
                allow = " or set allow_cross_account: true on the team" if "not the config's account" in why else ""
                report.error("HPK111", ("teams", i, "principals", j), f"{arn[:120]!r} cannot act as team "
                             f"'{team.name}': {why}", f"name an IAM role or user of account {config.account}{allow}")
        size = policy_size(trust_policy(team.principals)) if team.principals else 0
        if size > TRUST_POLICY_LIMIT:
            report.error("HPK170", ("teams", i, "principals"),
                         f"team '{team.name}''s role would have a {size:,}-character trust policy "
                         f"({len(set(team.principals))} principals), over IAM's limit of {TRUST_POLICY_LIMIT:,} characters",
                         "trust fewer principals, e.g. one IAM role the team's people assume (IAM's default quota; each "
                         "principal ARN counts with its quotes and comma)")


def _check_admin_entries(admins: tuple[str, ...], report: Reporter) -> None:
    """Each administrator gets an access entry whose construct id comes from its ARN (admin_entry_key, kept as
    deployed: '/' becomes '-'); two admins with one id cannot both be synthesized. IAM names are unique in an
    account regardless of case and path (IAM CreateRole: "Names are not distinguished by case"), so two ARNs
    naming one role or user name cannot both exist."""
    by_arn: dict[str, int] = {}
    by_key: dict[str, int] = {}
    by_name: dict[tuple[str, str, str], int] = {}
    for j, arn in enumerate(admins):
        path: PathKey = ("eks", "admin_principals", j)
        parts = arn.split(":", 5)
        key, name = admin_entry_key(arn), (parts[4], parts[5].split("/", 1)[0], parts[5].rsplit("/", 1)[-1].lower())
        if arn in by_arn:
            report.error("HPK161", path, f"administrator {arn[:120]!r} is listed twice (first at "
                         f"{format_path(('eks', 'admin_principals', by_arn[arn]))})", "list each administrator once")
        elif key in by_key:
            other = admins[by_key[key]]
            report.error("HPK161", path, f"administrators {other[:120]!r} and {arn[:120]!r} would both get the "
                         f"access entry Admin-{key[:120]} ('/' of a path reads as '-'), which cannot be created twice",
                         "give one of the two an IAM name or path that differs in more than '/' and '-' "
                         "(the entry ids stay as deployed, so no administrator's entry is replaced)")
        elif name in by_name:
            other = admins[by_name[name]]
            report.error("HPK161", path, f"administrators {other[:120]!r} and {arn[:120]!r} name one IAM {name[1]} "
                         f"({name[2]!r}): IAM names are unique in an account regardless of case and path, so at "
                         "most one of these ARNs exists", "keep the ARN that IAM shows for the role or user")
        by_arn.setdefault(arn, j)
        by_key.setdefault(key, j)
        by_name.setdefault(name, j)
