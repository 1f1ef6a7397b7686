"""hteb-score: score embedding models on HTEB dataset revisions."""

__version__ = "0.1.0"
