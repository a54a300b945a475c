"""Steps: a solution split into ordered, verbatim steps, one logical move each (`split_steps`).

Policy (the Appendix A step prompt: steps that each stand alone and together rebuild the text;
as many as the text has):

- Units are sentences and lines, cut outside math, displays, tables, figures and LaTeX lists
  (`_protected`; a `tabular`, a Markdown table or a `cases` block is never cut, even where a stray `$` hides it): a
  sentence end is `.`, `?` or `!` (also inside the math that closes a sentence: `$x = 1.$ Then`)
  followed by a capital, a digit or math; a display that ends a sentence and is followed by a
  capitalised word (`\\]Then`) ends its unit. A sentence is never cut inside: a `, so` or
  `, therefore` clause stays in its sentence (the fixtures' labellers kept 1 of 15 such cuts).
  An `itemize`/`enumerate`/`description` environment is cut only between the items of a list of
  moves (items of two lines or more on average: an algorithm's stages, the reasons of a claim); a
  list of short items is one statement. A LaTeX line break `\\\\` that opens a line belongs to
  the line before it.
- A unit joins the step before it when it continues it: it starts in lower case, with
  punctuation or with display math; the step before dangles (ends with `:`, `,`, `=`, "we get",
  "then", ...); the step before is a heading (`Case 2:`, `<Step 3> title`, `**Claim 1.**`,
  `\\textbf{Case 1: $b$ odd}`, `First proof.`, a case label with its hypothesis on a line of its own
  `(Case 1) If $a$ and $b$ lie on one line` or `Case 1) $X = H$.`, `Lemma.`, `Proof.`, `Proof of the Claim.`,
  `<Proof of Lemma 2>`: a heading starts its step
  together with the sentence after it); it is a parenthetical sentence `(Note that ...)`; it
  names what the step before produced (`Call it $K$.`, `Let this point be $T$.`); it restates
  the step before (`that is, ...`, `in particular ...`); it only says that the proof or claim
  in progress is finished (`This completes the proof.`, `The claim follows.`, `Thus Claim 2 is
  proved.`: it closes a move, it is not one); or it is the `Then` of a statement heading's
  hypothesis, or its `If ..., then ...` (`Lemma: Let ... . Then ...`, `Lemma: Let $G$ be a group. If ...`: a statement
  is not cut in half). A conclusion
  (`So $x = 18$ feet.`) is a step of its own, so it is never glued to the next claim (keeping it
  with the step before lowered step F1 on every fixture's tune rows: the hand labels cut before it).
- Markdown lists: a numbered or bulleted item with work in it starts a step, a short plain item
  belongs to the plan it is part of, a nested (indented) item to its parent, and a short bulleted
  point (`- 51 ÷ 3 = 17.`) to the list it continues. An item of a LaTeX
  list of moves starts a step; the sentence that opens the list (`We run the following steps.`,
  `Now note that:`) stays with the step before, like a lead-in to cases.
- Units with no move (`<img_1>`, `Figure 2`, image links, a credit line `~name`) are dropped, but a figure that a
  sentence announces with a colon ends that sentence's step (`The graph is shown below:` + `<img_1>`); interchangeable parallel
  cases (`When x < 0 ...` / `When x > 0 ...`, neither using the other's result) are merged, so
  the reference order is the only right one; tiny pieces (`Q.E.D.`) fold into the step before.
- A text laid out in paragraphs keeps them whole: when enough of its steps already start on a new
  line (`HeuristicConfig.paragraph_steps`), its author has drawn the steps, and the sentences of a
  paragraph that is not long (`long_paragraph_chars`) form one step. A text written in few, dense
  paragraphs is cut at its sentences. Blind labellers following the Appendix A prompt cut this way
  (ANNOTATOR_GOLD.md, round 10). A model-written CoT (`_model_layout`: math in `\\(`/`\\[` brackets,
  blank-line paragraphs) is laid out one move per paragraph however few it has
  (`HeuristicConfig.model_paragraphs`; ANNOTATOR_GOLD.md, round 16).
- No cap binds by default (`HeuristicConfig.max_steps` is None); with a cap, the shortest
  neighbouring pair is merged until it holds. Step Reordering applies its own length limits
  (`StepReorderingConfig`).
"""

from __future__ import annotations

import bisect
import re

from mrtasks.curate.heuristic.config import HeuristicConfig
from mrtasks.curate.heuristic.spans import INLINE_MATH, Regions, math_spans, protected_regions, strip_span

