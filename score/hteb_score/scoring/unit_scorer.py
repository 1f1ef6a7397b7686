"""One model scoring work units of its run: the model loaded once, then any of the run's datasets
scored into a `ScorePart` (scoring/parts.py). A single run, a `--part` run, each unit of a run of
several models and each Ray worker (scoring/ray_units.py) go through `UnitScorer.score`, so a
unit's part is the same whichever way it ran."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from hteb_score.encoding.choice import load_encoder
from hteb_score.encoding.encoder import EmbeddingTable, LoadedEncoder
from hteb_score.evaluators.protocol import Protocol
from hteb_score.scoring.corpus_robustness import score_corpus_robustness
from hteb_score.scoring.data import read_data
from hteb_score.scoring.options import ScoreOptions
from hteb_score.scoring.parts import ScorePart, package_versions, run_identity, units_of_run
from hteb_score.scoring.run import ScoreRun, score_variants


@dataclass(frozen=True)
class WorkUnit:
    """One (model, dataset) of a run: `model` names the model's folder in the run, `options` are its
    run's, `part` naming this dataset."""

    model: str
    dataset: str
    options: ScoreOptions

    @classmethod
    def of(cls, model: str, dataset: str, options: ScoreOptions) -> WorkUnit:
        return cls(model, dataset, dataclasses.replace(options, part=[dataset]))


#: Called as each unit's part is made (in the order they finish).
Done = Callable[[WorkUnit, ScorePart], None]


class UnitScorer:
    """The model of `options`, loaded when first needed and kept for every later unit; `announce` is
    given what runs the model and why (options.runtime_note) once it has loaded."""

    def __init__(self, options: ScoreOptions, announce: Callable[[str], None] | None = None) -> None:
        self.options = options
        self.announce = announce
        self.encoder: LoadedEncoder | None = None

    def _load(self) -> LoadedEncoder:
        opts = self.options
        if self.encoder is None:
            runtime: dict[str, dict[str, Any]] = {
                "mteb": {"pinned": opts.model_choice.pinned},
                "python": {"name": opts.model_choice.name},
                "sentence-transformers": {
                    "backend": opts.backend,
                    "precision": opts.precision,
                    "token_budget": opts.token_budget,
                    "choice": opts.model_choice,
                },
                "null": {},
            }
            self.encoder = load_encoder(
                opts.encoder,
                opts.model_id,
                device=opts.device,
                batch_size=opts.batch_size,
                trust_remote_code=opts.trust_remote_code,
                progress=not opts.quiet,
                **runtime[opts.encoder],
            )
            if self.announce is not None:
                for line in (opts.encoder_note, opts.runtime_note):
                    if line:
                        self.announce(line)
        return self.encoder

    def score(self, datasets: Sequence[str] | None, started: float | None = None) -> ScorePart:
        """The part of `datasets` (None: every planned dataset) of this scorer's run. `started`: when
        the run began (its read_s counts start-up from there; default now)."""
        started = time.perf_counter() if started is None else started
        opts = dataclasses.replace(self.options, part=None if datasets is None else list(datasets))
        data = read_data(opts)  # every variant read and checked before the model loads: bad data is refused first
        if opts.encoder in ("mteb", "python"):  # mteb's protocol gives each text's task
            from hteb_score.encoding.mteb_encoder import check_tasks

            check_tasks(data.groups.infos)
        read = time.perf_counter()
        encoder = self._load()
        loaded = time.perf_counter()
        table = EmbeddingTable(encoder, opts.cache_dir)
        run = score_variants(
            data.groups,
            table,
            protocol=data.protocol,
            progress=not opts.quiet,
            filtered=opts.min_judge is not None,
            flags=data.checked,
            hard=data.hard,
        )
        evaluated = time.perf_counter()
        robustness = _corpus_robustness(data.corpus, run, table, data.protocol, opts)
        # read_s: options, revision read and checked (start-up imports included), then read again dataset by
        # dataset while scoring; model_s: the model loaded (0 for a later unit of the same scorer);
        # statistics_s and the rest: report/card/run_outputs.py
        spent = dict(run.timings)
        timings = {
            "read_s": read - started + spent.pop("read_s"),
            "model_s": loaded - read,
            **spent,
            "total_s": time.perf_counter() - started,
        }
        if robustness is not None:  # the perturbed documents are embedded after the variants
            timings.update(
                corpus_robustness_s=timings["total_s"] - (evaluated - started),
                texts_requested=table.requested,
                unique_texts=table.unique,
                texts_encoded=table.encoded,
            )
        tasks = {info.name: info.to_json() for info in data.groups.infos}
        model = {
            **encoder.card_model(),
            # an engine that learns its dimension by encoding has encoded nothing when the cache gave every row
            **({"embedding_dim": table.dim} if encoder.card_model().get("embedding_dim") is None else {}),
            "encoder": opts.encoder,
            **({"encoder_reason": opts.encoder_reason} if opts.encoder_reason else {}),
        }
        identity = run_identity(
            opts,
            data.planned,
            data.provenance,
            model,
            encoder.settings(),
            package_versions(),
            chosen=data.chosen,
            taxonomy=data.taxonomy,
        )
        return ScorePart(identity, units_of_run(run, tasks, data.error_policy, robustness), timings)


def _corpus_robustness(
    corpus: list[Any], run: ScoreRun, table: EmbeddingTable, protocol: Protocol, opts: ScoreOptions
) -> dict[str, Any] | None:
    """The card's corpus-robustness section (None without --corpus-robustness), beside this run's original scores."""
    if not corpus:
        return None
    originals = {
        name: result for (name, transformation, _), result in run.results.items() if transformation == "original"
    }
    return score_corpus_robustness(corpus, originals, table, protocol=protocol, progress=not opts.quiet)


class InProcess:
    """Units one after the other in this process, each model loaded once for its run of units."""

    @property
    def packages(self) -> dict[str, str]:
        """The package versions its units are scored under: this process's."""
        return package_versions()

    def __enter__(self) -> InProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def run(self, units: Iterable[WorkUnit], done: Done) -> None:
        scorer: UnitScorer | None = None
        model = None
        for unit in units:
            if scorer is None or unit.model != model:
                scorer, model = UnitScorer(unit.options), unit.model
            done(unit, scorer.score(unit.options.part))
