"""Notation models actually write, rewritten into the LaTeX the parser reads (`rewrite`).

Pure string work (no evaluation), linear in the text, run first by `normalize.normalize` in
both modes. Policy, each rule with the case it does not touch:

- Angle-bracket vectors `\\langle 1, 2\\rangle` are tuples `(1, 2)`.
- Unicode: `π` is `\\pi`, `∞` is `\\infty`, `√2` / `√(x+1)` / `∛8` are roots, `½` and the other
  vulgar fractions are `\\frac` (`2½` is the mixed number), superscript digits are exponents
  (`x²`), `×`/`·`/`⋅` are products, `÷` is division, `−` is a minus, `⩽`/`⩾` are `\\leq`/`\\geq`,
  lower-case Greek letters are their commands (`θ` is `\\theta`). Full-width characters are
  not this module's (see `normalize`).
- Words: `inf`, `infinity`, `Infinity` and sympy's `oo` are `\\infty` (the LaTeX command `\\inf`,
  the infimum, is left alone). Plain function names (`sqrt x`, `sin(x)`, `atan`, `ln`, `abs`),
  `pi` and Greek names of three letters or more (`theta`, `alpha`) standing alone are their
  commands (`pi r^2` is `\\pi r^2`; `xi` stays x*i, `pix` stays p*i*x). `+/-` and a leading
  `+-` are `\\pm`; in plain text ` != ` with spaces around it is `\\neq` (`b!=c` and LaTeX's
  `b !=c` stay b! = c).
- Python powers: `**` is `^`, and `x**12` is x to the 12th (the whole number is the exponent).
  In a plain-text expression (no backslash command, brace or `$`) `x^12` is also x to the 12th;
  in LaTeX (`$x^12$`, `x^12 + \\frac12`) it is x^1*2, which is what TeX renders, written out as
  `x^{1}2` so that a second pass reads it the same way. A lone boxed answer (`\\boxed{2^10}`) is
  read without its box.
- E-notation: `1E6`, `1e6`, `3.2e-4`, `1.09951162778E+12` are decimal numbers. With a lower-case
  `e`, a sign and no decimal point the number must stand alone (`2e-4` as a whole answer is
  0.0002, but `x + 2e-4` keeps Euler's e); `2e` is 2*e.
- Repeating decimals: `0.\\overline{6}`, `0.1\\overline{6}`, `0.\\dot{6}`, `0.(6)` and a trailing
  ellipsis after a repeated block (`0.666...`, `0.1212\\ldots`, `0.142857142857…`) are exact
  fractions. An ellipsis after digits that do not repeat (`3.14159...`) is dropped (the decimal
  as written), and
  `0.67` is never `\\frac23` (`tolerance` states the only decimal tolerance).
- Mixed numbers with a space: `2 3/4` is 2 + 3/4 when the fraction is proper (`2 3/4` is not
  `\\frac{23}{4}`; `2 300/4` is not a mixed number).
- Base numerals: `1011_{2}`, `(1011)_2` and `1011_{(2)}` are written `1011_2` (`base_numeral`
  reads them; `compare` decides them).
- Degrees inside a trigonometric argument are radians: `\\cos(90^\\circ - t)` is
  `\\cos(\\frac{90\\pi}{180} - t)`, so it equals `\\sin t`. Elsewhere the degree sign is dropped by
  `normalize` (a unit: `90^\\circ` is `90`).
"""

from __future__ import annotations

import re
from decimal import Decimal
from fractions import Fraction

from mrtasks.mathcheck.latex import closing_brace
from mrtasks.mathcheck.markup import decode_entities, strip_markup

