"""What a formula does where it stands, read from the words around it (`role`).

Policy, by family (the words are those of the formula's own clause, before it; a clause starts after a
sentence end, a blank line or a display):

- bookkeeping, never maskable (`BOOKKEEPING`):
  - `case_label`: the formula is a case heading (`Case 2: $\\deg Q = 2$.`, `**Case $n=1$:**`);
  - `case_hypothesis`: the formula opens a case (`If $r \\equiv 2 \\pmod 5$, then ...`, `When
    $x<0$, ...`, `In the case $k=0$ ...`, `The base case $n=1$`, `- when $N=7$, ...`, `With $T=3, K=5$, ...`,
    `If instead $x=1$`, `If (writing bars for the norm) $|y|>2$`, a sentence opened by `For $d \\le 3$ the claim ...`,
    `Suppose, without loss of generality, that $AB<AC$`, `we may assume $a<b$`, `By symmetry, we assume that $AC>BC$`,
    `starting with $n=1$`, `The base case, $n=1$, ...`);
  - `definition`: notation is set up (`Let $p = x+y+z$`, `where $U = F^c$`, `Denote $d=\\gcd(a,b)$`):
    one side of the relation is a single symbol the text has not used before (`H_i` after a bare
    `H`, `N'` after `N`), or symbols are declared (`Let $a, b \\in G$`, `Choose $x \\in H$`, `Let $J / K
    \\subseteq R / K$`), or an ordering convention names them (`assume $d_1>d_2>\\cdots>d_l$`), or a name the
    solution has not written is given a short value right after `let` (`Let $N=T+10$`), or coordinates are named
    (`Let $\\mathbf{v}=(x, y)$`), or a name is set up by `Let $p(e)$ be ...` or by the value that picks it (`Let
    $\\ell$ be such that $n+\\ell=2^c$`), or generic elements are named
    (`S=\\{s_1, \\ldots, s_k\\}`, `a sequence $a_1<a_2<\\ldots<a_t$`, `Let the roots be ordered $z_1 \\le z_2 \\le z_3$`),
    or a general form is written out (`the roots of a quadratic $ax^2+bx+c=0$`);
  - `quantifier_range`: a short range after a quantifier (`for all $n \\ge N_2$`, `for some $k \\ge 1$`,
    `trivial for $n=1$`, `with $0 \\le j \\le i \\le m-2$`, `such that $x<y<b$`, `a general $n \\ge 7$`, `for
    $j \\notin \\mathcal{J}$`, `for some $n>\\frac{1}{\\delta}$`, `for some integers $k$ and $0 \\le m_1<\\cdots<m_k$`, `by
    induction on $n \\ge 5$`, `every point $S \\neq P$`), or a condition after `where` (`where $m \\nmid t$`), or one of a
    run of values counted off (`asymptotes at $x = 1,$ $x = 2,$ $\\dots,$ $x = 100$`; `The values $m=1$, $m=2$ and $m=3$
    fail`, values tried, not `the roots are $x=1$, $x=2$, $x=3$`);
  - `table_cell`: the formula is a cell of a Markdown table or of a text-mode `tabular` (a verification table, a sign
    chart);
- ranking evidence (`ranking`): `derived` (after "so", "hence", "we get", "which gives", "it
  follows that", ...: a result the text establishes), `claim` (the statement of a claim or lemma,
  or what "we prove/show that"), `assumed` (after "suppose", "assume", "such that": a hypothesis,
  not a result). None: nothing to say.
"""

from __future__ import annotations

import functools
import re

from mrtasks.curate.heuristic.junk import DOTS
from mrtasks.curate.heuristic.spans import INLINE_MATH, math_spans
from mrtasks.mathcheck.latex import split_top_level, wrapped

BOOKKEEPING = ("case_label", "case_hypothesis", "definition", "quantifier_range", "table_cell")

_HYPOTHESIS_WORD = re.compile(
    r"\b(?:if|when|whenever|case|cases|unless|try|trying|test|testing|check|checking|consider|considering|plug|plugging|"
    r"substitute|substituting)\b"
)
_DEFINITION_WORD = re.compile(
    r"\b(?:let|letting|denote|denoting|define|defining|set|put|write|where|with|setting|putting|take|choose|fix|pick|exists?|"
    r"consider|label|call|say|given|defined|convention|substitution|there\s+(?:is|are))\b"
)
_CLAIM_WORD = re.compile(r"claim|lemma|proposition|observation|prove|show|suffices|remains")
_ASSUMED_WORD = re.compile(r"suppos|assum|such|satisfying|provided")

_MATH_OPEN = re.compile(r"(?:\$\$?|\\\(|\\\[|\\begin\{[a-z*]+\})\s*$")
_SENTENCE_END = re.compile(r"[.!?]\$?\s+|\n\s*\n|\\\]|\\end\{(?:align|equation|gather|multline|eqnarray)\*?\}|\$\$")
_CASE_LABEL = re.compile(
    r"(?:^|\W)(?:sub)?case\s*(?:\(?[\w.]{0,6}\)?)?\s*[:.)\-\u2013]?\s*(?:\*\*)?\s*(?:M\s*,?\s*(?:or|and)\s+)*$"
    r"|(?:^|\W)(?:sub)?case\s*\(?\w{1,3}\)?\s*[:.)\-\u2013]\s*(?:\*\*)?\s*(?:we\s+have|assume(?:\s+that)?|suppose(?:\s+that)?)\s+$",
    re.IGNORECASE,
)
_AFTER_LABEL = re.compile(
    r"\s*(?:\$|\\\))?\s*(?:[:.)]|\*\*|\n|$|,?\s*(?:or|and)\s*(?:\$|\\\()|\s*for\s+(?:some|all|every|each|any)\b)"
)
"""After a case label's formula: the heading ends, more alternatives follow, or a range (`for some $k$`)."""
_HYPOTHESIS = re.compile(
    r"(?:(?:^|[,;:(]|\band\b|\bthen\b|\bM\b|\bsay\b|\bthat\b)\s*(?:[-*\u2022]\s+)?"
    r"(?:(?:now|next|finally|first|second|similarly|also|otherwise|and|but)[ ,]+)*"
    r"(?:(?:if|when|whenever)(?:\s+(?:we|it|you|one|were|was|is|to|have|had|has|get|assume|take|let|set|put|only)){0,4}"
    r"|in\s+(?:the\s+)?case(?:\s+(?:that|where|of|when))?|for\s+the\s+case(?:\s+(?:that|where|of))?|the\s+case|unless)"
    r"|\bthe\s+(?:base\s+)?cases?(?:\s+(?:that|where|of|when))?,?"
    r"|\b(?:try|trying|test|testing|check|checking|consider|considering|plug|plugging|substitute|substituting)"
    r"(?:\s+(?:in|the|value|values|case|cases|candidate))*)"
    r"\s+(?:M(?:\s+(?:is|are)(?:\s+\w+){1,2})?\s*,?\s+\(?(?:(?:and|or)(?:\s+|$))?)*$",
    re.IGNORECASE,
)
_DEFINITION = re.compile(
    r"(?<![\w-])(?:let|letting|denote|denoting|define|defining|set|put|write|where|with|setting|putting|take|choose|fix|pick|"
    r"exists?|consider|label|call|say|substitution|there\s+(?:is|are))\b"
    r"(?:(?!\b(?:then|so|hence|thus|we|have|get|gives?|yields?|implies|therefore|later)\b)[^.;]){0,60}$",
    re.IGNORECASE,
)
_FONT = r"\\(?:math(?:cal|bb|bf|frak|scr|rm|sf|it)|bm|boldsymbol|vec|bar|hat|tilde|overline|widehat|widetilde|dot)"
_ONE_SYMBOL = (
    rf"(?:{_FONT}\s*\{{\s*\\?[A-Za-z]+\s*\}}|\\[A-Za-z]+|[A-Za-z])"
    r"(?:_(?:\{(?:[\w,+\-]|\\math[a-z]+\{\w+\}|\\[A-Za-z]+)+\}|\\[A-Za-z]+|\w))?(?:'|\^\{?(?:\\prime|\*|\\ast)\}?)*"
)
_SYMBOL = re.compile(rf"\s*{_ONE_SYMBOL}(?:\([a-z, ]*\))?\s*")
_SYMBOLS = re.compile(rf"\s*{_ONE_SYMBOL}(?:\([a-z, ]*\))?(?:\s*,\s*{_ONE_SYMBOL}(?:\([a-z, ]*\))?)*\s*")
_RELATION_SPLIT = re.compile(r":=|\\coloneqq|=|\\equiv(?![A-Za-z])")
_BOUND_REL = r"(?:<|>|\\(?:le|ge|leq|geq|leqslant|geqslant|lt|gt|neq|ne)(?![A-Za-z]))"
_BOUND = rf"\s*(?:-?\d+(?:\.\d+)?|{_ONE_SYMBOL}(?:\s*[-+]\s*\d+)?)\s*"
_DECLARED = re.compile(rf"{_SYMBOLS.pattern}{_BOUND_REL}{_BOUND}")
"""Symbols bounded by a number or a symbol: `\\varepsilon>0`, `n, m > N`, `\\delta > 0`."""
_RANGE = re.compile(
    rf"(?:{_BOUND}{_BOUND_REL})?{_SYMBOLS.pattern}{_BOUND_REL}{_BOUND}(?:,{_BOUND})*"
    rf"|\(?[^=<>$]{{1,12}}?\)?\s*\\equiv(?![A-Za-z])[^=<>$]{{1,30}}"
    rf"|{_SYMBOLS.pattern}\\in\s*\\mathbb\s*\{{[A-Z]\}}(?:_\{{?[^{{}}]{{1,6}}\}}?|\^\{{?[^{{}}]{{1,3}}\}}?)*\s*"
)
"""A range of indices: `1 \\leq j \\leq 2008`, `\\beta \\neq \\alpha`, `n, m > N`, `n \\in \\mathbb{Z}_{+}`."""
_BOUND_SPLIT = re.compile(_BOUND_REL)


