"""Stage 5, setup: a run's configuration and the host it needs (GPU facts, the engines' memory plan, the doctor)."""
