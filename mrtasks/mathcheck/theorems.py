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
import unicodedata

THEOREM_ALIASES: dict[str, tuple[str, ...]] = {
    "AM-GM": ("AM-GM inequality", "AM-GM", "AM GM", "AMGM", "arithmetic-geometric mean inequality",
              "arithmetic mean-geometric mean inequality", "inequality of arithmetic and geometric means",
              "arithmetic-geometric mean", "arithmetic mean-geometric mean"),
    "Cauchy-Schwarz": ("Cauchy-Schwarz inequality", "Cauchy-Schwarz", "Cauchy Schwarz", "Cauchy-Bunyakovsky-Schwarz inequality",
                       "Cauchy inequality", "Cauchy's inequality", "Schwarz inequality",
                       "Schwarz's inequality", "Cauchy-Schwarz-Bunyakovsky inequality"),
    "Vieta": ("Vieta's formulas", "Vieta's formula", "Vieta formulas", "Vieta", "Viete's formulas", "Vieta's theorem"),
    "Fermat's little theorem": ("Fermat's little theorem", "Fermat little theorem", "Fermat's theorem", "FLT"),
    "Euler's theorem": ("Euler's theorem", "Euler theorem", "Euler's totient theorem", "Fermat-Euler theorem",
                        "Euler-Fermat theorem"),
    "pigeonhole principle": ("pigeonhole principle", "pigeon-hole principle", "pigeonhole", "Dirichlet's box principle",
                             "box principle", "Dirichlet principle"),
    "induction hypothesis": ("induction hypothesis", "inductive hypothesis", "induction assumption"),
    "induction": ("induction", "mathematical induction", "proof by induction", "strong induction", "principle of induction"),
    "Chinese remainder theorem": ("Chinese remainder theorem", "Chinese Remainder Theorem", "Chinese remainder", "CRT"),
    "Pythagorean theorem": ("Pythagorean theorem", "Pythagoras' theorem", "Pythagoras theorem", "Pythagoras's theorem",
                            "theorem of Pythagoras", "Pythagorean Theorem"),
    "law of cosines": ("law of cosines", "cosine rule", "cosine law", "Law of Cosines"),
    "law of sines": ("law of sines", "sine rule", "sine law", "Law of Sines"),
    "triangle inequality": ("triangle inequality",),
    "angle bisector theorem": ("angle bisector theorem", "Angle Bisector Theorem", "bisector theorem"),
    "binomial theorem": ("binomial theorem", "binomial expansion", "Newton's binomial theorem"),
    "quadratic formula": ("quadratic formula", "quadratic equation formula"),
    "Lagrange's theorem": ("Lagrange's theorem", "Lagrange theorem", "theorem of Lagrange"),
    "Sylow theorems": ("Sylow theorems", "Sylow's theorem", "Sylow's theorems", "Sylow theorem", "Sylow's first theorem",
                       "Sylow's second theorem", "Sylow's third theorem"),
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
    "Holder's inequality": ("Hölder's inequality", "Holder's inequality", "Holder inequality", "Hölder inequality", "Hölder", "Holder"),
    "Chebyshev's inequality": ("Chebyshev's inequality", "Chebyshev's sum inequality", "Chebyshev inequality",
                               "Chebyshev's sum", "Tchebychef's inequality"),
    "rearrangement inequality": ("rearrangement inequality",),
    "Bernoulli's inequality": ("Bernoulli's inequality", "Bernoulli inequality"),
    "De Moivre's theorem": ("De Moivre's theorem", "de Moivre's formula", "De Moivre's formula", "de Moivre's theorem",
                            "DeMoivre's theorem", "DeMoivre's formula"),
    "Euler's formula": ("Euler's formula", "Euler formula"),
    "Legendre's formula": ("Legendre's formula", "de Polignac's formula"),
    "quadratic reciprocity": ("quadratic reciprocity", "law of quadratic reciprocity", "quadratic reciprocity law"),
    "rational root theorem": ("rational root theorem", "rational roots theorem", "rational zero theorem"),
    "remainder theorem": ("remainder theorem", "polynomial remainder theorem", "factor theorem"),
    "Stars and bars": ("stars and bars", "stars-and-bars"),
    "Hockey stick identity": ("hockey stick identity", "hockey-stick identity", "hockey stick theorem",
                             "Christmas stocking identity"),
    "Vandermonde's identity": ("Vandermonde's identity", "Vandermonde identity", "Vandermonde's convolution"),
    "Bolzano-Weierstrass theorem": ("Bolzano-Weierstrass theorem", "Bolzano–Weierstrass theorem", "Bolzano-Weierstrass"),
    "Heine-Borel theorem": ("Heine-Borel theorem", "Heine–Borel theorem", "Heine-Borel"),
    "Cayley-Hamilton theorem": ("Cayley-Hamilton theorem", "Cayley–Hamilton theorem", "Cayley-Hamilton"),
    "rank-nullity theorem": ("rank-nullity theorem", "rank nullity theorem", "rank-nullity", "dimension theorem"),
    "first isomorphism theorem": ("first isomorphism theorem", "First Isomorphism Theorem", "fundamental homomorphism theorem"),
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
    # Olympiad number theory
    "Dirichlet's theorem": ("Dirichlet's theorem on primes in arithmetic progressions", "Dirichlet's theorem on arithmetic progressions",
                            "Dirichlet's theorem on primes in arithmetic progression", "Dirichlet's prime number theorem",
                            "Dirichlet's theorem", "Dirichlet theorem"),
    "Zsigmondy's theorem": ("Zsigmondy's theorem", "Zsigmondy theorem", "Zsigmondy", "Bang's theorem"),
    "lifting the exponent lemma": ("lifting the exponent lemma", "lifting-the-exponent lemma", "lifting the exponent",
                                   "LTE lemma", "LTE"),
    "Hensel's lemma": ("Hensel's lemma", "Hensel lemma", "Hensel's lifting lemma"),
    "Euler's criterion": ("Euler's criterion", "Euler criterion"),
    "Gauss's lemma": ("Gauss's lemma", "Gauss' lemma", "Gauss lemma"),
    "Lucas's theorem": ("Lucas's theorem", "Lucas' theorem", "Lucas theorem"),
    "Kummer's theorem": ("Kummer's theorem", "Kummer theorem"),
    "Bertrand's postulate": ("Bertrand's postulate", "Bertrand postulate", "Chebyshev's theorem on primes"),
    "Fermat's two squares theorem": ("Fermat's theorem on sums of two squares", "Fermat's two squares theorem",
                                     "Fermat's Christmas theorem"),
    "Lagrange's four-square theorem": ("Lagrange's four-square theorem", "Lagrange's four square theorem", "four-square theorem"),
    "Thue's lemma": ("Thue's lemma", "Thue lemma"),
    "Wolstenholme's theorem": ("Wolstenholme's theorem", "Wolstenholme theorem"),
    "Euclid's lemma": ("Euclid's lemma", "Euclid lemma"),
    "division algorithm": ("division algorithm", "Euclidean division"),
    "Chicken McNugget theorem": ("Chicken McNugget theorem", "Frobenius coin problem", "Sylvester's theorem on coins"),
    "primitive root theorem": ("primitive root theorem", "existence of primitive roots"),
    "Dirichlet's approximation theorem": ("Dirichlet's approximation theorem", "Dirichlet approximation theorem"),
    # Olympiad inequalities and algebra
    "Muirhead's inequality": ("Muirhead's inequality", "Muirhead inequality", "Muirhead's theorem", "Muirhead"),
    "Nesbitt's inequality": ("Nesbitt's inequality", "Nesbitt inequality"),
    "power mean inequality": ("power mean inequality", "power-mean inequality", "QM-AM-GM-HM inequality", "QM-AM-GM-HM",
                              "QM-AM inequality", "QM-AM", "AM-QM inequality", "AM-QM", "RMS-AM inequality", "generalized mean inequality"),
    "AM-HM": ("AM-HM inequality", "AM-HM", "HM-GM-AM inequality"),
    "Karamata's inequality": ("Karamata's inequality", "Karamata inequality", "majorization inequality"),
    "Minkowski's inequality": ("Minkowski's inequality", "Minkowski inequality"),
    "Young's inequality": ("Young's inequality", "Young inequality"),
    "tangent line trick": ("tangent line trick", "tangent-line trick"),
    "Newton's identities": ("Newton's identities", "Newton's sums", "Newton's identity", "Newton-Girard formulas"),
    "Lagrange interpolation": ("Lagrange interpolation", "Lagrange interpolation formula", "Lagrange's interpolation formula"),
    "Descartes' rule of signs": ("Descartes' rule of signs", "Descartes's rule of signs", "rule of signs"),
    "Eisenstein's criterion": ("Eisenstein's criterion", "Eisenstein criterion", "Eisenstein's irreducibility criterion"),
    "Abel summation": ("Abel summation", "Abel's summation formula", "summation by parts", "Abel's lemma"),
    "Cauchy's functional equation": ("Cauchy's functional equation", "Cauchy functional equation", "Cauchy equation"),
    "telescoping": ("telescoping sum", "telescoping series", "telescoping"),
    # Olympiad geometry
    "Pick's theorem": ("Pick's theorem", "Pick theorem", "Pick's formula"),
    "Simson line": ("Simson line", "Simson's theorem", "Simson-Wallace line"),
    "radical axis theorem": ("radical axis theorem",),
    "Pascal's theorem": ("Pascal's theorem", "Pascal theorem", "Pascal's hexagon theorem"),
    "Brianchon's theorem": ("Brianchon's theorem", "Brianchon theorem"),
    "Desargues' theorem": ("Desargues' theorem", "Desargues's theorem", "Desargues theorem"),
    "Miquel's theorem": ("Miquel's theorem", "Miquel theorem", "Miquel point"),
    "Monge's theorem": ("Monge's theorem", "Monge theorem"),
    "butterfly theorem": ("butterfly theorem",),
    "Brahmagupta's formula": ("Brahmagupta's formula", "Brahmagupta formula"),
    "Euler's inequality": ("Euler's inequality", "Euler inequality"),
    "Euler line": ("Euler line", "Euler's line"),
    "nine-point circle": ("nine-point circle", "nine point circle"),
    "Apollonius's theorem": ("Apollonius's theorem", "Apollonius' theorem", "Apollonius theorem", "median length formula"),
    "Carnot's theorem": ("Carnot's theorem", "Carnot theorem"),
    "Van Aubel's theorem": ("Van Aubel's theorem", "van Aubel's theorem"),
    "British flag theorem": ("British flag theorem",),
    "Viviani's theorem": ("Viviani's theorem", "Viviani theorem"),
    "Napoleon's theorem": ("Napoleon's theorem", "Napoleon theorem"),
    "law of tangents": ("law of tangents", "tangent rule"),
    "extended law of sines": ("extended law of sines", "extended sine rule"),
    "tangent-secant theorem": ("tangent-secant theorem", "secant-tangent theorem", "intersecting chords theorem",
                               "intersecting secants theorem"),
    "alternate segment theorem": ("alternate segment theorem", "tangent-chord angle theorem", "tangent chord angle",
                                 "tangent-chord theorem", "tangent chord theorem"),
    "Cauchy-Davenport theorem": ("Cauchy-Davenport theorem", "Cauchy-Davenport"),
    # Combinatorics
    "Hall's marriage theorem": ("Hall's marriage theorem", "Hall's theorem", "Hall marriage theorem", "Hall's condition",
                               "Hall's lemma", "Hall's marriage lemma"),
    "Dilworth's theorem": ("Dilworth's theorem", "Dilworth theorem"),
    "Erdos-Szekeres theorem": ("Erdős–Szekeres theorem", "Erdos-Szekeres theorem", "Erdős-Szekeres theorem", "Erdos-Szekeres"),
    "Ramsey's theorem": ("Ramsey's theorem", "Ramsey theorem"),
    "Turan's theorem": ("Turán's theorem", "Turan's theorem", "Turan theorem"),
    "Sperner's lemma": ("Sperner's lemma", "Sperner's theorem"),
    "Burnside's lemma": ("Burnside's lemma", "Burnside lemma", "Cauchy-Frobenius lemma", "orbit-counting theorem"),
    "handshake lemma": ("handshake lemma", "handshaking lemma", "degree sum formula"),
    "Euler's formula for planar graphs": ("Euler's formula for planar graphs", "Euler's polyhedron formula",
                                          "Euler's polyhedron theorem", "Euler characteristic formula"),
    "double counting": ("double counting", "double-counting", "Double-count", "counting in two ways"),
    "extremal principle": ("extremal principle",),
    "infinite descent": ("infinite descent", "method of infinite descent", "Fermat's infinite descent"),
    "Combinatorial Nullstellensatz": ("Combinatorial Nullstellensatz", "Alon's Nullstellensatz"),
    "Chevalley-Warning theorem": ("Chevalley-Warning theorem", "Chevalley–Warning theorem", "Chevalley's theorem"),
    # Undergraduate analysis
    "Taylor's theorem": ("Taylor's theorem", "Taylor theorem", "Taylor's formula", "Taylor expansion"),
    "Cauchy's mean value theorem": ("Cauchy's mean value theorem", "Cauchy mean value theorem", "extended mean value theorem"),
    "monotone convergence theorem": ("monotone convergence theorem", "Monotone Convergence Theorem", "monotone convergence"),
    "dominated convergence theorem": ("dominated convergence theorem", "Lebesgue's dominated convergence theorem",
                                      "Dominated Convergence Theorem"),
    "Fatou's lemma": ("Fatou's lemma", "Fatou lemma"),
    "Fubini's theorem": ("Fubini's theorem", "Fubini theorem", "Fubini-Tonelli theorem", "Tonelli's theorem"),
    "Cauchy criterion": ("Cauchy criterion", "Cauchy's criterion", "Cauchy convergence criterion"),
    "Weierstrass M-test": ("Weierstrass M-test", "M-test", "Weierstrass test"),
    "ratio test": ("ratio test", "d'Alembert's ratio test"),
    "root test": ("root test", "Cauchy's root test"),
    "comparison test": ("comparison test", "limit comparison test", "direct comparison test"),
    "integral test": ("integral test",),
    "alternating series test": ("alternating series test", "Leibniz test", "Leibniz's test"),
    "uniform limit theorem": ("uniform limit theorem",),
    "Arzela-Ascoli theorem": ("Arzelà–Ascoli theorem", "Arzela-Ascoli theorem", "Arzelà-Ascoli theorem", "Ascoli's theorem"),
    "Stone-Weierstrass theorem": ("Stone-Weierstrass theorem", "Stone–Weierstrass theorem", "Weierstrass approximation theorem"),
    "Baire category theorem": ("Baire category theorem", "Baire's theorem"),
    "Banach fixed-point theorem": ("Banach fixed-point theorem", "Banach fixed point theorem", "contraction mapping theorem",
                                   "contraction mapping principle"),
    "Urysohn's lemma": ("Urysohn's lemma", "Urysohn lemma"),
    "Tychonoff's theorem": ("Tychonoff's theorem", "Tychonoff theorem"),
    "Tietze extension theorem": ("Tietze extension theorem", "Tietze's extension theorem"),
    "inverse function theorem": ("inverse function theorem",),
    "implicit function theorem": ("implicit function theorem",),
    "Green's theorem": ("Green's theorem", "Green theorem"),
    "Stokes' theorem": ("Stokes' theorem", "Stokes's theorem", "Stokes theorem"),
    "divergence theorem": ("divergence theorem", "Gauss's theorem", "Gauss-Ostrogradsky theorem"),
    "Cauchy-Riemann equations": ("Cauchy-Riemann equations", "Cauchy–Riemann equations", "Cauchy-Riemann"),
    "Cauchy's integral formula": ("Cauchy's integral formula", "Cauchy integral formula"),
    "Cauchy's integral theorem": ("Cauchy's integral theorem", "Cauchy-Goursat theorem", "Cauchy integral theorem"),
    "residue theorem": ("residue theorem", "Cauchy's residue theorem"),
    "Liouville's theorem": ("Liouville's theorem", "Liouville theorem"),
    "maximum modulus principle": ("maximum modulus principle", "maximum modulus theorem"),
    "Morera's theorem": ("Morera's theorem", "Morera theorem"),
    "Schwarz lemma": ("Schwarz lemma", "Schwarz's lemma"),
    "Rouche's theorem": ("Rouché's theorem", "Rouche's theorem", "Rouche theorem"),
    "open mapping theorem": ("open mapping theorem",),
    "identity theorem": ("identity theorem", "identity principle"),
    "Jordan's lemma": ("Jordan's lemma", "Jordan lemma"),
    # Undergraduate algebra and linear algebra
    "orbit-stabilizer theorem": ("orbit-stabilizer theorem", "orbit stabilizer theorem", "orbit-stabiliser theorem"),
    "class equation": ("class equation", "class formula"),
    "second isomorphism theorem": ("second isomorphism theorem", "diamond isomorphism theorem"),
    "third isomorphism theorem": ("third isomorphism theorem",),
    "correspondence theorem": ("correspondence theorem", "lattice isomorphism theorem", "fourth isomorphism theorem"),
    "Cayley's theorem": ("Cayley's theorem", "Cayley theorem"),
    "Jordan-Holder theorem": ("Jordan-Hölder theorem", "Jordan-Holder theorem", "Jordan–Hölder theorem"),
    "structure theorem for finitely generated abelian groups": (
        "fundamental theorem of finitely generated abelian groups", "structure theorem for finitely generated abelian groups",
        "fundamental theorem of finite abelian groups", "classification of finite abelian groups"),
    "Schur's lemma": ("Schur's lemma", "Schur lemma"),
    "Hilbert's basis theorem": ("Hilbert's basis theorem", "Hilbert basis theorem"),
    "Nakayama's lemma": ("Nakayama's lemma", "Nakayama lemma"),
    "primitive element theorem": ("primitive element theorem", "theorem of the primitive element"),
    "fundamental theorem of Galois theory": ("fundamental theorem of Galois theory", "Galois correspondence"),
    "tower law": ("tower law", "degree formula", "multiplicativity of degrees"),
    "spectral theorem": ("spectral theorem", "complex spectral theorem", "real spectral theorem"),
    "Gram-Schmidt process": ("Gram-Schmidt process", "Gram–Schmidt process", "Gram-Schmidt orthogonalization", "Gram-Schmidt"),
    "Cramer's rule": ("Cramer's rule", "Cramer rule"),
    "Jordan canonical form": ("Jordan canonical form", "Jordan normal form"),
    "Sylvester's law of inertia": ("Sylvester's law of inertia", "law of inertia"),
    "Schur's inequality": ("Schur's inequality", "Schur inequality"),
    "sum of an arithmetic series": ("sum of an arithmetic series", "arithmetic series formula", "sum of an arithmetic progression"),
    "sum of a geometric series": ("sum of a geometric series", "geometric series formula", "sum of a geometric progression"),
    # Olympiad algebra, number theory and inequalities (round 2 of the lexicon)
    "Titu's lemma": ("Titu's lemma", "Titu lemma", "Engel's form", "Engel form", "Sedrakyan's inequality",
                     "Sedrakyan's lemma", "Cauchy-Schwarz in Engel form"),
    "Maclaurin's inequality": ("Maclaurin's inequality", "Maclaurin's inequalities", "Maclaurin inequality"),
    "Newton's inequalities": ("Newton's inequalities", "Newton's inequality", "Newton inequality"),
    "Erdos-Mordell inequality": ("Erdős-Mordell inequality", "Erdos-Mordell inequality", "Erdős-Mordell theorem",
                                 "Erdos-Mordell theorem"),
    "Weitzenbock's inequality": ("Weitzenböck's inequality", "Weitzenbock's inequality", "Weitzenbock inequality"),
    "isoperimetric inequality": ("isoperimetric inequality",),
    "Pascal's identity": ("Pascal's identity", "Pascal's rule", "Pascal rule", "Pascal identity"),
    "Lagrange's identity": ("Lagrange's identity", "Lagrange identity"),
    "Brahmagupta-Fibonacci identity": ("Brahmagupta-Fibonacci identity", "Brahmagupta's identity", "Fibonacci's identity",
                                       "Diophantus identity"),
    "Sophie Germain identity": ("Sophie Germain identity", "Sophie Germain's identity", "Sophie-Germain identity"),
    "Cassini's identity": ("Cassini's identity", "Cassini identity", "Cassini's formula"),
    "Binet's formula": ("Binet's formula", "Binet formula", "Binet's Fibonacci formula"),
    "Zeckendorf's theorem": ("Zeckendorf's theorem", "Zeckendorf theorem", "Zeckendorf representation"),
    "Beatty's theorem": ("Beatty's theorem", "Beatty theorem", "Rayleigh's theorem", "Rayleigh-Beatty theorem"),
    "Legendre's three-square theorem": ("Legendre's three-square theorem", "three-square theorem", "three squares theorem"),
    "Fermat's last theorem": ("Fermat's last theorem", "Fermat's Last Theorem"),
    "Mihailescu's theorem": ("Mihailescu's theorem", "Mihăilescu's theorem", "Catalan's conjecture", "Catalan's theorem"),
    "prime number theorem": ("prime number theorem", "PNT"),
    "Wedderburn's little theorem": ("Wedderburn's little theorem", "Wedderburn's theorem", "Wedderburn theorem"),
    "complementary counting": ("complementary counting", "complement principle", "complementary principle",
                               "complement rule"),
    # Olympiad combinatorics and graph theory
    "Erdos-Ginzburg-Ziv theorem": ("Erdős-Ginzburg-Ziv theorem", "Erdos-Ginzburg-Ziv theorem", "EGZ theorem"),
    "van der Waerden's theorem": ("van der Waerden's theorem", "Van der Waerden's theorem", "van der Waerden theorem"),
    "Erdos-Ko-Rado theorem": ("Erdős-Ko-Rado theorem", "Erdos-Ko-Rado theorem", "EKR theorem"),
    "Sauer-Shelah lemma": ("Sauer-Shelah lemma", "Sauer's lemma", "Sauer-Shelah-Perles lemma"),
    "LYM inequality": ("LYM inequality", "Lubell-Yamamoto-Meshalkin inequality"),
    "Lindstrom-Gessel-Viennot lemma": ("Lindström-Gessel-Viennot lemma", "Lindstrom-Gessel-Viennot lemma", "LGV lemma"),
    "Helly's theorem": ("Helly's theorem", "Helly theorem"),
    "Sylvester-Gallai theorem": ("Sylvester-Gallai theorem", "Sylvester Gallai theorem"),
    "Mantel's theorem": ("Mantel's theorem", "Mantel theorem"),
    "Dirac's theorem": ("Dirac's theorem", "Dirac theorem"),
    "Ore's theorem": ("Ore's theorem", "Ore theorem"),
    "Konig's theorem": ("Kőnig's theorem", "König's theorem", "Konig's theorem"),
    "Konig's lemma": ("Kőnig's lemma", "König's lemma", "Konig's lemma", "König's infinity lemma"),
    "Menger's theorem": ("Menger's theorem", "Menger theorem"),
    "Tutte's theorem": ("Tutte's theorem", "Tutte theorem"),
    "Brooks' theorem": ("Brooks' theorem", "Brooks's theorem", "Brooks theorem"),
    "Vizing's theorem": ("Vizing's theorem", "Vizing theorem"),
    "Kuratowski's theorem": ("Kuratowski's theorem", "Kuratowski theorem"),
    "four color theorem": ("four color theorem", "four colour theorem", "four-color theorem"),
    "Cayley's formula": ("Cayley's formula", "Cayley formula", "Cayley's tree formula"),
    "Kirchhoff's theorem": ("Kirchhoff's theorem", "Kirchhoff's matrix tree theorem", "matrix tree theorem",
                            "matrix-tree theorem"),
    # Olympiad geometry
    "Pappus's theorem": ("Pappus's theorem", "Pappus' theorem", "Pappus theorem", "Pappus's hexagon theorem"),
    "Casey's theorem": ("Casey's theorem", "Casey theorem"),
    "Routh's theorem": ("Routh's theorem", "Routh theorem"),
    "Feuerbach's theorem": ("Feuerbach's theorem", "Feuerbach theorem"),
    "Brocard's theorem": ("Brocard's theorem", "Brocard theorem"),
    "Reim's theorem": ("Reim's theorem", "Reim theorem"),
    "Morley's theorem": ("Morley's theorem", "Morley's trisector theorem"),
    "Steiner-Lehmus theorem": ("Steiner-Lehmus theorem", "Steiner Lehmus theorem"),
    "Bretschneider's formula": ("Bretschneider's formula", "Bretschneider formula"),
    "incenter-excenter lemma": ("incenter-excenter lemma", "incenter excenter lemma", "trillium theorem", "trident lemma"),
    "intercept theorem": ("intercept theorem", "basic proportionality theorem", "side-splitter theorem",
                          "side splitter theorem"),
    "midline theorem": ("midline theorem", "midsegment theorem", "triangle midsegment theorem", "midpoint theorem"),
    "perpendicular bisector theorem": ("perpendicular bisector theorem",),
    "two tangent theorem": ("two tangent theorem", "two-tangent theorem", "tangent-tangent theorem", "equal tangents theorem"),
    "hypotenuse-leg theorem": ("hypotenuse-leg theorem", "hypotenuse-leg congruence", "hypotenuse-leg congruency theorem",
                               "hypotenuse leg theorem"),
    "Pythagorean identity": ("Pythagorean identity", "Pythagorean trigonometric identity"),
    # Undergraduate analysis, topology and algebra
    "Stolz-Cesaro theorem": ("Stolz-Cesàro theorem", "Stolz-Cesaro theorem", "Stolz-Cesàro", "Stolz-Cesaro",
                             "Stolz theorem"),
    "Cauchy condensation test": ("Cauchy condensation test", "Cauchy's condensation test", "condensation test"),
    "Dirichlet's test": ("Dirichlet's test", "Dirichlet test"),
    "Abel's test": ("Abel's test", "Abel test"),
    "Riemann rearrangement theorem": ("Riemann rearrangement theorem", "Riemann series theorem", "Riemann's rearrangement theorem"),
    "Heine-Cantor theorem": ("Heine-Cantor theorem", "Heine-Cantor", "Cantor's uniform continuity theorem"),
    "Lebesgue number lemma": ("Lebesgue number lemma", "Lebesgue's number lemma", "Lebesgue covering lemma"),
    "Dini's theorem": ("Dini's theorem", "Dini theorem"),
    "Darboux's theorem": ("Darboux's theorem", "Darboux theorem"),
    "Bessel's inequality": ("Bessel's inequality", "Bessel inequality"),
    "Parseval's identity": ("Parseval's identity", "Parseval's theorem", "Parseval identity"),
    "Riesz representation theorem": ("Riesz representation theorem", "Riesz's representation theorem"),
    "Radon-Nikodym theorem": ("Radon-Nikodym theorem", "Radon-Nikodým theorem"),
    "Hahn-Banach theorem": ("Hahn-Banach theorem", "Hahn-Banach"),
    "uniform boundedness principle": ("uniform boundedness principle", "Banach-Steinhaus theorem"),
    "closed graph theorem": ("closed graph theorem",),
    "Brouwer fixed-point theorem": ("Brouwer fixed-point theorem", "Brouwer fixed point theorem", "Brouwer's fixed point theorem",
                                    "Brouwer's fixed-point theorem"),
    "Borsuk-Ulam theorem": ("Borsuk-Ulam theorem", "Borsuk-Ulam"),
    "Jordan curve theorem": ("Jordan curve theorem",),
    "pasting lemma": ("pasting lemma", "gluing lemma"),
    "Cantor-Bernstein theorem": ("Cantor-Bernstein theorem", "Cantor-Schröder-Bernstein theorem",
                                 "Cantor-Schroeder-Bernstein theorem", "Schröder-Bernstein theorem",
                                 "Schroeder-Bernstein theorem", "Cantor-Bernstein-Schroeder theorem"),
    "Cantor's diagonal argument": ("Cantor's diagonal argument", "diagonal argument", "Cantor's diagonalization",
                                   "diagonalization argument"),
    "Cantor's theorem": ("Cantor's theorem", "Cantor theorem"),
    "Casorati-Weierstrass theorem": ("Casorati-Weierstrass theorem", "Casorati-Weierstrass"),
    "Gershgorin circle theorem": ("Gershgorin circle theorem", "Gershgorin's theorem", "Gershgorin disc theorem"),
    "Perron-Frobenius theorem": ("Perron-Frobenius theorem", "Perron-Frobenius"),
    "Sturm's theorem": ("Sturm's theorem", "Sturm theorem"),
    "Minkowski's theorem": ("Minkowski's theorem", "Minkowski's convex body theorem", "Minkowski convex body theorem"),
    "Lagrange multipliers": ("Lagrange multipliers", "method of Lagrange multipliers", "Lagrange multiplier method"),
}


