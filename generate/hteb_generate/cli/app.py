"""`hteb-generate`: make an HTEB dataset revision with one command.

`hteb-generate --seed 1339` runs the GPU profile (vLLM, Gemma-3-27B AWQ, all datasets, Hub
sources); `--profile cpu` runs the same pipeline with SmolLM2 on a sample of shared/data into the
local store .hteb/store (`make generate PROFILE=cpu` names the repository's bundled sample store).
Nothing is written into an installed package; MANIFEST.md is the repository's, or --manifest-md's.
`hteb-generate validate ...` checks a configuration without running it.
Errors a user can fix print as one line and exit with status 2.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from hteb_contract.card import CARD_VERSIONS
from hteb_contract.common.atomic import atomic_write_json, nearest_existing
from hteb_contract.common.option_values import names
from hteb_contract.common.ray_cluster import session
from hteb_contract.errors import HtebError, StoreError, end_process
from hteb_contract.reproduction import Tolerance, compare_revisions
from hteb_contract.revision import Revision
from hteb_contract.stores import check_store_uri, open_store
from hteb_contract.stores.local import LocalStore

from hteb_generate import __version__
from hteb_generate.bounds import TOLERANCE, check_number
from hteb_generate.setup.config import PROFILES, check_output_file
from hteb_generate.run.plan import (
    COUNTS,
    PREFILL_SOURCE,
    Plan,
    PREFILL_TOKENS_PER_SECOND,
    TOKENS_PER_SECOND,
    TOKENS_PER_SECOND_SOURCE,
)

if TYPE_CHECKING:
    from hteb_generate.setup.config import GenerateConfig
    from hteb_generate.setup.machine import Facts, Pin


class DefaultRun(click.Group):
    """Arguments go to `run` unless the first one names a command or --help/--version."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not (args and (args[0] in self.commands or args[0] in ("-h", "--help", "--version"))):
            args = ["run", *args]
        return super().parse_args(ctx, args)


SEED = click.option("--seed", required=True, help="Run seed, or a comma-separated list (e.g. 1337,1338,1339).")

#: Options of this machine, not of the content: a run and `reproduce` take them (no byte of a revision depends on them).
MACHINE_OPTIONS = (
    click.option("--data-dir", default=None, help="Local source folder (default: ../shared/data or $HTEB_DATA_DIR)."),
    click.option("--cache-dir", default=None, help="LLM call cache and run state (default: ~/.cache/hteb)."),
    click.option("--batch-size", type=int, default=None, help="Engine batch size (transformers) / commit chunk."),
    click.option("--tensor-parallel-size", type=int, default=None, help="vLLM tensor parallel size."),
    click.option("--gpu-memory-utilization", type=float, default=None, help="vLLM GPU memory share."),
    click.option("--max-model-len", type=int, default=None, help="vLLM context length."),
    click.option(
        "--threads", type=int, default=None, help="torch CPU threads (transformers engine; 1 on a busy machine)."
    ),
    click.option(
        "--ray-address",
        default=None,
        help="Where the engines run. Default, gpu profile: one per GPU of this machine (per --tensor-parallel-size "
        "GPUs), on a local Ray cluster when that is several. none: one engine in this process. A Ray cluster: "
        "local (start one here), auto (`ray start`'s) or ADDRESS.",
    ),
    click.option(
        "--ray-workers",
        type=int,
        default=None,
        help="Engines to start (default: one per GPU here; on a named cluster, as many as its GPUs, or CPUs per "
        "--threads, hold).",
    ),
)


#: The profile a published revision's run is rebuilt under (`reproduce`, `remake`): batch size and doctor's checks.
REBUILD_PROFILE = click.option(
    "--profile",
    type=click.Choice(["gpu", "cpu"]),
    default=None,
    help="Batch size and doctor's checks (default: cpu for local sources, gpu for Hub sources).",
)


def _decorate(fn, options):
    """`fn` with the click options applied, listed in the order --help shows them."""
    for option in reversed(options):
        fn = option(fn)
    return fn


