"""Release: EvidenceGuard, one EvidenceRepair, SemanticGuard, the release decision, SafeFallback."""