_LOOSE_RANGE = re.compile(
    rf"{_SYMBOLS.pattern}(?:\\(?:in|notin)(?![A-Za-z])\s*(?:{_FONT}\s*\{{[A-Za-z]\}}|[A-Z]|\\\{{[^{{}}]{{1,40}}\\\}}|\\lbrace[^{{}}]{{1,40}}\\rbrace)"
    rf"(?:\s*\\(?:backslash|setminus)\s*\\\{{[^{{}}]{{1,20}}\\\}})?"
    rf"|{_BOUND_REL}\s*[^=<>,$]{{1,24}}?\s*)"
)
"""A symbol bounded by a short expression or placed in a named set: `n>\\frac{1}{\\delta}`, `b \\leq \\sqrt{120}`,
`i \\notin \\mathcal{J}`, `k \\in\\{0,1, \\ldots, n-1\\}`."""


def _ranges(text: str) -> bool:
    """Ranges only, one or several: `x \\leq 5, y \\leq 2, z \\leq 1`, `k \\notin \\mathcal{J}`."""
    if len(re.sub(r"\s|\\[,;!]|\\left|\\right", "", text)) > 40:
        return False
    if _LOOSE_RANGE.fullmatch(text):
        return True  # `n \\in \\lbrace 0, 1, 2 \\rbrace`: the set's commas are not a list of ranges
    return all(_LOOSE_RANGE.fullmatch(item) or _index_chain(item) for item in split_top_level(text, ","))


def _index_chain(text: str) -> bool:
    """A two-sided range of an index: `0 \\leq j \\leq i \\leq m-2`, `1 \\leqslant k \\leqslant \\lfloor N/2 \\rfloor`,
    `5.5<x \\leq \\sqrt{55}`: short bounds around at least one bare symbol, nothing else."""
    if "=" in text.replace("\\leq", "").replace("\\geq", "") or "," in text:
        return False
    parts = _BOUND_SPLIT.split(text)
    return (
        len(parts) >= 3
        and all(0 < len(re.sub(r"\s|\\(?:left|right)|[{}]", "", p)) <= 24 for p in parts)
        and any(_SYMBOLS.fullmatch(p) for p in parts[1:-1])
    )


