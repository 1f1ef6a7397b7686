"""Classification: logistic regression on the embeddings, accuracy on the evaluation split.

mteb (AbsTaskClassification + SklearnEvaluator, few-shot): `n_experiments` (10) times, train
`LogisticRegression(max_iter=100, random_state=42)` on at most `samples_per_label` (8, or the
task's override) training rows per label, chosen by shuffling the previous experiment's index
order with a fresh `np.random.RandomState(42)` and taking the first rows of each label; predict
the evaluation split; accuracy / macro and weighted f1, precision, recall (and hard-prediction
AP for binary tasks) are averaged over experiments; main score `accuracy`.
hteb (the paper; PTEB App. C): one `LogisticRegression(max_iter=100, random_state=seed)` (sklearn
defaults otherwise: lbfgs, C=1, L2) trained on the FULL training split, `accuracy` on the
evaluation split. Only the evaluation split is transformed; the training split stays original.
Where training and evaluation are one split (IsiZuluNews and SentimentAnalysisHindi hold only
`train`, and mteb trains and evaluates on it), a classifier scored on the rows it was fitted on
measures memorisation, not the embedding: a model of random vectors scales its way to 100%. hteb
then predicts each row out of fold: FOLDS stratified folds of the ORIGINAL rows (shuffled with the
run's seed, per subset), each fold predicted by a classifier fitted on the original rows of the
other folds. A transformed variant's row is predicted by the classifier of its item's fold, so
its figure is the same classifiers meeting changed text (robustness), never a refit on it.
Rows with a `lang` field are scored per language, trained on the training rows of that language
(on all training rows when the training split has none of it).
"""

from __future__ import annotations

import warnings
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from sklearn.exceptions import ConvergenceWarning, UndefinedMetricWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, average_precision_score, f1_score, precision_score, recall_score
from sklearn.model_selection import StratifiedKFold

from hteb_contract.errors import HtebError
from hteb_contract.sources import SourceDataset
from hteb_contract.mteb_settings import ClassificationSettings
from hteb_score.evaluators.base import (
    ClassifierCache,
    Embed,
    EvaluationContext,
    Evaluator,
    TaskScore,
    Text,
    register,
    task_score,
)
from hteb_score.evaluators.outcomes import Outcomes, join
from hteb_contract.source_values import DEFAULT_SUBSET
from hteb_score.evaluators.subsets import group_rows, require_rows
from hteb_score.evaluators.threads import single_threaded
from hteb_score.flags import Flag

if TYPE_CHECKING:
    from hteb_score.evaluators.protocol import Protocol

MAX_ITER = 100  # both protocols (mteb's evaluator_model); not raised when lbfgs has not converged
#: hteb's folds where training and evaluation rows are one split (fewer where a subset's largest label has fewer rows)
FOLDS = 5


