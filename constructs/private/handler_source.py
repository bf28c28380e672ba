"""The folder a Lambda handler's asset is made from: the handler's own folder plus the modules it shares with
other handlers (constructs/shared_handler/), so that a shared module has one copy in the repository and one
in each asset. The folder is staged by content (its name is the SHA-256 of every path and byte), so the same
handler always gives the same folder, and CDK the same asset hash, whatever synth made it."""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from pathlib import Path

SHARED_DIR = Path(__file__).resolve().parents[1] / "shared_handler"
STAGING_ROOT = Path(tempfile.gettempdir()) / "hyperpod-kit-handler-sources"


def handler_source(handler_dir: str, shared_modules: tuple[str, ...]) -> str:
    """handler_dir itself without shared modules; otherwise a staged folder holding both."""
    if not shared_modules:
        return handler_dir
    source = Path(handler_dir)
    files = {p.relative_to(source).as_posix(): p.read_bytes() for p in sorted(source.rglob("*"))
             if p.is_file() and "__pycache__" not in p.parts}
    for module in shared_modules:
        name = f"{module}.py"
        if name in files:
            raise ValueError(f"{handler_dir} has its own {name}; a shared module must have one copy, in {SHARED_DIR}")
        if not (SHARED_DIR / name).is_file():
            raise ValueError(f"shared module {module!r} is not in {SHARED_DIR}")
        files[name] = (SHARED_DIR / name).read_bytes()
    digest = hashlib.sha256()
    for name, content in sorted(files.items()):
        digest.update(f"{name}\0{len(content)}\0".encode() + content)
    folder = STAGING_ROOT / digest.hexdigest()
    if not folder.is_dir():
        STAGING_ROOT.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(dir=STAGING_ROOT, prefix=".partial-"))
        partial.chmod(0o755)  # mkdtemp's 0700 would reach the asset; Lambda reads the code as another user
        for name, content in files.items():
            (partial / name).parent.mkdir(parents=True, exist_ok=True)
            (partial / name).write_bytes(content)
        try:
            partial.rename(folder)
        except OSError:  # another synth staged the same bytes first
            shutil.rmtree(partial)
    return str(folder)