def _name_key(text: str) -> str:
    t = _ascii(text.lower().replace("\u2019", "'").replace("\u2013", "-"))  # `Erdős`, `Cesàro`, `Hölder` as ASCII
    t = re.sub(r"(?<=\w)'s?\b", "", t)
    t = re.sub(r"[^a-z0-9]+", " ", t).strip()
    return _LEAD.sub("", t)  # "by the AM-GM inequality"


def _ascii(text: str) -> str:
    """Letters without their accents (`ő` is `o`); any other non-ASCII character (a dash, a quote) a space."""
    if text.isascii():
        return text
    return _NON_ASCII.sub(" ", _ACCENT.sub("", unicodedata.normalize("NFKD", text)))


_ACCENT = re.compile(r"[\u0300-\u036f]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


_LEAD = re.compile(r"^\s*(?:(?:by|using|from|applying|apply|via)\s+)?(?:the\s+|a\s+)?", re.IGNORECASE)
"""Words a name is often written after: `by the AM-GM inequality`, `using the Jacobi theorem`."""
_TEXT_COMMAND = re.compile(r"\\(?:text|textbf|textit|mathrm|emph)\s*\{([^{}]*)\}")


_CANONICAL: dict[str, str] = {}
for _canon, _aliases in THEOREM_ALIASES.items():
    for _alias in (_canon, *_aliases):
        _CANONICAL.setdefault(_name_key(_alias), _canon)


def canonical_theorem(text: str) -> str | None:
    """The lexicon's canonical name for a theorem name or alias (`AM-GM` for
    `arithmetic-geometric mean inequality`), or None when text is not a known theorem name."""
    return _CANONICAL.get(_name_key(text))


def theorem_names_equal(a: str, b: str) -> bool | None:
    """Whether two theorem names name the same theorem, never by loose text similarity: by canonical name when both
    are in the lexicon; else, when both are names of a result (`is_result_name`: `Jacobi's theorem`, `the Jacobi
    theorem`, `Steiner's lemma`), by `theorem_key`, so `Jacobi theorem` is `Jacobi's theorem` and `Euler's theorem`
    is not. None when either is no such name (then compare as formulas)."""
    ca, cb = canonical_theorem(a), canonical_theorem(b)
    if ca is not None and cb is not None:
        return ca == cb
    if is_result_name(a) and is_result_name(b):
        return theorem_key(_LEAD.sub("", a)) == theorem_key(_LEAD.sub("", b))
    return None


RESULT_WORDS = (
    "theorem", "lemma", "lemmata", "inequality", "inequalities", "identity", "identities", "formula", "formulas",
    "formulae", "criterion", "principle", "rule", "test", "postulate", "conjecture", "law",
)
"""The last word of a named result: `... theorem`, `... lemma`, `... inequality`, ... (and plurals)."""
_RESULT = "|".join(sorted({w for r in RESULT_WORDS for w in (r, r + "s")}, key=len, reverse=True))
_RESULT_NAME = re.compile(rf"[^\W\d_]+(?:(?:['’\-–.]+\s*|\s+)[^\W\d_]+){{0,7}}['’]?\s+(?:{_RESULT})", re.IGNORECASE)


def is_result_name(text: str) -> bool:
    """Is text the name of a result, words only, ending in a result word (`RESULT_WORDS`): `Jacobi's theorem`, `the
    Jacobi theorem`, `Sylvester–Gallai theorem`, `\\text{Steiner's lemma}`; not a formula, a number or a sentence."""
    text = text.strip().rstrip(".")
    if (m := _TEXT_COMMAND.fullmatch(text)) is not None:
        text = m.group(1).strip()
    return len(text) <= 80 and bool(_RESULT_NAME.fullmatch(_LEAD.sub("", text)))


def theorem_key(name: str) -> str:
    """A name's identity: letters only, lower case, without "the", possessive `'s` and a trailing "s".

    `Rolle's theorem`, `Rolle theorem` and `the Rolle's Theorem` share a key; `Cauchy-Schwarz`
    and `Cauchy–Schwarz` too.
    """
    text = _ascii(_TEXT_COMMAND.sub(r"\1", name).lower())  # `Kőnig` is `Konig`
    text = re.sub(r"['\u2019`]s\b", "", text)
    text = re.sub(r"\bthe\b", " ", text)
    words = re.findall(r"[a-z]+", text)
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words)