_RANGE_BEFORE = re.compile(
    r"\b(?:for(?:\s+(?:all|every|each|any|some))?|with|(?<!only )if|whenever|check|checking|test|testing|such\s+that)\s*$",
    re.IGNORECASE,
)
_RANGE_WORDS = re.compile(r"for|with|if|whenever|check|test|such")  # `_RANGE_BEFORE` holds one
_GENERAL = re.compile(
    r"\b(?:general|case\s+of|all|every|each|any|arbitrary)"
    r"(?:\s+(?:positive|negative|nonnegative|real|natural|odd|even|prime|integers?|numbers?|reals?))*"
    r"(?:\s+(?:points?|lines?|vertex|vertices|elements?|indices|index|sets?|circles?|primes?))?\s*$",
    re.IGNORECASE,
)
"""`the general case of $N>1$ boxes`, `for a general $n \\geq 7$`, `all $n \\geq 7$ boxes`, `every point $S \\neq P$`: a
declared bound."""
_GENERAL_WORD = re.compile(r"general|case|all|every|each|any|arbitrary")  # `_GENERAL` holds one
_WITH_VALUES = re.compile(r"(?:^|[,;:(]|\bM)\s*with\s*$", re.IGNORECASE)
"""`With $T=3, K=5$, the answer is ...`, `each prime $p_i$ with $(p_1, p_2, \\ldots)=(2, 3, \\ldots)$`: values given
to symbols (a case, or notation)."""
_TUPLE_MARKUP = re.compile(r"\\(?:left|right)(?=[()])|,\s*\\(?:ldots|dots|cdots)(?![A-Za-z])")
_FROM = re.compile(r"\bfrom\s*$|\bfrom\s+M\s+(?:to|until|through)\s*$", re.IGNORECASE)
_TO_AFTER = re.compile(r"\s*(?:\$|\\\))?\s*(?:to|until|through)\b")
_TRIAL_VERB = re.compile(r"\b(?:check|checking|consider|considering|plug|plugging|substitute|substituting)\b[\w ]*$")
_A_RELATION = re.compile(r"=|<|>|\\(?:le|ge|leq|geq|neq|ne|equiv|lt|gt|leqslant|geqslant)(?![A-Za-z])")
_IF_AFTER_ANY = re.compile(r"(?<!\bonly)\s+if\s*$", re.IGNORECASE)
_ASSIGNMENT = re.compile(
    rf"\s*(?:{_ONE_SYMBOL}\s*=\s*(?:-?[\w.]+|\([\w., -]+\))|\((?:\s*{_ONE_SYMBOL}\s*,)+\s*{_ONE_SYMBOL}\s*\)\s*=\s*\([\w., -]+\))\s*"
)
"""A value given to a symbol or a tuple of symbols: `x=4`, `A=(s, t)`."""
_PRIMED = re.compile(r"(?:'|\^\{?\\prime)")
_QUOTIENT = re.compile(rf"\s*{_ONE_SYMBOL}\s*/\s*{_ONE_SYMBOL}\s*")
"""A quotient named by its parts: `J / K`, `G/N`."""
_BASE = re.compile(rf"{_FONT}\s*\{{\s*\\?[A-Za-z]+\s*\}}|\\?[A-Za-z]+")
_MEMBERSHIP = re.compile(r"\\(?:in|subset|subseteq|subsetneq)(?![A-Za-z])")
_DEFINES = re.compile(r":=|\\coloneqq(?![A-Za-z])|\\(?:stackrel|overset)\s*\{\s*\\(?:text|mathrm)\s*\{\s*def\s*\}\s*\}\s*\{=\}")
_QUANTIFIER = re.compile(
    r"\bfor\s+(?:all|every|each|any|some|arbitrary)(?:\s+(?:integers?|reals?|real|positive|natural|numbers?))*\s*$", re.IGNORECASE
)
# A result the text establishes: the clause ends with one of these words (`so`, `we get`, `it
# follows that`, `which gives`, `\\Rightarrow`); `that` counts after a verb of inference.
_BARE_FOR = re.compile(r"\bfor(?:\s+(?:odd|even))?(?:\s+M\s*,?\s*(?:and|or))*\s*$", re.IGNORECASE)
"""`trivial for $n=1$`, `For $x \\ge 3$, ...`, `for $n=0$ or $n=1$`, `for odd $k=2l+1$`."""
_FRACTION_VALUE = re.compile(rf"\s*{_ONE_SYMBOL}\s*=\s*-?\\d?frac\s*\{{\s*\d+\s*\}}\s*\{{\s*\d+\s*\}}\s*")
"""`the argument is analogous for $m=\\frac{3}{4}$`: a value tried."""
_FOR_OR_WITH = re.compile(
    r"\b(?:for(?:\s+(?:all|every|each|any|some)(?:\s+(?:positive|negative|nonnegative|real|odd|even|integers?|numbers?|reals?))*"
    r"(?:\s+M\s*,?)*(?:\s+and)?)?|with|whenever|induction\s+on)\s*$",
    re.IGNORECASE,
)
"""`for some $n>\\frac{1}{\\delta}$`, `for some integers $k \\geq 0$ and $0 \\leq m_{1}<\\cdots<m_{k} \\leq M$`, `by induction on
$n \\geqslant 5$`."""
_WHERE = re.compile(r"\bwhere(?:\s+M\s*,?(?:\s+and)?)*\s*$|\bwhere\b[^.;]{0,40}\band\s*$", re.IGNORECASE)
"""`the pairs $(i, i+n)$, where $1 \\leqslant i \\leqslant n^{2}-n$`, `where $b \\leq a$, and $p \\nmid n$`: a condition on
what was just written."""
_IF_ASIDE = re.compile(
    r"(?:^|[,;:]|\b(?:and|but|now))\s*(?:if|when)\s+(?:\([^()]{0,60}\)|instead|now|however|moreover|further)\s*,?\s*$",
    re.IGNORECASE,
)
"""`If (with bars denoting absolute value) $|x|<1$`, `If instead $\\mathrm{m} \\angle B=\\theta$`: a case opened with an aside."""
_OPENER = r"(?:now|first|next|finally|then|also|similarly|likewise|so|thus|here|and|but)\s*,?\s+"
"""A word that may open a clause before what it is about (`Similarly, `, `So `, `Now, `)."""
_FORMULAS_END = r"(?:\s+M\s*,?\s*(?:and|or)?)*\s*$"
"""The end of a tail (formulas written `M`): one formula or a list of them (`M, M and M`) just before the one read."""
_FOR_OPENS = re.compile(rf"^\W*(?:{_OPENER}|[a-z]+\s*,\s+)*for\s*$", re.IGNORECASE)
"""A sentence opened by `For $x^{2}+p x+q=0$, its roots ...`, `For $d \\leqslant 2 n-1$ the result is trivial`: a case."""
_LET = re.compile(r"(?:^|\W)(?:let|letting|define)\s*$", re.IGNORECASE)
_LET_BE = re.compile(r"(?:^|\W)let\s*$", re.IGNORECASE)
_SUCH_THAT_NAMES = re.compile(
    r"\b(?:let\s+M\s+be|where\s+M\s+is)\b[^.;]{0,40}?\b(?:such|so)\s+that(?:\s+M\s*,?(?:\s+and)?)*\s*$", re.IGNORECASE
)
"""`Let $\\ell$ be such that $n+\\ell=2^{c}$`, `where $\\theta$ is the acute angle such that $\\cos \\theta = \\frac{2}{\\sqrt{5}}$`: the
condition that names a symbol."""
_BE_AFTER = re.compile(r"\s*(?:\$|\\\))?\s*(?:be|denote)\b")
"""`Let $p_{\\mathcal{T}}(e)$ be the number of ...`, `Let $\\overrightarrow{O C}$ be the vector ...`: a name set up."""
_SYMMETRY_CASE = re.compile(
    r"(?:(?:without\s+loss\s+of\s+generality|\bwlog\b)(?:(?!\b(?:so|then|hence|thus|therefore)\b)[^.;]){0,30}"
    r"\b(?:assume|suppose|let|that|say|take)"
    r"|(?:\b(?:we|one)\s+(?:may|can|could|might)\s+(?:also\s+|now\s+|further\s+|then\s+)?|\bby\s+symmetry\b[^.;]{0,30}?\b)"
    r"(?:assume|suppose)(?:\s+that)?)\s*$",
    re.IGNORECASE,
)
"""`Suppose, without loss of generality, that $A B<A C$`, `WLOG, let ...`, `we may assume $A A_1<C C_1$`, `By symmetry,
we assume that $AC>BC$`: a case chosen by symmetry."""
_CHOOSE_EITHER = re.compile(
    rf"\b(?:we|one)\s+(?:may|can|could|might)\s+(?:choose|pick|take)\s+either{_FORMULAS_END}", re.IGNORECASE
)
_WE_CHOOSE = re.compile(rf"^\W*(?:{_OPENER})*(?:we|let\s+us|let's)\s+(?:choose|pick)\s*$", re.IGNORECASE)
"""`we may choose either $s=2$ or $s=-2$` and a clause `We choose $s=2$.`: one of interchangeable values taken, not a
result (`in this case we may choose $k=2$ but not $k=3$` is a claim)."""
_AS_LONG_AS = re.compile(rf"\bas\s+long\s+as{_FORMULAS_END}", re.IGNORECASE)
"""`As long as $x\\neq1$ we are allowed to cancel`: a condition granted."""
_INTERVAL_OPENS = re.compile(
    rf"^\W*(?:{_OPENER})*(?:in|on|over)\s+the\s+(?:open\s+|closed\s+|half-open\s+)?intervals?{_FORMULAS_END}",
    re.IGNORECASE,
)
"""A clause opened by its interval, `Similarly, in the interval $\\pi \\le \\theta \\le \\frac{3\\pi}{2}$, ...`: the case
examined (`... lies in the interval $15^\\circ \\le \\theta \\le 30^\\circ$` states a result)."""
_SET_SUCH_THAT = re.compile(rf"\bthe\s+set\s+of\b[^.;]{{0,80}}\bsuch\s+that{_FORMULAS_END}", re.IGNORECASE)
"""`Let $\\mathcal{A}$ be the set of points in $\\mathcal{T}$ such that $x \\ge \\frac{1}{2}$`: the condition that defines a
set."""
_STARTING = re.compile(r"\b(?:start(?:ing)?|begin(?:ning)?)\s+(?:with|from|at)\s*$", re.IGNORECASE)
"""`starting with $n=1$`: the first value tried."""
_TAKING = re.compile(
    rf"\b(?:taking|take|setting|putting|plugging(?:\s+in)?|substituting|using){_FORMULAS_END}", re.IGNORECASE
)
"""`Therefore, taking $n=2$ and $n=3$, we get ...`: values tried."""
_WHEN_AFTER = re.compile(r"(?<!\bonly)(?<!\bexactly)\s+(?:when|whenever)\s*$", re.IGNORECASE)
_EXTREMUM_WHEN = re.compile(
    r"(?:minimi[sz]ed|maximi[sz]ed|occurs?|attained|achieved|holds?|equality|zero|minimum|maximum)\s+(?:when|whenever)\s*$",
    re.IGNORECASE,
)
"""`the sum is minimized when $x=3$`: where the `when` states a result, not a case."""
_NAME_IS_NAME = re.compile(rf"\s*{_ONE_SYMBOL}\s*=\s*{_ONE_SYMBOL}\s*")
_CHOOSE = re.compile(r"\b(?:let|choose|take|set|pick|put)\s*$", re.IGNORECASE)
_CONSIDER_THE = re.compile(
    r"\b(?:consider|define|denote)\s+(?:the\s+)?(?:sum|product|expression|quantity|number|function|polynomial|sequence|series)\s*$",
    re.IGNORECASE,
)
"""`Consider the sum $x = \\cos 0^\\circ + \\dots$`: a quantity named for the work that follows."""
_DECLARED_IN = re.compile(r"\\(?:le|leq|leqslant|subseteq|subset|lhd|trianglelefteq|unlhd)(?![A-Za-z])")
"""A new symbol declared inside a named object: `H \\leq D_{2 n}`, `S \\subseteq X`."""
_GENERIC_SET = re.compile(
    rf"\s*(?:{_ONE_SYMBOL}\s*=\s*)?(?:\\left)?\\\{{\s*{_ONE_SYMBOL}\s*,(?:\s*(?:{_ONE_SYMBOL}|\\[lc]?dots)\s*,?)+(?:\\right)?\\\}}\s*"
)
"""A set of generic elements, named or not: `S=\\left\\{s_{1}, s_{2}, \\ldots, s_{k}\\right\\}`, `\\{b_1, \\ldots, b_k\\}`."""
_ENUMERATION_ANY = re.compile(r"\s*[^=,]{1,12}=\s*-?\d+(?:\s*,\s*-?\d+)+\s*")
"""Any short expression given a list of values: `9k = 963, 981, 990`."""
_ENUMERATION = re.compile(rf"\s*{_ONE_SYMBOL}\s*=\s*-?\d+(?:\s*,\s*-?\d+){{2,}}\s*")
"""A symbol given a list of values: `n=3,4,5,6,7` (the cases tried, after `for` or `check`)."""
_ENUM_BEFORE = re.compile(r"(?:\bfor|\b(?:check|checking|test|testing|try|trying)(?:\s+that)?)\s*$", re.IGNORECASE)
_DERIVED_LAST = frozenset(
    "so hence thus therefore consequently get gets obtain obtains find finds see conclude deduce derive know give gives "
    "yield yields imply implies implying follows meaning i.e. namely hold holds \\rightarrow \\implies "
    "\\longrightarrow".split()
)
_DERIVED_BEFORE_THAT = frozenset(
    "get obtain have find see conclude deduce derive know follows show shows prove proves means mean implies imply "
    "implying".split()
)
_TAIL_WORDS = re.compile(r"\\?[A-Za-z]+(?:\.[a-z]\.)?")


