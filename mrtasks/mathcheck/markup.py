"""Presentational markup: what decorates a formula or an answer without changing what it says, and
the one rule that removes it (`strip_markup`, applied by `normalize` to references and
predictions alike, in both modes).

The rule, in order (each step is pure string work, linear in the text, bounded in passes):

1. Characters. Full-width ASCII forms (`１２`, `＋`, `＝`, `（`) are their ASCII characters, the
   ideographic space is a space, and the Unicode minus, en dash and figure dash (U+2212, U+2013,
   U+2012) are `-`. Other Unicode symbols are the notation rules' business (`normalize`).
2. Invisible and styling commands go wherever they are: `\\phantom{..}`, `\\hphantom{..}`,
   `\\vphantom{..}`, `\\strut`, `\\mathstrut`, a colour switch `\\color{c}`, style and size
   switches (`\\displaystyle`, `\\textstyle`, `\\large`, `\\bf`, ...), `\\label{..}`, `\\tag{..}`,
   `\\tag*{..}`, `\\nonumber`, `\\notag`, spacing with an argument (`\\hspace{..}`, `\\hfill`,
   `\\kern`); `\\textcolor{c}{X}`, `\\colorbox{c}{X}`, `\\fcolorbox{a}{b}{X}` are `X`.
3. Whole-formula wrappers: a formula entirely inside `{..}`, `\\mathbf{..}`, `\\boldsymbol{..}`,
   `\\bm{..}`, `\\pmb{..}`, `\\mathrm{..}`, `\\mathit{..}`, `\\mathsf{..}`, `\\textbf{..}`,
   `\\underline{..}` or `\\text{..}` is that formula. Inside a formula these commands name things
   (`\\mathbf{v}`, `\\mathrm{d}x`) and stay.
4. A connective at the start goes when a formula follows it: `\\because`, `\\therefore`, `\\hence`,
   `\\thus`, `\\implies`, `\\Rightarrow`, `\\Longrightarrow`, `\\iff`, `\\to` and a prose
   `\\text{so }` (words only); `\\text{Area} = 12` keeps its label, since a relation follows it.
5. At the end, repeatedly: end-of-proof and check marks (`\\blacksquare`, `\\square`, `\\Box`,
   `\\qed`, `\\checkmark`, `\\surd`, `\\star`, `\\dagger`, ...) not inside a script; an equation
   label after spacing (`\\quad(\\star)`, `\\qquad (2)`, `(ii)`, `[4]`; a bare `(2)` after a space
   (or `[4]`) unless one letter or a function precedes the space (`f (2)`, `\\log (2)` stay;
   `Heron's formula (2)`, `a_n, \\ldots (2)` lose it); `\\hspace{..}` and
   `\\hfill` count as spacing), and neither after an operator or a
   relation (`I+J = (1)` keeps its right side); a prose `\\text{..}` (parenthesised,
   or a word of two letters or more: `\\text{(by AM-GM)}`); `\\dots`/`\\ldots`/`\\cdots` not after
   an operator, relation or comma (`1 + 2 + \\cdots` and `1, 2, \\dots` stay); punctuation `.`,
   `,`, `:`; spacing commands.

Nothing is stripped to empty: a text that is only markup (`\\therefore`, `\\text{by induction}`)
stays as it is. Longer texts than `MAX_MARKUP_CHARS` are left unchanged (compared as strings).
"""

from __future__ import annotations

import html
import re

from mrtasks.mathcheck.latex import closing_brace

MAX_MARKUP_CHARS = 20_000
"""Texts longer than this are left as they are (the checker compares them as strings only)."""
MAX_PASSES = 8

_FULL_WIDTH = {c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)}
_FOLD = str.maketrans({**_FULL_WIDTH, 0x3000: " ", 0x2212: "-", 0x2013: "-", 0x2012: "-", 0xFE63: "-"})
_NEEDS_FOLD = re.compile("[\uff01-\uff5e\u3000\u2212\u2013\u2012\ufe63]")


_ENTITY = re.compile(r"&(?:[a-zA-Z]{2,8}|#\d{1,7}|#[xX][0-9a-fA-F]{1,6});")