Segment = tuple[int, int]


def _segments(solution: str, cuts: list[int]) -> list[Segment]:
    """The stripped, non-empty pieces of solution between cut positions, as (start, end)."""
    bounds = [0, *sorted({c for c in cuts if 0 < c < len(solution)}), len(solution)]
    out = []
    for a, b in zip(bounds, bounds[1:]):
        a, b = strip_span(solution, a, b)
        if a < b:
            out.append((a, b))
    return out


_BLANK_LINE = re.compile(r"\n[ \t]*\n")


def _keep_paragraphs(solution: str, segs: list[Segment], min_breaks: int | None, long_chars: int) -> list[Segment]:
    """When at least min_breaks steps already start on a new line, the author has laid the steps
    out as paragraphs: a step that starts mid-line, in a paragraph of at most long_chars, joins the
    step before."""
    mid_line = [k for k in range(1, len(segs)) if "\n" not in solution[segs[k - 1][1] : segs[k][0]]]
    if min_breaks is None or len(segs) - 1 - len(mid_line) < min_breaks:
        return segs
    blanks = [(m.start(), m.end()) for m in _BLANK_LINE.finditer(solution)]
    starts = [0] + [e for _, e in blanks]
    ends = [b for b, _ in blanks] + [len(solution)]

    def paragraph_chars(pos: int) -> int:
        i = bisect.bisect_right(starts, pos) - 1
        return ends[i] - starts[i]

    joins = {k for k in mid_line if paragraph_chars(segs[k][0]) <= long_chars}
    out: list[Segment] = []
    for k, (a, b) in enumerate(segs):
        if k in joins:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


_BRACKET_MATH = re.compile(r"\\[(\[]")


def _model_layout(solution: str) -> bool:
    """The layout of a model-written CoT: math set in LaTeX brackets (`\\(x\\)`, `\\[ ... \\]`) rather than
    dollars, in three or more blank-line paragraphs. Such a text puts one move in each paragraph, with sentences
    that explain it (`Let's start with the first step. The numbers are ... Adding them, we get:`)."""
    brackets = len(_BRACKET_MATH.findall(solution))
    return brackets >= 2 and solution.count("$") < brackets and len(_BLANK_LINE.findall(solution)) >= 2


def _merge_short(solution: str, segs: list[Segment], min_chars: int) -> list[Segment]:
    """Fold tiny pieces (e.g. "Q.E.D.") into a neighbour."""
    out: list[Segment] = []
    for a, b in segs:
        tiny = b - a < min_chars or not _ALNUM.search(solution, a, b)
        if out and tiny:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    if len(out) > 1 and out[0][1] - out[0][0] < min_chars:
        out[:2] = [(out[0][0], out[1][1])]
    return out


def _cap(segs: list[Segment], max_steps: int | None) -> list[Segment]:
    """While there are more than max_steps (None: no cap), merge the adjacent pair with the smallest combined length."""
    out = list(segs)
    while max_steps is not None and len(out) > max(max_steps, 1):
        i = min(range(len(out) - 1), key=lambda k: (out[k + 1][1] - out[k][0], k))
        out[i : i + 2] = [(out[i][0], out[i + 1][1])]
    return out


