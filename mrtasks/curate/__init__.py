"""Curation: sources -> refine -> annotate -> filter -> split. Every dropped row is counted by reason."""