def _derived(tail: str) -> bool:
    """The clause ends with a word of inference (`_DERIVED_LAST`), or with `that` after one."""
    if tail[-1:].isalnum():
        return False  # the formula is glued to a word: not after a clause end
    words = [w.lower() for w in _TAIL_WORDS.findall(tail[-40:])[-2:]]
    if not words:
        return False
    last = words[-1]
    if last in _DERIVED_LAST or (last == "have" and len(words) == 2 and words[0] == "we"):
        return True
    return last == "that" and len(words) == 2 and words[0] in _DERIVED_BEFORE_THAT


_CLAIM = re.compile(
    r"(?:^\W*(?:claim|lemma|proposition|observation)\b|\bwe\s+(?:will\s+)?(?:claim|prove|show)\s+that\b|"
    r"\b(?:it\s+)?(?:suffices|remains)\s+to\s+(?:prove|show)(?:\s+that)?\b)",
    re.IGNORECASE,
)
_ASSUMED = re.compile(
    r"\b(?:suppose|assume|assuming|such\s+that|satisfying|provided)\b(?:(?!\b(?:then|so|hence|thus)\b)[^.;])*$", re.IGNORECASE
)


def _clause(solution: str, start: int) -> str:
    """The words of the formula's sentence before it (inline math shown as `M`), lower noise."""
    a = max(0, start - 160)
    text = solution[a:start].rstrip()
    if text.endswith(("$", "\\(", "\\[", "}")):
        text = _MATH_OPEN.sub("", text).rstrip() + " "  # `we define\n\n$$\n`: the words, not the blank line
    ends = [m.end() for m in _SENTENCE_END.finditer(text)]
    if ends:
        text = text[ends[-1] :]
    return INLINE_MATH.sub(" M ", text) if "$" in text or "\\(" in text else text


_AND_TEXT = re.compile(r"\\text\s*\{\s*and\s*\}")
_DEF_WORD_RAW = re.compile(
    r"(?i)\b(?:let|letting|denote|denoting|define|defining|set|setting|put|putting|where|with|take|choose|fix|pick|consider|"
    r"substitution)\b"
)


