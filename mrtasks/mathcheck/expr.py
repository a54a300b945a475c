"""A small, safe evaluator for LaTeX math: parse once into a tuple AST, evaluate at points.

It decides most answer comparisons without sympy: exact rationals where possible (so `0.5`
equals `\\frac{1}{2}` and `0.333` does not equal `\\frac13`), floats for `\\pi`, roots and
functions, and random probe points for free variables (two expressions that agree at several
generic points are taken as equal). Nothing is ever `eval`-ed, and every size is bounded:
huge powers, factorials and nesting raise `ExprError` instead of hanging.

Policy beyond LaTeX: plain function names (`sqrt(2)`, `abs(t)`, `atan(1)`, `factorial(n)`) are
their commands; `|x||y|` is |x|*|y| (inside a bar group a `|` closes it); `[...]` inside an
expression is a parenthesis. Odd roots of negative numbers are real (`\\sqrt[3]{-8} = -2`,
`(-8)^{2/3} = 4`); even ones are undefined, except where complex numbers are in play. At probe
points factorials and binomials are the Gamma function (`(k+1)! = (k+1) k!`), exact at small
integers. `same_value` reads the letter `i` as the imaginary unit (`(1+i)^2 = 2i`, `e^{i\\pi} =
-1`) and, when no real probe family evaluates, tries complex intermediate values (a True there
is kept, a False is not).
"""

from __future__ import annotations

import cmath
import math
import re
from fractions import Fraction

Value = Fraction | float | complex
Node = tuple

MAX_LEN = 400
MAX_DEPTH = 40
MAX_BITS = 20_000
MAX_FACTORIAL = 170


class ExprError(ValueError):
    """The text is outside the supported grammar, or evaluating it would be unbounded."""


class ExprTooLarge(ExprError):
    """Evaluating would take unbounded work (huge powers, factorials, binomials): sympy would hang
    on it too, so callers never hand such text to the sympy tier."""


_FUNCS = {
    "sin": math.sin, "cos": math.cos, "tan": math.tan,
    "cot": lambda x: 1 / math.tan(x), "sec": lambda x: 1 / math.cos(x), "csc": lambda x: 1 / math.sin(x),
    "arcsin": math.asin, "arccos": math.acos, "arctan": math.atan,
    "sinh": math.sinh, "cosh": math.cosh, "tanh": math.tanh,
    "ln": math.log, "log": math.log, "exp": math.exp,
}  # fmt: skip
_CFUNCS = {
    "sin": cmath.sin, "cos": cmath.cos, "tan": cmath.tan,
    "cot": lambda z: 1 / cmath.tan(z), "sec": lambda z: 1 / cmath.cos(z), "csc": lambda z: 1 / cmath.sin(z),
    "arcsin": cmath.asin, "arccos": cmath.acos, "arctan": cmath.atan,
    "sinh": cmath.sinh, "cosh": cmath.cosh, "tanh": cmath.tanh,
    "ln": cmath.log, "log": cmath.log, "exp": cmath.exp,
}  # fmt: skip
"""Complex arguments (only where the imaginary unit `i` is bound, see `same_value`)."""
_ALIASES = {"atan": "arctan", "asin": "arcsin", "acos": "arccos", "arctg": "arctan", "tg": "tan"}
_GREEK = {
    "alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta", "vartheta",
    "iota", "kappa", "lambda", "mu", "nu", "xi", "rho", "sigma", "tau", "upsilon", "phi", "varphi",
    "chi", "psi", "omega", "Gamma", "Delta", "Theta", "Lambda", "Xi", "Sigma", "Phi", "Psi", "Omega",
}  # fmt: skip
_WORD_FUNCS = "arcsin|arccos|arctan|asin|acos|atan|sinh|cosh|tanh|sin|cos|tan|cot|sec|csc|ln|log|exp|sqrt|pi|abs|factorial|cbrt"
"""Plain function names (`sqrt(2)`, `abs(t)`, `atan(1)`, `factorial(n)`) read as their commands."""
_TOKEN = re.compile(
    rf"(?P<hex>0[xX][0-9a-fA-F]+)|(?P<num>\d+\.?\d*|\.\d+)|(?P<cmd>\\[a-zA-Z]+|\\[{{}}|])"
    rf"|(?P<word>(?:{_WORD_FUNCS})(?![a-zA-Z]))|(?P<ch>\S)",
    re.ASCII,
)


def tokenize(text: str) -> list[str]:
    if len(text) > MAX_LEN:
        raise ExprError("too long")
    tokens = []
    for m in _TOKEN.finditer(text):
        tok = m.group(0)
        if m.lastgroup == "word":
            tok = "\\" + tok
        tokens.append(tok)
    return tokens