@register
class ClassificationEvaluator(Evaluator):
    task_types = ("Classification",)

    def texts(self, dataset: SourceDataset) -> list[Text]:
        train = dataset.train_rows()
        return [(r["text"], None) for r in train] + [(r["text"], None) for r in dataset.eval_rows()]

    def check(self, dataset: SourceDataset, protocol: Protocol) -> list[Flag]:
        """Empty splits, and training rows of one label for a subset (no classifier can be fitted): refused."""
        test = dataset.eval_rows()
        train = dataset.train_rows()
        require_rows(dataset, dataset.info.eval_split, test)
        require_rows(dataset, dataset.info.train_split_name, train)
        for subset, train_index in _training_rows(train, test).items():
            labels = {train[i]["label"] for i in train_index}
            if len(labels) < 2:
                raise HtebError(
                    f"{dataset.name}: subset {subset!r}: the {len(train_index)} training rows "
                    f"({dataset.info.train_split}) all have label {labels.pop()!r}; a classifier needs "
                    "at least 2 classes (leave the dataset out with --datasets)"
                )
            largest = max(Counter(train[i]["label"] for i in train_index).values())
            if held_out(dataset, protocol) and len(train_index) - largest < 2:
                raise HtebError(
                    f"{dataset.name}: subset {subset!r}: training and evaluation are one split "
                    f"({dataset.info.eval_split}) and too few rows lie outside the largest label to hold "
                    "any out (leave the dataset out with --datasets)"
                )
        return []

    def evaluate(self, dataset: SourceDataset, embed: Embed, context: EvaluationContext) -> TaskScore:
        protocol, seed = context.protocol, context.estimator_seed
        few_shot = protocol.few_shot(dataset.info.mteb_task)
        metric = protocol.main_metric(dataset.info.task_type, dataset.info.mteb_task)
        if held_out(dataset, protocol):
            details, outcomes, folds = _held_out(dataset, context.original or dataset, embed, seed, context.classifiers)
            return task_score(
                metric,
                details,
                {**_settings(None, seed), "train": "held-out", "folds": folds, "fold_seed": seed},
                outcomes=outcomes,
            )
        test = dataset.eval_rows()
        train = dataset.train_rows()
        ids = dataset.ids[dataset.info.eval_split]
        training = _training_rows(train, test)
        details = {}
        rows: list[Outcomes] = []
        for subset, test_index in group_rows(test).items():
            train_index = training[subset]
            x_train_texts = [train[i]["text"] for i in train_index]
            y_train = np.asarray([train[i]["label"] for i in train_index])
            x_test = embed([test[i]["text"] for i in test_index], None)
            y_test = np.asarray([test[i]["label"] for i in test_index])
            if few_shot is None:
                model = context.classifiers.fitted(embed(x_train_texts, None), y_train, seed, _fit)
                predicted = model.predict(x_test)
                details[subset] = {"accuracy": float(accuracy_score(y_test, predicted))}
                rows.append(Outcomes.of("accuracy", subset, [ids[i] for i in test_index], y_test, predicted))
            else:
                details[subset] = _few_shot(
                    x_train_texts, y_train, x_test, y_test, embed, few_shot, seed, context.classifiers
                )
        # few-shot's main score is a mean over experiments: no one prediction per row
        return task_score(
            metric, details, _settings(few_shot, seed), outcomes=join(rows) if metric == "accuracy" else None
        )


def held_out(dataset: SourceDataset, protocol: Protocol) -> bool:
    """Whether `protocol` predicts `dataset`'s rows out of fold: hteb, where training and evaluation are one split."""
    return protocol.few_shot(dataset.info.mteb_task) is None and dataset.info.train_split == dataset.info.eval_split


def _folds(labels: np.ndarray, seed: int) -> tuple[np.ndarray, int]:
    """Each row's fold (stratified by label, shuffled with `seed`) and the number of folds."""
    n_folds = min(FOLDS, max(np.unique(labels, return_counts=True)[1]))
    fold = np.empty(len(labels), dtype=int)
    with warnings.catch_warnings():  # a label with fewer rows than folds is spread as far as it goes
        warnings.simplefilter("ignore", UserWarning)
        splits = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=seed).split(np.zeros(len(labels)), labels)
        for k, (_, test_index) in enumerate(splits):
            fold[test_index] = k
    return fold, n_folds


def _held_out(
    dataset: SourceDataset, original: SourceDataset, embed: Embed, seed: int, classifiers: ClassifierCache
) -> tuple[dict[str, dict[str, float]], Outcomes | None, int]:
    """Per subset, the accuracy of out-of-fold predictions of `dataset`'s rows, folds and classifiers
    from `original`'s rows (the same rows when `dataset` is the original); the predictions; the most folds used."""
    split = original.info.eval_split
    base = original.eval_rows()
    position = {item_id: at for at, item_id in enumerate(original.ids[split])}
    rows = dataset.eval_rows()
    scored = group_rows(rows)
    details: dict[str, dict[str, float]] = {}
    outcomes: list[Outcomes] = []
    most = 0
    for subset, base_index in group_rows(base).items():
        if subset not in scored:
            continue
        labels = np.asarray([base[i]["label"] for i in base_index])
        fold, n_folds = _folds(labels, seed)
        most = max(most, n_folds)
        x = np.asarray(embed([base[i]["text"] for i in base_index], None))
        in_subset = {at: k for k, at in enumerate(base_index)}
        index = scored[subset]
        folds_of_rows = fold[[in_subset[position[dataset.ids[split][i]]] for i in index]]
        x_rows = np.asarray(embed([rows[i]["text"] for i in index], None))
        predicted = np.empty(len(index), dtype=labels.dtype)
        for k in range(n_folds):
            chosen = folds_of_rows == k
            if chosen.any():
                model = classifiers.fitted(x[fold != k], labels[fold != k], seed, _fit)
                predicted[chosen] = model.predict(x_rows[chosen])
        gold = [rows[i]["label"] for i in index]
        details[subset] = {"accuracy": float(accuracy_score(gold, predicted))}
        outcomes.append(Outcomes.of("accuracy", subset, [dataset.ids[split][i] for i in index], gold, predicted))
    return details, join(outcomes), most