def _new_symbol_defined(solution: str, start: int, end: int, known: str) -> bool:
    """The first or last member of the formula's chain (of each, for `A = x \\text{ and } b = y`) is a
    name (`x`, `f^{n}(x)`, `(r, s, t)`) that neither the problem (`known`) nor the text before the
    definition's word has used (`Let $x = 2a = k$`; `let $s=2$ for ... and $s=1$ for ...`); or the
    formula declares symbols (`a, b \\in G`, `f(x), g(x) \\in \\mathbb{Q}[x]`) or bounds them
    (`\\varepsilon>0`, `n, m > N`)."""
    text = solution[start:end]
    if _DECLARED.fullmatch(text):
        return True  # `Let $\\varepsilon>0$ be given`, `there exists $m \\geq 0$`: a declaration, new or not
    names: list[str] = []
    for item in _AND_TEXT.split(text) if "\\text" in text else (text,):
        parts = _RELATION_SPLIT.split(item)
        if len(parts) >= 2:
            names += [side.strip() for side in (parts[0], parts[-1]) if _NAME.fullmatch(side)]
        elif item is text:
            parts = _MEMBERSHIP.split(text, maxsplit=1)  # `Let $a, b \\in G$`, `$S \\subset Q$`, `$J / K \\subseteq R / K$`
            return len(parts) == 2 and bool(_SYMBOLS.fullmatch(parts[0]) or _QUOTIENT.fullmatch(parts[0]))
    if not names:
        return _introduces_symbols(text, solution, start, known)
    words = [m.start() for m in _DEF_WORD_RAW.finditer(solution, max(0, start - 160), start)]
    before = words[-1] if words else start  # the symbols the definition itself names first are still new
    seen = (_math_text(known), _math_text(solution, before))
    for n in names:
        for b in {m.group(0) for m in _BASE.finditer(n.strip("() "))} if n.lstrip().startswith("(") else {_BASE.match(n).group(0)}:
            rest = n.strip()[len(b) :].lstrip()
            if rest[:1] == "_":  # `H_i` after a bare `H` or `M_2` after `M_1` is new; `a_{n}` after `a_n` is not
                if not any(_used(_squash_name(n), _squash_name(m)) for m in seen):
                    return True
            elif _PRIMED.match(rest):  # `N'` after `N` is a new name
                if not any(_used(b + p, m) for m in seen for p in ("'", "^{\\prime}", "^\\prime")):
                    return True
            elif not any(_used(b, m, bare=rest[:1] != "^") for m in seen):  # `N` is not `N_\\alpha`
                return True
    return False


@functools.lru_cache(maxsize=64)
def _squash_name(text: str) -> str:
    """`a_{n}` and `a_n`, `M_{ 2}` and `M_2` alike: spaces and single-character braces dropped."""
    return re.sub(r"\{(\w)\}", r"\1", re.sub(r"\s+", "", text))


_SYMBOL_TOKEN = re.compile(r"\\(?:operatorname|text|mathrm|rm|mathbf|textbf)\s*\{[^{}]*\}|\\[A-Za-z]+|(?<![A-Za-z])[A-Za-z](?![A-Za-z])")
_GREEK = frozenset(
    "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta kappa lambda mu nu xi rho sigma tau phi varphi chi "
    "psi omega Gamma Delta Theta Lambda Xi Sigma Phi Psi Omega".split()
)


def _introduces_symbols(text: str, solution: str, start: int, known: str) -> bool:
    """`Let $z = r(\\cos\\theta + i\\sin\\theta)$`, `write $p-1 = q_1^{a_1}\\cdots q_k^{a_k}$`: an equation after a
    definition's word that brings in symbols neither the problem nor the text before has used (notation set up)."""
    if not _RELATION_SPLIT.search(text):
        return False
    seen = (_math_text(known), _math_text(solution, start))
    symbols = set()
    for tok in _SYMBOL_TOKEN.findall(text):
        if len(tok) == 1 and tok not in "ie":
            symbols.add(tok)
        elif tok[1:] in _GREEK:
            symbols.add(tok)
    return any(not any(_used(sym, m) for m in seen) for sym in symbols)


@functools.lru_cache(maxsize=16)
def _spans(text: str) -> list:
    return math_spans(text)[0]


@functools.lru_cache(maxsize=64)
def _math_text(text: str, end: int | None = None) -> str:
    """The math of text[:end] (the inside of its math spans), where symbols are named: "a" in
    prose is an article, `$a$` a symbol."""
    spans = _spans(text)
    return " ".join(text[s.start : s.end] for s in spans if end is None or s.end <= end)


_MARKS = ("_", "'", "\\prime}", "\\prime")


def _used(name: str, math: str, bare: bool = False) -> bool:
    """`name` occurs in math as a symbol of its own (not inside a longer name or command); a bare
    name (`N`) does not count its subscripted relatives (`N_\\alpha`). A name that ends in a mark
    (`a_`, `N'`) matches whatever follows it."""
    i = math.find(name)
    while i >= 0:
        before = math[i - 1] if i else " "
        after = math[i + len(name)] if i + len(name) < len(math) and not name.endswith(_MARKS) else " "
        if not (before.isalpha() or before == "\\") and not after.isalpha() and not (bare and after == "_"):
            return True
        i = math.find(name, i + 1)
    return False


_NAMING = re.compile(
    r"(?:\b(?:denote|define|putting|setting|say|label|write|where|letting)|\btake(?:\s+e\.g\.)?|\bdenot(?:e|ing)(?:\s+\w+)?\s+by"
    r"|\b(?:given|defined)\s+by|\bdefine[sd]?\b[^.;]{0,40}?\b(?:by|as(?:\s+follows)?\s*:?)|\bconvention(?:\s+that)?)"
    r"(?:\s+M\s*,?(?:\s+and)?)*\s*$",
    re.IGNORECASE,
)
_NAME = re.compile(
    rf"\s*(?:{_ONE_SYMBOL}(?:\^\{{?[\w+\-]+\}}?)?(?:\([\w, ]*\))?|\((?:\s*{_ONE_SYMBOL}\s*,)+\s*{_ONE_SYMBOL}\s*\))\s*"
)
"""A name being given a value: `a`, `f(x)`, `f^{n}(x)`, `(r, s, t)`."""
_CHAIN = re.compile(
    rf"{_SYMBOL.pattern}(?:(?:<|>|\\(?:le|ge|leq|geq|leqslant|geqslant)(?![A-Za-z]))\s*(?:{_SYMBOL.pattern}|\s*\\[lc]?dots\s*))+"
)
"""Symbols named in order: `a_{1}<a_{2}<\\cdots<a_{n}` (`denote them by ...`)."""


def _names_symbols(text: str) -> bool:
    """The formula gives a name a value: `a = \\frac{n+m}{2}`, `F_\\alpha=F, G_\\alpha=G`, `\\varphi(N) = N'`,
    `\\tau(a x+b)=a x-b` (a map defined on an expression), `v_0=\\langle v, e\\rangle, 1 \\leq k \\leq n`."""
    if _CHAIN.fullmatch(text):
        return True
    items = [
        i for i in split_top_level(_ANGLES.sub(_as_paren, text), ",")
        if i and not i.startswith("\\forall") and not _RANGE.fullmatch(i) and not _index_chain(i)  # `..., 1 \\leq k \\leq n`
    ]
    return bool(items) and all(
        len(parts := _RELATION_SPLIT.split(item, maxsplit=1)) == 2 and _is_name(parts[0]) for item in items
    )


_ANGLES = re.compile(r"\\(?:left|big{1,2}|Big{1,2})?\\?(l|r)angle(?![A-Za-z])")
_APPLIED = re.compile(rf"\s*{_ONE_SYMBOL}(?:\^\{{?[\w+\-]+\}}?)?\s*(?:\\left)?\(")


def _as_paren(m: re.Match) -> str:
    return "(" if m.group(1) == "l" else ")"


def _is_name(side: str) -> bool:
    """`a`, `f(x)`, `(r, s, t)`, or a symbol applied to any bracketed argument (`\\tau(a x^2+(p(x)))`)."""
    if _NAME.fullmatch(side):
        return True
    head = _APPLIED.match(side)
    return bool(head) and wrapped(side[head.end() - 1 :].rstrip(), "(", ")")