_ABBREVIATIONS = (
    r"(?<!\b[A-Za-z]\.)(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bFig\.)(?<!\bfig\.)(?<!\bProp\.)(?<!\bcf\.)(?<!\betc\.)"
    r"(?<!\bvs\.)(?<!\bEq\.)(?<!\bThm\.)(?<!\bNo\.)(?<!\bresp\.)(?<!\bLem\.)(?<!\bDef\.)(?<!\bCor\.)(?<!\.\.\.)"
)
# A unit boundary: a blank line, a line break, or a sentence end (. ? ! then a capital, digit,
# `$`, `\` or `(`), never after an abbreviation or an initial; also a sentence end inside the
# inline math or the parenthesis that closes it (`$x = 1.$ Then`, `(See below.) Then`).
_UNIT_CUT = re.compile(
    r"\n[ \t]*\n\s*|\n\s*"
    rf"|(?:[.?!]{_ABBREVIATIONS}|[.?!](?:\$|\\\)|\)))(?P<ws>[ \t]+)(?=[A-Z0-9$\\(])"
)
# After a display that ends a sentence: a capitalised word (`\]Then`, `\end{align*}First,`).
_AFTER_DISPLAY = re.compile(r"[ \t]*(?=[A-Z][a-z])")
# A parenthetical sentence or more: `(Note that ... . Some ...)` opening a sentence; never cut inside.
_PAREN_OPEN = re.compile(r"\((?=[A-Z][a-z])")
_LIST_ENV = re.compile(r"\\begin\{(itemize|enumerate|description)\}")
_ITEM = re.compile(r"\\item\b")
# Displays and tables: never cut inside, even where the math scan cannot see them whole (a `$` that
# crosses a blank line around `\begin{cases}`, a text-mode `tabular` of cases checked).
_DISPLAY_ENV = re.compile(
    r"\\begin\{((?:tabular|array|cases|[pbvBV]?matrix|smallmatrix|aligned|alignedat|gathered|split|align|alignat"
    r"|gather|equation|eqnarray|multline|flalign)\*?)\}"
)
_MARKDOWN_TABLE = re.compile(r"^[ \t]*\|[^\n]*(?:\n[ \t]*\|[^\n]*)+", re.MULTILINE)
"""A Markdown table: two or more lines in a row that open with `|` (its rows are cells, not sentences)."""
# A list whose items average two lines or more (~150 characters) is a list of moves (an algorithm's
# stages, the reasons of a claim): each item starts a step. Shorter items enumerate one statement.
_MOVE_ITEM_CHARS = 150
_OPENS_LIST = re.compile(r"\\begin\{(?:itemize|enumerate|description)\}(?:\[[^\]\n]*\])?\s*$")
_NO_MOVE = re.compile(
    r"^(?:<img_\d+>|\(?(?:see\s+)?(?:figure|fig\.?)\s*\d+(?:\.\d+)?[a-z]?\)?[.:]?|\[asy\].*\[/asy\]|!\[[^\]]*\]\([^)]*\)"
    r"|~[A-Za-z][^\n$\\=]{0,80}|\d{1,2}\s+of\s+\d{1,2})$",
    re.IGNORECASE | re.DOTALL,
)
"""A unit with no move in it: a figure (`<img_1>`, `Figure 2`, an image link), an author's credit line
(`~MRENTHUSIASM (credit given to AoPS)`: a `~` and a name, no math; a line that opens with a LaTeX `~` space and
goes on with math is a step) or a page counter of a scraped solution (`Step 4` / `4 of 4`)."""
_DANGLING_WORDS = frozenset(
    "then that so and or thus hence therefore get gets obtain give gives yield yields have has where is are by of to as "
    "with become becomes equal equals because since namely i.e. follows following".split()
)
_OPEN_WORD = re.compile(
    r"(?:^|\s)(?:a|an|the|for|from|in|on|at|into|onto|than|which|whose|if|when|we|be|assume|consider|using|let|denote)$",
    re.IGNORECASE,
)
"""A prose word that no sentence ends with (an article, a preposition, `we`, `assume`): a line that stops on it was
hard-wrapped (`we may as well assume` / `WLOG that $n=k+1$`). Read on the raw text, so the `a` of `$b+a$` is not one."""
_LAST_WORD = re.compile(r"(?:i\.e\.|[A-Za-z]+)$")


def _dangles(text: str) -> bool:
    """The text stops mid-sentence: it ends with `:`, `,`, `=`, `+`, `-`, a bold heading `**..:**`
    or a word such as "then", "we get", "is", "where"."""
    t = text.rstrip()
    if not t:
        return False
    if t[-1] in ":,=+-" or t.endswith(("**", ":**")):
        return True
    m = _LAST_WORD.search(t)
    return bool(m) and m.group(0).lower() in _DANGLING_WORDS
