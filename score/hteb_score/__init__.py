"""hteb-score: score embedding models on HTEB dataset revisions."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("hteb-score")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"