_VULGAR = {
    "½": (1, 2), "⅓": (1, 3), "⅔": (2, 3), "¼": (1, 4), "¾": (3, 4), "⅕": (1, 5), "⅖": (2, 5),
    "⅗": (3, 5), "⅘": (4, 5), "⅙": (1, 6), "⅚": (5, 6), "⅐": (1, 7), "⅛": (1, 8), "⅜": (3, 8),
    "⅝": (5, 8), "⅞": (7, 8), "⅑": (1, 9), "⅒": (1, 10),
}  # fmt: skip
_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_GREEK = {
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ζ": "zeta", "η": "eta",
    "θ": "theta", "ι": "iota", "κ": "kappa", "λ": "lambda", "μ": "mu", "ν": "nu", "ξ": "xi",
    "ρ": "rho", "σ": "sigma", "τ": "tau", "υ": "upsilon", "φ": "phi", "ϕ": "phi", "χ": "chi",
    "ψ": "psi", "ω": "omega", "Γ": "Gamma", "Δ": "Delta", "Θ": "Theta", "Λ": "Lambda", "Ξ": "Xi", "Π": "Pi",
    "Σ": "Sigma", "Φ": "Phi", "Ψ": "Psi", "Ω": "Omega",
}  # fmt: skip
_SIMPLE = {"π": "\\pi ", "∞": "\\infty ", "×": "\\cdot ", "·": "\\cdot ", "⋅": "\\cdot ", "∙": "\\cdot ",
           "÷": "/", "−": "-", "⩽": "≤", "⩾": "≥", "ℝ": "\\mathbb{R}", "∈": "\\in ",
           # the symbols of LaTeX's commands, as a model may type them: `35·40≡1`, `U ∩ V = ∅`
           "≡": "\\equiv ", "∉": "\\notin ", "∋": "\\ni ", "∩": "\\cap ", "∪": "\\cup ", "⊂": "\\subset ",
           "⊆": "\\subseteq ", "⊃": "\\supset ", "⊇": "\\supseteq ", "∅": "\\emptyset ", "±": "\\pm ", "∓": "\\mp ",
           "∘": "\\circ ", "≅": "\\cong ", "≈": "\\approx ", "∼": "\\sim ", "≃": "\\simeq ", "⊥": "\\perp ",
           "∥": "\\parallel ", "∠": "\\angle ", "△": "\\triangle ", "∀": "\\forall ", "∃": "\\exists ",
           "¬": "\\neg ", "∑": "\\sum ", "∏": "\\prod ", "∫": "\\int ", "∂": "\\partial ", "∇": "\\nabla ",
           "→": "\\to ", "⇒": "\\Rightarrow ", "⟹": "\\implies ", "⇔": "\\Leftrightarrow ", "⟺": "\\iff ",
           "…": "\\ldots ", "⋯": "\\cdots ", "∣": "\\mid ", "∤": "\\nmid ", "⌊": "\\lfloor ", "⌋": "\\rfloor ",
           "⌈": "\\lceil ", "⌉": "\\rceil ", "ℕ": "\\mathbb{N}", "ℤ": "\\mathbb{Z}", "ℚ": "\\mathbb{Q}",
           "ℂ": "\\mathbb{C}"}  # fmt: skip
_UNICODE = re.compile("[" + "".join(_VULGAR) + "".join(_GREEK) + "".join(_SIMPLE) + "√∛∜⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺" + "]")
_SUPERSCRIPTS = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+")
_ROOT_ARG = re.compile(r"\s*(\d+(?:\.\d+)?|[A-Za-z]|\\[a-zA-Z]+)")


def _unicode(text: str) -> str:
    if not _UNICODE.search(text):
        return text
    text = _SUPERSCRIPTS.sub(lambda m: "^{" + m.group(0).translate(_SUPERSCRIPT) + "}", text)
    out, i = [], 0
    while i < len(text):
        c = text[i]
        i += 1
        if c in _SIMPLE:
            out.append(_SIMPLE[c])
        elif c in _GREEK:
            out.append(f"\\{_GREEK[c]} ")
        elif c in _VULGAR:
            num, den = _VULGAR[c]
            out.append(f"\\frac{{{num}}}{{{den}}}")
        elif c in "√∛∜":
            cmd = {"√": "\\sqrt", "∛": "\\sqrt[3]", "∜": "\\sqrt[4]"}[c]
            m = _ROOT_ARG.match(text, i)
            if m and i < len(text) and text[i] not in "({":
                out.append(f"{cmd}{{{m.group(1)}}}")
                i = m.end()
            else:
                out.append(cmd)
        else:
            out.append(c)
    return "".join(out)