_CONTINUES = re.compile(
    r"^(?:(?!(?:[ivx]{1,4}|[a-h])[.)]\s+[A-Z$\\])[a-z]|\((?![ivx]{1,4}'?\))[a-z]{2,}\b"
    r"|\$\$|\\\[|\$?\\(?:begin|end)\{|<center>|[,;.)]|=\s*\\)"
)
"""A unit that goes on with the step before: lower case (not a list marker `ii. If ...`), a parenthesis opened in
lower case (`(that is, ...)`), punctuation, display math (a table set in `$...$` or centred in `<center>` too), the
`\\end{center}` that closes what the step before opened."""
_MARKER_ONLY = re.compile(r"\s*(?:#{1,6}\s*)?(?:\*\*)?(?:\d{1,2}|[a-z]|[ivx]{1,4})[.)]")
# A heading: a structural label, alone or with a short title (`Case 2:`, `<Step 3> $x$ is odd`,
# `**Claim 1.**`, `Lemma.`, `Proof.`, `## Part (b)`), which starts its step with the next sentence.
_HEADING_WORD = (
    r"(?:case|subcase|part|step|claim|lemma|proposition|observation|fact|proof|solution|answer|conclusion|"
    r"remark|note|theorem|corollary|definition|notation|method|approach|idea|setup|construction)"
)
# One of several proofs or solutions: `First proof.`, `Second solution:`, `Alternative proof.`
_ORDINAL_HEADING = r"(?:first|second|third|fourth|another|alternative|alternate)\s+(?:proof|solution|approach|method)\s*[.:]?\W*"
# A LaTeX font command around a heading (`\textbf{Case 1: $b$ is odd}`), as `**...**` in Markdown.
_FONT_OPEN = r"\\(?:textbf|textit|emph|underline)\{"
_FONT_HEADING = rf"{_FONT_OPEN}(?:[^{{}}\n]|\{{[^{{}}\n]*\}}){{1,80}}\}}[.:]?"
# A numbered case or part label with its hypothesis as a title, on a line without a full stop:
# `(Case 1) If $a$ and $b$ lie on one line`, `Case 2: $n$ even`; or a numbered step that states
# its claim, `Step 1: $f$ is injective.`
_TITLED_LABEL = (
    r"(?:sub)?(?:case|part|step|method|solution|approach)\s*(?:\\?#\s*)?(?:\d{1,2}|[ivx]{1,4}|[a-z])(?:\.\d+)?\s*[.:)]"
    r"\s+[^\n.?!]{1,100}"
    r"|step\s*\d{1,2}\s*:\s+[^\n.?!]{1,100}\."
)
# Whose proof follows: `Proof of the Claim.`, `Proof of statement (P)`, `Proof of Lemma 2:`.
_PROOF_OF = r"proof\s+of\s+(?:the\s+)?[\w.]+(?:\s+[\w.]+)?\s*(?:\([^()\n]{1,10}\))?\s*[.:]?\W*"
_HEADING = re.compile(
    rf"\W*(?:<\s*{_HEADING_WORD}(?:\s*\w*|\s+of(?:\s+\w+){{1,2}})\s*>[^\n]{{0,160}}|{_PROOF_OF}"
    rf"|{_HEADING_WORD}\s*(?:\(?[\w.]{{0,6}}\)?)\s*(?:\([^()]{{0,40}}\))?"
    rf"\s*[.:]?\W*|#{{1,6}}\s.{{0,80}}|\*\*[^*\n]{{1,80}}\*\*[.:]?|{_FONT_HEADING}|{_TITLED_LABEL}|{_ORDINAL_HEADING}"
    rf"|\\begin\{{proof\}}(?:\[[^\]\n]*\])?)",
    re.IGNORECASE,
)
_HEADING_START = re.compile(
    rf"\W*(?:{_FONT_OPEN})?(?:{_HEADING_WORD}\s*\(?[\w.]{{0,6}}\)?\s*[.:]|<\s*{_HEADING_WORD}\b)", re.IGNORECASE
)
_CASE_HEAD = re.compile(r"\W*(?:sub)?case[\s-]*\(?[\w.]{0,6}(?:\)\s*[.:]?|\s*[.:])\W*", re.IGNORECASE)
"""A case label: `Case 1.`, `Case 2:`, `Case 1)`, `(Case 4)`, `Case-2:`."""
_CASE_HYPOTHESIS_MAX = 60
# A statement heading whose statement may run over sentences: `Lemma: Let ... . Then ...`.
_STATEMENT_HEAD = re.compile(
    r"\W*(?:lemma|claim|theorem|proposition|corollary)\s*\(?[\w.]{0,6}\)?\s*[.:]\W*(?:let|suppose|assume|if)\b",
    re.IGNORECASE,
)
_STATEMENT_GOES_ON = re.compile(r"(?:then|if)\b", re.IGNORECASE)
"""How a statement's second sentence opens (`Lemma: Let $G$ be a group. If $|G|=2$, then ...`)."""
_LIST_ITEM = re.compile(r"(?:#{1,6}\s*)?(?:\*\*)?(?:step\s*\d+|\d{1,2}[.)]|[-*]\s)(?=[\s:*])", re.IGNORECASE)
_CONDITIONAL = frozenset({"when", "if", "for", "from", "case", "in", "on"})
# A sentence that only names what the step before produced: `Call it $K$.`, `Let this point be $T$.`
_NAMING = re.compile(
    r"(?:call|denote)\s+(?:it|this|that|them|these|the\s+\w+)\b|let\s+(?:this|that|it|these|the\s+latter)\b[^.]{0,40}\bbe\b",
    re.IGNORECASE,
)
# A sentence that sets up notation: `Let $D$ and $F$ denote ...`, `Also, let $D'$ be ...`.
_DEFINITION = re.compile(r"(?:(?:also|now|and|further(?:more)?),?\s+)?(?:let(?!'s|\s+us\b)|denote\b|define\b)", re.IGNORECASE)
# A parenthetical sentence: `(Note that ...)`, `(See Figure 2.)`.
_PARENTHETICAL = re.compile(r"\([A-Z][^()]*(?:\([^()]*\)[^()]*)*\)\.?")
# A restatement of the step before: `that is, ...`, `in particular ...`.
_RESTATES = re.compile(r"(?:that\s+is|in\s+particular|in\s+other\s+words|namely|i\.\s?e\.)\b", re.IGNORECASE)
# A sentence that only says a proof or claim is finished (`This completes the proof.`, `The claim
# follows.`, `Thus Claim 2 is proved.`): it closes the step before, it is not a move of its own.
_PROOF_WORD = r"(?:proof|claim|lemma|induction|statement|result|assertion|theorem|problem|conclusion)"
_PROOF_TAIL = r"(?:\s+\d+|\s+(?:of|in)\s+(?:the\s+)?\w+(?:\s+\d+)?)?"  # `Claim 2`, `the proof of the claim`
_CLOSING = re.compile(
    rf"(?:(?:this|that|which|thus|hence|so|therefore|and|now)\b,?\s+)*(?:"
    rf"(?:completes|finishes|concludes|proves|establishes|implies|gives|shows)\s+(?:the|our|this)?\s*"
    rf"(?:desired\s+|required\s+)?{_PROOF_WORD}{_PROOF_TAIL}"
    rf"|(?:as\s+[^,.]{{0,40}},\s*)?(?:the\s+|our\s+)?(?:\w+\s+){{0,2}}{_PROOF_WORD}{_PROOF_TAIL}\s+"
    rf"(?:(?:is|are)\s+(?:now\s+)?(?:proved|proven|complete|completed|done|established|finished|shown)|(?:now\s+)?follows)"
    rf"|we\s+are\s+done)[.!]?\s*$",
    re.IGNORECASE,
)
_FIGURE_REF = re.compile(r"\(?(?:see\s+)?(?:figure|fig\.)\s*\d", re.IGNORECASE)
_LEAD_IN = re.compile(
    r"(?:\bthe\s+following\b|\bas\s+follows\b|\b(?:two|three|four|five|several|\d)\s+(?:sub)?cases\b)[^.$\\\n]*[.:]\s*$",
    re.IGNORECASE,
)
_MATH_CLOSE = re.compile(r"(?:\\right\.|\$|\\\)|\s)+$")
_SENTENCE_END = re.compile(r"[.?!:;]\s*(?:\$|\\\))?\s*$")
_MATH_START = re.compile(r"\$(?!\$)|\\\(")


