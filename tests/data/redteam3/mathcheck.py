"""Tiny stdlib-only LaTeX arithmetic parser + numeric evaluator used by redteam3.py
to certify that wrong fills are really non-equivalent and right fills really equivalent."""
import re, cmath, math, random

GREEK = set('alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi rho sigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Sigma Phi Psi Omega ell'.split())
FUNCS = {'sin': cmath.sin, 'cos': cmath.cos, 'tan': cmath.tan, 'ln': cmath.log, 'log': None,
         'exp': cmath.exp, 'sec': lambda z: 1/cmath.cos(z), 'csc': lambda z: 1/cmath.sin(z),
         'cot': lambda z: 1/cmath.tan(z)}
RELS = {'=': '=', '<': '<', '>': '>', r'\le': r'\le', r'\ge': r'\ge', r'\ne': r'\ne', r'\lt': '<', r'\gt': '>'}
FLIP = {'=': '=', '<': '>', '>': '<', r'\le': r'\ge', r'\ge': r'\le', r'\ne': r'\ne'}

class PErr(Exception):
    pass

def preprocess(s):
    s = s.strip()
    s = re.sub(r'\\mathbf\{([0-9 ]+)\}', lambda m: '{' + m.group(1).replace(' ', '') + '}', s)
    s = re.sub(r'\\(mathbf|mathrm|boldsymbol|displaystyle)\b', '', s)
    s = re.sub(r'\\left\s*\.', '', s)
    s = re.sub(r'\\right\s*\.', '', s)
    s = re.sub(r'\\(left|right|bigl|bigr|Bigl|Bigr|big|Big)(?![a-zA-Z])', '', s)
    s = re.sub(r'\\[,;! ]', ' ', s).replace('~', ' ')
    s = re.sub(r'\\[dt]frac(?![a-zA-Z])', r'\\frac', s)
    s = re.sub(r'\\(leqslant|leq)(?![a-zA-Z])', r'\\le', s)
    s = re.sub(r'\\(geqslant|geq)(?![a-zA-Z])', r'\\ge', s)
    s = re.sub(r'\\neq(?![a-zA-Z])', r'\\ne', s)
    s = s.replace('\u2264', r'\le ').replace('\u2265', r'\ge ').replace('\u00b7', r'\cdot ').replace('\u00d7', r'\times ').replace('\u03c0', r'\pi ')
    s = re.sub(r'\\begin\{aligned\}|\\end\{aligned\}|&', ' ', s)
    s = re.sub(r'[.,]\s*$', '', s)
    return s

TOK = re.compile(r'\\[a-zA-Z]+|\\.|\d+(?:\.\d+)?|[a-zA-Z]|\S')

def tokenize(s):
    return TOK.findall(s)

