#!/usr/bin/env python3
"""CDK entry point: `cdk synth -c env=<name>` builds config/<name>.yaml; `-c env=<name> -c config=<file>`
builds any file as environment <name>; `-c teardown=<name>` (the same name) builds it for the last steps of
`hyperpod-kit teardown`, where a delete of the network stack removes the network instead of keeping it;
`-c validated=true` says the caller has just run `hyperpod-kit validate` (its warnings are not printed again).

There is no default environment: a command without one would deploy whichever the default was. The file's
`environment` (which names the stacks) must be the name it was selected by - a copy of dev.yaml selected as
qa would otherwise deploy, and replace, the dev stacks. `-c config` alone is refused for the same reason: the
name typed on the command line is the check, so it is required rather than taken from the file. The config is validated before any construct exists;
an invalid config prints its findings and synthesizes nothing. This is the only place that reads CDK context.
"""

from __future__ import annotations

import sys
from pathlib import Path

from aws_cdk import App

from cdk_app.config.loader import ConfigInvalid, LoadedConfig, load_config
from cdk_app.findings import Finding, Severity
from cdk_app.stacks.app_builder import build_app
from cdk_app.stacks.stamp import stamp
from cdk_app.validator.report import validate

CONFIG_DIR = Path(__file__).resolve().parent / "config"


def main() -> int:
    # CDK's built-in template check would re-lint every template on every synth (over a second here);
    # the validator checks the config before synth and cfn-lint, with its region data, checks every
    # template in CI (tests/stacks/test_synth.py), so admins' synths stay fast.
    app = App(builtin_cloud_formation_validation=False)
    env_name = app.node.try_get_context("env")
    config_file = app.node.try_get_context("config")
    known = ", ".join(sorted(p.stem for p in CONFIG_DIR.glob("*.yaml"))) or "none"
    if not env_name:
        also = (f" (-c config={config_file} needs it too: the environment named on the command line is checked "
                "against the file's, so a copy of another environment's file cannot deploy over its stacks)"
                if config_file else "")
        print(f"no environment given: add -c env=<name> for config/<name>.yaml (environments: {known}){also}",
              file=sys.stderr)
        return 2
    teardown = app.node.try_get_context("teardown")
    if teardown is not None and teardown != env_name:
        # Named, not a bare flag: releasing the network of another environment than the one built is refused.
        print(f"-c teardown={teardown} must name the environment being built (-c teardown={env_name}); it "
              "releases that environment's network for deletion (see hyperpod-kit teardown)", file=sys.stderr)
        return 2
    config_path = Path(config_file or CONFIG_DIR / f"{env_name}.yaml").resolve()
    shown = str(config_path.relative_to(Path.cwd())) if config_path.is_relative_to(Path.cwd()) else str(config_path)
    if not config_file and not config_path.is_file():
        print(f"{shown} does not exist: -c env={env_name} names no environment (environments: {known})",
              file=sys.stderr)
        return 2
    try:
        loaded = load_config(config_path, shown)
        findings = validate(loaded).findings + environment_mismatch(loaded, env_name)
    except ConfigInvalid as err:
        loaded, findings = None, err.findings
    # -c validated=true: the caller (make synth, CI) has just run `hyperpod-kit validate` and printed the
    # warnings; they are counted here, not printed twice. Errors are always printed.
    validated = app.node.try_get_context("validated") in (True, "true")
    shown_findings = [f for f in findings if not (validated and f.severity is Severity.WARNING)]
    for finding in shown_findings:
        print(finding.render(), file=sys.stderr)
    if len(shown_findings) < len(findings):
        print(f"{shown}: {len(findings) - len(shown_findings)} warning(s), printed by validate above", file=sys.stderr)
    if loaded is None or any(f.severity.value == "error" for f in findings):
        print(f"{shown}: nothing synthesized; fix the errors above (check with: hyperpod-kit validate {shown})",
              file=sys.stderr)
        return 1
    build_app(app, loaded.config, teardown=teardown is not None)
    stamp(app, loaded.config)  # `plan --current` checks the synth is of this config
    app.synth()
    return 0


def environment_mismatch(loaded: LoadedConfig, selected: str) -> list[Finding]:
    """HPK020 when the file's environment (the stacks' name) is not the name it was selected by."""
    declared = loaded.config.environment
    if declared == selected:
        return []
    where = loaded.source.locate(("environment",))
    return [Finding("HPK020", Severity.ERROR, loaded.source.file, where.line, where.column, "environment",
                    f"selected with -c env={selected} but the file says environment: {declared}, so its stacks "
                    f"would be HyperPod-{declared}-* - the {declared} environment's, which this deploy would change",
                    f"set environment: {selected} in the file (it names the stacks), or select -c env={declared}")]


if __name__ == "__main__":
    sys.exit(main())
