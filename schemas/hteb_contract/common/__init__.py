"""What both programs share that is not the data contract: atomic writes and sha256, file locks,
SQLite in WAL mode, cache paths, Ray connection, and the lazy name registry."""
