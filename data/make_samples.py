#!/usr/bin/env python3
"""Regenerate the shipped sample completions in `data/samples/`.

The files look like what a reasoning target model (Qwen3.6-style) writes when it answers prompts:
thinking traces in `reasoning_content` (or `reasoning`, or inline `<think>...</think>` in ShareGPT
data), code, maths, chat, multilingual text, tool definitions and agentic tool loops, multi-turn
history, system prompts, whitespace oddities, a few long samples, and about 5% bad records.

Deterministic (seeded) and standard-library only:

    python data/make_samples.py                 # writes data/samples/*.jsonl
    python data/make_samples.py --out /tmp/s    # somewhere else
    python data/make_samples.py --summary       # also print counts per file / shape / reason

The expected counts (records per file, bad records per reason) are listed in data/README.md;
`--summary` recomputes them from what it writes.
"""
from __future__ import annotations

import argparse
import json
import random
from collections import Counter
from fractions import Fraction
from pathlib import Path

SEED = 20260517
MODEL = "qwen3.6-27b"

# ----------------------------------------------------------------------------------------------
# Text banks: data/banks/<name>.json, one file a bank (edit those, then regenerate)
# ----------------------------------------------------------------------------------------------

BANKS = Path(__file__).resolve().parent / "banks"


def bank(name: str, tuples: bool = False):
    """The bank `data/banks/<name>.json`; `tuples` turns its rows (JSON lists) back into tuples."""
    path = BANKS / f"{name}.json"
    try: data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError: raise SystemExit(f"{path}: text bank missing; restore it with `git checkout {path}`")
    except json.JSONDecodeError as e: raise SystemExit(
        f"{path}: not valid JSON ({e}); fix the edit or `git checkout` it")
    return [tuple(row) for row in data] if tuples else data


SYSTEM_PROMPTS = bank("system_prompts")                   # system messages, some with stray whitespace
GREETING_HISTORY = bank("greeting_history", tuples=True)  # (user, assistant) opening exchanges
CODE_TASKS = bank("code_tasks")                           # {q: [phrasings], think, answer}
CHAT_TASKS = bank("chat_tasks")                           # same shape
MULTILINGUAL_TASKS = bank("multilingual_tasks")           # same shape
CITIES = bank("cities", tuples=True)                      # (city, country, temperature in C, sky)
CURRENCIES = bank("currencies", tuples=True)              # (base, quote, rate)
TOOLS = bank("tools")                                     # tool name -> OpenAI function schema
REASONING_FILLER = bank("reasoning_filler")               # sentences a thinking trace ends on

# ----------------------------------------------------------------------------------------------
# Helpers
# ----------------------------------------------------------------------------------------------


