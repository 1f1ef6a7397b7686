"""Cards and scores tables compared: the analyses and the files of a comparison (see hteb_score.report)."""
