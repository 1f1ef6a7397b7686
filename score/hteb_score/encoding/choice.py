"""Which encoder a run uses (`hteb-score --encoder`): sentence-transformers, a model of mteb's
registry encoded through mteb (its prompts and instructions per task), a researcher's own
engine named by its factory, `MODULE:FACTORY` or `FILE.py:FACTORY` (python_encoder.py), or a null
model shipped with the scorer, `hteb:random` or `hteb:constant` (null_models.py). `auto` takes a
MODEL_ID starting `hteb:` as a null model, one of a factory's form as a factory, a name mteb has
registered (when mteb is installed) as mteb's, so a registered model is scored with the prompts
mteb gives it; a local folder, the default model or any other name: sentence-transformers. The
choice and why are recorded in the card (`model.encoder`, `model.encoder_reason`):
--model-revision never changes the encoder silently.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hteb_contract.errors import HtebError
from hteb_contract.common.registry import Registry

if TYPE_CHECKING:
    from hteb_score.encoding.encoder import LoadedEncoder

KINDS = ("auto", "sentence-transformers", "mteb", "python", "null")


def _sentence_transformers(model: str | None, **settings: Any) -> LoadedEncoder:
    from hteb_score.encoding.encoder import Encoder

    return Encoder.load(model, **settings)


def _mteb(model: str | None, **settings: Any) -> LoadedEncoder:
    from hteb_score.encoding.mteb_encoder import MtebEncoder

    return MtebEncoder.load(str(model), **settings)


def _python(model: str | None, **settings: Any) -> LoadedEncoder:
    from hteb_score.encoding.python_encoder import PythonEncoder

    return PythonEncoder.load(str(model), **settings)


def _null(model: str | None, **settings: Any) -> LoadedEncoder:
    from hteb_score.encoding.null_models import NullEncoder

    return NullEncoder.load(str(model), **settings)


LOADERS: Registry[Callable[..., LoadedEncoder]] = Registry(
    "encoder",
    entries={"sentence-transformers": _sentence_transformers, "mteb": _mteb, "python": _python, "null": _null},
)


@dataclass(frozen=True)
class EncoderChoice:
    """The encoder a run uses (`kind`, a key of LOADERS) and why, as the card records it
    (`model.encoder_reason`); `forced`: --model-revision made it other than it would be without."""

    kind: str
    reason: str
    forced: bool = False

    def note(self, model: str | None) -> str:
        """The terminal's one line when --model-revision changed the encoder; "" otherwise."""
        return f"note: encoder {self.kind} for {model}: {self.reason}" if self.forced else ""


def choose(kind: str, model: str | None, *, revision: str | None = None) -> EncoderChoice:
    """The encoder `kind` names and why; for `auto`, null for `hteb:...`, python for a factory's form,
    mteb's for a name mteb has registered (when it is installed), else sentence-transformers. With
    --model-revision (`revision`) a registered model keeps mteb's loader when the revision is the
    one mteb's registry pins (mteb loads no other); any other revision is loaded by sentence-transformers, without
    mteb's task prompts, and the choice says so (`forced`). Asking for mteb's or a factory is checked
    here, before any data is read (a factory is imported, not called): one line if mteb is missing,
    does not know the name, pins another revision, or the factory does not import; a null model's
    settings are checked too."""
    from hteb_score.encoding.mteb_registry import mteb_installed, registered, registry_entry
    from hteb_score.encoding.null_models import FORM, is_null_model, parse
    from hteb_score.encoding.python_encoder import looks_like_factory, resolve_factory

    pinned = revision is not None
    asked = f"--encoder {kind}"
    if kind == "auto" and is_null_model(model):
        kind, asked = "null", "auto: hteb:ENGINE names"
    if kind == "null":
        if model is None:
            raise HtebError(f"--encoder null needs a MODEL_ID: {FORM}")
        if pinned:
            raise HtebError(f"--model-revision pins a Hub model; {model!r} is a null model shipped with hteb-score")
        parse(model)
        return EncoderChoice("null", f"{asked} a null model shipped with hteb-score, which reads no text")
    if kind == "auto" and not pinned and looks_like_factory(model):
        kind, asked = "python", "auto: a factory (MODULE:FACTORY or FILE.py:FACTORY)"
    if kind == "mteb":
        if model is None:
            raise HtebError("--encoder mteb needs a MODEL_ID from mteb's model registry")
        registry_entry(model)
        if revision is not None and not mteb_pins(model, revision):
            raise HtebError(
                f"--model-revision {revision}: mteb's registry pins {model} at "
                f"{registry_entry(model).revision} and loads no other revision (pass that one, or "
                "--encoder sentence-transformers to load this one without mteb's task prompts)"
            )
        return EncoderChoice("mteb", "--encoder mteb: mteb's loader, with the prompts mteb gives each task")
    if kind == "python":
        if model is None:
            raise HtebError("--encoder python needs a MODEL_ID: MODULE:FACTORY or FILE.py:FACTORY")
        if not mteb_installed():
            raise HtebError(
                "--encoder python encodes through mteb's encoder protocol and needs mteb: "
                "pip install 'hteb-score[mteb]'"
            )
        resolve_factory(model)
        return EncoderChoice("python", f"{asked}: the factory's own engine")
    if kind != "auto":
        return EncoderChoice(LOADERS.canonical(kind), f"--encoder {kind}")
    if model is None:
        return EncoderChoice("sentence-transformers", "auto: the default model, a folder shipped on PyPI")
    if Path(model).exists():
        return EncoderChoice("sentence-transformers", "auto: a local folder")
    if not mteb_installed():
        return EncoderChoice("sentence-transformers", "auto: mteb is not installed, so no model is mteb's")
    if not registered(model):
        return EncoderChoice("sentence-transformers", "auto: not a model of mteb's registry")
    mteb_loader = "auto: a model of mteb's registry: mteb's loader, with the prompts mteb gives each task"
    if not pinned:
        return EncoderChoice("mteb", mteb_loader)
    if revision is not None and mteb_pins(model, revision):
        return EncoderChoice("mteb", f"{mteb_loader} (--model-revision {revision} is the revision mteb pins)")
    return EncoderChoice(
        "sentence-transformers",
        f"auto: --model-revision {revision} is not the revision mteb's "
        f"registry pins ({registry_entry(model).revision}), which is the only one mteb loads, so "
        "sentence-transformers loads it, without mteb's task prompts",
        forced=True,
    )


def mteb_pins(model: str, revision: str) -> bool:
    """Whether `revision` (a commit, tag or branch; resolved offline from the Hugging Face cache
    when the Hub cannot be asked) is the commit mteb's registry pins for `model`."""
    from hteb_score.encoding.model_files import resolve_hub_revision
    from hteb_score.encoding.mteb_registry import registry_entry

    pin = registry_entry(model).revision
    if pin is None:
        return False
    return revision == pin or resolve_hub_revision(model, revision) == pin


def load_encoder(kind: str, model: str | None, **settings: Any) -> LoadedEncoder:
    """Load `model` with the encoder `kind` (`choose`'s EncoderChoice.kind)."""
    return LOADERS.get(kind)(model, **settings)