def decode_entities(text: str) -> str:
    """HTML entities as their characters (`&ge;` is `≥`, `&#8804;` is `≤`, `&pi;` is `π`); first of all,
    so that what they decode to meets the same rules as the characters written directly."""
    if "&" in text and ";" in text:
        return _ENTITY.sub(lambda m: html.unescape(m.group(0)), text)
    return text


def fold_unicode(text: str) -> str:
    """Full-width ASCII forms and the ideographic space as ASCII; Unicode minus and dashes as `-`;
    HTML entities as their characters."""
    text = decode_entities(text)
    return text.translate(_FOLD) if _NEEDS_FOLD.search(text) else text


# step 2: commands removed wherever they are; (name, how many brace arguments are dropped)
_DROP = {
    "phantom": 1, "hphantom": 1, "vphantom": 1, "smash": 0, "strut": 0, "mathstrut": 0, "color": 1,
    "label": 1, "tag": 1, "nonumber": 0, "notag": 0, "hspace": 1, "vspace": 1, "hfill": 0, "hfil": 0,
    "mspace": 1, "displaystyle": 0, "textstyle": 0, "scriptstyle": 0, "scriptscriptstyle": 0,
    "tiny": 0, "scriptsize": 0, "footnotesize": 0, "small": 0, "normalsize": 0, "large": 0, "Large": 0,
    "LARGE": 0, "huge": 0, "Huge": 0, "bf": 0, "rm": 0, "it": 0, "sf": 0, "tt": 0, "boldmath": 0,
    "unboldmath": 0, "noindent": 0, "allowbreak": 0, "nobreak": 0, "relax": 0,
}  # fmt: skip
_SPACING_DROP = {"hspace", "hfill", "hfil", "mspace"}
"""Dropped as spacing: what follows them is read as after `\\quad` (`x\\hfill(2)` ends in a label)."""
# commands whose last brace argument is kept and the others dropped: (name, arguments dropped)
_UNWRAP = {"textcolor": 1, "colorbox": 1, "fcolorbox": 2}
_CMD = re.compile(r"\\([a-zA-Z]+)\*?")
_KERN = re.compile(r"\\m?kern\s*-?\d*\.?\d+\s*(?:em|ex|pt|mu|px|cm|mm|in)")
_OPT_ARG = re.compile(r"\s*\[[^\[\]{}]{0,40}\]")


def _skip_arg(text: str, i: int) -> int:
    """Index after one brace argument starting at or after `i` (spaces skipped), or -1."""
    while i < len(text) and text[i] == " ":
        i += 1
    if i < len(text) and text[i] == "{":
        end = closing_brace(text, i)
        return -1 if end < 0 else end + 1
    return -1


_INVISIBLE = re.compile(r"\s*\{\s*white\s*\}")
"""A colour argument that hides what it colours on a white page: `{\\color{white} x}` and
`\\textcolor{white}{x}` are invisible, as `\\phantom{x}` is, and go with their content."""


def _group_end(text: str, i: int) -> int:
    """Index of the `}` closing the group that position `i` is in (the text's end outside any)."""
    depth = 0
    for j in range(i, len(text)):
        c = text[j]
        if c == "{" and (j == 0 or text[j - 1] != "\\"):
            depth += 1
        elif c == "}" and (j == 0 or text[j - 1] != "\\"):
            if depth == 0:
                return j
            depth -= 1
    return len(text)