def _options(fn, seed: Any = SEED):
    """The options of a run (`run`, `validate`, `doctor`); `seed`: the seed option."""
    return _decorate(
        fn,
        [
            seed,
            click.option(
                "--profile",
                type=click.Choice(list(PROFILES)),
                default="gpu",
                show_default=True,
                help="gpu: vLLM, all datasets; cpu: SmolLM2 on a sample; noise: the noise rules, full size, no LLM.",
            ),
            click.option("--datasets", default=None, help="Comma-separated datasets (revision, mteb or local names)."),
            click.option(
                "--transformations",
                default=None,
                help="Comma-separated transformations: LLM ones and noise rules (default: the profile's).",
            ),
            click.option("--store", default=None, help="Store: a path, file://PATH or hf://OWNER/NAME."),
            click.option(
                "--label",
                default=None,
                help="Revision label (default: hteb-SEED on gpu, sample-card2-SEED on cpu, noise3-SEED for noise: "
                "rules 2 noise2-SEED, rules 1 noise-SEED; a card other than the profile's first adds -cardN).",
            ),
            click.option("--model", default=None, help="Generator: a registered alias or id, or a local model folder."),
            click.option("--engine", default=None, help="Backend: vllm or transformers."),
            click.option("--prompt-set", default=None, help="Prompt set id (paper, smollm2-fewshot)."),
            click.option("--max-attempts", type=int, default=None, help="Attempts per text before giving up."),
            click.option("--temperature", type=float, default=None, help="Sampling temperature (paper: 0)."),
            click.option("--retry-temperature", type=float, default=None, help="Temperature of retries (default 0.7)."),
            click.option("--top-p", type=float, default=None, help="Nucleus sampling top_p (paper: 1)."),
            click.option(
                "--max-tokens", type=int, default=None, help="Max new tokens per call (the least a step gets)."
            ),
            click.option(
                "--max-tokens-ceiling",
                type=int,
                default=None,
                help="Most new tokens a step gets when its input is long (gpu default 4096; cpu: none).",
            ),
            click.option(
                "--judge-model", default=None, help="Judge model (default: the profile's); 'none' for no judge."
            ),
            click.option("--judge-prompts", default=None, help="Judge prompt set id."),
            click.option("--parapluie-template", default=None, help="ParaPLUIE template id."),
            click.option("--sample", type=int, default=None, help="Rows per language subset (cpu default 4)."),
            click.option(
                "--max-texts", type=int, default=None, help="Cap on transformed texts per dataset (cpu default 8)."
            ),
            click.option(
                "--max-list", type=int, default=None, help="Cap on list elements per row (SummEval summaries)."
            ),
            click.option(
                "--corpus-noise",
                is_flag=True,
                default=None,
                help="Also write the retrieval corpora under each noise rule (corpus/<dataset>/...; for the "
                "scorer's --corpus-robustness). Off: queries only.",
            ),
            click.option(
                "--noise-rules",
                default=None,
                help="Noise rules version (default: the newest, 3, grapheme clusters and the text's script; "
                "2: noise2-1339's, code points; 1: noise-1339's, Latin only).",
            ),
            click.option(
                "--card",
                type=click.Choice(CARD_VERSIONS),
                default=None,
                help="Dataset card version (default 2 for gpu and cpu, 1 for noise and sensitivity, as their "
                "published labels; 2: the Hub's conventions: source_datasets as extended|<hub id>, "
                "language_creators, dataset_info, every source's citation).",
            ),
            *MACHINE_OPTIONS,
            click.option("--publish/--no-publish", default=True, show_default=True, help="Publish to the store."),
            click.option(
                "--manifest-md",
                default=None,
                help="Published-revisions table to update (default: the repository's MANIFEST.md when "
                "hteb-generate runs from its repository; none for an installed package).",
            ),
        ],
    )


ENGINE_OPTIONS = ("tensor_parallel_size", "gpu_memory_utilization", "max_model_len", "threads")

#: The comma-separated options of a run and of `plan`, by parameter name.
LIST_OPTIONS = {"seed": "--seed", "datasets": "--datasets", "transformations": "--transformations"}


def _check_lists(values: Mapping[str, Any]) -> None:
    """Refuse a comma-separated option as hteb-score does (`option_values.names`, one parser for both)."""
    for key, option in LIST_OPTIONS.items():
        names(values[key], option)