class Gen:
    """Holds the random generator and id counters so every file is reproducible."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.counter = Counter()

    def new_id(self, prefix: str, p_missing: float = 0.06):
        self.counter[prefix] += 1
        if self.rng.random() < p_missing:
            return None
        return f"{prefix}-{self.counter[prefix]:05d}"

    def call_id(self) -> str:
        return "call_" + "".join(self.rng.choice("0123456789abcdef") for _ in range(16))

    def pick(self, seq):
        return self.rng.choice(seq)

    def maybe(self, p: float) -> bool:
        return self.rng.random() < p

    def oddify(self, text: str) -> str:
        """Whitespace oddities real data has: leading/trailing blanks and newlines, CRLF, tabs."""
        kind = self.rng.randrange(5)
        if kind == 0:
            return "  " + text + "  "
        if kind == 1:
            return "\n\n" + text + "\n"
        if kind == 2:
            return text.replace("\n", "\r\n")
        if kind == 3:
            return "\t" + text + " \n \n"
        return text + "\u00a0"  # a trailing no-break space


def record(rid, source, **fields):
    rec = {}
    if rid is not None:
        rec["id"] = rid
    rec.update(fields)
    if source is not None:
        rec["source"] = source
    return rec


def tex_frac(f: Fraction) -> str:
    return str(f) if f.denominator == 1 else "\\frac{%d}{%d}" % (f.numerator, f.denominator)


def fmt_money(x) -> str:
    return f"{x:,.2f}"


# ----------------------------------------------------------------------------------------------
# Math problems (computed, so every instance is correct and distinct)
# ----------------------------------------------------------------------------------------------


def math_arith_series(g: Gen):
    a, d, n = g.rng.randint(1, 20), g.rng.randint(2, 9), g.rng.randint(12, 60)
    last = a + (n - 1) * d
    s = n * (2 * a + (n - 1) * d) // 2
    q = f"What is the sum of the first {n} terms of the arithmetic sequence {a}, {a + d}, {a + 2 * d}, ...?"
    think = (
        f"Okay, so I need the sum of the first {n} terms of an arithmetic sequence. The first term is a = {a} and the "
        f"common difference is d = {a + d} - {a} = {d}.\n\n"
        f"The formula is S_n = n/2 · (2a + (n - 1)d).\n\n"
        f"2a = {2 * a}. (n - 1)d = {n - 1} · {d} = {(n - 1) * d}. So 2a + (n - 1)d = {2 * a + (n - 1) * d}.\n\n"
        f"Then S = {n}/2 · {2 * a + (n - 1) * d} = {n * (2 * a + (n - 1) * d)}/2 = {s}.\n\n"
        f"Let me double-check with the other form. The last term is a + (n - 1)d = {a} + {(n - 1) * d} = {last}. "
        f"S = n(a + last)/2 = {n} · {a + last}/2 = {n * (a + last)}/2 = {s}. Same answer, good."
    )
    answer = (
        f"The sequence has first term $a = {a}$ and common difference $d = {d}$.\n\n"
        f"$$S_{{{n}}} = \\frac{{n}}{{2}}\\bigl(2a + (n-1)d\\bigr) = \\frac{{{n}}}{{2}}\\bigl({2 * a} + "
        f"{(n - 1) * d}\\bigr) = {s}$$\n\nCheck: the {n}th term is ${last}$, and $\\frac{{{n}({a} + {last})}}{{2}} = "
        f"{s}$.\n\n$$\\boxed{{{s}}}$$"
    )
    return q, think, answer


def math_gcd(g: Gen):
    k = g.rng.choice([6, 8, 9, 12, 14, 15, 18, 21, 24])
    x, y = k * g.rng.randint(7, 40), k * g.rng.randint(7, 40)
    if x == y:
        y += k
    a, b = max(x, y), min(x, y)
    steps, p, r = [], a, b
    while r:
        steps.append(f"{p} = {p // r} · {r} + {p % r}")
        p, r = r, p % r
    gcd = p
    lcm = a * b // gcd
    q = f"Find the greatest common divisor and the least common multiple of {x} and {y}."
    think = (
        "I'll use the Euclidean algorithm for the GCD and then lcm(a, b) = a·b / gcd(a, b).\n\n"
        + "\n".join(steps)
        + f"\n\nThe last non-zero remainder is {gcd}, so gcd({x}, {y}) = {gcd}.\n\n"
        f"lcm = {a} · {b} / {gcd} = {a * b} / {gcd} = {lcm}.\n\n"
        f"Sanity check: {lcm} / {x} = {lcm // x} and {lcm} / {y} = {lcm // y}, both whole numbers. Good."
    )
    answer = (
        "Using the Euclidean algorithm:\n\n" + "\n".join(f"- ${s}$" for s in steps)
        + f"\n\nso $\\gcd({x}, {y}) = {gcd}$, and\n\n$$\\operatorname{{lcm}}({x}, {y}) = \\frac{{{a} \\cdot "
        f"{b}}}{{{gcd}}} = {lcm}.$$\n\n**GCD = {gcd}, LCM = {lcm}.**"
    )
    return q, think, answer


def math_linear(g: Gen):
    x = g.rng.randint(-12, 15)
    a1 = g.rng.randint(3, 11)
    a2 = g.rng.randint(1, a1 - 1)
    b1 = g.rng.randint(-30, 30)
    b2 = a1 * x + b1 - a2 * x

    def side(a, b):
        return f"{a}x" + (f" + {b}" if b > 0 else f" - {-b}" if b < 0 else "")

    q = f"Solve for x: {side(a1, b1)} = {side(a2, b2)}"
    think = (
        f"Linear equation. Move the x terms to the left and the constants to the right.\n\n"
        f"{a1}x - {a2}x = {b2} - ({b1})\n{a1 - a2}x = {b2 - b1}\nx = {b2 - b1} / {a1 - a2} = {x}\n\n"
        f"Check: left side {a1}·{x} + ({b1}) = {a1 * x + b1}; right side {a2}·{x} + ({b2}) = {a2 * x + b2}. Equal, so "
        f"x = {x}."
    )
    answer = (
        f"Subtract ${a2}x$ from both sides and move the constant:\n\n"
        f"$$ {a1 - a2}x = {b2 - b1} \\quad\\Rightarrow\\quad x = {x} $$\n\n"
        f"Check: both sides equal ${a1 * x + b1}$ when $x = {x}$. So $\\boxed{{x = {x}}}$."
    )
    return q, think, answer


def math_compound(g: Gen):
    p = g.rng.choice([1000, 2500, 5000, 8000, 10000, 12000])
    r = g.rng.choice([2, 3, 4, 5, 6, 7])
    n = g.rng.randint(3, 6)
    lines, bal = [], Fraction(p)
    for year in range(1, n + 1):
        bal = bal * (100 + r) / 100
        lines.append(f"After year {year}: {float(bal):,.2f}")
    final = float(bal)
    q = f"If I invest ${p:,} at {r}% interest compounded annually, how much will I have after {n} years?"
    think = (
        f"Compound interest: A = P(1 + r)^n with P = {p}, r = {r / 100}, n = {n}.\n\n"
        f"(1.{r:02d})^{n} — let me just go year by year to avoid rounding mistakes.\n\n" + "\n".join(lines)
        + f"\n\nSo A ≈ {final:,.2f}. Interest earned = {final - p:,.2f}."
    )
    answer = (
        f"Use $A = P(1 + r)^n$:\n\n$$A = {p:,} \\times 1.{r:02d}^{{{n}}} \\approx {fmt_money(final)}$$\n\n"
        f"| year | balance |\n|---|---|\n"
        + "\n".join(f"| {i + 1} | ${l.split(': ')[1]} |" for i, l in enumerate(lines))
        + f"\n\nYou'd have about **${fmt_money(final)}**, i.e. ${fmt_money(final - p)} in interest."
    )
    return q, think, answer


def math_dice(g: Gen):
    k = g.rng.randint(3, 11)
    pairs = [(i, k - i) for i in range(1, 7) if 1 <= k - i <= 6]
    frac = Fraction(len(pairs), 36)
    q = f"Two fair six-sided dice are rolled. What is the probability that the sum is {k}?"
    think = (
        f"There are 6 × 6 = 36 equally likely ordered outcomes. I need the pairs (a, b) with a + b = {k}.\n\n"
        + ", ".join(f"({a},{b})" for a, b in pairs)
        + f"\n\nThat's {len(pairs)} outcomes. Probability = {len(pairs)}/36"
        + (f" = {frac}" if frac.denominator != 36 else "") + ".\n\n"
        f"Check with the formula for two dice: number of ways = 6 - |{k} - 7| = {6 - abs(k - 7)}. Matches."
    )
    answer = (
        f"Of the 36 equally likely outcomes, {len(pairs)} give a sum of {k}: "
        + ", ".join(f"({a},{b})" for a, b in pairs)
        + f".\n\n$$P(\\text{{sum}} = {k}) = \\frac{{{len(pairs)}}}{{36}}"
        + (f" = {tex_frac(frac)}" if frac.denominator != 36 else "")
        + f" \\approx {float(frac):.3f}$$"
    )
    return q, think, answer


def math_quadratic(g: Gen):
    r1, r2 = g.rng.randint(-9, 9), g.rng.randint(-9, 9)
    b, c = -(r1 + r2), r1 * r2

    def term(coef, var):
        if coef == 0:
            return ""
        sign = " + " if coef > 0 else " - "
        mag = abs(coef)
        return f"{sign}{'' if mag == 1 and var else mag}{var}"

    eq = f"x^2{term(b, 'x')}{term(c, '')} = 0"

    def factor(r):
        return "x" if r == 0 else f"(x - {r})" if r > 0 else f"(x + {-r})"

    factored = factor(r1) + factor(r2) if r1 else factor(r2) + factor(r1)
    disc = b * b - 4 * c
    q = f"Solve the quadratic equation {eq}."
    think = (
        f"Let me try factoring first. I need two numbers with product {c} and sum {-b}: {r1} and {r2} work, "
        f"since {r1} · {r2} = {c} and {r1} + {r2} = {r1 + r2}.\n\n"
        f"So {factored} = 0"
        + f".\n\nDouble-check with the discriminant: b² - 4ac = {b}² - 4·{c} = {disc}, √{disc} = {int(disc ** 0.5)}. "
        f"x = ({-b} ± {int(disc ** 0.5)}) / 2 gives {(-b + int(disc ** 0.5)) // 2} and {(-b - int(disc ** 0.5)) // 2}. "
        "Consistent."
    )
    roots = sorted({r1, r2})
    answer = (
        f"Factor: we need two numbers whose product is ${c}$ and whose sum is ${-b}$ — namely ${r1}$ and ${r2}$.\n\n"
        + f"$$ {factored} = 0 $$"
        + "\n\n"
        + (f"So $x = {roots[0]}$ or $x = {roots[1]}$." if len(roots) == 2
           else f"So the equation has the double root $x = {roots[0]}$.")
    )
    return q, think, answer


def math_percent(g: Gen):
    old = g.rng.choice([40, 64, 80, 120, 150, 250, 480, 900])
    pct = g.rng.choice([-35, -20, -12.5, -5, 8, 15, 25, 60])
    new = old * (1 + pct / 100)
    q = f"A product's price changed from ${old} to ${new:g}. What is the percentage change?"
    think = (
        f"Percentage change = (new - old) / old × 100.\n\nnew - old = {new:g} - {old} = {new - old:g}.\n"
        f"{new - old:g} / {old} = {(new - old) / old:g}. Times 100 = {pct:g}%.\n\n"
        f"So it's {'an increase' if pct > 0 else 'a decrease'} of {abs(pct):g}%."
    )
    answer = (
        f"$$\\frac{{{new:g} - {old}}}{{{old}}} \\times 100\\% = {pct:g}\\%$$\n\n"
        f"The price {'rose' if pct > 0 else 'fell'} by **{abs(pct):g}%**."
    )
    return q, think, answer


def math_last_digit(g: Gen):
    base, exp = g.rng.choice([2, 3, 7, 8, 13, 17, 27]), g.rng.randint(20, 2025)
    cycle, v = [], base % 10
    while v not in cycle:
        cycle.append(v)
        v = (v * base) % 10
    idx = (exp - 1) % len(cycle)
    digit = pow(base, exp, 10)
    q = f"What is the last digit of {base}^{exp}?"
    think = (
        f"The last digit of powers of {base} cycles. Let me list them: "
        + ", ".join(f"{base}^{i + 1} ends in {d}" for i, d in enumerate(cycle))
        + f", then it repeats. The cycle length is {len(cycle)}.\n\n"
        f"{exp} mod {len(cycle)} = {exp % len(cycle)}, so {base}^{exp} has the same last digit as {base}^{idx + 1}, "
        f"which is {cycle[idx]}.\n\nQuick check with modular exponentiation: {base}^{exp} mod 10 = {digit}. Agreed."
    )
    answer = (
        f"The last digits of powers of {base} repeat with period {len(cycle)}: {', '.join(map(str, cycle))}, …\n\n"
        f"Since ${exp} \\equiv {exp % len(cycle)} \\pmod{{{len(cycle)}}}$, the last digit is that of "
        f"${base}^{{{idx + 1}}}$:\n\n$$\\boxed{{{digit}}}$$"
    )
    return q, think, answer


def math_choose(g: Gen):
    n, k = g.rng.randint(8, 16), g.rng.randint(2, 5)
    from math import comb, factorial

    val = comb(n, k)
    cdot = " \\cdot "
    q = f"In how many ways can a committee of {k} people be chosen from a group of {n}?"
    think = (
        f"Order doesn't matter in a committee, so this is a combination: C({n}, {k}) = {n}! / ({k}! · {n - k}!).\n\n"
        f"Compute as a falling product: {' · '.join(str(n - i) for i in range(k))} / {k}! = "
        f"{eval('*'.join(str(n - i) for i in range(k)))} / {factorial(k)} = {val}."
    )
    answer = (
        f"Order doesn't matter, so use combinations:\n\n"
        f"$$\\binom{{{n}}}{{{k}}} = \\frac{{{cdot.join(str(n - i) for i in range(k))}}}{{{k}!}} = {val}$$\n\n"
        f"There are **{val:,}** possible committees."
    )
    return q, think, answer


def math_round_trip(g: Gen):
    v1, v2 = g.rng.choice([(30, 60), (40, 60), (50, 75), (60, 90), (48, 72), (20, 30), (45, 90)])
    d = g.rng.choice([60, 90, 120, 180])
    avg = Fraction(2 * v1 * v2, v1 + v2)
    q = (f"A cyclist rides {d} km to a town at {v1} km/h and returns the same way at {v2} km/h. "
         f"What is the average speed for the whole trip?")
    think = (
        f"Tempting answer: ({v1} + {v2})/2 = {(v1 + v2) / 2:g}. But that's wrong because more time is spent at the "
        f"slower speed. Average speed = total distance / total time.\n\n"
        f"Time out = {d}/{v1} = {d / v1:g} h. Time back = {d}/{v2} = {d / v2:g} h. Total time = {d / v1 + d / v2:g} "
        f"h.\nTotal distance = {2 * d} km. Average = {2 * d} / {d / v1 + d / v2:g} = {float(avg):g} km/h.\n\n"
        f"This is the harmonic mean 2·{v1}·{v2}/({v1}+{v2}) = {2 * v1 * v2}/{v1 + v2} = {float(avg):g}. Note that the "
        "distance cancels."
    )
    answer = (
        f"Average speed is total distance over total time — not the mean of the two speeds.\n\n"
        f"- Out: {d} km ÷ {v1} km/h = {d / v1:g} h\n- Back: {d} km ÷ {v2} km/h = {d / v2:g} h\n\n"
        f"$$\\bar v = \\frac{{{2 * d}\\text{{ km}}}}{{{d / v1 + d / v2:g}\\text{{ h}}}} = {float(avg):g}\\text{{ "
        f"km/h}}$$\n\n(the harmonic mean of {v1} and {v2}; the distance doesn't matter)."
    )
    return q, think, answer


MATH_GENERATORS = [math_arith_series, math_gcd, math_linear, math_compound, math_dice, math_quadratic,
                   math_percent, math_last_digit, math_choose, math_round_trip]


def math_collatz_long(g: Gen, n: int):
    """A long, fully correct reasoning trace (several thousand tokens)."""
    seq, v = [n], n
    while v != 1:
        v = v // 2 if v % 2 == 0 else 3 * v + 1
        seq.append(v)
    lines = []
    for i, (a, b) in enumerate(zip(seq, seq[1:]), 1):
        if a % 2 == 0:
            lines.append(f"Step {i}: {a} is even, so halve it: {a} / 2 = {b}.")
        else:
            lines.append(f"Step {i}: {a} is odd, so 3 · {a} + 1 = {b}.")
    peak = max(seq)
    q = (f"Starting from {n}, apply the Collatz rule (halve if even, otherwise 3n + 1) until you reach 1. "
         f"How many steps does it take, and what is the largest number reached? Please show every step.")
    think = (
        f"The user wants the full Collatz trajectory of {n}, the number of steps and the maximum. I'll go carefully, "
        f"one step at a time, because one arithmetic slip ruins everything after it.\n\n" + "\n".join(lines)
        + f"\n\nWe reached 1 after {len(seq) - 1} steps.\n\nNow the maximum: scanning the values, the largest is "
        f"{peak}. Let me re-verify a few of the odd steps where mistakes are most likely: "
        + "; ".join(f"3 · {a} + 1 = {3 * a + 1}" for a in [s for s in seq if s % 2][:6])
        + ". All correct.\n\n" + g.pick(REASONING_FILLER)
    )
    answer = (
        f"Starting at **{n}**, the sequence reaches 1 after **{len(seq) - 1} steps**, and the largest value along the "
        f"way is **{peak:,}**.\n\nThe full trajectory:\n\n```\n" + " → ".join(map(str, seq)) + "\n```"
    )
    return q, think, answer


# ----------------------------------------------------------------------------------------------
# Parametric code questions
# ----------------------------------------------------------------------------------------------


def code_slice(g: Gen):
    lst = [g.rng.randint(0, 99) for _ in range(g.rng.randint(7, 12))]
    start = g.rng.choice([None, 1, 2, -3, -5])
    stop = g.rng.choice([None, -1, 6, 9])
    step = g.rng.choice([None, 2, -1, -2, 3])
    sl = slice(start, stop, step)
    idx = list(range(*sl.indices(len(lst))))
    res = lst[sl]

    def s(v):
        return "" if v is None else str(v)

    expr = f"a[{s(start)}:{s(stop)}" + (f":{step}]" if step is not None else "]")
    q = f"What does this print?\n\n```python\na = {lst}\nprint({expr})\n```"
    norm = sl.indices(len(lst))
    think = (
        f"The list has {len(lst)} elements, indices 0..{len(lst) - 1}. For {expr}, Python normalises the slice to "
        f"start={norm[0]}, stop={norm[1]}, step={norm[2]} (negative indices count from the end, missing ones default "
        f"depending on the sign of the step).\n\n"
        f"So the indices visited are {idx}."
        + (f" The values there: " + ", ".join(f"a[{i}] = {lst[i]}" for i in idx) + "." if idx else " That's empty.")
        + f"\n\nResult: {res}."
    )
    answer = (
        f"It prints:\n\n```\n{res}\n```\n\n"
        f"`{expr}` is equivalent to `a[{norm[0]}:{norm[1]}:{norm[2]}]` for a list of length {len(lst)}, "
        f"so it takes the elements at indices {idx if idx else '(none)'}."
    )
    return q, think, answer


SQL_SCHEMAS = [
    ("orders", "customer_id", "total", "customers"),
    ("page_views", "country", "duration_ms", "countries"),
    ("tickets", "assignee", "resolution_hours", "assignees"),
    ("payments", "merchant_id", "amount_cents", "merchants"),
    ("rides", "driver_id", "distance_km", "drivers"),
]


def code_sql_agg(g: Gen):
    table, key, val, plural = g.pick(SQL_SCHEMAS)
    agg = g.pick(["avg", "sum", "max"])
    n = g.rng.randint(3, 20)
    word = {"avg": "average", "sum": "total", "max": "maximum"}[agg]
    q = (f"Write a SQL query that returns the {n} {plural} with the highest {word} {val} in the `{table}` table, only "
         "counting rows from the last 30 days.")
    think = (
        f"Group by {key}, aggregate {agg}({val}), filter the last 30 days in WHERE (before grouping, so it's a row "
        "filter). I need a timestamp column — I'll assume created_at and say so. Order by the aggregate descending, "
        f"limit {n}. NULLs: {agg} ignores NULL values; if a group has only NULLs, the result is NULL and in PostgreSQL "
        f"NULLs sort first in DESC order, so add NULLS LAST."
    )
    answer = (
        f"Assuming `{table}` has a `created_at` timestamp column:\n\n"
        f"```sql\nSELECT {key},\n       {agg}({val}) AS {word}_{val}\nFROM {table}\n"
        f"WHERE created_at >= now() - interval '30 days'\nGROUP BY {key}\n"
        f"ORDER BY {word}_{val} DESC NULLS LAST\nLIMIT {n};\n```\n\n"
        "The date filter is in `WHERE`, so it removes rows *before* grouping; `NULLS LAST` keeps groups whose values "
        f"are all NULL from appearing at the top."
    )
    return q, think, answer


# ----------------------------------------------------------------------------------------------
# Long prompt: a log excerpt (makes truncation of the prompt itself matter)
# ----------------------------------------------------------------------------------------------


def long_log_review(g: Gen):
    paths = ["/api/v1/orders", "/api/v1/users/me", "/static/app.js", "/api/v1/search?q=shoes", "/healthz",
             "/api/v1/cart", "/login", "/api/v1/orders/8812/items"]
    lines, errors = [], Counter()
    for i in range(g.rng.randint(30, 60)):
        status = g.rng.choices([200, 200, 200, 304, 404, 500, 502, 504], k=1)[0]
        path = g.pick(paths)
        if status >= 500:
            errors[(status, path)] += 1
        ms = g.rng.randint(3, 900) if status < 500 else g.rng.randint(3000, 30001)
        ip = f"10.0.{g.rng.randint(0, 9)}.{g.rng.randint(2, 250)}"
        lines.append(f'{ip} - - [12/Mar/2026:14:{i // 60 % 60:02d}:{i % 60:02d} +0000] "GET {path} HTTP/1.1" {status} '
                     f'{g.rng.randint(120, 48000)} "-" "Mozilla/5.0" rt={ms / 1000:.3f}')
    top = errors.most_common(3)
    q = ("Here is an excerpt of our nginx access log from the incident. Which endpoints are failing and what would you "
         "check first?\n\n```\n" + "\n".join(lines) + "\n```")
    think = (
        "Let me count the 5xx responses per endpoint in the excerpt.\n\n"
        + "\n".join(f"- {status} on {path}: {n}" for (status, path), n in sorted(errors.items()))
        + "\n\nThe 5xx responses have very long response times (several seconds up to 30 s), which suggests upstream "
        "timeouts rather than application exceptions — 504 is a gateway timeout, 502 a bad gateway. The errors are "
        "spread over several endpoints, including simple ones, so it's probably not one slow query but the upstream "
        "pool itself."
    )
    answer = (
        "The failures are spread across endpoints, the most frequent being:\n\n"
        + "\n".join(f"{i + 1}. `{path}` — {n}× HTTP {status}" for i, ((status, path), n) in enumerate(top))
        + "\n\nAll 5xx responses take seconds (up to ~30 s) while successful requests finish in under a second, which "
        "points at the **upstream application servers timing out or refusing connections**, not at individual "
        "handlers.\n\nWhat I'd check first:\n\n1. Upstream health and saturation: worker count, CPU, and the nginx "
        "error log (`upstream timed out`, `connect() failed`).\n2. Database connection-pool exhaustion — it makes "
        "every endpoint slow at once.\n3. Any deploy or config change shortly before 14:00 UTC.\n4. "
        "`proxy_read_timeout` vs. the app's own timeouts, so failures surface quickly instead of after 30 s."
    )
    return q, think, answer


# ----------------------------------------------------------------------------------------------
# Building conversations
# ----------------------------------------------------------------------------------------------


def pick_task(g: Gen, source: str):
    if source == "code":
        r = g.rng.random()
        if r < 0.2:
            return code_slice(g)
        if r < 0.35:
            return code_sql_agg(g)
        t = g.pick(CODE_TASKS)
        return g.pick(t["q"]), t["think"], t["answer"]
    if source == "math":
        return g.pick(MATH_GENERATORS)(g)
    if source == "chat":
        t = g.pick(CHAT_TASKS)
        return g.pick(t["q"]), t["think"], t["answer"]
    if source == "multilingual":
        t = g.pick(MULTILINGUAL_TASKS)
        return g.pick(t["q"]), t["think"], t["answer"]
    raise ValueError(source)


def history(g: Gen, source: str, turns: int, with_reasoning: bool):
    """Earlier user/assistant exchanges (not generated by the target for this sample)."""
    msgs = []
    if g.maybe(0.4):
        u, a = g.pick(GREETING_HISTORY)
        msgs += [{"role": "user", "content": u}, {"role": "assistant", "content": a}]
        turns -= 1
    for _ in range(max(turns, 0)):
        q, think, ans = pick_task(g, source)
        a = {"role": "assistant", "content": ans}
        if with_reasoning and g.maybe(0.5):
            a["reasoning_content"] = think
        msgs += [{"role": "user", "content": q}, a]
    return msgs


SOURCE_WEIGHTS = [("code", 32), ("math", 28), ("chat", 22), ("multilingual", 12)]


def pick_source(g: Gen):
    return g.rng.choices([s for s, _ in SOURCE_WEIGHTS], weights=[w for _, w in SOURCE_WEIGHTS], k=1)[0]


def openai_chat_records(g: Gen, n: int):
    out = []
    long_ns = iter([39, 97])
    for i in range(n):
        source = pick_source(g)
        rid = g.new_id("chat")
        msgs = []
        if g.maybe(0.4):
            msgs.append({"role": "system", "content": g.pick(SYSTEM_PROMPTS)})
        if g.maybe(0.25):
            msgs += history(g, source, g.rng.randint(1, 3), with_reasoning=True)
        if i % 52 == 13:  # a few long samples (2k-8k tokens)
            nlong = next(long_ns, None)
            q, think, ans = math_collatz_long(g, nlong) if nlong else long_log_review(g)
            source = "math" if nlong else "code"
        elif i % 52 == 20:
            q, think, ans = long_log_review(g)
            source = "code"
        else:
            q, think, ans = pick_task(g, source)
        user = {"role": "user", "content": q}
        if g.maybe(0.08):
            user["content"] = g.oddify(q)
        msgs.append(user)
        asst = {"role": "assistant", "content": ans}
        r = g.rng.random()
        if r < 0.07:
            asst["reasoning_content"] = ""  # thinking switched off / empty trace
        elif r < 0.17:
            asst["reasoning"] = think  # alias used by some serving stacks
        else:
            asst["reasoning_content"] = g.oddify(think) if g.maybe(0.08) else think
        if g.maybe(0.06):
            asst["content"] = g.oddify(ans)
        msgs.append(asst)
        rec = record(rid, source if g.maybe(0.95) else None, messages=msgs)
        if g.maybe(0.3):
            rec["meta"] = {"model": MODEL, "temperature": g.pick([0.6, 0.7, 1.0]), "finish_reason": "stop"}
        out.append(rec)
    return out


def sharegpt_records(g: Gen, n: int):
    out = []
    for i in range(n):
        source = pick_source(g)
        rid = g.new_id("sg", p_missing=0.1)
        role_style = g.maybe(0.15)  # some ShareGPT dumps use role/content instead of from/value
        k_from, k_val = ("role", "content") if role_style else ("from", "value")
        names = ({"system": "system", "user": "user", "assistant": "assistant"} if role_style and g.maybe(0.5)
                 else {"system": "system", "user": "human", "assistant": "gpt"})
        conv = []
        if g.maybe(0.35):
            conv.append({k_from: names["system"], k_val: g.pick(SYSTEM_PROMPTS)})
        for m in history(g, source, g.rng.randint(1, 2), with_reasoning=False) if g.maybe(0.3) else []:
            conv.append({k_from: names[m["role"]], k_val: m["content"]})
        q, think, ans = pick_task(g, source)
        conv.append({k_from: names["user"], k_val: q})
        r = g.rng.random()
        if r < 0.55:
            val = f"<think>\n{think}\n</think>\n\n{ans}"
        elif r < 0.65:
            val = f"<think>\n\n</think>\n\n{ans}"
        elif r < 0.72:
            val = f"<think>{think}</think>{ans}"  # no newlines around the tags
        else:
            val = ans  # plain answer, no trace
        conv.append({k_from: names["assistant"], k_val: val})
        if g.maybe(0.1):  # a second generated round after a follow-up question
            q2 = g.pick(["Thanks! Can you make it shorter?", "Could you summarise that in one sentence?",
                         "谢谢！能再简单一点吗？", "Merci ! Tu peux résumer en une phrase ?"])
            conv.append({k_from: names["user"], k_val: q2})
            conv.append({k_from: names["assistant"],
                         k_val: "<think>\nThey want a shorter version. Keep only the core point.\n</think>\n\n"
                                + ans.split("\n\n")[0]})
        rec = record(rid, source, conversations=conv)
        if g.maybe(0.2):
            rec["weight"] = 1.0
        out.append(rec)
    return out


def generation_job_records(g: Gen, n: int):
    out = []
    for i in range(n):
        source = pick_source(g)
        rid = g.new_id("gen", p_missing=0.03)
        prompt = []
        if g.maybe(0.5):
            prompt.append({"role": "system", "content": g.pick(SYSTEM_PROMPTS)})
        if g.maybe(0.15):
            prompt += history(g, source, 1, with_reasoning=False)
        if i == n // 2:
            q, think, ans = math_collatz_long(g, 27)
            source = "math"
        else:
            q, think, ans = pick_task(g, source)
        prompt.append({"role": "user", "content": q})
        if g.maybe(0.1):
            completion = f"<think>\n{think}\n</think>\n\n{ans}"  # a plain string completion
        else:
            completion = {"role": "assistant", "content": ans, "reasoning_content": think}
            if g.maybe(0.3):
                del completion["role"]  # role defaults to assistant
        rec = record(rid, source, messages=prompt, completion=completion)
        rec["model"] = MODEL
        rec["finish_reason"] = "stop"
        rec["generated_at"] = (f"2026-03-{g.rng.randint(10, 28):02d}T{g.rng.randint(0, 23):02d}:"
                               f"{g.rng.randint(0, 59):02d}:00Z")
        out.append(rec)
    return out


def _args(g: Gen, d: dict):
    """Tool-call arguments: a dict, or a JSON string as the OpenAI API returns them."""
    return json.dumps(d, ensure_ascii=False) if g.maybe(0.5) else d


def _call(g: Gen, name: str, args: dict):
    return {"id": g.call_id(), "type": "function", "function": {"name": name, "arguments": _args(g, args)}}


def _tool_msg(call: dict, content):
    return {"role": "tool", "tool_call_id": call["id"], "content": json.dumps(content, ensure_ascii=False)
            if not isinstance(content, str) else content}


def agent_weather(g: Gen):
    (c1, cc1, t1, w1), (c2, cc2, t2, w2) = g.rng.sample(CITIES, 2)
    unit = g.pick(["celsius", "fahrenheit"])

    def conv(t):
        return t if unit == "celsius" else round(t * 9 / 5 + 32)

    sym = "°C" if unit == "celsius" else "°F"
    q = g.pick([f"Should I pack an umbrella for {c1} or {c2} this weekend? Compare the weather.",
                f"What's the weather like right now in {c1} and in {c2}?",
                f"I'm flying from {c1} to {c2} tonight. How different is the weather?"])
    calls = [_call(g, "get_weather", {"city": c1, "unit": unit}), _call(g, "get_weather", {"city": c2, "unit": unit})]
    msgs = [{"role": "user", "content": q},
            {"role": "assistant", "content": g.pick([None, "", "Let me check both cities."]),
             "reasoning_content": f"I need the current weather in two cities. I can call get_weather for {c1} and {c2} "
                                  f"in parallel. The user didn't specify units; I'll use {unit}.",
             "tool_calls": calls},
            _tool_msg(calls[0], {"city": c1, "country": cc1, "temperature": conv(t1), "unit": unit, "conditions": w1}),
            _tool_msg(calls[1], {"city": c2, "country": cc2, "temperature": conv(t2), "unit": unit, "conditions": w2}),
            {"role": "assistant",
             "reasoning_content": f"{c1}: {conv(t1)}{sym}, {w1}. {c2}: {conv(t2)}{sym}, {w2}. Difference "
                                  f"{abs(conv(t1) - conv(t2))} degrees. Rain-related conditions decide the umbrella "
                                  "advice.",
             "content": f"Right now:\n\n- **{c1}**: {conv(t1)}{sym}, {w1}\n- **{c2}**: {conv(t2)}{sym}, {w2}\n\n"
                        f"That's a difference of {abs(conv(t1) - conv(t2))}{sym}. "
                        + ("An umbrella is a good idea." if any(k in (w1 + w2) for k in ("rain", "drizzle", "shower",
                                                                                         "storm"))
                           else "No rain is reported in either city at the moment, so you can probably leave the "
                                "umbrella at home.")}]
    return [TOOLS["get_weather"]], msgs


def agent_currency(g: Gen):
    base, quote, rate = g.pick(CURRENCIES)
    amount = g.pick([50, 120, 250, 999.99, 1500, 20000])
    total = round(amount * rate, 2)
    q = g.pick([f"How much is {amount} {base} in {quote} today?", f"Convert {amount} {base} to {quote}, please.",
                f"I need to pay {amount} {base}. What's that in {quote}?"])
    c1 = _call(g, "get_exchange_rate", {"base": base, "quote": quote})
    c2 = _call(g, "calculator", {"expression": f"{amount} * {rate}"})
    msgs = [{"role": "user", "content": q},
            {"role": "assistant", "content": None,
             "reasoning_content": f"I need the current {base}/{quote} rate first.",
             "tool_calls": [c1]},
            _tool_msg(c1, {"base": base, "quote": quote, "rate": rate, "as_of": "2026-03-12T09:00:00Z"}),
            {"role": "assistant", "content": "",
             "reasoning_content": f"Rate is {rate}. Multiply {amount} by {rate}; use the calculator to avoid float "
                                  "rounding slips.",
             "tool_calls": [c2]},
            _tool_msg(c2, {"result": f"{total}"}),
            {"role": "assistant", "reasoning_content": f"{amount} {base} × {rate} = {total} {quote}.",
             "content": f"{amount:,} {base} ≈ **{total:,.2f} {quote}** at the current rate of {rate} {quote} per "
                        f"{base} (as of 12 March 2026, 09:00 UTC). Banks and card providers usually add a margin of "
                        "1–3%."}]
    return [TOOLS["get_exchange_rate"], TOOLS["calculator"]], msgs


def agent_debug(g: Gen):
    fname = g.pick(["stats.py", "utils/mean.py", "report.py"])
    code = ("def mean(xs):\n    return sum(xs) / len(xs)\n\n\ndef summary(rows):\n"
            "    values = [r['value'] for r in rows if r.get('value') is not None]\n    return {'mean': mean(values), "
            "'n': len(values)}\n")
    c1 = _call(g, "list_directory", {"path": "."})
    c2 = _call(g, "read_file", {"path": fname})
    c3 = _call(g, "execute_python", {"code": f"from {fname[:-3].replace('/', '.')} import summary\nprint(summary([]))"})
    c4 = _call(g, "execute_python",
               {"code": "def mean(xs):\n    return sum(xs) / len(xs) if xs else float('nan')\nprint(mean([]))",
                                       "timeout_s": 5})
    q = g.pick(["Our nightly report crashed with ZeroDivisionError. Can you find out why?",
                "The report job fails sometimes with 'division by zero'. Please investigate the repo."])
    msgs = [{"role": "user", "content": q},
            {"role": "assistant", "content": "I'll look at the project layout first.",
             "reasoning_content": "Start by listing the workspace to find the report code.", "tool_calls": [c1]},
            _tool_msg(c1, {"entries": ["README.md", fname, "tests/", "requirements.txt"]}),
            {"role": "assistant", "content": None, "reasoning_content": f"{fname} is the likely place. Read it.",
             "tool_calls": [c2]},
            _tool_msg(c2, code),
            {"role": "assistant", "content": "Let me reproduce it with an empty input.",
             "reasoning_content": "mean() divides by len(xs); if every row has value None, values is empty and len is "
                                  "0. Reproduce with summary([]).", "tool_calls": [c3]},
            _tool_msg(c3, {"stdout": "",
                           "stderr": "Traceback (most recent call last):\n  ...\nZeroDivisionError: division by zero",
                           "exit_code": 1}),
            {"role": "assistant", "content": None,
             "reasoning_content": "Confirmed. Check that a guarded version returns nan.",
             "tool_calls": [c4]},
            _tool_msg(c4, {"stdout": "nan\n", "stderr": "", "exit_code": 0}),
            {"role": "assistant",
             "reasoning_content": "Explain the cause: empty list after filtering Nones. Propose a fix and a test.",
             "content": f"Found it. In `{fname}`, `summary()` drops rows whose `value` is `None` and then calls "
                        "`mean()`. On nights when every row is missing a value, the list is empty and `len(xs)` is "
                        "0:\n\n```python\ndef mean(xs):\n    return sum(xs) / len(xs)   # ZeroDivisionError for "
                        "[]\n```\n\nSuggested fix — return NaN (or `None`) for empty input and make the report show it "
                        "as \"no data\":\n\n```python\nimport math\n\ndef mean(xs):\n    return sum(xs) / len(xs) if "
                        "xs else math.nan\n```\n\nand a regression test:\n\n```python\ndef test_summary_empty():\n    "
                        "s = summary([{'value': None}])\n    assert s['n'] == 0 and math.isnan(s['mean'])\n```"}]
    return [TOOLS["list_directory"], TOOLS["read_file"], TOOLS["execute_python"]], msgs


def agent_sql(g: Gen):
    month = g.pick(["2026-01", "2026-02", "2025-12"])
    bad = f"SELECT country, count(*) FROM signups WHERE month = '{month}' GROUP BY country ORDER BY 2 DESC LIMIT 5"
    good = (f"SELECT country, count(*) AS signups FROM signups WHERE created_at >= '{month}-01' "
            f"AND created_at < ('{month}-01'::date + interval '1 month') "
            "GROUP BY country ORDER BY signups DESC LIMIT 5")
    rows = [{"country": c, "signups": n} for c, n in zip(["DE", "US", "BR", "IN", "JP"],
                                                          sorted(g.rng.sample(range(180, 2400), 5), reverse=True))]
    c1, c2 = _call(g, "run_sql", {"query": bad}), _call(g, "run_sql", {"query": good})
    msgs = [{"role": "user", "content": f"Which 5 countries had the most sign-ups in {month}?"},
            {"role": "assistant", "content": None,
             "reasoning_content": "Query the signups table grouped by country. I'll guess there is a month column.",
             "tool_calls": [c1]},
            _tool_msg(c1, {"error": 'column "month" does not exist', "hint": "signups(id, country, created_at, plan)"}),
            {"role": "assistant", "content": "There's no `month` column; I'll filter on `created_at` instead.",
             "reasoning_content": "Use a half-open date range on created_at so the index can be used.",
             "tool_calls": [c2]},
            _tool_msg(c2, {"rows": rows}),
            {"role": "assistant", "reasoning_content": "Format as a ranked table.",
             "content": f"Top 5 countries by sign-ups in {month}:\n\n| # | country | sign-ups |\n|---|---|---|\n"
                        + "\n".join(f"| {i + 1} | {r['country']} | {r['signups']:,} |" for i, r in enumerate(rows))}]
    return [TOOLS["run_sql"]], msgs


def agent_search(g: Gen):
    topic, results, answer = g.pick([
        ("Python 3.13 free-threaded build",
         [{"title": "What's New In Python 3.13", "url": "https://docs.python.org/3/whatsnew/3.13.html",
           "snippet": "CPython now has experimental support for running in a free-threaded mode, "
                      "with the GIL disabled."},
          {"title": "PEP 703 – Making the GIL Optional", "url": "https://peps.python.org/pep-0703/",
           "snippet": "This PEP proposes adding a build configuration (--disable-gil) to CPython."}],
         "Python 3.13 ships an **experimental free-threaded build** in which the GIL can be disabled (PEP 703). It is "
         "a separate build (often installed as `python3.13t`), not the default, and some C extensions need updates to "
         "support it [1][2]."),
        ("HTTP 429 Retry-After header",
         [{"title": "429 Too Many Requests - HTTP | MDN",
           "url": "https://developer.mozilla.org/en-US/docs/Web/HTTP/Status/429",
           "snippet": "A Retry-After header might be included to this response indicating how long to wait."},
          {"title": "RFC 9110 §10.2.3 Retry-After", "url": "https://www.rfc-editor.org/rfc/rfc9110#name-retry-after",
           "snippet": "The value is either an HTTP-date or a number of seconds to delay after "
                      "receiving the response."}],
         "A 429 response **may** include `Retry-After`, whose value is either a number of seconds or an HTTP date "
         "[1][2]. Clients should wait at least that long before retrying, and fall back to exponential backoff when "
         "it's absent."),
        ("PostgreSQL 16 logical replication from standby",
         [{"title": "PostgreSQL 16 Release Notes", "url": "https://www.postgresql.org/docs/16/release-16.html",
           "snippet": "Allow logical replication from standby servers."}],
         "Since **PostgreSQL 16**, logical decoding and therefore logical replication can run on a **standby** server, "
         "which takes load off the primary [1]."),
    ])
    c = _call(g, "search_web", {"query": topic, "max_results": g.pick([3, 5])})
    msgs = [{"role": "user", "content": g.pick([f"What's the current state of {topic}?",
                                                f"Can you look up {topic} for me?"])},
            {"role": "assistant", "content": "",
             "reasoning_content": "This needs up-to-date information; search first.",
             "tool_calls": [c]},
            _tool_msg(c, {"results": results}),
            {"role": "assistant", "reasoning_content": "Summarise with numbered citations matching the results.",
             "content": answer + "\n\nSources:\n" + "\n".join(f"[{i + 1}] {r['title']} — {r['url']}" for i,
                                                              r in enumerate(results))}]
    return [TOOLS["search_web"]], msgs


def agent_email(g: Gen):
    to = g.pick(["ana.ribeiro@example.com", "j.müller@example.de", "team-infra@example.org"])
    body = ("Hi,\n\nthe database maintenance window is moved to Saturday 06:00–08:00 UTC. Expect up to 10 minutes of "
            "read-only mode.\n\nThanks,\nSam")
    c = _call(g, "send_email", {"to": [to], "subject": "Maintenance window moved to Saturday", "body": body})
    msgs = [{"role": "system", "content": "You can send emails for the user. Confirm before sending."},
            {"role": "user",
             "content": f"Tell {to} that the DB maintenance moves to Saturday 6-8 UTC, up to 10 min read-only."},
            {"role": "assistant", "content": f"Here's a draft:\n\n---\n{body}\n---\n\nShall I send it?"},
            {"role": "user", "content": g.pick(["Yes, send it.", "looks good, go ahead", "Send ✅"])},
            {"role": "assistant", "content": None,
             "reasoning_content": "The user confirmed. Send the drafted email unchanged.",
             "tool_calls": [c]},
            _tool_msg(c, {"status": "sent", "message_id": f"<{g.call_id()}@mail.example.com>"}),
            {"role": "assistant", "reasoning_content": "Confirm briefly.",
             "content": f"Sent to {to} ✉️ with the subject \"Maintenance window moved to Saturday\"."}]
    return [TOOLS["send_email"]], msgs


def agent_no_tool(g: Gen):
    source = g.pick(["chat", "code"])
    q, think, ans = pick_task(g, source)
    msgs = [{"role": "user", "content": q},
            {"role": "assistant", "content": ans,
             "reasoning_content": "None of the available tools are needed for this; I can answer directly.\n\n"
             + think}]
    return g.rng.sample(list(TOOLS.values()), 3), msgs


AGENT_SCENARIOS = [agent_weather, agent_weather, agent_currency, agent_debug, agent_sql, agent_search, agent_email,
                   agent_no_tool]


def agentic_records(g: Gen, n: int):
    out = []
    for i in range(n):
        tools, msgs = g.pick(AGENT_SCENARIOS)(g)
        if g.maybe(0.2) and msgs[0]["role"] != "system":
            msgs.insert(0, {"role": "system",
                            "content": "You are an autonomous assistant with tool access. Think before acting."})
        rec = record(g.new_id("agent", p_missing=0.05), "agent", tools=tools, messages=msgs)
        out.append(rec)
    return out


def generation_job_tool_records(g: Gen, n: int):
    """Shape 3 with tools: the target's first agentic step (a tool call) kept apart from the prompt."""
    out = []
    for i in range(n):
        city = g.pick(CITIES)[0]
        call = _call(g, "get_weather", {"city": city})
        rec = record(g.new_id("gen-tool"), "agent", tools=[TOOLS["get_weather"], TOOLS["search_web"]],
                     messages=[{"role": "user", "content": f"Is it a good day for a walk in {city}?"}],
                     completion={"role": "assistant", "content": "",
                                 "reasoning_content": f"I should check the current weather in {city} before answering.",
                                 "tool_calls": [call]})
        rec["model"] = MODEL
        rec["finish_reason"] = "tool_calls"
        out.append(rec)
    return out


