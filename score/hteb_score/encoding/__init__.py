"""Texts to vectors: the model's files and identity (`identity`), the encoder a run uses (`choice`:
sentence-transformers or an mteb loader), its backends (`backends`), the batched path (`batched`),
the vectors kept in memory or on disk (`vector_store`) and between runs (`cache`)."""
