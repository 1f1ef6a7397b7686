"""Stage 2, transform: how each transformation is made (prompt sets, language plans, token budgets, the Noise rules,
clean-ups of raw outputs, language identification)."""
