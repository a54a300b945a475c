"""Theorem names: a curated lexicon with aliases, and the identity of a name.

Policy:

- `THEOREM_ALIASES` maps a canonical name to the ways solutions write it (`AM-GM` for
  `arithmetic-geometric mean inequality`, `Pythagoras' theorem` for the `Pythagorean theorem`;
  abbreviations such as `SAS` count only in capitals where the annotator looks for them).
  `canonical_theorem` and `theorem_names_equal` match by canonical name, never by loose text
  similarity (`AM-GM` is not `Cauchy-Schwarz`); a name outside the lexicon is undecided (None),
  so callers compare it as a formula.
- `theorem_key` is a name's identity for names that are not in the lexicon too (Error
  Correction's swapped names): letters only, lower case, without "the", possessive `'s` and a
  trailing "s" (`Rolle's theorem` is `the Rolle Theorem`).
- A new theorem or alias is one entry in `THEOREM_ALIASES`.
"""

from __future__ import annotations

import re

THEOREM_ALIASES: dict[str, tuple[str, ...]] = {
    "AM-GM": ("AM-GM inequality", "AM-GM", "AM GM", "AMGM", "arithmetic-geometric mean inequality",
              "arithmetic mean-geometric mean inequality", "inequality of arithmetic and geometric means",
              "arithmetic-geometric mean", "arithmetic mean-geometric mean"),
    "Cauchy-Schwarz": ("Cauchy-Schwarz inequality", "Cauchy-Schwarz", "Cauchy Schwarz", "Cauchy-Bunyakovsky-Schwarz inequality",
                       "Cauchy inequality", "Cauchy's inequality"),
    "Vieta": ("Vieta's formulas", "Vieta's formula", "Vieta formulas", "Vieta", "Viete's formulas", "Vieta's theorem"),
    "Fermat's little theorem": ("Fermat's little theorem", "Fermat little theorem", "Fermat's theorem", "FLT"),
    "Euler's theorem": ("Euler's theorem", "Euler theorem", "Euler's totient theorem", "Fermat-Euler theorem"),
    "pigeonhole principle": ("pigeonhole principle", "pigeon-hole principle", "pigeonhole", "Dirichlet's box principle",
                             "box principle", "Dirichlet principle"),
    "induction hypothesis": ("induction hypothesis", "inductive hypothesis", "induction assumption"),
    "induction": ("induction", "mathematical induction", "proof by induction", "strong induction", "principle of induction"),
    "Chinese remainder theorem": ("Chinese remainder theorem", "Chinese Remainder Theorem", "CRT"),
    "Pythagorean theorem": ("Pythagorean theorem", "Pythagoras' theorem", "Pythagoras theorem", "Pythagoras's theorem",
                            "theorem of Pythagoras", "Pythagorean Theorem"),
    "law of cosines": ("law of cosines", "cosine rule", "cosine law", "Law of Cosines"),
    "law of sines": ("law of sines", "sine rule", "sine law", "Law of Sines"),
    "triangle inequality": ("triangle inequality",),
    "angle bisector theorem": ("angle bisector theorem", "Angle Bisector Theorem", "bisector theorem"),
    "binomial theorem": ("binomial theorem", "binomial expansion", "Newton's binomial theorem"),
    "quadratic formula": ("quadratic formula", "quadratic equation formula"),
    "Lagrange's theorem": ("Lagrange's theorem", "Lagrange theorem", "theorem of Lagrange"),
    "Sylow theorems": ("Sylow theorems", "Sylow's theorem", "Sylow's theorems", "Sylow theorem"),
    "intermediate value theorem": ("intermediate value theorem", "IVT", "Bolzano's theorem"),
    "mean value theorem": ("mean value theorem", "MVT", "Lagrange's mean value theorem"),
    "extreme value theorem": ("extreme value theorem", "Weierstrass extreme value theorem"),
    "Rolle's theorem": ("Rolle's theorem", "Rolle theorem"),
    "fundamental theorem of calculus": ("fundamental theorem of calculus", "FTC"),
    "fundamental theorem of algebra": ("fundamental theorem of algebra",),
    "fundamental theorem of arithmetic": ("fundamental theorem of arithmetic", "unique factorization theorem",
                                          "unique prime factorization"),
    "Euclidean algorithm": ("Euclidean algorithm", "Euclid's algorithm", "Euclidean Algorithm"),
    "Bezout's identity": ("Bezout's identity", "Bézout's identity", "Bezout identity", "Bezout's lemma", "Bézout's lemma"),
    "Wilson's theorem": ("Wilson's theorem", "Wilson theorem"),
    "Ptolemy's theorem": ("Ptolemy's theorem", "Ptolemy theorem", "Ptolemy's inequality"),
    "Stewart's theorem": ("Stewart's theorem", "Stewart theorem"),
    "Ceva's theorem": ("Ceva's theorem", "Ceva theorem"),
    "Menelaus' theorem": ("Menelaus' theorem", "Menelaus's theorem", "Menelaus theorem"),
    "power of a point": ("power of a point", "power of the point", "power-of-a-point theorem"),
    "Heron's formula": ("Heron's formula", "Hero's formula", "Heron formula"),
    "shoelace formula": ("shoelace formula", "shoelace theorem", "Gauss's area formula"),
    "inclusion-exclusion": ("inclusion-exclusion principle", "principle of inclusion-exclusion", "inclusion-exclusion",
                            "inclusion exclusion"),
    "Jensen's inequality": ("Jensen's inequality", "Jensen inequality"),
    "Holder's inequality": ("Hölder's inequality", "Holder's inequality", "Holder inequality"),
    "Chebyshev's inequality": ("Chebyshev's inequality", "Chebyshev's sum inequality", "Chebyshev inequality"),
    "rearrangement inequality": ("rearrangement inequality",),
    "Schur's inequality": ("Schur's inequality", "Schur inequality"),
    "Bernoulli's inequality": ("Bernoulli's inequality", "Bernoulli inequality"),
    "De Moivre's theorem": ("De Moivre's theorem", "de Moivre's formula", "De Moivre's formula", "de Moivre's theorem"),
    "Euler's formula": ("Euler's formula", "Euler formula"),
    "Legendre's formula": ("Legendre's formula", "de Polignac's formula"),
    "quadratic reciprocity": ("quadratic reciprocity", "law of quadratic reciprocity", "quadratic reciprocity law"),
    "rational root theorem": ("rational root theorem", "rational roots theorem", "rational zero theorem"),
    "remainder theorem": ("remainder theorem", "polynomial remainder theorem", "factor theorem"),
    "Stars and bars": ("stars and bars", "stars-and-bars"),
    "Hockey stick identity": ("hockey stick identity", "hockey-stick identity"),
    "Vandermonde's identity": ("Vandermonde's identity", "Vandermonde identity", "Vandermonde's convolution"),
    "Bolzano-Weierstrass theorem": ("Bolzano-Weierstrass theorem", "Bolzano-Weierstrass"),
    "Heine-Borel theorem": ("Heine-Borel theorem", "Heine-Borel"),
    "Cayley-Hamilton theorem": ("Cayley-Hamilton theorem", "Cayley-Hamilton"),
    "rank-nullity theorem": ("rank-nullity theorem", "rank nullity theorem", "rank-nullity"),
    "first isomorphism theorem": ("first isomorphism theorem", "First Isomorphism Theorem"),
    "Cauchy's theorem": ("Cauchy's theorem",),
    "L'Hopital's rule": ("L'Hôpital's rule", "L'Hopital's rule", "L'Hospital's rule", "l'Hôpital's rule", "L'Hopital rule"),
    "squeeze theorem": ("squeeze theorem", "sandwich theorem", "squeeze lemma"),
    "similar triangles": ("similar triangles",),
    "Side-Angle-Side": ("Side-Angle-Side", "SAS"),
    "Angle-Angle": ("Angle-Angle", "AA similarity"),
    "Thales' theorem": ("Thales' theorem", "Thales's theorem", "Thales theorem"),
    "inscribed angle theorem": ("inscribed angle theorem",),
    "Zorn's lemma": ("Zorn's lemma",),
    "well-ordering principle": ("well-ordering principle", "well ordering principle"),
    "sum of an arithmetic series": ("sum of an arithmetic series", "arithmetic series formula", "sum of an arithmetic progression"),
    "sum of a geometric series": ("sum of a geometric series", "geometric series formula", "sum of a geometric progression"),
}