def _lists(solution: str) -> list[tuple[int, int, list[int]]]:
    """The LaTeX list environments as (start, end, item starts), the item starts only for a list of
    moves (items of `_MOVE_ITEM_CHARS` on average)."""
    out = []
    for m in _LIST_ENV.finditer(solution):
        end = _environment_end(solution, m)
        if end < 0:
            continue
        j = end - len(f"\\end{{{m.group(1)}}}")  # where the items stop
        items = [i.start() for i in _ITEM.finditer(solution, m.end(), j)]
        moves = bool(items) and (j - items[0]) / len(items) >= _MOVE_ITEM_CHARS
        out.append((m.start(), end, items if moves else []))
    return out


def _environment_end(solution: str, opened: re.Match[str]) -> int:
    """Where the environment that `opened` (`\\begin{name}`, the name its group 1) ends, past its
    `\\end{name}`; -1 when it is never closed."""
    end_tag = f"\\end{{{opened.group(1)}}}"
    j = solution.find(end_tag, opened.end())
    return -1 if j < 0 else j + len(end_tag)


def _protected(solution: str, lists: list[tuple[int, int, list[int]]]) -> Regions:
    """Math spans and figures (`spans.protected_regions`), displays and tables (`_DISPLAY_ENV`) and
    LaTeX list environments (each item of a list of moves on its own)."""
    base = protected_regions(solution)
    regions = []
    for a, b, items in lists:
        bounds = [a, *items, b]
        regions += list(zip(bounds, bounds[1:]))
    regions += [(m.start(), end) for m in _DISPLAY_ENV.finditer(solution) if (end := _environment_end(solution, m)) >= 0]
    if "|" in solution:
        regions += [m.span() for m in _MARKDOWN_TABLE.finditer(solution)]
    for m in _PAREN_OPEN.finditer(solution):
        k = m.start()
        while k > 0 and solution[k - 1] in " \t":
            k -= 1
        if k == 0 or solution[k - 1] in ".?!\n":  # the parenthesis opens a sentence
            end = _closing_paren(solution, m.start())
            if end > 0:
                regions.append((m.start(), end))
    if not regions:
        return base
    return Regions(_union(base.regions + regions))


