"""Where a plan's two sides come from: a saved cdk.out, a git ref's synth, or the deployed templates."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from cdk_app.cli.plan.model import STACK_REMOVAL_DOC, STAND_INS, PlanInputError
from cdk_app.cli.template_shape import TemplateShapeError, check_template
from cdk_app.stacks.layout import environment_of, stack_prefix
from cdk_app.stacks.stamp import DIGEST_KEY, config_digest, digest_stacks, stamp
from cdk_app.support.bounded_read import UnreadableInput, read_bounded


def read_templates(folder: Path) -> dict[str, dict[str, Any]]:
    """Stack name -> template, from a cloud assembly (manifest.json) or a folder of *.template.json."""
    if not folder.is_dir():
        raise PlanInputError(f"{folder}: not a directory (give a cdk.out folder or a folder of *.template.json)")
    manifest = folder / "manifest.json"
    if manifest.is_file():
        files = {name: path for name, (path, _) in _manifest_stacks(folder, manifest).items()}
    else:
        files = {p.name.removesuffix(".template.json"): p for p in sorted(folder.glob("*.template.json"))}
    if not files:
        raise PlanInputError(f"{folder}: no CloudFormation templates in it")
    return {name: checked_template(_json(path), str(path)) for name, path in files.items()}


def termination_protection(folder: Path) -> dict[str, bool]:
    """Stack name -> termination protection, from a cloud assembly's manifest (empty without one)."""
    manifest = folder / "manifest.json"
    if not manifest.is_file():
        return {}
    return {name: protected for name, (_, protected) in _manifest_stacks(folder, manifest).items()}


def check_digest(templates: dict[str, dict[str, Any]], config: Any, where: str) -> None:
    """Refuse a synth that is not of `config` as it is now (edited since, or of another file)."""
    wanted = config_digest(config)
    stamped = digest_stacks(list(templates), str)
    if not stamped:
        raise PlanInputError(f"{where}: no governance or Batch stack in it to read the config digest from: "
                             "synthesize again")
    for stack in stamped:
        found = templates[stack].get("Metadata", {}).get(DIGEST_KEY)
        if found is None:
            raise PlanInputError(f"{where}: stack {stack} carries no config digest (synthesized by an older kit or "
                                 "not by `cdk synth`): synthesize again, or leave out --current")
        if found != wanted:
            raise PlanInputError(f"{where}: stack {stack} was synthesized from another version of the config "
                                 "(the file changed since): synthesize again (make synth), or leave out --current")


def check_account(sts: Any, account: str) -> None:
    """The credentials must be of the config's account; in another one every stack 'does not exist' and the
    plan would show everything as new."""
    from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

    try:
        found = sts.get_caller_identity()["Account"]
    except NoCredentialsError as err:
        raise PlanInputError("no AWS credentials for --against-account: set AWS_PROFILE or pass --profile") from err
    except (BotoCoreError, ClientError) as err:
        raise PlanInputError(f"--against-account: sts:GetCallerIdentity failed: {err}") from err
    if found != account:
        raise PlanInputError(f"--against-account: the credentials are of account {found}, the config deploys to "
                             f"{account}: choose that account's profile (--profile or AWS_PROFILE)")


