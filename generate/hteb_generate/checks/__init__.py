"""Stage 4, checks: the ten error types and their rules, and the judge that rates what passed."""