# ----------------------------------------------------------------------------------------------
# Bad records (one per reason, plus a few duplicates) — raw JSONL lines
# ----------------------------------------------------------------------------------------------


def bad_lines(g: Gen):
    """(line, expected reason or None for blank) pairs."""
    q, think, ans = pick_task(g, "chat")
    good = lambda: [{"role": "user", "content": q}, {"role": "assistant", "content": ans, "reasoning_content": think}]
    dump = lambda o: json.dumps(o, ensure_ascii=False)
    lines = [
        ('{"id": "bad-00001", "source": "chat", "messages": [{"role": "user", "content": "Hello', "invalid_json"),
        ("{'id': 'bad-00002', 'messages': [{'role': 'user', 'content': 'python repr, not JSON'}]}", "invalid_json"),
        ("", None),
        (dump([{"role": "user", "content": q}, {"role": "assistant", "content": ans}]), "not_an_object"),
        (dump("just a string on its own line"), "not_an_object"),
        (dump({"id": "bad-00005", "source": "chat", "prompt": q, "response": ans}), "no_messages"),
        (dump({"id": "bad-00006", "source": "chat", "messages": []}), "no_messages"),
        ("   ", None),
        (dump({"id": "bad-00007", "source": "chat", "messages": [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "assistant", "content": "Hello! How can I help you today?"}]}), "no_user_query"),
        (dump({"id": "bad-00008", "source": "chat",
               "messages": good() + [{"role": "user", "content": "And one more thing…"}]}),
         "no_generated_turn"),
        (dump({"id": "bad-00009", "source": "chat", "conversations": [{"from": "human", "value": q}]}),
         "no_generated_turn"),
        (dump({"id": "bad-00010", "source": "chat", "messages": [{"role": "narrator",
                                                                  "content": "Once upon a time…"}] + good()}),
         "unknown_role"),
        (dump({"id": "bad-00011", "source": "chat", "conversations": [{"from": "human", "value": q},
                                                                       {"from": "bing", "value": ans}]}),
         "unknown_role"),
        (dump({"id": "bad-00012", "source": "agent", "tools": [TOOLS["get_weather"]], "messages": [
            {"role": "user", "content": "Weather in Oslo?"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_0", "type": "function",
                 "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\""}}]},
            {"role": "tool", "tool_call_id": "call_0", "content": "{\"temperature\": 4}"},
            {"role": "assistant", "content": "It's 4 °C in Oslo."}]}), "bad_tool_call"),
        (dump({"id": "bad-00013", "source": "agent", "tools": [TOOLS["calculator"]], "messages": [
            {"role": "user", "content": "What is 2+2?"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "calculator", "arguments": "[\"2+2\"]"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "4"},
            {"role": "assistant", "content": "2 + 2 = 4."}]}), "bad_tool_call"),
        (dump({"id": "bad-00014", "source": "chat", "messages": [
            {"role": "user", "content": q}, {"role": "system", "content": "Answer in French."},
            {"role": "assistant", "content": ans}]}), "template_error"),
        (dump({"id": "bad-00015", "source": "chat", "messages": [q, {"role": "assistant", "content": ans}]}),
         "bad_message"),
    ]
    return lines


