"""hteb-score: score embedding models on HTEB dataset revisions."""

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

try:
    __version__ = version("hteb-score")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"

#: The package data shipped with the scorer: the bundled sample store and the backend probe texts.
SAMPLE_DIR = Path(__file__).resolve().parent / "sample"
