"""One run's result card and the files written beside it (see hteb_score.report)."""