_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


def _one_relation(text: str) -> bool:
    """A short formula without a top-level comma (a condition, not a condition with its result), or
    a list of values given to symbols (`m=6, n=2, p=1`)."""
    if len(re.sub(r"\s|\\[,;!]", "", text)) > 40:
        return False
    top = re.sub(r"\{[^{}]*\}|\([^()]*\)", "", text)
    if "," in top and _THOUSANDS.search(top):
        top = _THOUSANDS.sub("", top)  # `100,000<N<101,000`: digit groups, not a list
    if "," not in top:
        return True
    if len(parts := _MEMBERSHIP.split(text, maxsplit=1)) == 2 and _SYMBOLS.fullmatch(parts[0]):
        return True  # `If $F, G \\subseteq X$ are closed`: symbols declared for the case
    return all(_ASSIGNMENT.fullmatch(item) for item in re.split(r",\s*(?![^()]*\))", text))


_CUE = re.compile(
    r"(?i)\b(?:let|denote|denoting|define|defining|where|case|if|when|suppose|assume|consider|set|call|write|put|take|"
    r"choose|for|with|fix|pick|given\s+by|namely|say)\b[^.]{0,50}$"
)
_CUE_INSIDE = ("&", "\\text", "\\$", "!")


def bookkeeping_cue(solution: str, start: int, end: int) -> bool:
    """A weak sign of bookkeeping: a definition, case or quantifier word shortly before the formula (same sentence), or
    alignment marks, `\\text`, an escaped dollar or a `!` inside it. Most formulas with a cue are real; the ranking
    offers them after the others (`ranking.CUE_PENALTY`), and the screen shows them first."""
    inside = solution[start:end]
    return bool(_CUE.search(solution[max(0, start - 80) : start])) or any(c in inside for c in _CUE_INSIDE)


def role(solution: str, start: int, end: int, known: str = "") -> str | None:
    """The formula's role where it stands: a key of `BOOKKEEPING`, `derived`, `claim`, `assumed`, or
    None. `known` is the problem statement (symbols it uses are not new notation)."""
    if _DEFINES.search(solution, start, end):
        return "definition"  # `A_n := \\{z : f(z) = 0\\}`
    line = solution.rfind("\n", 0, start) + 1
    if solution.startswith("|", line) and (solution.count("|", line, start) >= 2 or _row_of_cells(solution, line, end)):
        return "table_cell"  # a cell of a Markdown table: `| $k$ | $y$ | $x = \\pm 5$ |`, its first cell too
    if "tabular}" in solution and _in_tabular(solution, start):
        return "table_cell"  # `\\begin{tabular}{c|cc} $x<0$ & $-$ & $+$ \\\\ ...`: a sign chart's row label
    clause = _clause(solution, start)
    tail = clause[-90:]  # every pattern but `claim` reads the words just before the formula
    low = tail.lower()  # cheap word tests first: most formulas have none of these words near them
    if "case" in low[-40:] and _CASE_LABEL.search(tail[-40:]) and _AFTER_LABEL.match(solution, end):
        return "case_label"
    if solution.find("ase", max(0, start - 40), start) >= 0 and "case" not in low[-40:]:
        head = INLINE_MATH.sub(" M ", _MATH_OPEN.sub("", solution[max(0, start - 40) : start].rstrip()) + " ")
        if _CASE_LABEL.search(head) and _AFTER_LABEL.match(solution, end):
            return "case_label"  # `- Case 3. $x<1$ or ...`: the clause reader cut the sentence at `3. `
    if _HYPOTHESIS_WORD.search(low[-70:]) and _HYPOTHESIS.search(tail[-70:]) and _one_relation(solution[start:end]):
        if _A_RELATION.search(solution, start, end) or not _TRIAL_VERB.search(low[-60:]):
            return "case_hypothesis"  # `consider`/`check`/`substitute` open a case only with a relation
    if "with" in low[-12:] and _WITH_VALUES.search(tail[-12:]) and _values(solution[start:end]):
        return "case_hypothesis"
    naming_word = _DEFINITION_WORD.search(low)  # every `_DEFINITION` and `_NAMING` word is one
    if naming_word and _DEFINITION.search(tail) and _new_symbol_defined(solution, start, end, known):
        return "definition"
    if naming_word and _NAMING.search(tail[-40:]) and _names_symbols(solution[start:end]):
        return "definition"  # `where $a = \\frac{n+m}{2}$`, `putting $h' = g^{-1} h g$`: named here, used before or not
    formula = solution[start:end]
    if "if" in low[-20:] and _IF_AFTER_ANY.search(tail[-20:]) and _one_relation(formula):
        return "case_hypothesis"  # `parallel lines if $A>25$`: the condition after the claim
    between = _FROM.search(tail[-24:]) if "from" in low[-24:] else None
    if (
        _RANGE_WORDS.search(low[-20:])
        and (before := _RANGE_BEFORE.search(tail[-20:]))
        and ((_RANGE.fullmatch(formula) and "such" not in before.group(0).lower()) or _index_chain(formula))
    ) or (between and ("M" in between.group(0) or _TO_AFTER.match(solution, end, end + 16))):
        return "quantifier_range"  # `for $1 \\leq j \\leq 2008$`, `with $n \\neq 0$`, `from $n=a$ until $n=b$`
    if "for " in low[-50:]:
        size = len(re.sub(r"\s|\\[,;!]", "", solution[start:end]))
        declared = _DECLARED.fullmatch(solution[start:end]) or bool(
            len(parts := _MEMBERSHIP.split(solution[start:end], maxsplit=1)) == 2 and _SYMBOLS.fullmatch(parts[0])
        )
        if (_QUANTIFIER.search(tail[-50:]) and (size <= 16 or (declared and size <= 30) or _CHAIN.fullmatch(formula))) or (
            _BARE_FOR.search(tail[-12:]) and (size <= 10 or _FRACTION_VALUE.fullmatch(formula))
        ):
            return "quantifier_range"
    if _GENERAL_WORD.search(low[-24:]) and _GENERAL.search(tail[-24:]) and (_DECLARED.fullmatch(formula) or _ranges(formula)):
        return "quantifier_range"
    if formula.count(",") >= 2 and _ENUMERATION.fullmatch(formula) and _ENUM_BEFORE.search(tail[-24:]):
        return "quantifier_range"  # `given for $n=3,4,5,6,7$`, `check that $x=0,1,2,3$ fail`: the cases tried
    if (extra := _more_bookkeeping(solution, start, known, clause, tail, formula)) is not None:
        return extra
    if _derived(tail):
        return "derived"
    if _CLAIM_WORD.search(clause.lower()) and _CLAIM.search(clause):
        return "claim"
    if _ASSUMED_WORD.search(low) and _ASSUMED.search(tail):
        # `Suppose by symmetry that $i=3$`, `We assume $n_r=p q$`: a symbol given a value opens a case
        if _CHAIN.fullmatch(formula):
            return "definition"  # `assume $d_1>d_2>\\cdots>d_l$`: an ordering convention names the symbols
        return "case_hypothesis" if _CASE_VALUE.fullmatch(formula) else "assumed"
    return None


