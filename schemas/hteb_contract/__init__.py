"""hteb-contract: what hteb-generate writes and hteb-score reads, defined once."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("hteb-contract")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"