def _drop_commands(text: str) -> str:
    if "\\" not in text:
        return text
    text = _KERN.sub(" ", text)
    out, pos = [], 0
    for m in _CMD.finditer(text):
        if m.start() < pos:
            continue
        name = m.group(1)
        if name in _DROP:
            end = m.end()
            if name in ("colorbox", "color"):
                opt = _OPT_ARG.match(text, end)
                end = opt.end() if opt else end
                if name == "color" and _INVISIBLE.match(text, end):  # white ink: what it colours is unseen
                    start, close = m.start(), _group_end(text, end)
                    opened = text[pos:start].rstrip()
                    if opened.endswith("{") and close < len(text):  # `{\color{white} x}`: the whole group
                        start, close = pos + len(opened) - 1, close + 1
                    out.append(text[pos:start] + " ")
                    pos = close
                    continue
            for _ in range(_DROP[name]):
                nxt = _skip_arg(text, end)
                if nxt < 0:
                    break
                end = nxt
            out.append(text[pos : m.start()])
            out.append("\\quad " if name in _SPACING_DROP else " ")
            pos = end
        elif name == "textcolor" and _INVISIBLE.match(text, m.end()):
            end = _skip_arg(text, _skip_arg(text, m.end()))
            out.append(text[pos : m.start()] + " ")
            pos = len(text) if end < 0 else end
        elif name in _UNWRAP:
            end, ok = m.end(), True
            for _ in range(_UNWRAP[name]):
                nxt = _skip_arg(text, end)
                if nxt < 0:
                    ok = False
                    break
                end = nxt
            if ok:
                out.append(text[pos : m.start()])
                pos = end  # the kept argument follows as a brace group
    out.append(text[pos:])
    return "".join(out)


# step 3: whole-formula wrappers
_WHOLE = re.compile(
    r"^\\(?:mathbf|boldsymbol|bm|pmb|mathrm|mathit|mathsf|mathnormal|textbf|textit|textrm|underline|text|mbox|emph)\s*\{"
)


_ALIGNED = re.compile(r"^\\begin\{(aligned|align\*?|gathered|gather\*?|split|equation\*?|multline\*?)\}(.*)\\end\{\1\}$", re.S)
_ROW_BREAK = re.compile(r"\\\\(?:\[[^\]]{0,12}\])?")
_CONTINUES = re.compile(
    r"^\s*(?:[=<>+\-]|\\(?:le|ge|leq|geq|neq|ne|equiv|cong|sim|simeq|approx|Rightarrow|Longrightarrow|implies|iff|to|"
    r"cdot|times)(?![a-zA-Z]))"
)


def _unaligned(body: str) -> str:
    """The rows of an alignment environment as one formula: alignment marks go, and a row that
    continues the one before (`&= c`) joins it, the others follow after a comma."""
    rows = [r.replace("&", " ").strip() for r in _ROW_BREAK.split(body)]
    out = ""
    for row in (r for r in rows if r):
        out = row if not out else (f"{out} {row}" if _CONTINUES.match(row) else f"{out}, {row}")
    return out


def _unwrap_whole(text: str) -> str:
    for _ in range(MAX_PASSES):
        t = text.strip()
        env = _ALIGNED.match(t) if t.startswith("\\begin") else None
        if env and "\\begin" not in env.group(2) and _unaligned(env.group(2)):
            text = _unaligned(env.group(2))  # `\begin{aligned} a &= b \\ &= c \end{aligned}` is `a = b = c`
            continue
        if t.startswith("{") and closing_brace(t, 0) == len(t) - 1 and len(t) > 2:
            text = t[1:-1]
            continue
        m = _WHOLE.match(t)
        if m and closing_brace(t, m.end() - 1) == len(t) - 1 and len(t) > m.end() + 1:
            inner = t[m.end() : -1]
            if re.search(r"[=<>\\^_{}+\-*/\d]", inner) or not m.group(0).startswith(("\\text", "\\mbox", "\\emph")):
                text = inner  # `\text{5}` or `\mathbf{x = 5}`; `\text{so}` is a word, not a wrapper
                continue
        return t
    return text.strip()


# step 4: connectives at the start
_CONNECTIVE = re.compile(
    r"^(?:\\(?:because|therefore|hence|thus|so|implies|impliedby|Rightarrow|Longrightarrow|Leftrightarrow|iff|to|"
    r"longrightarrow|rightarrow)(?![a-zA-Z])\s*)+"
)
_LEAD_TEXT = re.compile(r"^\\(?:text|textrm|textit|textbf|mbox|mathrm)\s*\{([A-Za-z][A-Za-z ,.;:']{0,40})\}\s*")
_SPACE_CMD = r"(?:\\(?:q?quad|enspace|thinspace|medspace|thickspace)(?![a-zA-Z])|\\[,;:! ]|~|\s)"
_LEAD_SPACE = re.compile(rf"^{_SPACE_CMD}+")
_EXPLICIT_SPACE = re.compile(r"^(?:\\(?:q?quad|enspace)(?![a-zA-Z])|\\[,;: ]|~)")
CONNECTIVE_WORDS = frozenset(
    "so hence thus therefore then and but i.e ie e.g eg now also finally since because where whence giving gives "
    "yielding yields get gets we obtain implies or note clearly similarly consequently namely which that "
    "substituting plugging solving simplifying rearranging expanding factoring".split()
)
"""Words that open a connective `\\text{..}` before a formula (`\\text{so}x = 5`)."""
_REL_START = re.compile(r"^(?:=|<|>|\\(?:leq?|geq?|neq?|approx|equiv|sim|lt|gt)(?![a-zA-Z])|\\in(?![a-zA-Z]))")


