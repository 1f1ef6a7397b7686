"""Published numbers, end to end through `hteb-score --source-dir` on the real data we hold.

- `mteb` protocol, all-MiniLM-L6-v2: mteb's published STSBenchmark 0.8203 and SciFact nDCG@10
  0.6451 (both datasets here are identical to mteb's), within 0.003.
- `mteb` protocol, all-MiniLM-L6-v2, MasakhaNEWS: 39.1741 with scikit-learn >= 1.9, and mteb's
  published 38.31 (38.3092) with older scikit-learn; Amharic mteb's published 45.44 under both.
- `hteb` protocol, all-mpnet-base-v2: the HTEB paper's Table 17 Original column, STSBenchmark
  83.43 and Banking77 92.23, within 0.3 points.

`make test` checks one dataset per model and protocol end to end (STSBenchmark, MasakhaNEWS);
the two that embed a large split (SciFact's 5,183 documents, Banking77's 10,003 training texts
under the paper's full-train protocol: 7 and 9 minutes here on two cores) are marked `published`
and run by `make published-checks`. Their evaluators are held equal to mteb's own on identical
embeddings in `make test` (tests/score/evaluators/test_differential_mteb.py).
"""

from __future__ import annotations

import json
from importlib import metadata

import pytest

from hteb_score.cli import main
from models import minilm_path, mpnet_path

pytestmark = pytest.mark.slow

#: The published figure is the model's on any backend (OpenVINO's scores equal torch's: tests/score/test_backends.py),
#: and `auto` would take OpenVINO and export the model first: 139 s for all-mpnet-base-v2, which then embedded
#: STSBenchmark no faster on one core than torch (184 s against 161 s).
TORCH = ("--backend", "torch")


def _original(card_path, dataset):
    card = json.loads(card_path.read_text())
    return next(
        r["value"]
        for r in card["scores"]
        if r["dataset"] == dataset and r["subset"] == "all" and r["transformation"] == "original"
    )


#: (model, protocol, dataset, the published main score in points, how close ours must be)
PUBLISHED = [
    pytest.param(minilm_path, "mteb", "STSBenchmark", 82.03, 0.3, id="minilm-mteb-STSBenchmark"),
    pytest.param(minilm_path, "mteb", "SciFact", 64.51, 0.3, id="minilm-mteb-SciFact", marks=pytest.mark.published),
    pytest.param(mpnet_path, "hteb", "STSBenchmark", 83.43, 0.3, id="mpnet-hteb-STSBenchmark-table-17"),
    pytest.param(
        mpnet_path, "hteb", "Banking77", 92.23, 0.3, id="mpnet-hteb-Banking77-table-17", marks=pytest.mark.published
    ),
]


@pytest.mark.parametrize(("model", "protocol", "dataset", "published", "within"), PUBLISHED)
def test_the_main_score_is_the_published_one(shared_data, tmp_path, model, protocol, dataset, published, within):
    assert (
        main(
            [
                model(),
                "--source-dir",
                str(shared_data),
                "--datasets",
                dataset,
                "--protocol",
                protocol,
                *TORCH,
                "--out",
                str(tmp_path),
                "--quiet",
            ]
        )
        == 0
    )
    assert 100 * _original(tmp_path / "result_card.json", dataset) == pytest.approx(published, abs=within)


def test_minilm_mteb_protocol_masakhanews_reproduces_mteb_cluster_sets(shared_data, tmp_path):
    """MasakhaNEWSClusteringS2S as mteb scores it: each language cut into mteb 1.x's 5 contiguous
    cluster sets, each clustered alone (evaluators/clustering.py); one set per language (the hteb
    protocol) gives 22.15.

    Measured: 39.1741 with scikit-learn 1.9.1, 38.3092 with 1.5.1, 1.6.1, 1.7.2 and 1.8.0. mteb's
    results repository has 38.31 (results/sentence-transformers__all-MiniLM-L6-v2/8b3219a9.../
    MasakhaNEWSClusteringS2S.json, an mteb 1.12.75 run), equal set by set to 4 decimals in all 80
    sets to ours under scikit-learn <= 1.8. scikit-learn 1.9 samples MiniBatchKMeans's minibatches
    with `random_state.choice(p=weights)` instead of `randint` (scikit-learn PR #30751): the same
    random_state then draws other minibatches and k-means ends elsewhere in the sets with several
    labels. Amharic (45.44) is the same under both.
    """
    assert (
        main(
            [
                minilm_path(),
                "--source-dir",
                str(shared_data),
                "--datasets",
                "MasakhaNEWS",
                "--protocol",
                "mteb",
                *TORCH,
                "--out",
                str(tmp_path),
                "--quiet",
            ]
        )
        == 0
    )
    card = json.loads((tmp_path / "result_card.json").read_text())
    expected = 39.1741 if _version("scikit-learn") >= (1, 9) else 38.3092
    assert 100 * _original(tmp_path / "result_card.json", "MasakhaNEWS") == pytest.approx(expected, abs=1e-4)
    amharic = next(r["value"] for r in card["scores"] if r["dataset"] == "MasakhaNEWS" and r["subset"] == "amh")
    assert round(100 * amharic, 2) == 45.44
    assert card["evaluation"]["datasets"]["MasakhaNEWS"]["cluster_sets"] == "5 contiguous per subset (np.array_split)"


def _version(distribution: str) -> tuple[int, ...]:
    return tuple(int(part) for part in metadata.version(distribution).split(".")[:2])
