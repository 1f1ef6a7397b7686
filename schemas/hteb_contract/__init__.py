"""hteb-contract: what hteb-generate writes and hteb-score reads, defined once."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("hteb-contract")
except PackageNotFoundError:  # running from a source tree without installing
    __version__ = "0.1.0"
