"""Stage 7, run: the run's units of work, their generation with retries and checks, `plan`, and the pipeline end to end."""
