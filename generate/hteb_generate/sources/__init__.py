"""Stage 1, sources: the dataset table's rows read as mteb reads them, from the Hub at their pins or from local copies."""
