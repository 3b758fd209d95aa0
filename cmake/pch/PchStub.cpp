// Carrier of the MLIR precompiled header.