class _Parser:
    """Recursive descent over the tokens. Grammar (loosest first): sum, product (explicit or
    implicit), unary sign, power, postfix `!`, atom."""

    def __init__(self, tokens: list[str]):
        self.toks = tokens
        self.pos = 0
        self.depth = 0
        self.bars = 0  # open `|...|` groups: inside one a `|` closes, outside it opens a factor

    def peek(self) -> str | None:
        return self.toks[self.pos] if self.pos < len(self.toks) else None

    def take(self) -> str:
        tok = self.peek()
        if tok is None:
            raise ExprError("unexpected end")
        self.pos += 1
        return tok

    def expect(self, tok: str) -> None:
        if self.take() != tok:
            raise ExprError(f"expected {tok}")

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ExprError("nested too deeply")

    def parse(self) -> Node:
        node = self.sum()
        if self.peek() is not None:
            raise ExprError(f"unexpected {self.peek()!r}")
        return node

    def sum(self) -> Node:
        self.enter()
        node = self.product()
        while self.peek() in ("+", "-"):
            op = self.take()
            rhs = self.product()
            node = ("add", node, rhs if op == "+" else ("neg", rhs))
        self.depth -= 1
        return node

    def _starts_atom(self, tok: str | None) -> bool:
        if tok is None:
            return False
        if tok in ("(", "{", "|", "[") or tok[0].isdigit() or tok[0] == "." or tok[0].isalpha():
            return True
        return tok.startswith("\\") and tok not in ("\\cdot", "\\times", "\\div", "\\}", "\\pm", "\\mp")

    def product(self) -> Node:
        node = self.unary()
        while True:
            tok = self.peek()
            if tok in ("*", "\\cdot", "\\times"):
                self.take()
                node = ("mul", node, self.unary())
            elif tok in ("/", "\\div"):
                self.take()
                node = ("div", node, self.unary())
            elif self._starts_atom(tok) and (tok != "|" or not self.bars):  # `|x||y|` is |x|*|y|
                # a digit literal right before \frac{int}{int} is a mixed number: 2\frac12 = 5/2;
                # with a bracket between them it is a product: 3(\frac{1}{2}) = 3/2
                rhs = self.power()
                if node[0] == "num" and rhs[0] == "frac_lit" and node[1] >= 0 and tok == "\\frac":
                    node = ("add", node, rhs)
                else:
                    node = ("mul", node, rhs)
            else:
                return node

    def unary(self) -> Node:
        tok = self.peek()
        if tok == "-":
            self.take()
            return ("neg", self.unary())
        if tok == "+":
            self.take()
            return self.unary()
        return self.power()

    def power(self) -> Node:
        self.enter()
        base = self.postfix()
        if self.peek() == "^":
            self.take()
            base = ("pow", base, self.tex_arg(allow_sign=True))
        self.depth -= 1
        return base

    def postfix(self) -> Node:
        node = self.atom()
        while self.peek() == "!":
            self.take()
            node = ("fact", node)
        return node

    def tex_arg(self, allow_sign: bool = False) -> Node:
        """A LaTeX argument: `{...}` or a single character/token (`\\frac12`, `x^23` = x^2*3)."""
        tok = self.peek()
        if tok == "{":
            self.take()
            node = self.sum()
            self.expect("}")
            return node
        if allow_sign and tok == "-":
            self.take()
            return ("neg", self.tex_arg())
        if tok is not None and tok[0].isdigit() and len(tok) > 1 and "." not in tok:
            self.toks[self.pos] = tok[1:]
            return ("num", Fraction(int(tok[0])))
        return self.atom()

    def atom(self) -> Node:
        self.enter()
        tok = self.take()
        node: Node
        if tok[0].isdigit() or tok[0] == ".":
            node = ("num", Fraction(int(tok, 16)) if tok[:2] in ("0x", "0X") else Fraction(tok))
        elif tok in ("(", "{"):
            node = self.sum()
            self.expect(")" if tok == "(" else "}")
        elif tok == "|":
            self.bars += 1
            node = ("abs", self.sum())
            self.expect("|")
            self.bars -= 1
        elif tok == "[":  # a bracket used as a parenthesis inside an expression: `8[2\cos t]^2`
            node = self.sum()
            self.expect("]")
        elif tok.isalpha() and len(tok) == 1:
            node = ("const", math.e) if tok == "e" else ("var", tok + self.subscript())
        elif tok.startswith("\\"):
            node = self.command(tok[1:])
        else:
            raise ExprError(f"unsupported token {tok!r}")
        self.depth -= 1
        return node

    def subscript(self) -> str:
        if self.peek() != "_":
            return ""
        self.take()
        tok = self.take()
        if tok != "{":
            return "_{" + tok + "}"  # `x_2` is `x_{2}`
        parts = []
        while self.peek() not in ("}", None):
            parts.append(self.take())
        self.expect("}")
        return "_{" + "".join(parts) + "}"

    def command(self, name: str) -> Node:
        if name == "frac":
            num, den = self.tex_arg(), self.tex_arg()
            if num[0] == "num" and den[0] == "num":
                return ("frac_lit", num, den)
            return ("div", num, den)
        if name in ("binom", "dbinom", "tbinom"):
            return ("binom", self.tex_arg(), self.tex_arg())
        if name == "sqrt":
            index: Node = ("num", Fraction(2))
            if self.peek() == "[":
                self.take()
                index = self.sum()
                self.expect("]")
            return ("root", self.tex_arg(), index)
        if name == "pi":
            return ("const", math.pi)
        if name in ("abs", "factorial", "cbrt"):
            arg = self.atom() if self.peek() in ("(", "{") else self.power()
            return ("abs", arg) if name == "abs" else ("fact", arg) if name == "factorial" else ("root", arg, ("num", Fraction(3)))
        name = _ALIASES.get(name, name)
        if name == "infty":
            return ("const", math.inf)
        if name in _GREEK:
            return ("var", name + self.subscript())
        if name in _FUNCS:
            base: Node | None = None
            if name == "log" and self.peek() == "_":
                self.take()
                base = self.tex_arg()
            power = None
            if self.peek() == "^":
                self.take()
                power = self.tex_arg(allow_sign=True)
            arg = self.atom() if self.peek() in ("(", "{") else self.power()
            node: Node = ("func", name, arg)
            if base is not None:
                node = ("div", node, ("func", "ln", base))
            return ("pow", node, power) if power is not None else node
        raise ExprError(f"unsupported command \\{name}")


