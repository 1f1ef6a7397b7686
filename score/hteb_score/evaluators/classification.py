"""Classification: logistic regression on embeddings of the training split, accuracy on the
evaluation split (the transformed texts live in the evaluation split only).

`mteb` protocol (mteb 2.26 `AbsTaskClassification`, few-shot): 10 experiments; experiment i trains
`LogisticRegression(max_iter=100, random_state=42)` on at most `samples_per_label` rows per label
(8, or the task's override, e.g. 32 for AmazonCounterfactualClassification), chosen as the first
rows of each label in an order made by shuffling the previous experiment's order with a fresh
`np.random.RandomState(42)`; main score = mean accuracy over the 10 experiments.
`hteb` protocol (the paper; seeds/000 App. C "complete train/test splits"): one
`LogisticRegression(max_iter=100, random_state=42)` (mteb 1.38.33 defaults) fit on the whole
training split; score = accuracy on the evaluation split.
Both: labels are used as given (strings or ints); subsets by `lang` in both splits; task score =
mean over subsets.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from typing import Any

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, f1_score

from hteb_score.evaluators import Embed, Evaluator, TaskScore, check_protocol, make_score, register_evaluator, split_subsets
from hteb_score.sources import SourceDataset

SEED = 42
N_EXPERIMENTS = 10
SAMPLES_PER_LABEL = 8
SAMPLES_PER_LABEL_OVERRIDES = {"AmazonCounterfactualClassification": 32}  # read off mteb 2.26.24's task classes


def undersample_runs(labels: list[Any], samples_per_label: int, n_experiments: int = N_EXPERIMENTS) -> list[list[int]]:
    """mteb's `_undersample_data`, simulated for every experiment: the selected row indices."""
    idxs = list(range(len(labels)))
    runs = []
    for _ in range(n_experiments):
        np.random.RandomState(SEED).shuffle(idxs)  # fresh RandomState per call, as mteb ("v1 compatibility")
        counter: dict[Any, int] = defaultdict(int)
        chosen = []
        for i in idxs:
            if counter[labels[i]] < samples_per_label:
                chosen.append(i)
                counter[labels[i]] += 1
        runs.append(chosen)
    return runs


def _fit_predict(train_x: np.ndarray, train_y: list[Any], test_x: np.ndarray) -> np.ndarray:
    model = LogisticRegression(max_iter=100, random_state=SEED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(train_x, train_y)
    return model.predict(test_x)


@register_evaluator("Classification")
class ClassificationEvaluator(Evaluator):
    def _splits(self, dataset: SourceDataset) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        return dataset.tables[dataset.info.train_split], dataset.eval_rows()

    def _samples_per_label(self, dataset: SourceDataset) -> int:
        return SAMPLES_PER_LABEL_OVERRIDES.get(dataset.info.mteb_task or "", SAMPLES_PER_LABEL)

    def texts(self, dataset: SourceDataset, protocol: str) -> list[tuple[str, str | None]]:
        train, test = self._splits(dataset)
        out = [(row["text"], None) for row in test]
        train_groups = split_subsets(train)
        for rows in train_groups.values():
            if protocol == "mteb":
                runs = undersample_runs([r["label"] for r in rows], self._samples_per_label(dataset))
                rows = [rows[i] for i in sorted(set().union(*runs))]
            out.extend((row["text"], None) for row in rows)
        return out

    def evaluate(self, dataset: SourceDataset, embed: Embed, *, protocol: str) -> TaskScore:
        check_protocol(protocol)
        train, test = self._splits(dataset)
        train_groups = split_subsets(train)
        per_subset = {}
        for subset, test_rows in split_subsets(test).items():
            train_rows = train_groups.get(subset) or train_groups.get("default", [])
            test_x = embed([r["text"] for r in test_rows], None)
            test_y = [r["label"] for r in test_rows]
            train_y = [r["label"] for r in train_rows]
            if protocol == "mteb":
                runs = undersample_runs(train_y, self._samples_per_label(dataset))
                accuracies, f1s = [], []
                for run in runs:
                    pred = _fit_predict(embed([train_rows[i]["text"] for i in run], None), [train_y[i] for i in run], test_x)
                    accuracies.append(accuracy_score(test_y, pred))
                    f1s.append(f1_score(test_y, pred, average="macro"))
                per_subset[subset] = {"accuracy": float(np.mean(accuracies)), "f1": float(np.mean(f1s))}
            else:
                pred = _fit_predict(embed([r["text"] for r in train_rows], None), train_y, test_x)
                per_subset[subset] = {"accuracy": accuracy_score(test_y, pred), "f1": f1_score(test_y, pred, average="macro")}
        return make_score("accuracy", per_subset)