class Parser:
    def __init__(self, toks):
        self.t = toks; self.i = 0; self.absd = 0
    def peek(self):
        return self.t[self.i] if self.i < len(self.t) else None
    def nxt(self):
        tok = self.peek()
        if tok is None: raise PErr('eof')
        self.i += 1; return tok
    def expect(self, x):
        if self.nxt() != x: raise PErr('expected ' + x)
    def chain(self):
        exprs = [self.expr()]; ops = []
        while self.peek() in RELS:
            ops.append(RELS[self.nxt()]); exprs.append(self.expr())
        if self.peek() is not None: raise PErr('trailing ' + str(self.peek()))
        return exprs, ops
    def expr(self):
        terms = []
        sign = 1
        if self.peek() in ('+', '-'):
            sign = -1 if self.nxt() == '-' else 1
        terms.append((sign, self.term()))
        while self.peek() in ('+', '-'):
            sign = -1 if self.nxt() == '-' else 1
            terms.append((sign, self.term()))
        return ('add', terms) if len(terms) > 1 or terms[0][0] < 0 else terms[0][1]
    def can_start(self, tok):
        if tok is None: return False
        if tok in ('(', '[', '{'): return True
        if tok == '|': return self.absd == 0
        if re.fullmatch(r'[a-zA-Z]', tok): return True
        if tok.startswith('\\'):
            n = tok[1:]
            return n in GREEK or n in FUNCS or n in ('frac', 'sqrt', 'pi')
        return False
    def term(self):
        fs = [self.unary()]
        while True:
            tok = self.peek()
            if tok in (r'\cdot', r'\times', '*'):
                self.nxt(); fs.append(self.unary())
            elif tok in ('/', r'\div'):
                self.nxt(); fs.append(('inv', self.unary()))
            elif self.can_start(tok):
                fs.append(self.power())
            else:
                break
        return ('mul', fs) if len(fs) > 1 else fs[0]
    def unary(self):
        if self.peek() == '-':
            self.nxt(); return ('neg', self.unary())
        if self.peek() == '+':
            self.nxt(); return self.unary()
        return self.power()
    def group(self):
        tok = self.peek()
        if tok == '{':
            self.nxt(); e = self.expr(); self.expect('}'); return e
        tok = self.nxt()
        if re.fullmatch(r'\d+(\.\d+)?', tok):
            if len(tok) > 1 and '.' not in tok:
                self.t[self.i - 1:self.i] = [tok[0], tok[1:]]
                return ('num', float(tok[0]))
            return ('num', float(tok))
        self.i -= 1
        return self.atom()
    def power(self):
        a = self.atom()
        while True:
            tok = self.peek()
            if tok == '^':
                self.nxt(); a = ('pow', a, self.group())
            elif tok == '!':
                self.nxt(); a = ('fact', a)
            else:
                break
        return a
    def atom(self):
        tok = self.nxt()
        if re.fullmatch(r'\d+(\.\d+)?', tok):
            return ('num', float(tok))
        if re.fullmatch(r'[a-zA-Z]', tok):
            name = tok
            if self.peek() == '_':
                self.nxt(); name += '_' + self.rawgroup()
            return ('var', name)
        if tok in ('(', '['):
            close = ')' if tok == '(' else ']'
            save = self.absd; self.absd = 0
            e = self.expr(); self.expect(close); self.absd = save
            return e
        if tok == '{':
            save = self.absd; self.absd = 0
            e = self.expr(); self.expect('}'); self.absd = save
            return e
        if tok == '|':
            self.absd += 1
            e = self.expr(); self.expect('|'); self.absd -= 1
            return ('abs', e)
        if tok.startswith('\\'):
            n = tok[1:]
            if n == 'pi': return ('num', math.pi)
            if n in GREEK:
                name = n
                if self.peek() == '_':
                    self.nxt(); name += '_' + self.rawgroup()
                return ('var', name)
            if n == 'frac':
                a = self.group(); b = self.group(); return ('mul', [a, ('inv', b)])
            if n == 'sqrt':
                idx = None
                if self.peek() == '[':
                    self.nxt(); idx = self.expr(); self.expect(']')
                a = self.group()
                return ('pow', a, ('inv', idx) if idx else ('num', 0.5))
            if n in FUNCS:
                ex = None; base = None
                if self.peek() == '_' and n == 'log':
                    self.nxt(); base = self.group()
                if self.peek() == '^':
                    self.nxt(); ex = self.group()
                if self.peek() == '_' and n == 'log' and base is None:
                    self.nxt(); base = self.group()
                if self.peek() in ('(', '{'):
                    arg = self.power()
                else:
                    fs = [self.power()]
                    while self.peek() is not None and (re.fullmatch(r'[a-zA-Z]|\d+(\.\d+)?', self.peek()) or (self.peek().startswith('\\') and self.peek()[1:] in GREEK | {'pi'})):
                        fs.append(self.power())
                    arg = ('mul', fs) if len(fs) > 1 else fs[0]
                node = ('func', n, arg, base)
                return ('pow', node, ex) if ex is not None else node
        raise PErr('bad token ' + tok)
    def rawgroup(self):
        tok = self.nxt()
        if tok != '{':
            return tok
        depth = 1; out = []
        while True:
            tok = self.nxt()
            if tok == '{': depth += 1
            elif tok == '}':
                depth -= 1
                if depth == 0: break
            out.append(tok)
        return ''.join(out)

def parse(s):
    s = preprocess(s)
    if not s: raise PErr('empty')
    return Parser(tokenize(s)).chain()

def free_vars(node, acc=None):
    if acc is None: acc = set()
    k = node[0]
    if k == 'var': acc.add(node[1])
    elif k == 'num': pass
    elif k == 'add':
        for _, t in node[1]: free_vars(t, acc)
    elif k == 'mul':
        for t in node[1]: free_vars(t, acc)
    elif k in ('neg', 'inv', 'abs', 'fact'): free_vars(node[1], acc)
    elif k == 'pow': free_vars(node[1], acc); free_vars(node[2], acc)
    elif k == 'func':
        free_vars(node[2], acc)
        if node[3] is not None: free_vars(node[3], acc)
    return acc

