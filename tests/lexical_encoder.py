"""Lexical test encoders for `--encoder python` (the Sensitivity tests): a hashed bag of words, a real model of
what token overlap alone knows (scikit-learn's HashingVectorizer, 4,096 features, l2-normalised counts of lower-case
word tokens), and the same model deaf to negation: before hashing it expands contractions and removes every
negation cue, so a negated text and its affirmative read the same to it. A model that reads no negation must be
blind on the negation pair (0.5) and keep its figures on the other pairs."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
from sklearn.feature_extraction.text import HashingVectorizer

FEATURES = 4096
#: contracted forms -> expanded (the negated ones first: "won't" is "will not", not "wo not")
CONTRACTIONS = (
    (r"\bwon't\b", "will not"),
    (r"\bcan't\b", "can not"),
    (r"\bcannot\b", "can not"),
    (r"n't\b", " not"),
    (r"'m\b", " am"),
    (r"'re\b", " are"),
    (r"'ll\b", " will"),
    (r"'d\b", " would"),
    (r"'s\b", " is"),
)
NEGATION = re.compile(r"\b(?:not|never|no)\b\s*", re.IGNORECASE)


def deaf(text: str) -> str:
    """`text` with its contractions expanded and its negation cues removed."""
    for pattern, expanded in CONTRACTIONS:
        text = re.sub(pattern, expanded, text, flags=re.IGNORECASE)
    return NEGATION.sub("", text)


class LexicalEncoder:
    """Hashed bag of words: the same text always the same vector, no weights, no training."""

    identity = f"hashing-vectorizer-{FEATURES}"
    prompts: dict[str, str] = {}

    def __init__(self) -> None:
        self.vectorizer = HashingVectorizer(n_features=FEATURES, alternate_sign=False, norm="l2", lowercase=True)

    def read(self, text: str) -> str:
        return text

    def encode(self, inputs: Any, *, task_metadata: Any, hf_split: str, hf_subset: str, **kwargs: Any) -> np.ndarray:
        texts = [self.read(t) for batch in inputs for t in batch["text"]]
        return self.vectorizer.transform(texts).toarray().astype(np.float32)


class NegationDeafEncoder(LexicalEncoder):
    """The hashed bag of words of `deaf(text)`."""

    identity = f"hashing-vectorizer-{FEATURES}-negation-deaf"

    def read(self, text: str) -> str:
        return deaf(text)