def _closing_paren(text: str, i: int, limit: int = 800) -> int:
    """The index after the `)` closing the `(` at i, or -1 (none within limit, or a blank line first)."""
    depth = 0
    for j in range(i, min(len(text), i + limit)):
        c = text[j]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return j + 1
        elif c == "\n" and text.startswith("\n\n", j):
            return -1
    return -1


def _union(regions: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(regions):
        if out and a < out[-1][1]:
            out[-1] = (out[-1][0], max(b, out[-1][1]))
        else:
            out.append((a, b))
    return out


_LAYOUT = re.compile(
    r"(?:(?:\\\\(?:\[[^\]\n]{0,12}\])?|\[\d*(?:pt|em|ex|mm)\]|</[A-Za-z]+>"
    r"|\\(?:bigskip|medskip|smallskip|noindent|newline|par)(?![A-Za-z])|\\vspace\*?\{[^{}\n]{0,12}\})\s*)+"
)
"""Layout that closes or spaces the text before it: a LaTeX line break `\\\\` or `\\\\[2pt]` (or its stray
`[0pt]`), a closing HTML tag (`</ol>`, `</center>`), `\\bigskip`, `\\vspace{1em}`."""
_EQUATION_TAG = re.compile(r"\((?:\d{1,3}|\*{1,3}|[ivx]{1,4}|[a-z])\)[ \t]*(?:\n|$)")
"""A formula's tag at the end of its line (`$a^2 = b^2 + c^2.$ (1)`): it labels the formula before it."""


def _past_layout(solution: str, at: int) -> int:
    """A cut moved past layout that opens the next line (`... $L \\ge n$.\n\\\\Consider`, `...$.\n</ol>\nNow`):
    it ends what came before, it does not start a step (the labellers start the step after it)."""
    m = _LAYOUT.match(solution, at)
    return m.end() if m else at


def _units(solution: str, protected: Regions, lists: list[tuple[int, int, list[int]]]) -> list[Segment]:
    """The solution cut at every line and sentence boundary outside math, figures and lists
    (never right after a list marker such as `1.`)."""
    cuts = []
    for m in _UNIT_CUT.finditer(solution):
        at = m.start("ws") if m.group("ws") else m.start()  # just after the sentence's last character
        if protected.cuts(at):
            continue
        if m.group("ws") and _MARKER_ONLY.fullmatch(solution, solution.rfind("\n", 0, at) + 1, at):
            continue  # `1. Add the numbers.`: the marker is not a sentence
        if m.group("ws") and _EQUATION_TAG.match(solution, m.end()):
            continue  # `$x = 1.$ (1)`: the tag belongs to its formula
        cuts.append(_past_layout(solution, m.end()))
    cuts += [i for _, _, items in lists for i in items if not protected.cuts(i)]  # a list of moves
    for s in math_spans(solution)[0]:
        if s.display and not protected.cuts(s.outer_end):
            m = _AFTER_DISPLAY.match(solution, s.outer_end)
            if m and m.end() > s.outer_end - 1 and solution[s.outer_end : m.end()].strip() == "":
                cuts.append(m.end())
    return _segments(solution, cuts)


_DIGITS = re.compile(r"\d+")
_ALNUM = re.compile(r"[A-Za-z0-9]")
_TEMPLATE_WORD = re.compile(r"[a-zN]+|M")


def _template(text: str) -> tuple[str, ...]:
    words = INLINE_MATH.sub(" M ", text[:160].lower())
    return tuple(_TEMPLATE_WORD.findall(_DIGITS.sub("N", words))[:2])


def _results(text: str) -> set[str]:
    """Numbers a step derives (right of its last `=`), to tell dependent steps from parallel ones."""
    return set(re.findall(r"=\s*\$?(-?\d+(?:\.\d+)?)", text))


_PROSE_START = re.compile(r"[a-z]+\b(?![ \t]*\(?[\dIVXivx]+\b)")
"""A word in lower case with no label after it: `fact.` or `proof here.` on the next line of a hard-wrapped
sentence is prose, not a heading (`step 6:` with its number still is one)."""


def _is_heading(text: str) -> bool:
    return bool(_HEADING.fullmatch(text)) and not _PROSE_START.match(text)


def _case_hypothesis(solution: str, prev: Segment, a: int) -> bool:
    """The step before is a case heading with its short hypothesis (`Case 1. $S$ is not on $BM$.`, `Case 1) $X = H$.`),
    on its line or in its paragraph: the hypothesis alone is not a move, the case's argument goes with it."""
    m = _CASE_HEAD.match(solution, *prev)
    if not m:
        return False
    rest = solution[m.end() : prev[1]]
    return len(rest) <= _CASE_HYPOTHESIS_MAX and rest.count(". ") == 0


def _is_heading_start(solution: str, unit: Segment) -> bool:
    """The unit opens with a heading (`Case 1: $a$ is even.`)."""
    return bool(_HEADING_START.match(solution, *unit))


def _lead_in(text: str) -> bool:
    """A sentence that announces what follows (`We distinguish three cases.`, `We prove the following.`)."""
    last = text[text.rfind(". ", 0, len(text) - 2) + 2 :]
    if "follow" not in last and "case" not in last.lower():
        return False
    return bool(_LEAD_IN.search(last))


_BULLET = re.compile(r"[-*\u2022][ \t]+(?!\*\*)")
_SHORT_BULLET_CHARS = 80


def _short_bullet(solution: str, unit: Segment) -> bool:
    """A short bulleted point (`- 51 ÷ 3 = 17.`, its whole line) after another short one or after a line that opens
    the list with a colon: a list of short points is one statement, as a LaTeX list of short items is
    (`_MOVE_ITEM_CHARS`). A bullet with a longer line (`* Two parts. There are three ...`) starts a step."""
    a = unit[0]
    line_start = solution.rfind("\n", 0, a) + 1
    if solution[line_start:a].strip() or not _BULLET.match(solution, a) or len(_line_at(solution, a)) >= _SHORT_BULLET_CHARS:
        return False
    end = line_start
    while end > 0 and solution[end - 1].isspace():
        end -= 1
    last_line = solution[solution.rfind("\n", 0, end) + 1 : end].strip()
    return last_line.endswith(":") or (bool(_BULLET.match(last_line)) and len(last_line) < _SHORT_BULLET_CHARS)


def _line_at(solution: str, a: int) -> str:
    end = solution.find("\n", a)
    return solution[a : end if end >= 0 else len(solution)]


def _joins(solution: str, prev: Segment, unit: Segment, min_chars: int) -> bool:
    """Whether `unit` continues the step `prev` (see the module docstring)."""
    a, b = unit
    text, before = solution[a:b], solution[prev[0] : prev[1]]
    heading = prev[1] - prev[0] < min_chars or _is_heading(before) or _case_hypothesis(solution, prev, a)
    if _ITEM.match(text):
        return heading  # an item of a list of moves starts a step
    if _short_bullet(solution, unit):
        return True  # `- 51 ÷ 3 = 17.` under `First, we factorize 51:`: a point of the list's statement
    item = _LIST_ITEM.match(text)
    if item and _is_heading(text) and (solution.startswith("\n\n", b) or not _LIST_ITEM.match(solution[b:].lstrip())):
        return heading  # `Step 1: $f$ is injective.` on a line of its own, its work after it: a heading, not a plan item
    if item:
        line_start = solution.rfind("\n", 0, a) + 1
        if a - line_start >= 2:
            return True  # a nested list item belongs to the step it sits in
        if len(text) >= 50 or "=" in text or "**" in text:
            return heading  # a numbered step starts a step, even after "as follows:"
        return True  # a short plain item (`2. Divide the sum.`) is part of a plan
    if _is_heading(text):
        return heading and not _is_heading(before)  # a heading starts a step (`Claim 2.` after `Proof.`: joins)
    if heading or _CONTINUES.match(text) or _RESTATES.match(text) or _CLOSING.match(text):
        return True
    if _STATEMENT_GOES_ON.match(text) and _STATEMENT_HEAD.match(before) and not re.search(r"\bthen\b", before, re.IGNORECASE):
        return True  # `Lemma: Let $R$ be a ring. Then ...`: a statement is not cut in half
    if _is_heading_start(solution, unit):
        return False  # `Case 1: $a$ is even.` starts a step, even after a lead-in
    if _dangles(_MATH_CLOSE.sub("", before[-48:])) or _OPEN_WORD.search(before[-16:].rstrip()):
        return True
    if _lead_in(before):
        return True  # `We prove the following.` + the statement
    if _PARENTHETICAL.fullmatch(text) or _FIGURE_REF.match(text) or (_NAMING.match(text) and len(text) <= 80):
        return True
    last = before[before.rfind(". ") + 2 :] if ". " in before else before
    if _DEFINITION.match(text) and _DEFINITION.match(last) and "=" not in text:
        return True  # `Let $D$ be ... . Let $C$ be ...`: notation is set up in one step
    gap = solution[prev[1] : a]
    if "\n" in gap and "\n\n" not in gap and not _SENTENCE_END.search(before) and _MATH_START.match(text):
        return True  # a hard-wrapped line: the sentence goes on with math on the next line
    return False


def _without_figures(solution: str, units: list[Segment]) -> list[Segment]:
    """The units less those with no move (`_NO_MOVE`); a figure that a sentence announces with a colon (`The graph of
    $g$ is shown below:` then `<img_3987>`) ends that sentence's unit instead, so what follows the figure is not
    read as the rest of a dangling sentence."""
    kept: list[Segment] = []
    for a, b in units:
        if not _NO_MOVE.match(solution[a:b].strip()):
            kept.append((a, b))
        elif kept and solution[kept[-1][0] : kept[-1][1]].rstrip().endswith(":"):
            kept[-1] = (kept[-1][0], b)
    return kept


def split_steps(solution: str, config: HeuristicConfig = HeuristicConfig(), min_steps: int = 3) -> list[str]:
    """Split a solution into ordered, verbatim steps, one logical move each (module docstring).

    `min_steps` is kept for the interface: a solution with fewer moves simply has fewer steps
    (the task's `min_steps` then skips it).
    """
    lists = _lists(solution)
    protected = _protected(solution, lists)
    units = _units(solution, protected, lists)
    units = _without_figures(solution, units)
    steps: list[Segment] = []
    for k, (a, b) in enumerate(units):
        text = solution[a:b]
        announces_cases = k + 1 < len(units) and _lead_in(text) and _is_heading_start(solution, units[k + 1])
        # `We run the following steps: \begin{itemize}`, before the items of a list of moves, is a lead-in
        opens_moves = bool(_OPENS_LIST.search(text)) or (k + 1 < len(units) and bool(_OPENS_LIST.match(solution, *units[k + 1])))
        if steps and (announces_cases or opens_moves or _joins(solution, steps[-1], (a, b), config.min_step_chars)):
            steps[-1] = (steps[-1][0], b)
        else:
            steps.append((a, b))
    merged: list[Segment] = []
    templates = [_template(solution[a:b]) for a, b in steps]
    for k, (a, b) in enumerate(steps):
        if merged:
            pa, pb = merged[-1]
            tp, tt = templates[k - 1], templates[k]
            if tp and tp == tt and tp[0] in _CONDITIONAL and not (
                _results(solution[pa:pb]) & set(re.findall(r"-?\d+(?:\.\d+)?", solution[a:b]))
            ):
                merged[-1] = (pa, b)
                continue
        merged.append((a, b))
    merged = _merge_short(solution, merged, config.min_step_chars)  # a `Q.E.D.` line is no step the author drew
    min_breaks = 0 if config.model_paragraphs and _model_layout(solution) else config.paragraph_steps
    merged = _keep_paragraphs(solution, merged, min_breaks, config.long_paragraph_chars)
    merged = _cap(merged, config.max_steps)  # joining paragraphs only grows steps: nothing tiny is left to fold
    return [solution[a:b] for a, b in merged]
