"""Texts to vectors: the model's files (`model_files`) and identity (`identity`), the encoder a run
uses (`choice`: sentence-transformers, `encoder`, or a model of mteb's registry, `mteb_encoder`),
its backends (`backends`), the batched path (`batched`), the vectors kept in memory or on disk
(`vector_store`) and between runs (`cache`), and the `Embed` lookup the evaluators receive (`embed`)."""
