#!/usr/bin/env python3
"""CDK entry point: `cdk synth -c env=<name>` builds config/<name>.yaml (default dev).

The config is validated before any construct exists; an invalid config prints its findings and
synthesizes nothing. This is the only place that reads CDK context.
"""

from __future__ import annotations

import sys
from pathlib import Path

from aws_cdk import App

from cdk_app.app_builder import build_app
from cdk_app.config.loader import ConfigInvalid, load_config
from cdk_app.validator.report import validate

CONFIG_DIR = Path(__file__).resolve().parent / "config"


def main() -> int:
    # CDK's built-in template check would re-lint every template on every synth (over a second here);
    # the validator checks the config before synth and cfn-lint, with its region data, checks every
    # template in CI (tests/test_synth.py), so admins' synths stay fast.
    app = App(builtin_cloud_formation_validation=False)
    env_name = app.node.try_get_context("env") or "dev"
    config_path = Path(app.node.try_get_context("config") or CONFIG_DIR / f"{env_name}.yaml").resolve()
    shown = str(config_path.relative_to(Path.cwd())) if config_path.is_relative_to(Path.cwd()) else str(config_path)
    try:
        loaded = load_config(config_path, shown)
        findings = validate(loaded).findings
    except ConfigInvalid as err:
        loaded, findings = None, err.findings
    for finding in findings:
        print(finding.render(), file=sys.stderr)
    if loaded is None or any(f.severity.value == "error" for f in findings):
        print(f"{shown}: nothing synthesized; fix the errors above (check with: hyperpod-kit validate {shown})",
              file=sys.stderr)
        return 1
    build_app(app, loaded.config)
    app.synth()
    return 0


if __name__ == "__main__":
    sys.exit(main())
