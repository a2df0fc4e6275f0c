"""The object model: every kind gpusim reads (one module per API group and version, named after it),
quantities and durations, strict schema decoding, per-object validation, and the API types two
components share across an upstream boundary (the Device Plugin API, HAMi's device annotations).
Nothing here imports another part of gpusim."""
