"""Synthesized cloud assemblies shared by the whole test run: each distinct (way of synthesizing, config text)
is synthesized once, whichever test or xdist worker asks first, into a folder every worker of the run sees
(the run's pytest base folder); the others wait on a file lock and read the same folder."""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CDK = ROOT / "node_modules" / ".bin" / "cdk"


def offline_env() -> dict[str, str]:
    """No AWS credentials or profile of any kind, and every HTTP(S) request sent to a port nothing
    listens on: synth must need neither credentials nor network."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_") and "proxy" not in k.lower()}
    env.update(AWS_CONFIG_FILE="/nonexistent", AWS_SHARED_CREDENTIALS_FILE="/nonexistent",
               AWS_EC2_METADATA_DISABLED="true", CDK_DISABLE_VERSION_CHECK="true",
               HTTP_PROXY="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9",
               http_proxy="http://127.0.0.1:9", https_proxy="http://127.0.0.1:9")
    return env


def cli_synth(out: Path, *context: str, version_reporting: bool = False) -> subprocess.CompletedProcess:
    """The real CDK CLI, offline, as an admin runs `cdk synth`."""
    assert CDK.exists(), "run `make setup` to install the pinned CDK CLI"
    args = [str(CDK), "synth", "--quiet", "--no-notices", "-o", str(out)]
    if not version_reporting:
        args.append("--no-version-reporting")
    for item in context:
        args += ["-c", item]
    return subprocess.run(args, cwd=ROOT, env=offline_env(), capture_output=True, text=True, timeout=900)


def shared_folder(tmp_path_factory) -> Path:
    """The run's folder: under xdist each worker's base folder sits in it; alone, the base folder itself."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "shared-synths"
    folder.mkdir(exist_ok=True)
    return folder


def cached(tmp_path_factory, kind: str, text: str, make: Callable[[Path], None]) -> Path:
    """The folder `make` fills for (kind, text), made once per run; `make` raises to fail."""
    key = hashlib.sha256(f"{kind}\0{text}".encode()).hexdigest()[:16]
    folder = shared_folder(tmp_path_factory) / f"{kind}-{key}"
    with open(folder.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        done = folder / ".done"
        if not done.exists():
            folder.mkdir(exist_ok=True)
            make(folder)
            done.touch()
    return folder


def env_assembly(tmp_path_factory, env: str) -> Path:
    """config/<env>.yaml synthesized by the real CLI, offline (`cdk synth -c env=<env>`): the cloud assembly."""

    def make(folder: Path) -> None:
        result = cli_synth(folder / "cdk.out", f"env={env}")
        assert result.returncode == 0, result.stderr

    text = (ROOT / "config" / f"{env}.yaml").read_text()
    return cached(tmp_path_factory, f"cli-{env}", text, make) / "cdk.out"


def environment_of(text: str) -> str:
    """The `environment:` of a config text: app.py checks that -c env names it."""
    import yaml

    return str(yaml.safe_load(text)["environment"])


def config_assembly(tmp_path_factory, text: str, name: str = "env.yaml", version_reporting: bool = False) -> Path:
    """Any config text synthesized by the real CLI (`cdk synth -c config=<file>`): the cloud assembly."""

    def make(folder: Path) -> None:
        path = folder / name
        path.write_text(text)
        result = cli_synth(folder / "cdk.out", f"env={environment_of(text)}", f"config={path}",
                           version_reporting=version_reporting)
        assert result.returncode == 0, result.stderr[-3000:]

    return cached(tmp_path_factory, f"cli-config-{version_reporting}", text, make) / "cdk.out"


def cfn_lint(templates: list[str], region: str) -> subprocess.CompletedProcess:
    """cfn-lint, the one in this environment, over `templates` for `region` (W3005, CDK's redundant DependsOn,
    ignored as everywhere in the tests)."""
    return subprocess.run([str(Path(sys.executable).parent / "cfn-lint"), "--regions", region,
                           "--ignore-checks", "W3005", "--", *templates], capture_output=True, text=True)