def parse(text: str) -> Node:
    """Parse normalized LaTeX (see `equivalence.normalize`) into an AST; raises ExprError."""
    try:
        return _Parser(tokenize(text)).parse()
    except ExprError:
        raise
    except RecursionError as exc:  # pragma: no cover - MAX_DEPTH keeps well below the limit
        raise ExprError("nested too deeply") from exc
    except (ValueError, TypeError, ArithmeticError, IndexError, KeyError) as exc:
        # `Fraction('.')`, a superscript digit, `0x` with no digits: outside the grammar
        raise ExprError(f"cannot parse: {exc}") from exc


def variables(node: Node) -> frozenset[str]:
    if node[0] == "var":
        return frozenset([node[1]])
    out: frozenset[str] = frozenset()
    for child in node[1:]:
        if isinstance(child, tuple):
            out |= variables(child)
    return out


def _check(value: Value) -> Value:
    if isinstance(value, Fraction):
        if max(value.numerator.bit_length(), value.denominator.bit_length()) > MAX_BITS:
            raise ExprTooLarge("number too large")
        return value
    if isinstance(value, complex):  # only where `i` is bound to the imaginary unit
        if cmath.isnan(value) or cmath.isinf(value):
            raise ExprError("not a finite number")
        return value
    if math.isnan(value):
        raise ExprError("not a real number")
    return value


def _complex_pow(base: Value, exp: Value) -> complex:
    if isinstance(exp, Fraction) and exp.denominator == 1 and abs(exp.numerator) <= 10_000:
        return complex(base) ** exp.numerator
    try:
        return complex(base) ** complex(exp)
    except (OverflowError, ZeroDivisionError) as exc:
        raise ExprError("power out of range") from exc


def _pow(base: Value, exp: Value) -> Value:
    if isinstance(base, complex) or isinstance(exp, complex):
        return _complex_pow(base, exp)
    if isinstance(exp, Fraction) and exp.denominator % 2 == 1 and exp.denominator > 1 and base < 0:
        # a real odd root of a negative number: (-8)^{1/3} = -2, (-8)^{2/3} = 4
        magnitude = _pow(-base, exp)
        return -magnitude if exp.numerator % 2 else magnitude
    if isinstance(exp, Fraction) and exp.denominator == 1:
        e = exp.numerator
        if isinstance(base, Fraction):
            if base in (0, 1, -1):
                if base == 0 and e < 0:
                    raise ExprError("division by zero")
                return base**e
            bits = max(base.numerator.bit_length(), base.denominator.bit_length())
            if bits * abs(e) <= MAX_BITS:
                return base**e
        if abs(e) > 10**6:
            raise ExprTooLarge("exponent too large")
        try:
            return float(base) ** e
        except (OverflowError, ZeroDivisionError) as exc:
            raise ExprTooLarge("power out of range") from exc
    try:
        result = float(base) ** float(exp)
    except (OverflowError, ZeroDivisionError) as exc:
        raise ExprError("power out of range") from exc
    if isinstance(result, complex):
        raise ExprError("complex power")
    return result


