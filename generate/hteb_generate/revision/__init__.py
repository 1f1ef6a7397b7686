"""Stage 6, revision: what a revision says of itself (the dataset card, MANIFEST.md) and `reproduce`."""