def _training_rows(train: Sequence[dict[str, Any]], test: Sequence[dict[str, Any]]) -> dict[str, list[int]]:
    """Per evaluation subset, the training rows its classifier learns from: the training rows of
    that subset, else of the default subset, else all of them."""
    groups = group_rows(train)
    return {
        subset: groups.get(subset, groups.get(DEFAULT_SUBSET, [])) or list(range(len(train)))
        for subset in group_rows(test)
    }


def _settings(few_shot: ClassificationSettings | None, seed: int) -> dict[str, Any]:
    train: dict[str, Any] = (
        {"train": "full"}
        if few_shot is None
        else {
            "train": "few-shot",
            "samples_per_label": few_shot.samples_per_label,
            "n_experiments": few_shot.n_experiments,
        }
    )
    return {"classifier": "LogisticRegression", "max_iter": MAX_ITER, **train, "seed": seed}


def _fit(x: np.ndarray, y: np.ndarray, seed: int) -> LogisticRegression:
    with warnings.catch_warnings(), single_threaded():  # max_iter=100 is the protocol, not a mistake
        warnings.simplefilter("ignore", ConvergenceWarning)
        return LogisticRegression(max_iter=MAX_ITER, random_state=seed).fit(x, y)


def _undersample(labels: np.ndarray, idxs: list[int], samples_per_label: int, seed: int) -> list[int]:
    """mteb's `_undersample_data`: shuffle `idxs` IN PLACE with a fresh RandomState(seed), keep the
    first `samples_per_label` of each label in that order."""
    np.random.RandomState(seed).shuffle(idxs)
    counts: dict[str, int] = defaultdict(int)
    chosen = []
    for i in idxs:
        if counts[labels[i]] < samples_per_label:
            chosen.append(i)
            counts[labels[i]] += 1
    return chosen


def _few_shot(
    train_texts: Sequence[str],
    y_train: np.ndarray,
    x_test: np.ndarray,
    y_test: np.ndarray,
    embed: Embed,
    settings: ClassificationSettings,
    seed: int,
    classifiers: ClassifierCache,
) -> dict[str, float]:
    idxs = list(range(len(train_texts)))
    experiments = [_undersample(y_train, idxs, settings.samples_per_label, seed) for _ in range(settings.n_experiments)]
    union = sorted(set().union(*experiments))
    union_emb = embed([train_texts[i] for i in union], None)
    position = {original: pos for pos, original in enumerate(union)}
    scores = []
    for chosen in experiments:
        model = classifiers.fitted(union_emb[[position[i] for i in chosen]], y_train[chosen], seed, _fit)
        with warnings.catch_warnings():  # a label never predicted has precision 0, as in mteb
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            scores.append(_scores(y_test, model.predict(x_test)))
    return {key: float(np.mean([s[key] for s in scores])) for key in scores[0]}


def _scores(y_test: np.ndarray, y_pred: np.ndarray) -> dict[str, float]:
    out = {"accuracy": accuracy_score(y_test, y_pred)}
    for name, fn in (("f1", f1_score), ("precision", precision_score), ("recall", recall_score)):
        out[name] = fn(y_test, y_pred, average="macro")
        out[f"{name}_weighted"] = fn(y_test, y_pred, average="weighted")
    if len(np.unique(y_test)) == 2 and np.issubdtype(y_test.dtype, np.number):  # mteb: binary tasks only
        out["ap"] = average_precision_score(y_test, y_pred, average="macro")
        out["ap_weighted"] = average_precision_score(y_test, y_pred, average="weighted")
    return out
