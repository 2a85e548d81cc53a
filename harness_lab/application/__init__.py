"""The chat application use case: the order of a run, routing and the three paths."""
