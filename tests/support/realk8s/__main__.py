"""`make k8s-up ENV=<env>` / `make k8s-down ENV=<env>`: a loopback control plane with config/<env>.yaml's
Kubernetes side applied. The last line of `up` is KUBECONFIG=<path> (the admin's); act as a team member with
kubectl --as=<anyone> --as-group=hyperpod-team-<team>."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

from cdk_app.config.loader import ConfigInvalid, load_config
from support.paths import ROOT
from support.realk8s import controlplane, go_binary
from support.realk8s.environment import apply_environment


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m support.realk8s", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("up", "down"))
    parser.add_argument("--env", required=True, help="config/<env>.yaml")
    parser.add_argument("--dir", help="state, certificates and logs (default .k8s/<env>)")
    args = parser.parse_args(argv)
    state_dir = Path(args.dir or ROOT / ".k8s" / args.env).resolve()
    if args.command == "down":
        return controlplane.main(["down", "--dir", str(state_dir)])
    config_path = ROOT / "config" / f"{args.env}.yaml"
    try:
        config = load_config(config_path, f"config/{args.env}.yaml").config
    except ConfigInvalid as err:
        for finding in err.findings:
            print(finding.render(), file=sys.stderr)
        return 2
    bin_dir = controlplane.resolve_bin_dir(None)
    # The control plane's own KUBECONFIG line goes to stderr: stdout's last line is printed once the
    # environment is applied, and never for a start that failed.
    with contextlib.redirect_stdout(sys.stderr):
        code = controlplane.main(["up", "--dir", str(state_dir), "--bin-dir", str(bin_dir)])
    if code != 0:
        return code
    kubeconfig = state_dir / "admin.kubeconfig"
    try:
        apply_environment(config, bin_dir / "kubectl", kubeconfig, go_binary())
    except BaseException as err:  # an error, or Ctrl-C: nothing may be left running half-applied
        print(f"k8s-up: applying config/{args.env}.yaml failed: {err!r}", file=sys.stderr)
        controlplane.main(["down", "--dir", str(state_dir)])
        return 130 if isinstance(err, KeyboardInterrupt) else 1
    print(f"k8s-up: config/{args.env}.yaml applied; kubectl is {bin_dir / 'kubectl'}", file=sys.stderr)
    print(f"KUBECONFIG={kubeconfig}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
