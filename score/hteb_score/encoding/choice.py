"""Which encoder a run uses (`hteb-score --encoder`): sentence-transformers, a model of mteb's
registry encoded through mteb (its prompts and instructions per task), or a researcher's own
engine named by its factory, `MODULE:FACTORY` or `FILE.py:FACTORY` (python_encoder.py). `auto`
takes a MODEL_ID of a factory's form as one, a name mteb has registered (when mteb is installed)
as mteb's, so a registered model is scored with the prompts mteb gives it; a local folder, the
default model or any other name: sentence-transformers.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hteb_contract.errors import HtebError
from hteb_contract.common.registry import Registry

if TYPE_CHECKING:
    from hteb_score.encoding.encoder import LoadedEncoder

KINDS = ("auto", "sentence-transformers", "mteb", "python")


def _sentence_transformers(model: str | None, **settings: Any) -> LoadedEncoder:
    from hteb_score.encoding.encoder import Encoder

    return Encoder.load(model, **settings)


def _mteb(model: str | None, **settings: Any) -> LoadedEncoder:
    from hteb_score.encoding.mteb_encoder import MtebEncoder

    return MtebEncoder.load(str(model), **settings)


def _python(model: str | None, **settings: Any) -> LoadedEncoder:
    from hteb_score.encoding.python_encoder import PythonEncoder

    return PythonEncoder.load(str(model), **settings)


LOADERS: Registry[Callable[..., LoadedEncoder]] = Registry(
    "encoder", entries={"sentence-transformers": _sentence_transformers, "mteb": _mteb, "python": _python})


def choose(kind: str, model: str | None, *, pinned: bool = False) -> str:
    """The encoder `kind` names; for `auto`, python for a factory's form, mteb's for a name mteb
    has registered (when it is installed), unless the model is `pinned` by --model-revision (mteb's
    registry pins its own revision: a pinned model is loaded by sentence-transformers). Asking for
    mteb's or a factory is checked here, before any data is read (a factory is imported, not called):
    one line if mteb is missing, does not know the name, or the factory does not import."""
    from hteb_score.encoding.mteb_encoder import mteb_installed, registered, registry_entry
    from hteb_score.encoding.python_encoder import looks_like_factory, resolve_factory

    if kind == "auto" and not pinned and looks_like_factory(model):
        kind = "python"
    if kind == "mteb":
        if model is None:
            raise HtebError("--encoder mteb needs a MODEL_ID from mteb's model registry")
        registry_entry(model)
        return kind
    if kind == "python":
        if model is None:
            raise HtebError("--encoder python needs a MODEL_ID: MODULE:FACTORY or FILE.py:FACTORY")
        if not mteb_installed():
            raise HtebError("--encoder python encodes through mteb's encoder protocol and needs mteb: "
                            "pip install 'hteb-score[mteb]'")
        resolve_factory(model)
        return kind
    if kind != "auto":
        return LOADERS.canonical(kind)
    if model is None or pinned or Path(model).exists() or not mteb_installed():
        return "sentence-transformers"
    return "mteb" if registered(model) else "sentence-transformers"


def load_encoder(kind: str, model: str | None, **settings: Any) -> LoadedEncoder:
    """Load `model` with the encoder `kind` (as `choose` returned it)."""
    return LOADERS.get(kind)(model, **settings)