def _strip_connective(text: str) -> str:
    m = _CONNECTIVE.match(text)
    rest = text[m.end() :] if m else text
    t = _LEAD_TEXT.match(rest)
    if t:
        # prose, not an operator name (`\text{Im}(z)`, `\text{lcm}[a,b]` stay): a connective word
        # (`\text{so}`, `\text{i.e.}`), or a space or punctuation inside it (`\text{Area } A`,
        # `\text{we get }`), or explicit spacing after it (`\textrm{hence}\ x`)
        body = t.group(1)
        raw_after = rest[t.start() + t.group(0).rindex("}") + 1 :]
        first = re.match(r"[A-Za-z.]+", body)
        spaced = (
            body != body.rstrip(" ,.;:")
            or " " in body.strip()
            or bool(first and first.group(0).lower().rstrip(".") in CONNECTIVE_WORDS)
            or bool(_EXPLICIT_SPACE.match(raw_after))
        )
        after = _LEAD_SPACE.sub("", rest[t.end() :])
        if spaced and after and not _REL_START.match(after):
            rest = after
    rest = _LEAD_SPACE.sub("", rest)
    return rest if rest.strip() else text


# step 5: at the end
_END_MARK = re.compile(
    r"(?<![_^])(?<![_^]\s)\\(?:blacksquare|square|Box|qed|qedsymbol|qedhere|checkmark|surd|bigstar|star|dagger|ddagger|"
    r"blacktriangleleft|blacktriangleright|triangleleft|lozenge|blacklozenge|clubsuit|heartsuit|spadesuit|diamondsuit|"
    r"diamond|bullet|S|P|#)\s*$"
)
_LABEL_BODY = (
    r"(?:\\(?:star|ast|dagger|ddagger|bigstar|heartsuit|spadesuit|clubsuit|diamondsuit|\#|S)|\*{1,3}"
    r"|[A-Za-z0-9]{1,4}'?|\\text\{[^{}]{1,8}\}|\$[^$]{1,10}\$)"
)
_LABEL_AFTER_SPACE_CMD = re.compile(rf"(?:\\(?:q?quad|enspace)(?![a-zA-Z])|\\[,;: ]|~)\s*[(\[]\s*{_LABEL_BODY}\s*[)\]]\s*$")
_LABEL_SYMBOLIC = re.compile(rf"\s[(\[]\s*(?!\d+\s*[)\]])(?![A-Za-z]\s*[)\]]){_LABEL_BODY}\s*[)\]]\s*$")
_LABEL_NUMBER = re.compile(r"(?<=\S)\s+(?:\(\d{1,3}[a-z]?\)|\[\d{1,3}[a-z]?\])\s*$")
_APPLIED = re.compile(
    r"(?:\\(?:sin|cos|tan|cot|sec|csc|arcsin|arccos|arctan|sinh|cosh|tanh|log|ln|lg|exp|det|gcd|lcm|max|min|deg"
    r"|dim|ker|Pr|sup|inf|lim|arg)|(?<![A-Za-z\\_^])[A-Za-z])$"
)
"""What a bare `(2)` after a space applies to rather than labels: one letter (`f (2)`) or a function (`\\log (2)`)."""
_TRAIL_TEXT = re.compile(r"\\(?:text|textrm|textit|textbf|mbox|emph)\s*\{([^{}]*)\}\s*$")
_TRAIL_DOTS = re.compile(r"(?:\\(?:dots[bcmoi]?|ldots|cdots|cdotp)(?![a-zA-Z])|\.\.\.)\s*$")
_TRAIL_PUNCT = re.compile(r"(?:[.,:]|\\text\s*\{\s*[.,:]\s*\})\s*$")
_TRAIL_SPACE = re.compile(rf"(?:{_SPACE_CMD}|(?<!\\)\\$)+$")  # `\\$`: what stripping left of `x\\ .`
_OPERATOR_END = re.compile(r"(?:[-+*/=<>,(\[{|^_]|\\(?:cdot|times|div|pm|mp|leq?|geq?|neq?|approx|equiv|left|in|cup|cap)\s*)$")


