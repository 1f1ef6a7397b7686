"""hteb-generate: seeded LLM transformations of MTEB data into published HTEB revisions."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("hteb-generate")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"