def _more_bookkeeping(solution: str, start: int, known: str, clause: str, tail: str, formula: str) -> str | None:
    """Bookkeeping read from looser cues than `role`'s own (round 5 of the bookkeeping screens): a range, a case or
    a name being set up (`_loose_range`, `_loose_case`, `_loose_definition`). None: none of these."""
    if _loose_range(tail, formula):
        return "quantifier_range"
    if _loose_case(clause, tail, formula):
        return "case_hypothesis"
    if _loose_definition(solution, start, known, tail, formula):
        return "definition"
    if _CASE_VALUE.fullmatch(formula) and _value_run(solution, start, start + len(formula)) and not _derived(tail):
        return "quantifier_range"
    return None


def _loose_range(tail: str, formula: str) -> bool:
    """Ranges after for/with/induction on (`for some $n>\\frac{1}{\\delta}$`, `with $x \\leq 5, y \\leq 2$`, `for some
    integers $k$ and $0 \\le m_1<\\cdots<m_k$`) and conditions after `where` (`where $m \\nmid t$`)."""
    if len(formula) > 60:
        return False
    if _ranges(formula) and _FOR_OR_WITH.search(tail[-60:]):
        return True
    return "where" in tail[-60:].lower() and bool(_WHERE.search(tail[-60:])) and bool(
        _ranges(formula) or _RANGE.fullmatch(formula) or (_one_relation(formula) and not _A_RELATION.search(formula))
    )


def _loose_case(clause: str, tail: str, formula: str) -> bool:
    """A case opened with an aside (`If instead $x=1$`), chosen without loss of generality or by choice (`We choose
    $s=2$`), granted (`As long as $x\\neq1$`), opened by a sentence's `For` (`For $9k = 963, 981 \\Longrightarrow n = 37,
    19$, we find ...`) or its interval (`Similarly, in the interval $\\pi \\le \\theta \\le 2\\pi$, ...`), or a value tried
    (`starting with $n=1$`, `taking $n=2$`, `... has 8 factors when $n=1$`)."""
    if _one_relation(formula) and _IF_ASIDE.search(tail):
        return True
    clause = clause.strip()
    if _SYMMETRY_CASE.search(tail[-60:]) and len(split_top_level(formula, ",")) <= 2 and _A_RELATION.search(formula):
        return True  # `WLOG, let $\\omega = \\frac{-1+\\sqrt{3}i}{2}, \\omega^2=\\frac{-1-\\sqrt{3}i}{2}$`, `we may assume $a<b$`
    if _FOR_OPENS.match(clause) and (_one_relation(formula) or _values_and_results(formula)):
        return True
    if _CASE_VALUE.fullmatch(formula) and (_CHOOSE_EITHER.search(tail[-40:]) or _WE_CHOOSE.match(clause)):
        return True  # `We choose $s=2$`
    if _one_relation(formula) and _AS_LONG_AS.search(tail[-30:]):
        return True  # `As long as $x\\neq1$`
    if _INTERVAL_OPENS.match(clause) and len(_BOUND_SPLIT.split(formula)) == 3 and "=" not in formula:
        return True  # `Similarly, in the interval $\\pi \\le \\theta \\le \\frac{3 \\pi}{2}$, ...`
    if _CASE_VALUE.fullmatch(formula) and (_TAKING.search(tail[-40:]) or _STARTING.search(tail[-24:])):
        return True  # `taking $n=4$, we get`, `starting with $n=1$`
    # `This has 8 factors when $n=1$.`: a value tried, stated after the claim (`minimized when $x=3$` is a result)
    return bool(_CASE_VALUE.fullmatch(formula) and _WHEN_AFTER.search(tail[-30:]) and not _EXTREMUM_WHEN.search(tail[-40:]))


def _loose_definition(solution: str, start: int, known: str, tail: str, formula: str) -> bool:
    """A name set up by `let` (`_let_names`; `Let $p(e)$ be the number ...`), by the value that picks it (`Let $\\ell$
    be such that $n+\\ell=2^c$`; a membership after `such that` is a hypothesis), a point named by another (`choose
    $X=B'$`), a set by its condition (`the set of points such that $x \\ge \\frac{1}{2}$`), a quantity named for the
    work ahead (`Consider the sum $x = ...$`), or generic elements named (`the set $S=\\{s_1, \\ldots, s_k\\}`, `a
    sequence of checkpoints $a_1<\\ldots<a_t$`)."""
    if _LET.search(tail[-12:]) and _let_names(solution, start, formula, known):
        return True
    if _NAME_IS_NAME.fullmatch(formula) and _CHOOSE.search(tail[-12:]):
        return True  # `choose $X=B^{\\prime}$`: a point named by another
    parts = _RELATION_SPLIT.split(formula, maxsplit=1)
    if len(parts) == 2 and _is_name(parts[0]) and _CONSIDER_THE.search(tail[-40:]):
        return True
    if _LET_BE.search(tail[-8:]) and _BE_AFTER.match(solution, start + len(formula)) and not _A_RELATION.search(formula):
        return True
    if "that" in tail[-30:].lower() and _SUCH_THAT_NAMES.search(tail) and _one_relation(formula) and "=" in formula:
        return True
    if "such" in tail[-30:].lower() and _SET_SUCH_THAT.search(tail) and _one_relation(formula) and _BOUND_SPLIT.search(formula):
        return True  # `the set of points ... such that $x \\ge \\frac{1}{2}$`: a set defined by its condition
    if _parametrized(solution, start + len(formula), formula) and not _derived(tail):
        return True  # `Let $z = x + yi$, where $x$ and $y$ are real numbers`, not `The first case gives $n = 80p$, where ...`
    generic = _GENERIC_FORM.search(tail) if _A_RELATION.search(formula) else None
    if generic and _letters_only(formula) and not _derived(tail[: generic.start()]):
        return True  # `the sum of the roots of a quadratic $ax^2+bx+c=0$`: the general form, not this problem's
    return bool(_GENERIC_SET.fullmatch(formula)) or bool(
        _CHAIN.fullmatch(formula) and ("dots" in formula or len(_BOUND_SPLIT.split(formula)) >= 3)
        and _DEFINITION_WORD.search(tail.lower())
    )


_MATH_ITEM = r"(?:\$[^$]{1,40}\$|\\\(.{1,40}?\\\))"
_KIND_WORD = (
    r"(?:positive|negative|non-?negative|non-?zero|real|complex|rational|odd|even|distinct|arbitrary|fixed|unknown|"
    r"coprime|natural|whole|prime|numbers?|integers?|constants?|reals?|primes?|digits?|coefficients?|parameters?)"
)
_WHERE_PARAMETERS = re.compile(
    rf"\s*,?\s*(?:\$|\\\))?\s*,?\s*where\s+(?:the\s+)?{_MATH_ITEM}(?:\s*(?:,|and|,\s*and)\s*{_MATH_ITEM})*\s+"
    rf"(?:are|is|can\s+be)\s+(?:(?:any|some|all|each|an?|both)\s+)?{_KIND_WORD}\b",
    re.IGNORECASE,
)
"""`$z = a + bi$, where $a$ and $b$ are real numbers`, `$n = 2^e m$, where $e$ is nonnegative and ...`: the formula
writes an unknown in parameters the sentence then declares, an ansatz, not a result."""