def environment_stacks(templates: dict[str, dict[str, Any]], environment: str, where: str) -> dict[str, dict[str, Any]]:
    """The stacks of `environment` (HyperPod-<environment>-*); an error when there are none, e.g. a synth
    of another environment."""
    prefix = stack_prefix(environment)
    # Exact: prod's prefix is also the start of prod-eu's stack names.
    mine = {name: template for name, template in templates.items() if environment_of(name) == environment}
    if not mine:
        others = sorted({environment_of(name) for name in templates} - {None})
        renamed = (f"; if the environment was renamed from {' or '.join(others)}: a rename deploys a second set of "
                   f"stacks ({prefix}*) next to the old ones, which stay" if others else "")
        raise PlanInputError(f"{where} holds no stack of environment {environment} ({prefix}*), only: "
                             f"{', '.join(sorted(templates))}{renamed}")
    return mine


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are unique: with a key given twice, JSON readers disagree on which wins."""
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise ValueError(f"key {key!r} given twice in one object")
        found[key] = value
    return found


# A CloudFormation template is at most 1,000,000 bytes (in S3); CDK's manifest and tree files of a large app are a
# few MB. Whatever a path names (a FIFO, /dev/zero behind a symlink), no more than this is read.
MAX_INPUT_BYTES = 64 * 1024 * 1024


def _bounded(path: Path) -> bytes:
    try:
        return read_bounded(str(path), MAX_INPUT_BYTES, example="cdk.out/HyperPod-<env>-cluster.template.json",
                            stdin=False)
    except UnreadableInput as err:
        raise PlanInputError(f"{path}: {err.message}; {err.hint}") from err


def _json(path: Path) -> Any:
    raw = _bounded(path)
    try:
        return json.loads(raw.decode("utf-8"), object_pairs_hook=_unique_keys)
    except (UnicodeDecodeError, ValueError) as err:  # JSONDecodeError is a ValueError
        raise PlanInputError(f"{path}: cannot be read as JSON: {err}") from err
    except RecursionError as err:
        raise PlanInputError(f"{path}: cannot be read as JSON: nested too deeply") from err


def checked_template(template: Any, where: str) -> dict[str, Any]:
    """`template` when it is a CloudFormation template, else PlanInputError naming `where` and the field."""
    try:
        check_template(template, STAND_INS)
    except TemplateShapeError as err:
        raise PlanInputError(f"{where}: not a CloudFormation template: {err}") from err
    return template


def _manifest_stacks(folder: Path, manifest: Path) -> dict[str, tuple[Path | None, bool]]:
    """Stack name -> (template file, termination protection) from a cloud assembly manifest."""
    artifacts = _json(manifest)
    artifacts = artifacts.get("artifacts", {}) if isinstance(artifacts, dict) else None
    if not isinstance(artifacts, dict) or not all(isinstance(a, dict) for a in artifacts.values()):
        raise PlanInputError(f"{manifest}: not a cloud assembly manifest (artifacts must be a mapping of mappings)")
    stacks = {}
    for artifact_id, artifact in artifacts.items():
        if artifact.get("type") != "aws:cloudformation:stack":
            continue
        properties = artifact.get("properties", {})
        if not isinstance(properties, dict) or not isinstance(properties.get("templateFile"), str):
            raise PlanInputError(f"{manifest}: artifacts.{artifact_id}.properties.templateFile: a stack artifact "
                                 "needs the file name of its template")
        stacks[str(properties.get("stackName", artifact_id))] = (folder / properties["templateFile"],
                                                                 bool(properties.get("terminationProtection", False)))
    return stacks


KIT_ROOT = Path(__file__).resolve().parents[3]


def cdk_context(root: Path) -> dict[str, Any]:
    """The feature flags of cdk.json in `root`, which the CDK CLI would pass to the app."""
    path = root / "cdk.json"
    return _json(path).get("context", {}) if path.is_file() else {}


def synthesize(config: Any, outdir: Path) -> Path:
    """The config's cloud assembly, synthesized in this process as `cdk synth` runs app.py (cdk.json's
    feature flags, cdk-nag included)."""
    import os

    node = KIT_ROOT / "node_modules" / ".bin" / "node"
    if node.exists():  # the pinned Node 22, as `npx cdk` uses; read when jsii starts its runtime
        os.environ.setdefault("JSII_NODE", str(node))
    from aws_cdk import App

    from cdk_app.stacks.app_builder import build_app

    # Path metadata (on in `cdk synth`) lets the plan name resources by construct path.
    app = App(outdir=str(outdir), context={**cdk_context(KIT_ROOT), "aws:cdk:enable-path-metadata": True},
              builtin_cloud_formation_validation=False)
    build_app(app, config)
    stamp(app, config)
    try:
        app.synth()
    except RuntimeError as err:  # jsii's wrapper of the synth's own failure, e.g. cdk-nag's verdict
        raise PlanInputError(f"synthesizing {config.environment} failed: {str(err).splitlines()[0]}") from err
    return outdir


# Runs a git ref's own app.py with this virtualenv: its cdk_app and constructs/ come first on the path.
_REF_BOOT = """
import runpy, sys, types
src = sys.argv[1]
sys.path.insert(0, src)
package = types.ModuleType("hyperpod_constructs")
package.__path__ = [src + "/constructs"]
sys.modules["hyperpod_constructs"] = package
sys.argv = [src + "/app.py"]
runpy.run_path(src + "/app.py", run_name="__main__")
"""


def resolve_ref(repo: Path, ref: str) -> str:
    """The commit `ref` names, resolved before any other git call sees it: a value starting with '-' would
    be read by git as an option (`--output=FILE` makes `git archive` truncate FILE), so it is refused, and
    only the resolved hexadecimal commit id is passed on."""
    import subprocess

    if not ref or ref.startswith("-") or any(ord(c) < 32 or ord(c) == 127 for c in ref):
        raise PlanInputError(f"--against-ref {ref!r}: not a git ref (a branch, tag or commit; it cannot be empty, "
                             "start with '-' or hold control characters)")
    found = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", "--end-of-options",
                            f"{ref}^{{commit}}"], capture_output=True, text=True)
    commit = found.stdout.strip()
    if found.returncode != 0 or not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", commit):
        raise PlanInputError(f"--against-ref {ref!r}: no such commit in {repo} (git rev-parse --verify: "
                             f"{found.stderr.strip() or 'unknown revision'})")
    return commit


def synthesize_ref(repo: Path, ref: str, config_path: str, environment: str, workdir: Path) -> Path | None:
    """The cloud assembly of `config_path` as the repository was at `ref` (its code and its config), or None
    when the ref has no such file (an environment added since: nothing of it can be deployed yet)."""
    import os
    import subprocess
    import sys

    source, outdir = workdir / "source", workdir / "cdk.out"
    source.mkdir(parents=True)
    commit = resolve_ref(repo, ref)
    archive = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", commit], capture_output=True)
    if archive.returncode != 0:
        raise PlanInputError(f"git ref {ref!r}: {archive.stderr.decode(errors='replace').strip()}")
    subprocess.run(["tar", "-x", "-C", str(source)], input=archive.stdout, check=True)
    if not (source / config_path).is_file():
        return None
    declared = re.search(r"^environment:\s*[\"']?([\w-]+)", _bounded(source / config_path).decode(errors="replace"),
                         re.M)
    if declared and declared.group(1) != environment:
        old = declared.group(1)
        raise PlanInputError(f"environment renamed: {config_path} says environment: {environment}, at {ref} it said "
                             f"{old}. A rename deploys a second set of stacks ({stack_prefix(environment)}*) next to "
                             f"{stack_prefix(old)}*, which stay, and their fixed names (cluster, quotas) collide; keep "
                             f"environment: {old}, or create the new environment deliberately and retire the old one "
                             f"({STACK_REMOVAL_DOC})")
    node = repo / "node_modules" / ".bin"
    env = {**os.environ, "CDK_OUTDIR": str(outdir),
           "CDK_CONTEXT_JSON": json.dumps({**cdk_context(source), "env": environment,
                                           "config": str(source / config_path)})}
    if (node / "node").exists():
        env.update(PATH=f"{node}{os.pathsep}{env.get('PATH', '')}", JSII_NODE=str(node / "node"))
    result = subprocess.run([sys.executable, "-c", _REF_BOOT, str(source)], cwd=source, env=env,
                            capture_output=True, text=True, timeout=900)
    if result.returncode != 0:
        tail = "\n".join(result.stderr.strip().splitlines()[-15:])
        raise PlanInputError(f"synthesizing {config_path} at {ref} failed:\n{tail}")
    return outdir


def deployed_templates(cloudformation: Any, stacks: list[str]) -> dict[str, dict[str, Any]]:
    """The templates of `stacks` as deployed (CloudFormation GetTemplate, read-only); a stack that does not
    exist yet is left out, so everything in it shows as created."""
    from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

    templates = {}
    for stack in stacks:
        try:
            body = cloudformation.get_template(StackName=stack, TemplateStage="Original")["TemplateBody"]
        except NoCredentialsError as err:
            raise PlanInputError("no AWS credentials for --against-account: set AWS_PROFILE or pass --profile") from err
        except ClientError as err:
            if "does not exist" in err.response.get("Error", {}).get("Message", ""):
                continue
            raise PlanInputError(f"cloudformation:GetTemplate {stack} failed: {err}") from err
        except BotoCoreError as err:
            raise PlanInputError(f"cloudformation:GetTemplate {stack} failed: {err}") from err
        where = f"the deployed template of {stack}"
        try:
            parsed = body if isinstance(body, dict) else json.loads(body, object_pairs_hook=_unique_keys)
        except (ValueError, RecursionError) as err:  # a YAML template body, or a broken one
            raise PlanInputError(f"{where}: cannot be read as JSON: {err}") from err
        templates[stack] = checked_template(parsed, where)
    return templates


def deployed_protection(cloudformation: Any, stacks: list[str]) -> dict[str, bool]:
    """Termination protection of each deployed stack (cloudformation:DescribeStacks, read-only)."""
    from botocore.exceptions import BotoCoreError, ClientError

    found = {}
    for stack in stacks:
        try:
            described = cloudformation.describe_stacks(StackName=stack)["Stacks"]
        except (BotoCoreError, ClientError) as err:
            raise PlanInputError(f"cloudformation:DescribeStacks {stack} failed: {err}") from err
        found[stack] = bool(described and described[0].get("EnableTerminationProtection", False))
    return found
