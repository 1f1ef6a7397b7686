"""hteb-score: score embedding models on HTEB dataset revisions."""

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

try:
    __version__ = version("hteb-score")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"

#: The package data shipped with the scorer: the bundled sample store and the backend probe texts.
SAMPLE_DIR = Path(__file__).resolve().parent / "sample"
#: The one default store of every hteb-score command (score, verify, revisions), and its revision.
SAMPLE_STORE = SAMPLE_DIR / "store"
#: sample-card2-1339: the Hub's card (card 2); sample-1339, bundled beside it, is the card-1 sample scored before it
SAMPLE_REVISION = "sample-card2-1339"
DEFAULT_STORE = f"file://{SAMPLE_STORE}"
#: A run's result card (report/card/card.py writes it); it also marks a folder as an earlier result.
CARD_FILE = "result_card.json"