def _check_writes(option: str, path: Path, folder: Path | None = None) -> None:
    """Make and drop a nameless file in `folder` (default: `path`, a folder), or in its nearest existing
    ancestor, where `path` is written. Why: the configuration's checks ask os.access, which tells root
    yes where the OS takes no new file (/proc, /sys, a read-only mount), and these outputs are written
    only after the long work (a revision was published, then its MANIFEST.md row failed)."""
    try:
        where = nearest_existing((folder or path).absolute())
        with tempfile.TemporaryFile(dir=where):
            pass
    except OSError as err:
        raise HtebError(f"{option} {path}: cannot write there ({err.strerror or err})") from None


def _check_store_writes(uri: str) -> None:
    """A local store is written to now (`_check_writes`); a Hub store answers only when published to."""
    store = open_store(uri)
    if isinstance(store, LocalStore):
        _check_writes("--store", store.root)


def _config(kwargs: dict[str, Any]) -> GenerateConfig:
    """The validated configuration; the backend options given go to `engine_options`, checked against the
    engine; what a publishing run writes last (the store, MANIFEST.md) is written to first."""
    from hteb_generate.setup.config import build_config

    _check_lists(kwargs)
    seed, profile = kwargs.pop("seed"), kwargs.pop("profile")
    engine_options = _engine_options(kwargs)
    config = build_config(seed=seed, profile=profile, overrides={**kwargs, "engine_options": engine_options})
    if config.publish:
        _check_store_writes(config.store)
        if config.manifest_md is not None:
            _check_writes("--manifest-md", Path(config.manifest_md), Path(config.manifest_md).parent)
    return config


