"""mteb's model registry, asked without loading a model: whether mteb is installed, whether a name is
one of its models, and the `ModelMeta` it registered (the revision it pins). Its own module so that
resolving a model's files and loading it through mteb can both ask it."""

from __future__ import annotations

from typing import Any

from hteb_contract.errors import HtebError


def mteb_installed() -> bool:
    """Whether mteb can be imported, without importing it (that takes seconds)."""
    from importlib.util import find_spec

    return find_spec("mteb") is not None


def registered(name: str) -> bool:
    """Whether `name` is a model of mteb's registry (mteb must be installed)."""
    try:
        registry_entry(name)
    except HtebError:
        return False
    return True


def registry_entry(name: str) -> Any:
    """The ModelMeta mteb registered as `name`; mteb missing or the name unknown: one line."""
    if not mteb_installed():
        raise HtebError("--encoder mteb needs mteb: pip install 'hteb-score[mteb]'")
    import mteb

    try:
        return mteb.get_model_meta(name)
    except KeyError as err:  # mteb's message names the closest registered models
        raise HtebError(f"--encoder mteb: {str(err.args[0]) if err.args else name}") from None
