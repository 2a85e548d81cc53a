"""Diagnosis runtime (doc §6, §8): the ReAct loop, collection control, drafts and progress."""
