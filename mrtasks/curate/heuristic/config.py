"""The heuristic annotator's knobs, in one place (the defaults are what the build uses)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HeuristicConfig:
    """Knobs of the heuristic annotator (the defaults are what the build uses)."""

    plain_equations: bool = True
    """Also take plain-text arithmetic (`48/2 = 24`) outside math delimiters as formulas."""
    min_formula_chars: int = 2
    """Shorter formulas (after stripping) are not maskable."""
    max_formula_chars: int = 400
    """Longer formulas are not maskable: nobody can restore a half-page display verbatim."""
    max_steps: int | None = None
    """Merge the shortest neighbouring steps until at most this many remain (None, the default: no
    cap, a proof keeps all its steps; olympiad proofs have 17 to 80)."""
    min_step_chars: int = 12
    """A step shorter than this (e.g. `Q.E.D.`) is merged into its neighbour."""
    paragraph_steps: int | None = 10
    """A text whose author drew at least this many steps at line breaks keeps its paragraphs whole:
    the sentences of a paragraph up to `long_paragraph_chars` form one step (None: always cut at
    sentences). Blind labellers following Appendix A cut such texts at their paragraphs."""
    model_paragraphs: bool = True
    """A model-written CoT (math in `\\(`/`\\[` brackets, blank-line paragraphs) keeps its paragraphs whole
    whatever `paragraph_steps` says: such texts put one move in each paragraph, and blind labellers keep them whole
    (ANNOTATOR_GOLD.md, round 16)."""
    long_paragraph_chars: int = 900
    """A paragraph longer than this is still cut at its sentences when `paragraph_steps` applies."""
    theorem_names: bool = True
    """Offer theorem names of the lexicon (`THEOREM_ALIASES`) found in the prose as candidates."""
    max_mask_share: float = 0.75
    """At most this share of a solution's non-junk candidates is offered as maskable, so that a
    masked row always keeps context visible (with 7 masks a row needs 10 candidates)."""
