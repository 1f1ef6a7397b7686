"""hteb-score: score embedding models on HTEB dataset revisions."""

from pathlib import Path

__version__ = "0.1.0"

#: The package data shipped with the scorer: the bundled sample store and the backend probe texts.
SAMPLE_DIR = Path(__file__).resolve().parent / "sample"
