"""What hteb-score publishes, in three rooms in the stage order, each reading only the rooms before it:

- `card`: one run's result card (`card`: JSON and `result_card.md` from `templates/`), its files (`outputs`,
  `run_outputs`: written from the run's work units), the checks a card is read with (`card_checks`) and
  its Hub files (`model_index`).
- `compare`: cards and tables compared: the inputs (`inputs`), the analyses (`analysis`, `basis`,
  `pairwise`, `per_dataset`, `lead`, `chance`, `coverage_rows`), the `Comparison` with its JSON and
  Markdown (`comparison`) and its other files (`comparison_files`: `plots`, `html_report`, `explorer_html`).
- `site`: the docs site's pages made from committed comparisons (`findings`, `leaderboard_data`,
  `leaderboard_page`).

`formatting` is the one number format all three print with."""
