"""What a run and a comparison publish: the result card (`card`); a comparison's inputs (`inputs`),
analysis (`analysis`), the `Comparison` with its JSON and Markdown (`comparison`) and its other
files (`comparison_files`: `plots`, `html_report`, `model_index`); one number format for all of
them (`formatting`); a run's card and outputs written from its work units (`run_outputs`)."""