# ----------------------------------------------------------------------------------------------
# Main
# ----------------------------------------------------------------------------------------------


def dumps(rec) -> str:
    return json.dumps(rec, ensure_ascii=False)


def build(seed: int = SEED):
    """Return {file name: [(line text, expected reason or 'ok' or None for blank)]}."""
    g = Gen(seed)
    files = {}

    chat = [(dumps(r), "ok") for r in openai_chat_records(g, 105)]
    chat.insert(40, ("", None))  # blank lines are ignored
    chat.append(("", None))
    files["openai_chat.jsonl"] = chat

    sg = [(dumps(r), "ok") for r in sharegpt_records(g, 70)]
    last = dumps(sharegpt_records(g, 1)[0])
    sg.append((last[: len(last) // 2], "invalid_json"))  # a writer that died mid-line
    files["sharegpt.jsonl"] = sg

    gen = [(dumps(r), "ok") for r in generation_job_records(g, 52) + generation_job_tool_records(g, 8)]
    g.rng.shuffle(gen)
    files["generation_job.jsonl"] = gen

    files["agentic_tools.jsonl"] = [(dumps(r), "ok") for r in agentic_records(g, 45)]
    files["bad_records.jsonl"] = bad_lines(g)
    return files


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "samples"))
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--summary", action="store_true", help="print counts per file and reason")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    files = build(args.seed)
    total = Counter()
    for name, lines in files.items():
        text = "\n".join(line for line, _ in lines) + "\n"
        (out / name).write_text(text, encoding="utf-8")
        c = Counter(reason for _, reason in lines)
        total.update(c)
        if args.summary:
            print(f"{name:24s} lines={len(lines):4d} " + " ".join(f"{k}={v}" for k, v in sorted(c.items(), key=str)))
    size = sum(p.stat().st_size for p in out.glob("*.jsonl"))
    records = sum(v for k, v in total.items() if k is not None)
    print(f"wrote {len(files)} files to {out}: {records} records ({total['ok']} good, {records - total['ok']} bad), "
          f"{total[None]} blank lines, {size / 1e6:.2f} MB")
    if args.summary:
        print("bad by reason:", dict(sorted((k, v) for k, v in total.items() if k not in ("ok", None))))


if __name__ == "__main__":
    main()