_NAMES = re.compile(
    r"(?<![\\A-Za-z])(?:(arcsin|arccos|arctan|asin|acos|atan|sinh|cosh|tanh|sin|cos|tan|cot|sec|csc|sqrt|ln|log|exp|abs)"
    r"(?=\s*[(\[{^_]|\s+[\w\\.])|(pi|alpha|beta|gamma|delta|epsilon|theta|lambda|sigma|omega|phi|rho|tau)(?![A-Za-z]))"
)
"""A function name needs an argument after it (`5 sec` is five seconds, `sec x` a secant)."""
_PLUS_MINUS = re.compile(r"\+/-|(?:^|(?<=[=(,\s]))\+-(?=\s*[\w\\(])")
_ANGLE = re.compile(r"\\[lr]angle(?![a-zA-Z])")
_INFINITY = re.compile(r"(?<![\\A-Za-z])(?:[Ii]nfinity|inf|oo)(?![A-Za-z])")
_PY_POWER = re.compile(r"\*\*\s*(-?\s*\d+(?:\.\d+)?)")
_PLAIN_POWER = re.compile(r"\^\s*(-?\d+(?:\.\d+)?)")
_TEX_POWER = re.compile(r"\^\s*(\d)(\d+)(?![.\d])")
_LATEX = re.compile(r"[\\{}$]")
"""LaTeX: a command, a brace or a math delimiter. Anything else is a plain-text expression."""
_E_UPPER = re.compile(r"(?<![\w.])(\d+(?:\.\d*)?|\.\d+)E([+-]?\d+)(?![\w.])")
_E_LOWER = re.compile(r"(?<![\w.])(\d+(?:\.\d*)?|\.\d+)e([+-]?\d+)(?![\w.])")
_E_ANY = re.compile(r"\d[eE][+-]?\d")
_ALONE = re.compile(r"^\s*-?\s*$|[(\[,;=]\s*-?\s*$")
_END = re.compile(r"^\s*(?:$|[)\],;=])")


def _e_notation(text: str) -> str:
    if not _E_ANY.search(text):
        return text

    def lower(m: re.Match) -> str:
        mantissa, exp = m.group(1), m.group(2)
        alone = _ALONE.search(text[: m.start()]) and _END.match(text[m.end() :])
        if exp[0] in "+-" and "." not in mantissa and not alone:
            return m.group(0)  # `x + 2e-4`: 2e - 4
        return _decimal(mantissa, exp, m.group(0))

    text = _E_UPPER.sub(lambda m: _decimal(m.group(1), m.group(2), m.group(0)), text)
    return _E_LOWER.sub(lower, text)


MAX_E_EXPONENT = 300
"""Larger decimal exponents are read as a power of ten (a decimal would grow by that many digits)."""


def _decimal(mantissa: str, exp: str, original: str) -> str:
    """The number as a plain decimal; one with a decimal mantissa keeps a decimal point, so
    that `tolerance` treats it as the decimal literal it is."""
    if abs(int(exp)) > MAX_E_EXPONENT:  # as a power: never `1 \cdot e \cdot 999`, and no huge decimal string
        return f"{mantissa} \\cdot 10^{{{int(exp)}}}"
    text = format(Decimal(mantissa).scaleb(int(exp)), "f")
    return text + ".0" if "." in mantissa and "." not in text else text


_OVERLINE = re.compile(r"(?<![\d.])(\d*)\.(\d*)\\(?:overline|bar|dot)\s*\{(\d+)\}")
_DOTS = re.compile(r"(?<![\d.])(\d*)\.((?:\\dot\s*\{?\d\}?|\d)+)")
_PAREN = re.compile(r"(?<![\d.])(\d*)\.(\d*)\((\d+)\)(?![\d(])")
_ELLIPSIS = re.compile(r"(?<![\d.])(\d*)\.(\d+)\s*(?:\.\.\.|\\ldots|\\cdots|\\dots|…)")