def _name_key(text: str) -> str:
    t = text.lower().replace("\u2019", "'").replace("\u2013", "-").replace("ö", "o").replace("é", "e")
    t = re.sub(r"(?<=\w)'s?\b", "", t)
    t = re.sub(r"[^a-z0-9]+", " ", t).strip()
    return re.sub(r"^(?:by |using |from |apply(?:ing)? )?(?:the |a )?", "", t)  # "by the AM-GM inequality"


_CANONICAL: dict[str, str] = {}
for _canon, _aliases in THEOREM_ALIASES.items():
    for _alias in (_canon, *_aliases):
        _CANONICAL.setdefault(_name_key(_alias), _canon)


def canonical_theorem(text: str) -> str | None:
    """The lexicon's canonical name for a theorem name or alias (`AM-GM` for
    `arithmetic-geometric mean inequality`), or None when text is not a known theorem name."""
    return _CANONICAL.get(_name_key(text))


def theorem_names_equal(a: str, b: str) -> bool | None:
    """Whether two theorem names name the same theorem (by canonical name, never by loose text
    similarity); None when either is not a theorem name of the lexicon (then compare as formulas)."""
    ca, cb = canonical_theorem(a), canonical_theorem(b)
    if ca is None or cb is None:
        return None
    return ca == cb


def theorem_key(name: str) -> str:
    """A name's identity: letters only, lower case, without "the", possessive `'s` and a trailing "s".

    `Rolle's theorem`, `Rolle theorem` and `the Rolle's Theorem` share a key; `Cauchy-Schwarz`
    and `Cauchy–Schwarz` too.
    """
    text = re.sub(r"\\(?:text|textbf|textit|mathrm|emph)\s*\{([^{}]*)\}", r"\1", name).lower()
    text = re.sub(r"['\u2019`]s\b", "", text)
    text = re.sub(r"\bthe\b", " ", text)
    words = re.findall(r"[a-z]+", text)
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words)