def _ends_in_operator(text: str) -> bool:
    """Does `text` end in an operator or relation (so what follows is its operand)? A `|` closing
    an even number of bars (`|x|`, `\\right|`) closes an absolute value: the formula is complete."""
    if text.endswith("|") and text.count("|") % 2 == 0:
        return False
    return bool(_OPERATOR_END.search(text))


def _strip_end(text: str) -> str:
    for _ in range(MAX_PASSES):
        before = text
        t = _TRAIL_SPACE.sub("", text)
        for pattern in (_END_MARK, _LABEL_AFTER_SPACE_CMD, _LABEL_SYMBOLIC, _LABEL_NUMBER):
            m = pattern.search(t)
            if m and pattern is _LABEL_NUMBER and _APPLIED.search(t[: m.start()]):
                m = None  # `f (2)`, `\\sin (2)`: an argument, not a label
            # a mark or label follows a complete formula, never an operator or relation
            # (`I+J = (1)`: the `(1)` is the right side)
            if m and t[: m.start()].strip() and not _ends_in_operator(_TRAIL_SPACE.sub("", t[: m.start()]).rstrip()):
                t = t[: m.start()]
                break
        else:
            m = _TRAIL_TEXT.search(t)
            body = m.group(1).strip() if m else ""
            if m and t[: m.start()].strip() and (body.startswith("(") or re.search(r"[A-Za-z]{2}", body)):
                t = t[: m.start()]
            else:
                m = _TRAIL_DOTS.search(t)
                if m and t[: m.start()].strip() and not _ends_in_operator(t[: m.start()].rstrip()):
                    t = t[: m.start()]
                else:
                    m = _TRAIL_PUNCT.search(t)
                    if m and t[: m.start()].strip():
                        t = t[: m.start()]
        text = _TRAIL_SPACE.sub("", t) if t.strip() else before
        if text == before:
            break
    return text


def strip_markup(text: str) -> str:
    """`text` without presentational markup (the rule in the module docstring). Linear time,
    at most `MAX_PASSES` passes of each step; never strips a text to empty."""
    if len(text) > MAX_MARKUP_CHARS:
        return text
    text = fold_unicode(text)
    if "\\" not in text and "{" not in text and not text.rstrip().endswith((".", ",", ":", ")", "]")):
        return text
    original = text
    text = _drop_commands(text)
    for _ in range(MAX_PASSES):
        before = text
        text = _unwrap_whole(_strip_end(_strip_connective(_unwrap_whole(text))))
        if text == before:
            break
    return text if text.strip() else original


_BARE_SCRIPT = re.compile(
    r"(?<!\\)([_^])(?=[A-Za-z0-9\\])([A-Za-z0-9]|\\(?:alpha|beta|gamma|delta|epsilon|varepsilon|zeta|eta|theta|vartheta|"
    r"iota|kappa|lambda|mu|nu|xi|pi|rho|sigma|tau|upsilon|phi|varphi|chi|psi|omega|Gamma|Delta|Theta|Lambda|Xi|Pi|"
    r"Sigma|Phi|Psi|Omega|infty|ast|star|dagger|top|perp|circ|prime|min|max)(?![a-zA-Z]))"
)


def canonical_scripts(text: str) -> str:
    """A single-token subscript or superscript in braces: `x_2`, `x_{2}` and `x_{ 2 }` are the
    same LaTeX (`x^23` is `x^{2}3`, as TeX reads it). Applied to normalized (space-free) text."""
    if "_" not in text and "^" not in text:
        return text
    return _BARE_SCRIPT.sub(r"\1{\2}", text)
