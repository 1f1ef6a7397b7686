"""What a run and a comparison publish: the result card (`card`), a comparison's inputs
(`inputs`), analysis (`analysis`) and the `Comparison` that renders itself (`comparison`, with
`plots`, `html_report` and `model_index`)."""