def evaluate(node: Node, env: dict[str, float]) -> Value:
    """Value of `node` with variables from `env`: a Fraction when exact, else a float."""
    kind = node[0]
    try:
        if kind == "num":
            return node[1]
        if kind == "const":
            return node[1]
        if kind == "var":
            return env[node[1]]
        if kind == "neg":
            return -evaluate(node[1], env)
        if kind == "add":
            return _check(evaluate(node[1], env) + evaluate(node[2], env))
        if kind == "mul":
            return _check(evaluate(node[1], env) * evaluate(node[2], env))
        if kind in ("div", "frac_lit"):
            return _check(evaluate(node[1], env) / evaluate(node[2], env))
        if kind == "pow":
            base, exp = evaluate(node[1], env), evaluate(node[2], env)
            if _complex_mode(env) and not isinstance(base, complex) and base < 0 and not _integer(exp):
                return _check(_complex_pow(base, exp))
            return _check(_pow(base, exp))
        if kind == "abs":
            return abs(evaluate(node[1], env))
        if kind == "root":
            radicand, index = evaluate(node[1], env), evaluate(node[2], env)
            if isinstance(radicand, complex) or isinstance(index, complex):
                return _check(_complex_pow(radicand, 1 / complex(index)))
            if index == 0:
                raise ExprError("root of index 0")
            if radicand < 0:
                if isinstance(index, Fraction) and index.denominator == 1 and index.numerator % 2:
                    return -_pow(-radicand, 1 / float(index))  # a real odd root: \sqrt[3]{-8} = -2
                if _complex_mode(env):  # \sqrt{-4} = 2i where complex numbers are in play
                    return _check(_complex_pow(radicand, 1 / complex(index)))
                raise ExprError("root of a negative number")
            if isinstance(radicand, Fraction) and index == 2:
                n, d = math.isqrt(radicand.numerator), math.isqrt(radicand.denominator)
                if n * n == radicand.numerator and d * d == radicand.denominator:
                    return Fraction(n, d)
            return _pow(radicand, 1 / float(index))
        if kind == "fact":
            value = evaluate(node[1], env)
            if _integer(value):
                if not 0 <= value <= MAX_FACTORIAL:
                    raise ExprTooLarge("factorial of a non-small integer")
                return Fraction(math.factorial(int(value)))
            return _gamma(value + 1)  # at a probe point: (k+1)! = (k+1) k! holds for the Gamma function
        if kind == "binom":
            n, k = evaluate(node[1], env), evaluate(node[2], env)
            if _integer(n) and _integer(k):
                if not all(0 <= v <= 10_000 for v in (n, k)):
                    raise ExprTooLarge("binomial of non-small integers")
                return Fraction(math.comb(int(n), int(k)))
            return _check(_gamma(n + 1) / (_gamma(k + 1) * _gamma(n - k + 1)))
        if kind == "func":
            arg = evaluate(node[2], env)
            if isinstance(arg, complex):
                return _check(_CFUNCS[node[1]](arg))
            if _complex_mode(env):
                try:
                    return _check(_FUNCS[node[1]](float(arg)))
                except ValueError:  # outside the real domain (`\ln(-1)`): the principal value
                    return _check(_CFUNCS[node[1]](complex(arg)))
            return _check(_FUNCS[node[1]](float(arg)))
    except (ZeroDivisionError, OverflowError, ValueError, TypeError, KeyError) as exc:
        if isinstance(exc, ExprError):
            raise
        raise ExprError(f"cannot evaluate: {exc}") from exc
    raise ExprError(f"unknown node {kind}")


COMPLEX = "\x00complex"
"""An environment key: evaluate with complex intermediate values (principal branches)."""


def _complex_mode(env: dict) -> bool:
    return COMPLEX in env or isinstance(env.get(IMAGINARY), complex)


def _integer(value: Value) -> bool:
    return isinstance(value, Fraction) and value.denominator == 1


