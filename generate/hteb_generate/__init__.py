"""hteb-generate: seeded LLM transformations of MTEB data into published HTEB revisions."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("hteb-generate")
except PackageNotFoundError:  # running from a source tree without installing
    __version__ = "0.1.0"
