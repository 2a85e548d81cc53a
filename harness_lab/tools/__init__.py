"""The tool boundary (doc §7): preflight, canonical records, projection."""
