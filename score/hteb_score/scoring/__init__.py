"""The scoring run: its options (`options`), which variants and datasets are scored (`selection`),
read and checked before the model loads (`data`), every variant through the evaluators (`run`) into
`ScoreRecord`s (`score_record`), the one HTEB aggregation rule (`aggregate`), a run's model
statistics (`statistics`), one model's per-dataset scores as a comparison reads them
(`model_scores`), the corpus-robustness protocol (`corpus_robustness`), and a run as work units whose
partial results merge into the one run (`parts`)."""
