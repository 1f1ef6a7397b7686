"""What the evaluators receive from the encoding stage: an `Embed` callable that looks up the
embeddings of texts already embedded for the run (`EmbeddingTable.view`), asked with `Text`s."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

Text = tuple[str, str | None]  # (text, prompt_type): prompt_type "query", "document" or None
Embed = Callable[[Sequence[str], str | None], np.ndarray]  # (texts, prompt_type) -> float32 (n, d), rows in order