def _repeating(whole: str, fixed: str, period: str) -> str:
    """`whole.fixed(period)(period)...` as an exact fraction."""
    base = int(whole or "0")
    scale = 10 ** len(fixed)
    value = Fraction(base) + Fraction(int(fixed or "0"), scale) + Fraction(int(period), scale * (10 ** len(period) - 1))
    return f"\\frac{{{value.numerator}}}{{{value.denominator}}}"


def _period(digits: str) -> tuple[str, str] | None:
    """(fixed part, repeating block) when `digits` ends with a block repeated at least twice."""
    for size in range(1, min(6, len(digits) // 2) + 1):
        block = digits[-size:]
        count, end = 0, len(digits)
        while end - size >= 0 and digits[end - size : end] == block:
            count, end = count + 1, end - size
        if count >= 2:
            return digits[:end], block
    return None


def _repeating_decimals(text: str) -> str:
    if "." not in text:
        return text
    if "\\overline" in text or "\\bar" in text or "\\dot" in text:
        text = _OVERLINE.sub(lambda m: _repeating(m.group(1), m.group(2), m.group(3)), text)
    if "\\dot" in text:

        def dots(m: re.Match) -> str:
            body = m.group(2)
            j = body.find("\\dot")
            if j < 0:
                return m.group(0)
            fixed, marked = body[:j], re.findall(r"\d", body[j:])
            return _repeating(m.group(1), fixed, "".join(marked))

        text = _DOTS.sub(dots, text)
    if ".(" in text:
        text = _PAREN.sub(lambda m: _repeating(m.group(1), m.group(2), m.group(3)), text)
    if "..." not in text and "dots" not in text and "…" not in text:
        return text

    def ellipsis(m: re.Match) -> str:
        found = _period(m.group(2))
        return f"{m.group(1)}.{m.group(2)}" if found is None else _repeating(m.group(1), *found)

    return _ELLIPSIS.sub(ellipsis, text)


_MIXED = re.compile(r"(?<![\d.,/^_{])(-?)(\d+)[ \t]+(\d+)\s*/\s*(\d+)(?![\d.^/])")


def _mixed_numbers(text: str) -> str:
    def mixed(m: re.Match) -> str:
        sign, whole, num, den = m.groups()
        if not 0 < int(num) < int(den):
            return m.group(0)
        number = f"{whole}\\frac{{{num}}}{{{den}}}"
        return f"-({number})" if sign else number

    return _MIXED.sub(mixed, text) if "/" in text else text


_BASE = re.compile(r"(?<![\w.])(?:\(([0-9A-Za-z]+)\)|([0-9A-Za-z]+))_\s*(?:\{\s*\(?(\d{1,2})\)?\s*\}|(\d))(?![\w{])")
_BASE_NUMERAL = re.compile(r"^([0-9A-Za-z]+)_(?:(\d)|\{(\d{1,2})\})$")
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def _bases(text: str) -> str:
    def base(m: re.Match) -> str:
        digits, radix = m.group(1) or m.group(2), m.group(3) or m.group(4)
        if not digits[0].isdigit() and m.group(1) is None:
            return m.group(0)  # `x_{2}` is a subscripted name, not a numeral
        return f"{digits}_{radix}"

    return _BASE.sub(base, text) if "_" in text else text


def base_numeral(norm: str) -> tuple[str, int] | None:
    """(digits, base) of a numeral written with a base subscript (`1011_2`, `1011_{2}`), when
    its digits are valid in that base; else None."""
    m = _BASE_NUMERAL.match(norm)
    if not m:
        return None
    digits, radix = m.group(1).lower().lstrip("0") or "0", int(m.group(2) or m.group(3))
    if not any(c.isdigit() for c in digits):
        return None  # `a_16` is a subscripted name
    if not 2 <= radix <= 36 or any(_DIGITS.find(c) < 0 or _DIGITS.find(c) >= radix for c in digits):
        return None
    return digits, radix


_TRIG = re.compile(r"(?:\\|(?<![A-Za-z]))(?:sin|cos|tan|cot|sec|csc)(?![A-Za-z])")
_DEGREE_NUMBER = re.compile(r"(\d+(?:\.\d+)?)\s*(?:\^\s*\{?\s*\\circ\s*\}?|°|\\degree(?![a-zA-Z]))")
_TRIG_POWER = re.compile(r"\s*\^\s*(?:\{[^{}]*\}|\S)")
_BARE_ARG = re.compile(r"\s*[-\w.]*(?:\s*(?:\^\s*\{?\s*\\circ\s*\}?|°|\\degree))?")


def trig_degrees(text: str) -> str:
    """Degree-marked numbers inside a trigonometric argument as radians (`normalize` calls it
    after sizing commands are gone and before degree signs are dropped)."""
    if "\\circ" not in text and "°" not in text and "\\degree" not in text:
        return text
    out, pos = [], 0
    for m in _TRIG.finditer(text):
        if m.start() < pos:
            continue
        i = m.end()
        power = _TRIG_POWER.match(text, i)
        if power:
            i = power.end()
        while i < len(text) and text[i] == " ":
            i += 1
        if i < len(text) and text[i] in "({":
            end = closing_brace(text, i) if text[i] == "{" else _closing_paren(text, i)
            if end < 0:
                continue
            end += 1
        else:
            end = _BARE_ARG.match(text, i).end()
        arg = _DEGREE_NUMBER.sub(lambda d: f"(\\frac{{{d.group(1)}\\pi}}{{180}})", text[i:end])
        out.append(text[pos:i] + arg)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _closing_paren(text: str, start: int) -> int:
    depth = 0
    for j in range(start, len(text)):
        if text[j] == "(":
            depth += 1
        elif text[j] == ")":
            depth -= 1
            if depth == 0:
                return j
    return -1


_TRIGGER = re.compile(
    r"\*\*|\^\s*-?\d\d|\\[lr]angle|\+/?-|\s!=\s|\.\.\.|dots|\\(?:overline|bar|dot)|\.\(|\d[eE][+-]?\d|\d[ \t]+\d+\s*/|_"
    r"|(?<![\\A-Za-z])(?:inf|infinity|Infinity|oo|arcsin|arccos|arctan|asin|acos|atan|sinh|cosh|tanh|sin|cos|tan|cot|"
    r"sec|csc|sqrt|ln|log|exp|abs|pi|alpha|beta|gamma|delta|epsilon|theta|lambda|sigma|omega|phi|rho|tau)(?![A-Za-z])"
)
"""Anything some rule below may rewrite; most answers have none and cost one scan."""


def rewrite(text: str) -> str:
    """The text with the notations above in the LaTeX the parser reads (see the module docstring)."""
    text = decode_entities(text)  # `&times;`, `&pi;`: the characters, read by the rules below
    if text.isascii() and not _TRIGGER.search(text):
        return text
    # plain or LaTeX is read without presentational markup: `3^125\hfill(3a)` is the plain `3^125`
    plain = not _LATEX.search(text) or not _LATEX.search(strip_markup(text))
    text = _unicode(text)
    if "\\langle" in text and "\\rangle" in text:
        text = _ANGLE.sub(lambda m: "(" if m.group(0).startswith("\\l") else ")", text)
    if "**" in text:
        text = _PY_POWER.sub(lambda m: "^{" + m.group(1).replace(" ", "") + "}", text).replace("**", "^")
    if "^" in text:  # plain text: `x^12` is x to the 12th; LaTeX: x^1*2, made explicit
        text = _PLAIN_POWER.sub(r"^{\1}", text) if plain else _TEX_POWER.sub(r"^{\1}\2", text)
    if "nf" in text or "oo" in text:
        text = _INFINITY.sub(r"\\infty ", text)
    text = _NAMES.sub(lambda m: "\\" + m.group(0), text)
    if "+-" in text or "+/-" in text:
        text = _PLUS_MINUS.sub(r"\\pm ", text)
    if plain and " != " in text:
        text = text.replace(" != ", " \\neq ")
    text = _repeating_decimals(text)
    text = _e_notation(text)
    text = _mixed_numbers(text)
    return _bases(text)