def _gamma(value: Value) -> float:
    """The Gamma function at a real non-integer argument of moderate size (factorials and
    binomials at probe points); integers are exact above, poles and complex values raise."""
    if isinstance(value, complex) or not -MAX_FACTORIAL < value < MAX_FACTORIAL:
        raise ExprTooLarge("factorial of a non-small or complex number")
    return math.gamma(float(value))


PROBE_FAMILIES: tuple[dict, ...] = (
    {}, {"positive": True}, {"small": True}, {"positive": "large"}, {"positive": "tiny"}, {"positive": "negative"},
)  # fmt: skip
"""Where `same_value` probes, in order: generic points, then (when those leave the domain of a
logarithm, root, real power or inverse function) (2.5, 9.5), (-0.95, 0.95), (12, 40),
(0.02, 0.24) and (-9.5, -2.5): `\\sqrt{1-4a}` needs a < 1/4, `\\sqrt{T-3}` needs T >= 3."""


def probe_points(
    names: frozenset[str], count: int = 3, positive: bool | str = False, small: bool = False
) -> list[dict[str, float]]:
    """Deterministic generic points: distinct, non-integer, positive and negative values; with
    `positive`, values in (2.5, 9.5) instead (for logarithms, roots and real powers whose domain
    excludes the first family), or one of the families "large" (12, 40), "tiny" (0.02, 0.24),
    "negative" (-9.5, -2.5); with `small`, values in (-0.95, 0.95) (for `\\arcsin`, `\\arccos`
    and other functions defined near 0 only)."""
    ordered = sorted(names)
    points = []
    for k in range(count):
        point = {}
        for j, name in enumerate(ordered):
            frac = ((j + 1) * 0.6180339887498949 + (k + 1) * 0.4142135623730951) % 1.0
            if positive == "large":
                point[name] = 12.0 + 28.0 * frac
            elif positive == "tiny":
                point[name] = 0.02 + 0.22 * frac
            elif positive == "negative":
                point[name] = -(2.5 + 7.0 * frac)
            elif positive:
                point[name] = 2.5 + 7.0 * frac
            elif small:
                point[name] = (0.1 + 0.85 * frac) * (-1 if (j + k) % 3 == 2 else 1)
            else:
                point[name] = (0.35 + 1.9 * frac) * (-1 if (j + k) % 3 == 2 else 1)
        points.append(point)
    return points


def values_equal(a: Value, b: Value) -> bool:
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return a == b
    if isinstance(a, complex) or isinstance(b, complex):
        try:
            za, zb = complex(a), complex(b)
        except OverflowError:
            return False
        return abs(za - zb) <= 1e-9 * max(abs(za), abs(zb)) + 1e-12
    try:
        fa, fb = float(a), float(b)
    except OverflowError:  # an exact number beyond float range equals no float
        return False
    if math.isinf(fa) or math.isinf(fb):
        return fa == fb
    return math.isclose(fa, fb, rel_tol=1e-9, abs_tol=1e-12)


IMAGINARY = "i"
"""The letter `same_value` reads as the imaginary unit: `(1+i)^2` is `2i`, `e^{i\\pi}` is -1.
Other callers (relations, intervals) keep it a real variable; a real answer never contains it."""


def same_value(a: Node, b: Node) -> bool | None:
    """True/False when both evaluate at every probe point of one family (the generic points, else
    the positive ones, else the small ones), None when no family can be evaluated. The letter
    `IMAGINARY` is the imaginary unit here."""
    names = variables(a) | variables(b)
    unit = {IMAGINARY: 1j} if IMAGINARY in names else {}
    names -= unit.keys()
    if not names:
        try:
            return values_equal(evaluate(a, unit), evaluate(b, unit))
        except ExprError:
            return None
    for family in PROBE_FAMILIES:
        try:
            envs = [{**env, **unit} for env in probe_points(names, **family)]
            pairs = [(evaluate(a, env), evaluate(b, env)) for env in envs]
        except ExprTooLarge:
            return None
        except ExprError:
            continue  # outside the domain (`\\log(x-2)`, `m^r`): try the next family
        return all(values_equal(va, vb) for va, vb in pairs)
    # No real family evaluates (`\\sqrt{b^2-4ac}` is negative somewhere in every family): the same
    # expressions with complex intermediate values. Agreeing there shows them equal; disagreeing
    # shows nothing (principal branches may differ where the real values agree).
    try:
        envs = [{**env, **unit, COMPLEX: True} for env in probe_points(names)]
        if all(values_equal(evaluate(a, env), evaluate(b, env)) for env in envs):
            return True
    except ExprError:
        pass
    return None
