"""Typed tables of HTEB's concepts: datasets and transformations, read by both programs."""
