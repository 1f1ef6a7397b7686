"""The scoring run: which variants and datasets are scored (`selection`), every variant through the
evaluators (`run`), the corpus-robustness protocol (`corpus_robustness`), and the one HTEB
aggregation rule (`aggregate`)."""