def _parametrized(solution: str, end: int, formula: str) -> bool:
    """The formula gives a name one expression in parameters that a `where` clause right after it declares
    (`_WHERE_PARAMETERS`); a chain `c = 2b - a = -2b, where $b$ is negative` derives its value."""
    parts = _RELATION_SPLIT.split(formula)
    return len(parts) == 2 and _is_name(parts[0]) and bool(_WHERE_PARAMETERS.match(solution, end))


_GENERIC_FORM = re.compile(
    r"\b(?:a|an|any)\s+(?:(?:general|quadratic|cubic|monic|linear|real|arbitrary)\s+){0,2}"
    r"(?:polynomial|equation|quadratic|cubic|function|line|circle|parabola|ellipse|hyperbola)\s*$",
    re.IGNORECASE,
)
_EXPONENT = re.compile(r"\^\s*(?:\{[^{}]*\}|\w)")


def _letters_only(formula: str) -> bool:
    """Generic coefficients: no number in the formula but exponents and a right-hand `= 0` (`ax^2+bx+c=0`)."""
    return not re.search(r"\d", re.sub(r"=\s*0\s*$", "", _EXPONENT.sub("", formula)))


_COORDINATES = re.compile(
    rf"\s*(?:\\left)?\((?:\s*{_ONE_SYMBOL}\s*,)+\s*{_ONE_SYMBOL}\s*(?:\\right)?\)\s*"
    rf"|\s*\\begin\{{[pb]matrix\}}(?:\s*{_ONE_SYMBOL}\s*\\\\)+\s*{_ONE_SYMBOL}\s*\\end\{{[pb]matrix\}}\s*"
)
"""Bare symbols as coordinates: `(x, y)`, `\\begin{pmatrix} x \\\\ y \\end{pmatrix}`."""


def _values_and_results(formula: str) -> bool:
    """Values tried and what each gives: `9k = 963, 981, 990 \\Longrightarrow n = 37, 19, 10`."""
    parts = re.split(r"\\(?:Longrightarrow|Rightarrow|implies)(?![A-Za-z])", formula)
    return len(parts) == 2 and all(_ENUMERATION_ANY.fullmatch(p) for p in parts)


def _let_names(solution: str, start: int, formula: str, known: str) -> bool:
    """A name given to an expression of the problem (`N=T+10` for the problem's `(T+10)!`), a name neither the
    problem nor the solution has written given a short value (`M=R+7`), or a new symbol declared inside a named
    object (`H \\leq D_{2n}`). A substitution into a symbol of the problem (`u=2w+1`) is a step, not notation."""
    seen = (_math_text(known), _math_text(solution, start))
    parts = _RELATION_SPLIT.split(formula, maxsplit=1)
    if len(parts) == 2 and _is_name(parts[0]):
        if _COORDINATES.fullmatch(parts[1]):
            return True  # `Let $\\mathbf{v} = \\begin{pmatrix} x \\\\ y \\end{pmatrix}$`: coordinates named
        value = re.sub(r"\s|\\[,;!]", "", parts[1])
        if len(value) >= 3 and value in re.sub(r"\s|\\[,;!]|\$", "", known):
            return True
        name = _squash_name(parts[0].strip())
        return len(value.replace("{", "").replace("}", "")) <= 14 and not any(_used(name, _squash_name(m)) for m in seen)
    parts = _DECLARED_IN.split(formula, maxsplit=1)
    return len(parts) == 2 and bool(_SYMBOLS.fullmatch(parts[0])) and not any(_used(parts[0].strip(), m) for m in seen)


_CASE_VALUE = re.compile(rf"\s*{_ONE_SYMBOL}\s*=\s*-?(?:\\pm\s*)?(?:\d+|[A-Za-z](?:\s*[A-Za-z]){{0,2}})\s*")


def _values(text: str) -> bool:
    """Numbers given to symbols: `s=24`, `T=3, K=5`, `\\left(p_1, p_2, \\ldots\\right)=\\left(2, 3, \\ldots\\right)`."""
    text = _TUPLE_MARKUP.sub("", text) if "\\" in text else text
    return all(_ASSIGNMENT.fullmatch(item) for item in split_top_level(text, ","))


_SIBLING_GAP = re.compile(r"[\s,]*(?:(?:and|or)\s+)?")
_DOLLAR_SPAN = re.compile(r"\$([^$]{1,60})\$")
_DOTS_ONLY = re.compile(rf"\s*{DOTS}\s*[,.]?\s*")
_RUN_MIN = 3
_TRIAL = re.compile(r"(?i)\b(?:values?|try|tried|trying|test|tested|testing|check|checked|checking|plug|plugging|cases?|for)\b")


def _value_run(solution: str, start: int, end: int) -> bool:
    """The formula (`x = 2`) is one of a run of sibling inline spans, joined only by commas and `and`/`or`, that counts
    off values: a run with a `$\\dots$` member (`asymptotes at $x = 1,$ $x = 2,$ $\\dots,$ $x = 100$`) or at least
    `_RUN_MIN` values of the same symbol (`The values $m = 1$, $m=2$, $m=3$, and $m=4$ do not give ...`)."""
    if solution[start - 1 : start] != "$" or solution[end : end + 1] not in ("$", ",", "."):
        return False
    lo, hi = max(0, start - 200), min(len(solution), end + 200)
    if solution.count("$", 0, lo) % 2:
        lo = solution.index("$", lo) + 1  # the window opened inside a span: pair the dollars from its end
    spans = [(m.start(), m.end(), m.group(1)) for m in _DOLLAR_SPAN.finditer(solution, lo, hi)]
    k = next((i for i, (a, b, _) in enumerate(spans) if a < start < b), None)
    if k is None:
        return False
    first = last = k  # widen to the siblings joined only by commas and `and`/`or`
    while first > 0 and _SIBLING_GAP.fullmatch(solution, spans[first - 1][1], spans[first][0]):
        first -= 1
    while last + 1 < len(spans) and _SIBLING_GAP.fullmatch(solution, spans[last][1], spans[last + 1][0]):
        last += 1
    run = spans[first : last + 1]
    texts = [t.rstrip(" ,.") for _, _, t in run]
    if len(texts) >= 2 and any(_DOTS_ONLY.fullmatch(t) for t in texts):
        return True
    name = _RELATION_SPLIT.split(solution[start:end], maxsplit=1)[0].strip()
    same = [t for t in texts if _CASE_VALUE.fullmatch(t) and _RELATION_SPLIT.split(t, maxsplit=1)[0].strip() == name]
    if len(same) < _RUN_MIN or len({t.split("=", 1)[1].strip() for t in same}) < len(same):
        return False
    return bool(_TRIAL.search(solution, max(0, run[0][0] - 120), run[0][0]))  # values tried, not the roots found


def _in_tabular(solution: str, start: int) -> bool:
    """The formula sits inside a text-mode `tabular` (a sign chart or a table of values)."""
    opened = solution.rfind("\\begin{tabular}", 0, start)
    return opened >= 0 and solution.rfind("\\end{tabular}", opened, start) < 0


def _row_of_cells(solution: str, line: int, end: int) -> bool:
    """The line holding the formula is a Markdown table row: `| $x$ | 2 |` (at least two cells)."""
    stop = solution.find("\n", end)
    row = solution[line : stop if stop >= 0 else len(solution)].rstrip()
    return row.endswith("|") and row.count("|") >= 3