def _engine_options(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The backend options given (popped from `kwargs`), for `engine_options`."""
    given = {k: kwargs.pop(k) for k in ENGINE_OPTIONS}
    return {k: v for k, v in given.items() if v is not None}


@click.group(cls=DefaultRun, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="hteb-generate")
def cli() -> None:
    """Generate HTEB dataset revisions: seeded LLM transformations of MTEB data.

    \b
    hteb-generate --seed 1339                   GPU profile (vLLM, Gemma-3-27B AWQ, all datasets)
    hteb-generate --seed 1339 --profile cpu     SmolLM2 on CPU, sample of shared/data -> .hteb/store
    hteb-generate validate --seed 1339 ...      check a configuration, run nothing
    hteb-generate doctor                        what this machine lacks for the run, in one line
    hteb-generate plan --seed 1339              texts, LLM requests, tokens and GPU hours of the run
    hteb-generate reproduce --store S --revision R   regenerate a published revision here and compare
    hteb-generate remake docs/revisions/R --store S  make a published revision again, as published, into S
    """


def _ready(config: GenerateConfig, pins: Mapping[str, Pin] | None = None) -> Facts | None:
    """The gpu profile's doctor (one line to stderr, or a one-line error); the facts the engines run on.
    `pins`: commits already known for branch-named models (a regeneration's, from the manifest)."""
    if config.profile != "gpu":
        return None
    summary, facts = _checked(config, pins)
    click.echo(f"doctor: {summary}", err=True)
    return facts


def _checked(config: GenerateConfig, pins: Mapping[str, Pin] | None = None) -> tuple[str, Facts]:
    """The doctor's summary, and the facts of what runs the engines: this machine (its engines per GPU
    included), or under --ray-address each GPU node of the cluster (checked there, each problem naming
    its node)."""
    from hteb_generate.setup.config import NO_RAY
    from hteb_generate.setup.doctor import engine_host, require_ready, require_ready_on_nodes
    from hteb_generate.setup.machine import probe
    from hteb_generate.setup.pins import resolve_pins

    found = probe()
    # once: the summary names the commits the run then loads
    driver = resolve_pins(config, replace(found, pins={**found.pins, **(pins or {})}))
    if config.ray_address in (None, NO_RAY):  # this machine's GPUs, a local cluster of its own included
        return require_ready(config, driver), driver
    from hteb_generate.setup.node_facts import cluster_facts

    nodes, others = cluster_facts(config.ray_address)
    summary = require_ready_on_nodes(config, driver, nodes, others)
    return summary, engine_host(driver, nodes)


@cli.command()
@_options
def run(**kwargs: Any) -> None:
    """Generate, judge, write, seal and publish a revision (gpu profile: after the doctor's checks)."""
    from hteb_generate.run.pipeline import run as run_pipeline

    config = _config(kwargs)
    with session():  # the result line after it: Ray's messages never reach stdout
        facts = _ready(config)
        result = run_pipeline(config, log=lambda m: click.echo(m, err=True), facts=facts)
    click.echo(f"{result.manifest['label']} {result.manifest['content_hash']}")


@cli.command()
@_options
def validate(**kwargs: Any) -> None:
    """Check the configuration (names, model, store, data; gpu profile: the doctor's checks) without
    loading a model or writing."""
    config = _config(kwargs)
    with session():
        _ready(config)
    made_by = f"model {config.model} on {config.engine}" if config.llm_transformations else "the noise rules, no model"
    click.echo(
        f"ok: {len(config.datasets)} datasets x {len(config.transformations)} transformations x seeds "
        f"{', '.join(map(str, config.seeds))}; {made_by}; store {config.store}; "
        f"label {config.label}; config {config.config_hash()[:12]}"
    )


@cli.command()
@lambda fn: _options(fn, click.option("--seed", default="0", help="Run seed (nothing the doctor checks)."))
def doctor(**kwargs: Any) -> None:
    """Say in one line what this machine lacks for the run (GPU, CUDA torch, vLLM, GPU memory, disk,
    Hub token), before anything loads; exit 2 if anything."""
    with session():
        summary = _checked(_config(kwargs))[0]
    click.echo(f"ok: {summary}")


@cli.command()
@SEED
@click.option("--profile", type=click.Choice(["gpu", "cpu"]), default="gpu", show_default=True)
@click.option(
    "--datasets",
    default=None,
    help="Comma-separated datasets (default: the profile's; with --counts local on gpu, every local copy).",
)
@click.option("--transformations", default=None, help="Comma-separated transformations (default: all 8).")
@click.option(
    "--counts",
    type=click.Choice(COUNTS),
    default=None,
    help="Where counts come from: local (--data-dir), hub (loaded as a run does), stats (mteb's descriptive "
    "statistics; the gpu default). cpu default: local.",
)
@click.option("--data-dir", default=None, help="Local source folder (default: ../shared/data or $HTEB_DATA_DIR).")
@click.option(
    "--tokens-per-second",
    type=float,
    default=TOKENS_PER_SECOND,
    show_default=True,
    help=f"Output tokens per second per GPU. Default: {TOKENS_PER_SECOND_SOURCE}.",
)
@click.option(
    "--prefill-tokens-per-second",
    type=float,
    default=PREFILL_TOKENS_PER_SECOND,
    show_default=True,
    help=f"Prompt tokens prefilled per second per GPU. Default: {PREFILL_SOURCE}.",
)
@click.option(
    "--by",
    type=click.Choice(Plan.GROUPINGS),
    default="both",
    show_default=True,
    help="Rows per dataset x transformation, per dataset or per transformation.",
)
@click.option("--model", default=None, help="Generator (its prompt budget: --max-tokens, --max-tokens-ceiling).")
@click.option("--judge-model", default=None, help="Judge model; 'none': no judge requests.")
@click.option("--prompt-set", default=None, help="Prompt set id.")
@click.option("--max-tokens", type=int, default=None, help="Max new tokens per call (the least a step gets).")
@click.option("--max-tokens-ceiling", type=int, default=None, help="Most new tokens a step gets.")
@click.option("--sample", type=int, default=None, help="Rows per language subset (cpu default 4).")
@click.option("--max-texts", type=int, default=None, help="Cap on transformed texts per dataset (cpu default 8).")
@click.option(
    "--gpus",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="GPUs the run will use: the range's barriers and cold starts, and its wall-clock hours.",
)
def plan(
    seed: str,
    profile: str,
    counts: str | None,
    tokens_per_second: float,
    prefill_tokens_per_second: float,
    by: str,
    gpus: int,
    **kwargs: Any,
) -> None:
    """Count a run's texts, LLM requests and tokens, and its GPU hours, without loading a model."""
    from hteb_generate.setup.config import build_config
    from hteb_generate.run.plan import make_plan
    from hteb_generate.run.plan_range import render_range, run_shape
    from hteb_generate.sources.sources_table import SOURCES, lookup_source

    _check_lists({"seed": seed, **kwargs})
    counts = counts or ("stats" if profile == "gpu" else "local")
    if counts == "local":
        kwargs["source"] = "local"
        if kwargs["datasets"] is None and profile == "gpu":
            kwargs["datasets"] = ",".join(n for n in SOURCES.names() if lookup_source(n).local)
    config = build_config(seed=seed, profile=profile, overrides=kwargs)
    rates = {"tokens_per_second": tokens_per_second, "prefill_tokens_per_second": prefill_tokens_per_second}
    found = make_plan(config, counts=counts, **rates)
    click.echo(found.render(by) + "\n\n" + render_range(found, run_shape(config, gpus)))


@cli.command()
@click.option("--store", required=True, help="Store of the published revision: a path, file://PATH or hf://OWNER/NAME.")
@click.option(
    "--revision", "ref", required=True, help="The published revision: its label, or content hash / Hub commit."
)
@click.option(
    "--candidate",
    default=None,
    help="A revision folder already generated (e.g. a run's staging folder): compare it, regenerate nothing.",
)
@click.option(
    "--parapluie-tolerance",
    type=float,
    default=Tolerance.parapluie,
    show_default=True,
    help="Largest ParaPLUIE difference that reproduces (two 3-decimal rounding steps).",
)
@click.option(
    "--rating-tolerance",
    type=float,
    default=Tolerance.rating,
    show_default=True,
    help="Largest difference of a 1-5 quality or fluency rating that reproduces.",
)
@click.option("--json", "json_path", default=None, help="Write the report as JSON (hteb.reproduction/1) to this path.")
@REBUILD_PROFILE
@lambda fn: _decorate(fn, MACHINE_OPTIONS)
def reproduce(
    store: str,
    ref: str,
    candidate: str | None,
    parapluie_tolerance: float,
    rating_tolerance: float,
    json_path: str | None,
    profile: str | None,
    **machine: Any,
) -> None:
    """Regenerate a published revision on this machine (its manifest's config; never published) and compare:
    texts exactly, judge numbers within the tolerances. Exit 0: reproduced; 1: it differs; 2: bad input.
    A fresh --cache-dir recomputes every LLM call (the default cache replays this machine's earlier calls)."""
    check_number("--parapluie-tolerance", parapluie_tolerance, TOLERANCE)
    check_number("--rating-tolerance", rating_tolerance, TOLERANCE)
    tolerance = Tolerance(parapluie=parapluie_tolerance, rating=rating_tolerance)
    check_store_uri(store)
    if json_path is not None:
        check_output_file(Path(json_path), "--json")
        _check_writes("--json", Path(json_path), Path(json_path).parent)
    reference = open_store(store).fetch(ref)
    if candidate is not None:
        ours = Revision.open(Path(candidate))
    else:
        from hteb_generate.run.pipeline import run as run_pipeline
        from hteb_generate.revision.reproduce import rebuild_config
        from hteb_generate.setup.pins import recorded_pins

        engine_options = _engine_options(machine)
        config = rebuild_config(
            reference.manifest, store=store, profile=profile, machine={**machine, "engine_options": engine_options}
        )
        with session():
            facts = _ready(config, recorded_pins(reference.manifest))  # the commits it loaded, not today's branch
            result = run_pipeline(config, log=lambda m: click.echo(m, err=True), facts=facts)
        click.echo(f"regenerated {reference.label} into {result.folder}", err=True)
        ours = Revision.open(result.folder)
    report = compare_revisions(ours, reference, tolerance)
    if json_path is not None:
        atomic_write_json(Path(json_path), report.to_dict())
    click.echo(report.render())
    if not report.reproduced:
        from hteb_generate.revision.reproduce import differences_line

        click.echo(differences_line(ours.manifest, reference.manifest), err=True)
        sys.exit(1)


@cli.command()
@click.argument("published")
@click.option("--store", required=True, help="Store to publish it to: a path, file://PATH or hf://OWNER/NAME.")
@REBUILD_PROFILE
@lambda fn: _decorate(fn, MACHINE_OPTIONS)
def remake(published: str, store: str, profile: str | None, **machine: Any) -> None:
    """Make the published revision whose folder is PUBLISHED (its manifest.json, e.g. docs/revisions/noise2-1339)
    again, and publish it to STORE under its label: the run its manifest records, rebuilt as `reproduce`
    rebuilds it, published only when every file is byte for byte one the manifest lists. Why: today's
    defaults move on (a revision made before revisions recorded their rows is made again with them), and
    a revision scored off today's run instead of the published one cites and identifies as another run."""
    from hteb_contract.revision import load_manifest
    from hteb_generate.run.pipeline import run as run_pipeline
    from hteb_generate.revision.reproduce import rebuild_config, remade_differences
    from hteb_generate.setup.pins import recorded_pins

    _check_store_writes(store)
    reference = load_manifest(Path(published))
    label = reference["label"]
    config = rebuild_config(
        reference, store=store, profile=profile, machine={**machine, "engine_options": _engine_options(machine)}
    )
    with session():
        facts = _ready(config, recorded_pins(reference))  # the commits it loaded, not today's branch
        result = run_pipeline(config, log=lambda m: click.echo(m, err=True), facts=facts)
    differ = remade_differences(result.manifest, reference)
    if differ is not None:
        raise HtebError(
            f"{published}: this run does not remake {label} ({differ}); it is kept at {result.folder}, and "
            f"`hteb-generate reproduce` says where it differs"
        )
    target = open_store(store)
    target.publish(result.folder)
    held = target.fetch(label, datasets=[reference["sources"][0]["name"]]).manifest
    if held["config_hash"] != reference["config_hash"]:
        raise StoreError(
            f"store {target.uri} already holds {label} with its files but as another run made it (config "
            f"{held['config_hash'][:12]}, published {reference['config_hash'][:12]}): remake it into a new store"
        )
    click.echo(f"remade {label} ({reference['content_hash'][:12]}) as published into {target.uri}")


@cli.command()
@click.argument("label")
@click.option("--by", "by", required=True, help="The label that replaces it (in the same store and table).")
@click.option("--because", required=True, help="Why, in one line: what today's command makes instead.")
@click.option(
    "--store", required=True, help="Store both labels are published in: a path, file://PATH or hf://OWNER/NAME."
)
@click.option(
    "--manifest-md",
    default=None,
    help="Published-revisions table (default: the repository's MANIFEST.md when hteb-generate runs from its repository).",
)
def supersede(label: str, by: str, because: str, store: str, manifest_md: str | None) -> None:
    """Mark a published revision superseded in MANIFEST.md: its row stays as papers cite it, and says which
    label replaces it and why (a revision its documented command no longer remakes byte for byte)."""
    from hteb_generate.revision import manifest_md as table
    from hteb_generate.setup.config import default_manifest_md

    path = manifest_md or default_manifest_md()
    if path is None:
        raise StoreError("hteb-generate runs from an installed package: name the table with --manifest-md")
    uri = open_store(store).uri
    try:
        table.supersede(Path(path), uri, label, by, because)
    except UnicodeDecodeError:
        raise HtebError(f"--manifest-md {path} is not readable UTF-8 text") from None
    click.echo(f"{label} marked superseded by {by} in {path}")


def main(args: list[str] | None = None) -> None:
    """The console entry point (`args`: the command line, default sys.argv); user errors, and the OS
    refusing a read or write, exit 2 in one line, and run as the command (`args` None) the process ends
    at once after it (errors.end_process)."""

    def leave(code: int) -> NoReturn:
        if args is None:
            end_process(code)
        sys.exit(code)

    try:
        cli.main(args, standalone_mode=False)
    except HtebError as err:
        click.echo(f"error: {err}", err=True)
        leave(2)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        leave(130)
    except click.ClickException as err:  # a usage error (unknown option, "1.5" for an integer): one line too
        click.echo(f"error: {' '.join(err.format_message().split())}", err=True)
        leave(err.exit_code)
    except OSError as err:  # the OS refusing a read or write no check foresaw (a full disk): hteb-score's words
        message = f"{err.strerror or err}: {err.filename}" if err.filename else str(err)
        click.echo(f"error: {' '.join(message.splitlines())}", err=True)
        leave(2)