def ev(node, env):
    k = node[0]
    if k == 'num': return complex(node[1])
    if k == 'var': return env[node[1]]
    if k == 'add': return sum(s * ev(t, env) for s, t in node[1])
    if k == 'mul':
        r = complex(1)
        for t in node[1]: r *= ev(t, env)
        return r
    if k == 'neg': return -ev(node[1], env)
    if k == 'inv': return 1 / ev(node[1], env)
    if k == 'abs': return complex(abs(ev(node[1], env)))
    if k == 'fact':
        v = ev(node[1], env)
        if abs(v.imag) > 1e-9 or abs(v.real - round(v.real)) > 1e-9 or v.real < 0 or v.real > 170:
            raise PErr('fact')
        return complex(math.factorial(int(round(v.real))))
    if k == 'pow':
        b = ev(node[1], env); e = ev(node[2], env)
        if b == 0:
            if e.real > 0: return complex(0)
            raise PErr('0pow')
        if abs(e.imag) < 1e-12 and abs(e.real - round(e.real)) < 1e-12 and abs(e.real) < 400:
            return b ** int(round(e.real))
        return b ** e
    if k == 'func':
        a = ev(node[2], env)
        if node[1] == 'log':
            base = ev(node[3], env) if node[3] is not None else complex(10)
            return cmath.log(a) / cmath.log(base)
        return FUNCS[node[1]](a)
    raise PErr('node')

def _envs(vars_, n=6, seed=12345):
    rng = random.Random(seed)
    vs = sorted(vars_)
    return [{v: complex(rng.uniform(0.35, 2.65)) for v in vs} for _ in range(n)]

def _close(a, b):
    return abs(a - b) <= 1e-7 * max(1.0, abs(a), abs(b))

def values(chain, envs):
    exprs, _ = chain
    out = []
    for env in envs:
        row = []
        for e in exprs:
            v = ev(e, env)
            if not (math.isfinite(v.real) and math.isfinite(v.imag)): raise PErr('nonfinite')
            row.append(v)
        out.append(row)
    return out

def compare(a, b):
    """Return True (surely equivalent), False (surely different) or None (cannot tell)."""
    if norm(a) == norm(b): return True
    try:
        ca = parse(a); cb = parse(b)
        V = set()
        for e in ca[0] + cb[0]: free_vars(e, V)
        envs = _envs(V)
        va = values(ca, envs); vb = values(cb, envs)
    except (PErr, ZeroDivisionError, OverflowError, ValueError, KeyError, IndexError, RecursionError):
        return None
    opsa, opsb = ca[1], cb[1]
    def same(x, y, rev=False):
        for ra, rb in zip(x, y):
            rb2 = rb[::-1] if rev else rb
            if len(ra) != len(rb2) or not all(_close(p, q) for p, q in zip(ra, rb2)): return False
        return True
    if opsa == opsb and len(ca[0]) == len(cb[0]) and same(va, vb): return True
    if [FLIP[o] for o in opsb[::-1]] == opsa and len(ca[0]) == len(cb[0]) and same(va, vb, True): return True
    if opsa == ['='] and opsb == ['=']:
        da = [r[0] - r[1] for r in va]; db = [r[0] - r[1] for r in vb]
        if all(abs(x) > 1e-9 for x in da):
            ratios = [y / x for x, y in zip(da, db)]
            if all(_close(ratios[0], r) for r in ratios) and abs(ratios[0]) > 1e-9: return True
        elif all(abs(x) < 1e-12 for x in da) and all(abs(y) < 1e-12 for y in db) and V and not free_vars_any(ca) and not free_vars_any(cb):
            pass
    return False

def free_vars_any(chain):
    V = set()
    for e in chain[0]: free_vars(e, V)
    return bool(V)

def parseable(s):
    try:
        c = parse(s)
        V = set()
        for e in c[0]: free_vars(e, V)
        values(c, _envs(V))
        return True
    except Exception:
        return False

def norm(s):
    s = preprocess(s)
    return re.sub(r'\s+', '', s)
