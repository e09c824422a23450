"""Getting learned position tables: the bundled model, the hub (range reads), local files, uploads."""
