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
# Text banks
# ----------------------------------------------------------------------------------------------

SYSTEM_PROMPTS = [
    "You are a helpful assistant.",
    "You are Qwen, a large language model. Answer accurately and concisely.",
    "You are a senior software engineer. Prefer small, well-tested functions and explain trade-offs briefly.",
    "You are a patient math tutor. Show the key steps, then give the final answer in \\boxed{}.",
    "You are a friendly assistant for a travel company. Keep answers short and practical.",
    "  You are a careful reviewer. Point out bugs before style issues.  \n",
    "你是一个乐于助人的助手。请用用户使用的语言回答。",
    "Respond in Markdown. Use fenced code blocks with a language tag for any code.",
    "You are an assistant that writes production-grade SQL for PostgreSQL 16.",
    "\n\nYou are a concise assistant. If you are unsure, say so.\n",
]

GREETING_HISTORY = [
    ("Hi! Can you help me with a few questions today?",
     "Of course! What would you like to know?"),
    ("hey, quick one before my meeting",
     "Sure, go ahead — I'll keep it short."),
    ("Good morning. I'm preparing for an exam and might ask several things.",
     "Good morning! Happy to help you prepare. Ask away, one question at a time works best."),
    ("Are you able to explain code?",
     "Yes. Paste the code and tell me what you'd like to understand, and I'll walk through it."),
]

# Code tasks: phrasings of the question, a thinking trace, and the final answer.
CODE_TASKS = [
    {
        "q": [
            "Write a Python function that reverses the order of words in a sentence but keeps the original spacing between them.",
            "How do I reverse the words in a string in Python without collapsing multiple spaces?",
        ],
        "think": (
            "The user wants to reverse word order while preserving whitespace runs. If I just do ' '.join(s.split()[::-1]) "
            "the multiple spaces collapse into one, so that's not enough.\n\n"
            "Idea: split the string into alternating tokens of words and whitespace with re.split(r'(\\s+)', s). "
            "The capturing group keeps the separators. Then I reverse only the word tokens and put them back into the word slots.\n\n"
            "Edge cases: leading or trailing whitespace produces empty strings at the ends of the split list; those should stay "
            "where they are. An empty string should return an empty string. Let me write it so that the positions of whitespace "
            "tokens never move."
        ),
        "answer": (
            "Split the text into word and whitespace tokens, reverse only the words, and put them back into the word slots:\n\n"
            "```python\nimport re\n\ndef reverse_words(text: str) -> str:\n"
            "    tokens = re.split(r\"(\\s+)\", text)\n"
            "    words = [t for t in tokens if t and not t.isspace()]\n"
            "    out = []\n"
            "    for t in tokens:\n"
            "        if t and not t.isspace():\n"
            "            out.append(words.pop())\n"
            "        else:\n"
            "            out.append(t)\n"
            "    return \"\".join(out)\n\n\n"
            "assert reverse_words(\"hello   big  world\") == \"world   big  hello\"\n"
            "assert reverse_words(\"  leading and trailing \") == \"  trailing and leading \"\n"
            "assert reverse_words(\"\") == \"\"\n```\n\n"
            "`re.split` with a capturing group keeps the separators, so the spacing pattern is preserved exactly; "
            "`words.pop()` hands the words out from the end, which reverses them. The function runs in O(n)."
        ),
    },
    {
        "q": [
            "Implement an LRU cache class in Python with get and put in O(1).",
            "Can you show me a simple LRU cache in Python? I need get(key) and put(key, value) with a capacity.",
        ],
        "think": (
            "Classic question. O(1) get and put means a hash map plus a doubly linked list, but in Python "
            "collections.OrderedDict already gives me both: move_to_end is O(1) and popitem(last=False) removes the oldest entry.\n\n"
            "get: if the key is missing return -1 (the LeetCode convention) — or maybe None is more Pythonic. I'll return a default "
            "parameter so the caller decides. On a hit, move the key to the end.\n\n"
            "put: if the key exists, update and move to end. Otherwise insert; if the size exceeds capacity, pop the first item.\n\n"
            "Capacity 0 is an edge case: every put should be a no-op. I'll guard against it."
        ),
        "answer": (
            "`collections.OrderedDict` keeps insertion order and can move a key to the end in O(1), which is exactly what an LRU needs:\n\n"
            "```python\nfrom collections import OrderedDict\n\nclass LRUCache:\n"
            "    def __init__(self, capacity: int):\n"
            "        self.capacity = capacity\n"
            "        self._data: OrderedDict = OrderedDict()\n\n"
            "    def get(self, key, default=None):\n"
            "        if key not in self._data:\n"
            "            return default\n"
            "        self._data.move_to_end(key)\n"
            "        return self._data[key]\n\n"
            "    def put(self, key, value) -> None:\n"
            "        if self.capacity <= 0:\n"
            "            return\n"
            "        if key in self._data:\n"
            "            self._data.move_to_end(key)\n"
            "        self._data[key] = value\n"
            "        if len(self._data) > self.capacity:\n"
            "            self._data.popitem(last=False)  # evict least recently used\n```\n\n"
            "Example:\n\n```python\ncache = LRUCache(2)\ncache.put(\"a\", 1)\ncache.put(\"b\", 2)\ncache.get(\"a\")      # -> 1, 'a' is now most recent\n"
            "cache.put(\"c\", 3)   # evicts 'b'\nassert cache.get(\"b\") is None\n```\n\n"
            "For memoising a function rather than building a data structure, `functools.lru_cache` is the better tool."
        ),
    },
    {
        "q": [
            "I have a CSV with columns region,product,amount. How do I compute the average amount per region using only the standard library?",
            "Python stdlib only: group rows of a CSV file by one column and average another column.",
        ],
        "think": (
            "Standard library only, so no pandas. csv.DictReader gives dicts per row. I accumulate sum and count per region in "
            "two dicts (or a defaultdict of [sum, count]).\n\n"
            "The amount column is a string, so convert with float(). Should I use Decimal for money? For averages a float is usually "
            "fine, but I can mention Decimal if they need exact cents.\n\n"
            "Also handle blank lines or missing amounts gracefully — skip rows where amount is empty. Open the file with newline='' "
            "as the csv docs recommend."
        ),
        "answer": (
            "Use `csv.DictReader` and keep a running sum and count per region:\n\n"
            "```python\nimport csv\nfrom collections import defaultdict\n\ndef average_by_region(path: str) -> dict[str, float]:\n"
            "    totals = defaultdict(float)\n"
            "    counts = defaultdict(int)\n"
            "    with open(path, newline=\"\", encoding=\"utf-8\") as f:\n"
            "        for row in csv.DictReader(f):\n"
            "            amount = (row.get(\"amount\") or \"\").strip()\n"
            "            if not amount:\n"
            "                continue  # skip rows without an amount\n"
            "            totals[row[\"region\"]] += float(amount)\n"
            "            counts[row[\"region\"]] += 1\n"
            "    return {region: totals[region] / counts[region] for region in totals}\n\n\n"
            "if __name__ == \"__main__\":\n"
            "    for region, avg in sorted(average_by_region(\"sales.csv\").items()):\n"
            "        print(f\"{region:<10} {avg:10.2f}\")\n```\n\n"
            "If the amounts are money and you need exact cents, replace `float` with `decimal.Decimal` and start the totals at `Decimal(0)`."
        ),
    },
    {
        "q": [
            "Write a debounce function in JavaScript.",
            "How does debounce work in JS? Can you implement one that also supports cancel()?",
        ],
        "think": (
            "Debounce: delay calling fn until `wait` ms have passed since the last call. Each call clears the pending timer and "
            "sets a new one. I need to preserve `this` and the arguments, so use a regular function for the returned wrapper, "
            "not an arrow function, and call fn.apply(this, args).\n\n"
            "They might want cancel(): just clearTimeout and reset the timer id. Maybe flush() too, but keep it small. "
            "I'll also show a usage example with a search input."
        ),
        "answer": (
            "A debounced function waits until calls have stopped for `wait` milliseconds, then runs once with the latest arguments:\n\n"
            "```javascript\nfunction debounce(fn, wait = 250) {\n"
            "  let timer = null;\n\n"
            "  function debounced(...args) {\n"
            "    clearTimeout(timer);\n"
            "    timer = setTimeout(() => {\n"
            "      timer = null;\n"
            "      fn.apply(this, args);\n"
            "    }, wait);\n"
            "  }\n\n"
            "  debounced.cancel = () => {\n"
            "    clearTimeout(timer);\n"
            "    timer = null;\n"
            "  };\n\n"
            "  return debounced;\n"
            "}\n\n"
            "// Usage: only search after the user stops typing for 300 ms\n"
            "const input = document.querySelector(\"#search\");\n"
            "const onInput = debounce((event) => fetchResults(event.target.value), 300);\n"
            "input.addEventListener(\"input\", onInput);\n```\n\n"
            "Note the inner arrow function: it keeps the `this` of the `debounced` call, so methods that rely on `this` still work."
        ),
    },
    {
        "q": [
            "Write an async fetch wrapper in JavaScript that retries with exponential backoff.",
            "fetch keeps failing intermittently with 503s. How can I retry with backoff in JS?",
        ],
        "think": (
            "They want retries with exponential backoff. Only retry on network errors and on 5xx or 429 — retrying a 400 is "
            "pointless. Delay = base * 2^attempt plus some jitter so many clients don't retry in lockstep.\n\n"
            "If the server sends Retry-After on a 429 or 503 I should respect it. Retry-After can be seconds or an HTTP date; "
            "I'll handle the seconds form and fall back otherwise.\n\n"
            "Structure: for loop over attempts, try fetch, check status, sleep with a promise around setTimeout. After the last "
            "attempt, throw the last error or return the last response."
        ),
        "answer": (
            "Retry only what can succeed later (network errors, 429 and 5xx), and wait longer each time:\n\n"
            "```javascript\nconst sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));\n\n"
            "async function fetchWithRetry(url, options = {}, { retries = 4, baseMs = 200 } = {}) {\n"
            "  let lastError;\n"
            "  for (let attempt = 0; attempt <= retries; attempt++) {\n"
            "    try {\n"
            "      const res = await fetch(url, options);\n"
            "      const retryable = res.status === 429 || res.status >= 500;\n"
            "      if (!retryable || attempt === retries) return res;\n"
            "      const retryAfter = Number(res.headers.get(\"Retry-After\"));\n"
            "      const delay = Number.isFinite(retryAfter) && retryAfter > 0\n"
            "        ? retryAfter * 1000\n"
            "        : baseMs * 2 ** attempt + Math.random() * baseMs;\n"
            "      await sleep(delay);\n"
            "    } catch (err) {\n"
            "      lastError = err; // network failure\n"
            "      if (attempt === retries) throw lastError;\n"
            "      await sleep(baseMs * 2 ** attempt + Math.random() * baseMs);\n"
            "    }\n"
            "  }\n"
            "}\n```\n\n"
            "With the defaults the waits are roughly 0.2 s, 0.4 s, 0.8 s and 1.6 s plus jitter. Only retry non-idempotent requests "
            "(like POST) if the server supports an idempotency key."
        ),
    },
    {
        "q": [
            "PostgreSQL: for each month, list the top 3 customers by revenue from an orders(customer_id, ordered_at, total) table.",
            "SQL question: top N per group. I need the three biggest customers each month by sum of order totals.",
        ],
        "think": (
            "Top-N per group. First aggregate revenue per customer per month with date_trunc('month', ordered_at) and sum(total). "
            "Then rank within each month using a window function. row_number() gives exactly 3 rows even on ties; rank() or "
            "dense_rank() would include ties. I'll use row_number and mention the alternative.\n\n"
            "Filter rank <= 3 in an outer query because window functions can't go in WHERE directly. Order by month, then rank."
        ),
        "answer": (
            "Aggregate first, then rank inside each month with a window function:\n\n"
            "```sql\nWITH monthly AS (\n"
            "    SELECT date_trunc('month', ordered_at) AS month,\n"
            "           customer_id,\n"
            "           sum(total)                   AS revenue\n"
            "    FROM orders\n"
            "    GROUP BY 1, 2\n"
            "), ranked AS (\n"
            "    SELECT month, customer_id, revenue,\n"
            "           row_number() OVER (PARTITION BY month ORDER BY revenue DESC) AS rn\n"
            "    FROM monthly\n"
            ")\n"
            "SELECT month, customer_id, revenue, rn\n"
            "FROM ranked\n"
            "WHERE rn <= 3\n"
            "ORDER BY month, rn;\n```\n\n"
            "`row_number()` returns exactly three rows per month even when revenues tie; use `rank()` instead if tied customers "
            "should all be listed. An index on `orders (ordered_at)` helps when you also filter by a date range."
        ),
    },
    {
        "q": [
            "How do I find duplicate email addresses in a users table, ignoring case?",
            "SQL to list users that share the same email (case-insensitive) so I can clean them up",
        ],
        "think": (
            "Group by lower(email) having count(*) > 1. They probably want the actual rows too, so I can join back, or use a "
            "window count. The window version is neat: count(*) over (partition by lower(email)).\n\n"
            "Trailing spaces might also cause near-duplicates; maybe mention trim(). Finally, to prevent it in the future: a unique "
            "index on lower(email)."
        ),
        "answer": (
            "Count per normalised email with a window function, then keep the groups larger than one:\n\n"
            "```sql\nSELECT id, email, created_at\n"
            "FROM (\n"
            "    SELECT id, email, created_at,\n"
            "           count(*) OVER (PARTITION BY lower(trim(email))) AS n\n"
            "    FROM users\n"
            ") t\n"
            "WHERE n > 1\n"
            "ORDER BY lower(trim(email)), created_at;\n```\n\n"
            "Once the data is clean, stop new duplicates with an expression index:\n\n"
            "```sql\nCREATE UNIQUE INDEX users_email_lower_key ON users (lower(trim(email)));\n```"
        ),
    },
    {
        "q": [
            "Shell one-liner to show the 10 largest files under the current directory?",
            "How can I find which files are eating my disk space on Linux? Just the biggest ten files.",
        ],
        "think": (
            "find with -type f and -printf '%s %p\\n' prints size in bytes and path, then sort -nr and head. That's GNU find; "
            "on macOS -printf doesn't exist, so I could offer a du-based alternative.\n\n"
            "Human-readable sizes: numfmt --to=iec on the first field. Also -xdev to stay on one filesystem, which avoids crawling "
            "/proc or network mounts if they run it from /."
        ),
        "answer": (
            "With GNU find (Linux):\n\n"
            "```bash\nfind . -xdev -type f -printf '%s\\t%p\\n' 2>/dev/null \\\n"
            "  | sort -nr \\\n"
            "  | head -n 10 \\\n"
            "  | numfmt --to=iec --field=1\n```\n\n"
            "On macOS (BSD find has no `-printf`):\n\n"
            "```bash\nfind . -xdev -type f -exec du -k {} + 2>/dev/null | sort -nr | head -n 10\n```\n\n"
            "`-xdev` keeps the search on one filesystem, and `2>/dev/null` hides permission errors. For a per-directory view, "
            "`du -h --max-depth=1 | sort -h` is handy."
        ),
    },
    {
        "q": [
            "Write a bash script that compresses log files older than 7 days and deletes archives older than 30 days.",
            "Need a cron-friendly bash script for log rotation: gzip *.log older than a week, delete .gz older than a month.",
        ],
        "think": (
            "Use find with -mtime. For compression: find \"$LOG_DIR\" -name '*.log' -mtime +7 -exec gzip {} +. For deletion: "
            "find -name '*.log.gz' -mtime +30 -delete.\n\n"
            "Make it safe: set -euo pipefail, quote variables, take the directory as an argument with a default, and fail if "
            "it doesn't exist. gzip -9 is slower; default level is fine. For cron, log what we did. Also mention logrotate as "
            "the standard tool."
        ),
        "answer": (
            "```bash\n#!/usr/bin/env bash\nset -euo pipefail\n\n"
            "LOG_DIR=\"${1:-/var/log/myapp}\"\n"
            "COMPRESS_AFTER_DAYS=7\n"
            "DELETE_AFTER_DAYS=30\n\n"
            "if [[ ! -d \"$LOG_DIR\" ]]; then\n"
            "  echo \"error: $LOG_DIR is not a directory\" >&2\n"
            "  exit 1\n"
            "fi\n\n"
            "# compress plain logs older than a week\n"
            "find \"$LOG_DIR\" -type f -name '*.log' -mtime +\"$COMPRESS_AFTER_DAYS\" -print -exec gzip {} +\n\n"
            "# remove archives older than a month\n"
            "find \"$LOG_DIR\" -type f -name '*.log.gz' -mtime +\"$DELETE_AFTER_DAYS\" -print -delete\n```\n\n"
            "Cron entry (daily at 03:15):\n\n"
            "```\n15 3 * * * /usr/local/bin/rotate-logs.sh /var/log/myapp >> /var/log/rotate-logs.out 2>&1\n```\n\n"
            "If the machine has `logrotate`, a config with `daily`, `compress`, `delaycompress` and `maxage 30` does the same without custom code."
        ),
    },
    {
        "q": [
            "My binary search sometimes loops forever. Can you write a correct one in Python and explain the off-by-one issues?",
            "binary search in python — lower bound version please, with an explanation of lo/hi",
        ],
        "think": (
            "Infinite loops in binary search usually come from mixing conventions: using a closed interval [lo, hi] with "
            "lo < hi, or setting lo = mid instead of mid + 1 so the interval never shrinks.\n\n"
            "I'll use the half-open interval [lo, hi): loop while lo < hi, mid = (lo + hi) // 2; if a[mid] < x then lo = mid + 1 "
            "else hi = mid. This finds the first index where a[i] >= x, i.e. bisect_left. Each iteration strictly shrinks the "
            "interval because mid < hi.\n\n"
            "Then mention bisect.bisect_left from the standard library."
        ),
        "answer": (
            "Use a half-open interval `[lo, hi)` and make sure every branch shrinks it:\n\n"
            "```python\ndef lower_bound(a: list[int], x: int) -> int:\n"
            "    \"\"\"First index i with a[i] >= x (len(a) if none).\"\"\"\n"
            "    lo, hi = 0, len(a)\n"
            "    while lo < hi:\n"
            "        mid = (lo + hi) // 2      # lo <= mid < hi\n"
            "        if a[mid] < x:\n"
            "            lo = mid + 1          # answer is right of mid\n"
            "        else:\n"
            "            hi = mid              # mid might be the answer\n"
            "    return lo\n\n\n"
            "a = [1, 3, 3, 5, 8]\nassert lower_bound(a, 3) == 1\nassert lower_bound(a, 4) == 3\nassert lower_bound(a, 9) == 5\n```\n\n"
            "Why it terminates: `mid < hi`, so `hi = mid` shrinks the range, and `lo = mid + 1` shrinks it too. The classic bug "
            "is writing `lo = mid`, which stalls when `hi == lo + 1`. In real code use `bisect.bisect_left(a, x)`, which is this "
            "exact algorithm implemented in C."
        ),
    },
    {
        "q": [
            "In Rust, read integers from stdin (one per line), skip invalid lines with a warning, and print the sum.",
            "rust: sum numbers from standard input, but don't panic on bad lines",
        ],
        "think": (
            "Use std::io::stdin().lock().lines(). Each line is a Result<String>; then trim and parse::<i64>(). On Err, print a "
            "warning to stderr with the line number (enumerate gives 0-based, so add 1).\n\n"
            "Overflow: summing i64 could overflow in theory; checked_add would be strict. I'll use checked_add and report "
            "overflow as an error. Empty lines: skip silently. Return a Result from main so IO errors propagate with ?."
        ),
        "answer": (
            "```rust\nuse std::io::{self, BufRead};\n\n"
            "fn main() -> io::Result<()> {\n"
            "    let stdin = io::stdin();\n"
            "    let mut sum: i64 = 0;\n\n"
            "    for (i, line) in stdin.lock().lines().enumerate() {\n"
            "        let line = line?;\n"
            "        let text = line.trim();\n"
            "        if text.is_empty() {\n"
            "            continue;\n"
            "        }\n"
            "        match text.parse::<i64>() {\n"
            "            Ok(n) => match sum.checked_add(n) {\n"
            "                Some(s) => sum = s,\n"
            "                None => {\n"
            "                    eprintln!(\"error: overflow at line {}\", i + 1);\n"
            "                    std::process::exit(1);\n"
            "                }\n"
            "            },\n"
            "            Err(e) => eprintln!(\"warning: line {}: {:?} is not an integer ({})\", i + 1, text, e),\n"
            "        }\n"
            "    }\n\n"
            "    println!(\"{}\", sum);\n"
            "    Ok(())\n"
            "}\n```\n\n"
            "Try it with `printf '1\\n2\\nabc\\n40\\n' | cargo run` — it prints a warning for line 3 and the sum `43`."
        ),
    },
    {
        "q": [
            "Why does this Python function keep remembering items between calls?\n\n```python\ndef add_item(item, items=[]):\n    items.append(item)\n    return items\n```",
            "Bug hunt: `def add_item(item, items=[])` returns a list that grows on every call. What's going on?",
        ],
        "think": (
            "Mutable default argument. Default values are evaluated once, when the def statement runs, not on every call. "
            "So the same list object is shared by every call that doesn't pass items.\n\n"
            "Fix: use None as a sentinel and create a new list inside. I can demonstrate with add_item.__defaults__ to show the "
            "list living on the function object."
        ),
        "answer": (
            "Default values are evaluated **once**, when `def` runs. Every call that omits `items` gets the *same* list object, "
            "so appends accumulate:\n\n"
            "```python\n>>> add_item(1)\n[1]\n>>> add_item(2)\n[1, 2]\n>>> add_item.__defaults__\n([1, 2],)\n```\n\n"
            "Use `None` as a sentinel and build a fresh list per call:\n\n"
            "```python\ndef add_item(item, items=None):\n"
            "    if items is None:\n"
            "        items = []\n"
            "    items.append(item)\n"
            "    return items\n```\n\n"
            "The same applies to dicts, sets and any other mutable default."
        ),
    },
    {
        "q": [
            "Write a Python regex that validates ISO dates like 2024-02-29, and tell me if regex alone is enough.",
            "regex for YYYY-MM-DD dates in python?",
        ],
        "think": (
            "A regex can check the shape: four digits, dash, month 01-12, dash, day 01-31. It can't easily check month lengths "
            "or leap years (2023-02-29 is invalid). The robust answer: regex for the format, then datetime.date.fromisoformat to "
            "validate the calendar.\n\n"
            "Pattern: ^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$. Use re.fullmatch so anchors aren't needed. Note \\d "
            "matches non-ASCII digits in Python 3 str patterns; use [0-9] or re.ASCII to be strict."
        ),
        "answer": (
            "A regex can check the *shape*; the calendar (month lengths, leap years) is better left to `datetime`:\n\n"
            "```python\nimport re\nfrom datetime import date\n\n"
            "ISO_DATE = re.compile(r\"[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])\")\n\n"
            "def is_iso_date(s: str) -> bool:\n"
            "    if not ISO_DATE.fullmatch(s):\n"
            "        return False\n"
            "    try:\n"
            "        date.fromisoformat(s)\n"
            "    except ValueError:\n"
            "        return False\n"
            "    return True\n\n\n"
            "assert is_iso_date(\"2024-02-29\")      # leap year\n"
            "assert not is_iso_date(\"2023-02-29\")  # not a leap year\n"
            "assert not is_iso_date(\"2024-13-01\")\n```\n\n"
            "I used `[0-9]` rather than `\\d` because in Python `\\d` also matches digits from other scripts, such as `٣`."
        ),
    },
    {
        "q": [
            "In TypeScript, how do I write a type-safe event emitter where each event name has its own payload type?",
            "TS generic event emitter with typed payloads per event?",
        ],
        "think": (
            "Use a generic over an event map type: Events extends Record<string, unknown>. on<K extends keyof Events>(name: K, "
            "handler: (payload: Events[K]) => void). Store handlers in a Map<keyof Events, Set<Function>>.\n\n"
            "Return an unsubscribe function from on(), which is nicer than off(). emit<K>(name, payload) calls each handler. "
            "Show an example map: { login: { userId: string }; logout: void }."
        ),
        "answer": (
            "Describe the events as a map from name to payload type and let generics connect them:\n\n"
            "```typescript\ntype Handler<T> = (payload: T) => void;\n\n"
            "class Emitter<Events extends Record<string, unknown>> {\n"
            "  private handlers = new Map<keyof Events, Set<Handler<any>>>();\n\n"
            "  on<K extends keyof Events>(name: K, handler: Handler<Events[K]>): () => void {\n"
            "    if (!this.handlers.has(name)) this.handlers.set(name, new Set());\n"
            "    this.handlers.get(name)!.add(handler);\n"
            "    return () => this.handlers.get(name)?.delete(handler);\n"
            "  }\n\n"
            "  emit<K extends keyof Events>(name: K, payload: Events[K]): void {\n"
            "    this.handlers.get(name)?.forEach((h) => h(payload));\n"
            "  }\n"
            "}\n\n"
            "type AppEvents = {\n"
            "  login: { userId: string };\n"
            "  progress: number;\n"
            "};\n\n"
            "const bus = new Emitter<AppEvents>();\n"
            "const off = bus.on(\"login\", ({ userId }) => console.log(`hello ${userId}`));\n"
            "bus.emit(\"progress\", 0.5);\n"
            "// bus.emit(\"progress\", \"half\");  // compile error: string is not a number\n"
            "off();\n```"
        ),
    },
    {
        "q": [
            "How do I run 100 HTTP requests concurrently in Python asyncio but limit it to 10 at a time?",
            "asyncio: gather with a concurrency limit?",
        ],
        "think": (
            "asyncio.Semaphore(10) around the request coroutine, then asyncio.gather over all tasks. With aiohttp a single "
            "ClientSession should be shared. Alternatively asyncio.TaskGroup in 3.11+.\n\n"
            "return_exceptions=True keeps one failure from cancelling the rest; then the caller inspects results. I'll show a "
            "self-contained example with aiohttp and note that httpx works the same way."
        ),
        "answer": (
            "Wrap each request in a semaphore so at most 10 are in flight, and share one session:\n\n"
            "```python\nimport asyncio\nimport aiohttp\n\n"
            "async def fetch(session: aiohttp.ClientSession, sem: asyncio.Semaphore, url: str) -> int:\n"
            "    async with sem:\n"
            "        async with session.get(url) as resp:\n"
            "            await resp.read()\n"
            "            return resp.status\n\n"
            "async def main(urls: list[str]) -> None:\n"
            "    sem = asyncio.Semaphore(10)\n"
            "    async with aiohttp.ClientSession() as session:\n"
            "        results = await asyncio.gather(\n"
            "            *(fetch(session, sem, u) for u in urls), return_exceptions=True\n"
            "        )\n"
            "    failures = [r for r in results if isinstance(r, Exception)]\n"
            "    print(f\"{len(results) - len(failures)} ok, {len(failures)} failed\")\n\n"
            "asyncio.run(main([f\"https://example.com/item/{i}\" for i in range(100)]))\n```\n\n"
            "`return_exceptions=True` makes one failed request show up as a result instead of cancelling the whole batch."
        ),
    },
    {
        "q": [
            "Write a multi-stage Dockerfile for a Python web app so the final image is small.",
            "dockerfile best practices for python: build deps in one stage, slim runtime in another?",
        ],
        "think": (
            "Stage 1: python:3.12-slim as builder, install build tools, pip wheel or pip install --prefix into /install. Stage 2: "
            "python:3.12-slim, copy /install to /usr/local, copy the app, run as non-root.\n\n"
            "Cache: copy requirements.txt first so dependency layers are cached. Env: PYTHONDONTWRITEBYTECODE, PYTHONUNBUFFERED. "
            "Use gunicorn as the entrypoint. Mention .dockerignore."
        ),
        "answer": (
            "```dockerfile\n# ---- build stage: compile wheels ----\n"
            "FROM python:3.12-slim AS build\n"
            "RUN apt-get update && apt-get install -y --no-install-recommends build-essential \\\n"
            "    && rm -rf /var/lib/apt/lists/*\n"
            "WORKDIR /src\n"
            "COPY requirements.txt .\n"
            "RUN pip install --no-cache-dir --prefix=/install -r requirements.txt\n\n"
            "# ---- runtime stage: no compilers ----\n"
            "FROM python:3.12-slim\n"
            "ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1\n"
            "COPY --from=build /install /usr/local\n"
            "WORKDIR /app\n"
            "COPY . .\n"
            "RUN useradd --create-home appuser\n"
            "USER appuser\n"
            "EXPOSE 8000\n"
            "CMD [\"gunicorn\", \"--bind\", \"0.0.0.0:8000\", \"app:create_app()\"]\n```\n\n"
            "Copying `requirements.txt` before the source keeps the dependency layer cached between code changes, and a "
            "`.dockerignore` with `.git`, `__pycache__` and `.venv` keeps the build context small."
        ),
    },
]

CHAT_TASKS = [
    {
        "q": ["What's the difference between TCP and UDP, in plain words?",
              "TCP vs UDP — when would I pick each one?"],
        "think": (
            "They want a plain-language comparison. Key points: TCP is connection-oriented, reliable, ordered, with flow and "
            "congestion control; UDP is connectionless, no guarantees, lower overhead. Examples: web pages, email, file transfer "
            "over TCP; video calls, games, DNS over UDP. Mention QUIC briefly since HTTP/3 runs over UDP."
        ),
        "answer": (
            "**TCP** is like a phone call: the two sides set up a connection, every byte arrives, in order, and lost pieces are "
            "resent automatically. **UDP** is like posting postcards: each message travels on its own, quickly, but some may "
            "arrive late, out of order, or not at all.\n\n"
            "| | TCP | UDP |\n|---|---|---|\n| Delivery | guaranteed, ordered | best effort |\n"
            "| Setup | handshake first | none |\n| Overhead | higher | lower |\n"
            "| Typical use | web, email, file transfer, SSH | voice/video calls, games, DNS |\n\n"
            "Pick TCP when every byte matters; pick UDP when a late packet is useless anyway (a frame of a live call) and you "
            "would rather skip it than wait. Modern HTTP/3 runs on QUIC, which builds reliability on top of UDP."
        ),
    },
    {
        "q": ["Write a polite email declining a meeting invitation because of a scheduling conflict.",
              "help me say no to a meeting nicely, I have a conflict"],
        "think": (
            "Short, polite, offers an alternative. Structure: thanks for the invitation, can't attend due to a conflict, offer to "
            "review notes or suggest another time, sign off. Keep placeholders for names."
        ),
        "answer": (
            "Subject: Re: Project sync on Thursday\n\n"
            "Hi Maria,\n\n"
            "Thank you for the invitation. Unfortunately I have a conflicting commitment at that time and won't be able to join.\n\n"
            "I'd be glad to catch up afterwards — could you share the notes, or would Friday morning work for a short call? "
            "If there's anything you need from me beforehand, just let me know.\n\n"
            "Best regards,\nJonas"
        ),
    },
    {
        "q": ["I can't fall asleep before 2am. Any practical tips?",
              "how do I fix my sleep schedule, I keep going to bed super late"],
        "think": (
            "Practical, evidence-based sleep hygiene: fixed wake time (most important), morning light, shift bedtime gradually "
            "by 15-30 minutes, limit caffeine after early afternoon, screens and bright light in the evening, wind-down routine, "
            "bed only for sleep. If persistent, mention a doctor; I shouldn't diagnose."
        ),
        "answer": (
            "Shifting a late sleep schedule works best from the **morning** side:\n\n"
            "1. **Fix your wake-up time**, even on weekends. This anchors your body clock more than the bedtime does.\n"
            "2. **Get bright light early** — 10–20 minutes outside within an hour of waking.\n"
            "3. **Move bedtime gradually**, about 15–30 minutes earlier every few days, instead of jumping straight to 11 pm.\n"
            "4. **Cut caffeine after about 1 pm** and avoid large meals late in the evening.\n"
            "5. **Dim the lights and screens** for the last hour; keep a short wind-down routine (reading, shower, stretching).\n"
            "6. If you're awake in bed for more than ~20 minutes, get up and do something calm in low light until you feel sleepy.\n\n"
            "If it still doesn't improve after a few weeks, or you feel sleepy during the day despite enough hours, it's worth "
            "talking to a doctor."
        ),
    },
    {
        "q": ["Explain photosynthesis to a 10-year-old.",
              "Can you explain how plants make food, simply?"],
        "think": (
            "Simple analogy: a plant is a kitchen. Ingredients: sunlight, water from roots, carbon dioxide from air. Product: "
            "sugar (food) and oxygen as a leftover that we breathe. Chlorophyll makes leaves green and catches light. Keep it short."
        ),
        "answer": (
            "Think of a leaf as a tiny kitchen powered by sunshine. 🌱\n\n"
            "- The **roots** drink up water from the soil.\n"
            "- The **leaves** breathe in carbon dioxide, a gas in the air.\n"
            "- A green substance called **chlorophyll** catches sunlight and uses its energy to mix the water and carbon "
            "dioxide into **sugar** — the plant's food.\n\n"
            "The leftover from this cooking is **oxygen**, which the plant lets out into the air — and that's the oxygen we "
            "breathe! So plants feed themselves *and* help us breathe."
        ),
    },
    {
        "q": ["Should I use git rebase or git merge?",
              "git merge vs rebase, which one and why?"],
        "think": (
            "Both integrate changes. Merge preserves history with a merge commit; rebase rewrites commits on top of the target "
            "for linear history. Golden rule: don't rebase commits others have pulled (shared branches). Typical workflow: rebase "
            "your local feature branch onto main to update; merge (or squash-merge) the feature into main via PR."
        ),
        "answer": (
            "Both bring changes from one branch into another; they differ in the history they leave behind.\n\n"
            "- **`git merge main`** keeps every commit as it happened and adds a merge commit. Safe, honest history, but it can "
            "get noisy.\n"
            "- **`git rebase main`** replays your commits on top of `main`, giving a straight line of history. Clean, but it "
            "*rewrites* your commits (new hashes).\n\n"
            "A common rule of thumb:\n\n"
            "```bash\n# update your own feature branch: rebase\ngit switch feature/login\ngit fetch origin\ngit rebase origin/main\n\n"
            "# integrate the finished feature: merge (often via a pull request)\ngit switch main\ngit merge --no-ff feature/login\n```\n\n"
            "Never rebase commits that other people have already pulled — they'll end up with duplicated history."
        ),
    },
    {
        "q": ["Why is the sky blue?", "why is the sky blue but sunsets are red?"],
        "think": (
            "Rayleigh scattering: scattering intensity scales as 1/wavelength^4, so blue light scatters much more than red. "
            "At sunset light passes through more atmosphere, so blue is scattered out of the line of sight and reds/oranges "
            "remain. Why not violet? Sun emits less violet, some absorbed, and our eyes are less sensitive to it."
        ),
        "answer": (
            "Sunlight contains all colours. When it passes through the air, tiny gas molecules scatter short wavelengths much "
            "more strongly than long ones (Rayleigh scattering goes roughly as 1/λ⁴). Blue light is therefore bounced around the "
            "whole sky and reaches your eyes from every direction — so the sky looks blue.\n\n"
            "At sunset the light travels through far more air to reach you. Most of the blue is scattered out of the beam along "
            "the way, leaving the oranges and reds.\n\n"
            "Violet is scattered even more than blue, but the Sun emits less of it and our eyes are less sensitive to it, so we "
            "see blue."
        ),
    },
    {
        "q": ["What does O(n log n) mean, intuitively?",
              "explain big-O like I'm a junior dev, especially n log n"],
        "think": (
            "Intuition: how work grows as input grows. n log n: you do about log n rounds of work over n items, or n items each "
            "costing log n. Example: merge sort halves log2(n) times, each level touches all n. Concrete numbers: n = 1,000,000, "
            "log2 n ≈ 20, so about 20 million steps vs 10^12 for n^2."
        ),
        "answer": (
            "Big-O describes how the amount of work **grows** as the input grows, ignoring constant factors.\n\n"
            "`O(n log n)` typically means: there are about `log n` \"levels\" of work, and each level touches all `n` items. "
            "Merge sort is the classic example — it halves the list until pieces have size 1 (`log₂ n` levels), and merging "
            "each level costs `n`.\n\n"
            "For a feel of the numbers with n = 1,000,000:\n\n"
            "| complexity | steps (roughly) |\n|---|---|\n| O(n) | 1,000,000 |\n| O(n log n) | 20,000,000 |\n"
            "| O(n²) | 1,000,000,000,000 |\n\n"
            "So `n log n` is only a little worse than linear, and vastly better than quadratic."
        ),
    },
    {
        "q": ["Give me a recipe for shakshuka for two people.",
              "shakshuka recipe? I have eggs, tomatoes, an onion and a pepper"],
        "think": (
            "Simple shakshuka: olive oil, onion, red pepper, garlic, cumin, paprika, chili, canned or fresh tomatoes, simmer, "
            "make wells, crack eggs, cover until whites set. For two people: 4 eggs. Serve with bread, parsley or coriander, "
            "maybe feta."
        ),
        "answer": (
            "**Shakshuka for two** (about 30 minutes)\n\n"
            "Ingredients: 2 tbsp olive oil · 1 onion · 1 red pepper · 2 garlic cloves · 1 tsp ground cumin · 1 tsp sweet "
            "paprika · a pinch of chili flakes · 400 g tomatoes (canned or fresh, chopped) · 4 eggs · salt, pepper · fresh "
            "parsley or coriander · bread to serve.\n\n"
            "1. Soften the sliced onion and pepper in the oil over medium heat, 8–10 minutes.\n"
            "2. Add the garlic and spices; stir for 1 minute until fragrant.\n"
            "3. Add the tomatoes, season, and simmer 10 minutes until thick.\n"
            "4. Make four wells, crack an egg into each, cover, and cook 5–7 minutes until the whites are set but the yolks runny.\n"
            "5. Scatter herbs (and crumbled feta, if you like) and serve straight from the pan with bread."
        ),
    },
    {
        "q": ["affect vs effect — I always mix them up",
              "When do I use 'affect' and when 'effect'?"],
        "think": (
            "Mostly: affect is a verb (to influence), effect is a noun (the result). Mnemonic: A for action (verb), E for end "
            "result. Exceptions: 'effect' as a verb means to bring about (effect change); 'affect' as a noun in psychology."
        ),
        "answer": (
            "Most of the time:\n\n- **affect** is a *verb*: to influence something. *The rain affected our plans.*\n"
            "- **effect** is a *noun*: the result. *The rain had a big effect on our plans.*\n\n"
            "Memory trick: **A**ffect = **A**ction, **E**ffect = **E**nd result.\n\n"
            "Two less common uses: *to effect change* (verb, meaning to bring it about) and *affect* as a noun in psychology "
            "(a person's visible emotional state)."
        ),
    },
    {
        "q": ["Write a haiku about autumn in the city.", "haiku please: autumn, city, rain"],
        "think": "5-7-5. Autumn, city imagery: wet pavement, streetlights, leaves on tram tracks. Count syllables carefully.",
        "answer": "Leaves on the tram tracks —\nstreetlights blur in puddled rain,\nthe city exhales.",
    },
    {
        "q": ["What is the Pomodoro technique and does it actually help?",
              "is pomodoro worth trying for studying?"],
        "think": (
            "Pomodoro: 25 min focused work, 5 min break, after four a longer 15-30 min break. Helps by lowering the barrier to "
            "start and making breaks explicit. Evidence is mostly anecdotal and small studies; adapt the intervals. Good for "
            "studying; less so for deep flow tasks where 25 min interrupts."
        ),
        "answer": (
            "The Pomodoro technique is a simple timer routine: **25 minutes of focused work, then a 5-minute break**; after four "
            "rounds, take a longer 15–30 minute break.\n\n"
            "Why it helps many people:\n- Starting is easier when you only commit to 25 minutes.\n"
            "- Breaks are planned, so you're less tempted to take random ones.\n"
            "- Counting pomodoros gives an honest picture of how long tasks take.\n\n"
            "The research is limited, and the 25 minutes is not magic — if you're in a good flow, 45/10 or 50/10 works too. "
            "For studying it's well worth a try for a week."
        ),
    },
    {
        "q": ["Index funds or individual stocks for a beginner?",
              "I'm 25 and want to start investing. Index funds vs picking stocks?"],
        "think": (
            "General educational info, not personalised advice. Index funds: diversified, low fees, historically most active "
            "managers underperform after fees. Individual stocks: concentration risk, time-intensive. Emergency fund first, "
            "high-interest debt first, long horizon, dollar-cost averaging. Suggest a small 'learning' allocation if curious."
        ),
        "answer": (
            "For most beginners, **broad, low-cost index funds** are the sensible core:\n\n"
            "- **Diversification:** one fund can hold hundreds or thousands of companies, so one bad company can't sink you.\n"
            "- **Low fees:** total annual costs are often below 0.2%, and fees compound just like returns.\n"
            "- **Track record:** over long periods most actively managed funds trail their index after fees.\n\n"
            "Picking individual stocks concentrates risk and takes real time to do well. If you enjoy it, a common approach is "
            "to keep most money in index funds and use a small slice (say 5–10%) for individual picks.\n\n"
            "Before investing at all: build an emergency fund and pay off high-interest debt. This is general information, not "
            "personal financial advice."
        ),
    },
]

MULTILINGUAL_TASKS = [
    {
        "q": ["请解释一下 Python 的全局解释器锁（GIL）是什么，它对多线程有什么影响？"],
        "think": (
            "用户问的是 GIL。要点：CPython 中同一时刻只有一个线程执行 Python 字节码；对 CPU 密集型任务，多线程无法利用多核；"
            "对 I/O 密集型任务影响较小，因为等待 I/O 时会释放 GIL。替代方案：multiprocessing、C 扩展释放 GIL、"
            "以及 Python 3.13 的实验性无 GIL 构建（free-threaded）。"
        ),
        "answer": (
            "**GIL（Global Interpreter Lock，全局解释器锁）** 是 CPython 中的一把互斥锁：任意时刻只有一个线程能执行 Python 字节码。\n\n"
            "它的影响：\n\n"
            "1. **CPU 密集型任务**：多线程几乎无法利用多核，甚至可能比单线程更慢。\n"
            "2. **I/O 密集型任务**：线程在等待网络或磁盘时会释放 GIL，所以多线程依然有效。\n\n"
            "常见的应对方法：\n\n"
            "```python\nfrom concurrent.futures import ProcessPoolExecutor\n\n"
            "def work(n: int) -> int:\n    return sum(i * i for i in range(n))\n\n"
            "with ProcessPoolExecutor() as pool:   # 多进程，绕开 GIL\n"
            "    print(list(pool.map(work, [10**6] * 4)))\n```\n\n"
            "另外，NumPy 等 C 扩展在计算时会释放 GIL；Python 3.13 起还提供了实验性的无 GIL（free-threaded）构建。"
        ),
    },
    {
        "q": ["日本の四季の特徴を簡単に教えてください。"],
        "think": (
            "The user asks in Japanese about the four seasons in Japan. Answer in Japanese: spring (cherry blossoms, March-May), "
            "summer (hot and humid, rainy season tsuyu in June, festivals), autumn (koyo, autumn leaves, pleasant), winter "
            "(snow on the Sea of Japan side, dry on the Pacific side)."
        ),
        "answer": (
            "日本の四季には、それぞれはっきりした特徴があります。\n\n"
            "- **春（3〜5月）**：桜が咲き、花見を楽しむ季節です。気温も穏やかです。\n"
            "- **夏（6〜8月）**：6月ごろに梅雨があり、その後は高温多湿になります。各地で夏祭りや花火大会が開かれます。\n"
            "- **秋（9〜11月）**：紅葉が美しく、過ごしやすい気候です。「食欲の秋」とも言われます。\n"
            "- **冬（12〜2月）**：日本海側は雪が多く、太平洋側は乾燥して晴れの日が多くなります。\n\n"
            "旅行なら、桜の春か紅葉の秋が特に人気です。🌸🍁"
        ),
    },
    {
        "q": ["Quelle est la différence entre « savoir » et « connaître » en français ?"],
        "think": (
            "French question about savoir vs connaître. Savoir: facts, information, how to do something (savoir + infinitive), "
            "followed by que/si/où. Connaître: to be familiar with people, places, works; always followed by a noun. Answer in "
            "French with examples."
        ),
        "answer": (
            "Les deux verbes se traduisent par « to know », mais ils ne s'emploient pas de la même façon :\n\n"
            "- **Savoir** : connaître un fait, une information, ou *savoir faire* quelque chose.\n"
            "  - *Je sais qu'il est déjà parti.*\n  - *Elle sait nager.*\n  - *Tu sais où se trouve la gare ?*\n"
            "- **Connaître** : être familier avec une personne, un lieu, une œuvre. Toujours suivi d'un nom.\n"
            "  - *Je connais bien Lyon.*\n  - *Vous connaissez Amélie ?*\n\n"
            "Astuce : après **savoir**, on trouve souvent *que, si, où, comment* ou un infinitif ; après **connaître**, un "
            "complément d'objet direct."
        ),
    },
    {
        "q": ["¿Me puedes dar una receta sencilla de tortilla de patatas? ¿Con cebolla o sin cebolla?"],
        "think": (
            "Spanish: tortilla de patatas recipe, and the famous debate con o sin cebolla. Ingredients: 4-5 potatoes, 1 onion "
            "(optional), 6 eggs, olive oil, salt. Steps: fry potatoes slowly (confit) in oil, drain, mix with beaten eggs, rest, "
            "cook, flip with a plate. Answer in Spanish."
        ),
        "answer": (
            "¡Claro! La eterna pregunta… La versión clásica lleva cebolla, pero ambas son válidas. 🥔🥚\n\n"
            "**Ingredientes (4 personas):** 5 patatas medianas, 1 cebolla (opcional), 6 huevos, aceite de oliva, sal.\n\n"
            "1. Pela y corta las patatas en láminas finas; pica la cebolla.\n"
            "2. Fríelas a fuego medio-bajo en abundante aceite unos 20 minutos, hasta que estén tiernas pero no doradas.\n"
            "3. Escúrrelas bien y mézclalas con los huevos batidos y sal. Deja reposar 10 minutos.\n"
            "4. Cuaja la mezcla en una sartén con un poco de aceite, 3–4 minutos.\n"
            "5. Dale la vuelta con un plato y cocina 2 minutos más. Si te gusta jugosa, ¡no la cuajes demasiado!"
        ),
    },
    {
        "q": ["Was ist der Unterschied zwischen „seit“ und „seid“?"],
        "think": (
            "German spelling: 'seit' is a preposition/conjunction of time (since/for), 'seid' is the verb sein, 2nd person "
            "plural (ihr seid). Mnemonic: seid comes from sein with d like 'ihr'. Answer in German."
        ),
        "answer": (
            "Die beiden Wörter klingen gleich, bedeuten aber etwas ganz anderes:\n\n"
            "- **seit** (mit **t**) bezieht sich auf die **Zeit**: *Ich wohne seit drei Jahren in Köln.*\n"
            "- **seid** (mit **d**) ist eine Form von **sein**: *Ihr seid heute aber früh da!*\n\n"
            "Merkhilfe: **Zeit** und **seit** enden beide auf **t**. Wenn du „ihr“ davorsetzen kannst, ist es **seid**."
        ),
    },
    {
        "q": ["ما الفرق بين الطقس والمناخ؟"],
        "think": (
            "Arabic question: difference between weather (الطقس) and climate (المناخ). Weather: short-term atmospheric "
            "conditions (hours/days). Climate: long-term average over ~30 years for a region. Answer in Arabic."
        ),
        "answer": (
            "**الطقس** هو حالة الجو في مكان معيّن خلال فترة قصيرة، مثل ساعات أو أيام: درجة الحرارة، والأمطار، والرياح اليوم.\n\n"
            "**المناخ** هو متوسط حالة الطقس في منطقة ما على مدى فترة طويلة، عادةً ثلاثين سنة أو أكثر.\n\n"
            "مثال بسيط: «ستمطر غدًا في عمّان» معلومة عن الطقس، أما «شتاء عمّان بارد وممطر» فهي وصف للمناخ."
        ),
    },
    {
        "q": ["מה ההבדל בין RAM לבין זיכרון אחסון (SSD)?"],
        "think": (
            "Hebrew question: RAM vs SSD storage. RAM: fast, volatile, working memory for running programs. SSD: persistent "
            "storage, slower than RAM but keeps data when powered off. Analogy: desk vs filing cabinet. Answer in Hebrew."
        ),
        "answer": (
            "**RAM** הוא זיכרון העבודה של המחשב: מהיר מאוד, אבל נמחק כשהמחשב נכבה. התוכנות שפתוחות עכשיו נמצאות בו.\n\n"
            "**SSD** הוא זיכרון האחסון: איטי יותר מ-RAM, אבל שומר את הקבצים גם בלי חשמל.\n\n"
            "דימוי פשוט: ה-RAM הוא השולחן שעליו אתם עובדים, וה-SSD הוא הארון שבו שומרים את התיקים. שולחן גדול יותר (יותר RAM) "
            "מאפשר לעבוד על יותר דברים בבת אחת."
        ),
    },
    {
        "q": ["Объясни, пожалуйста, что такое рекурсия, на простом примере."],
        "think": (
            "Russian: explain recursion with a simple example. Function calls itself with a smaller problem until a base case. "
            "Example: factorial, or matryoshka dolls analogy. Code in Python with Russian comments."
        ),
        "answer": (
            "**Рекурсия** — это когда функция вызывает саму себя для решения меньшей части той же задачи. Обязательно нужен "
            "**базовый случай**, на котором вызовы прекращаются, иначе программа уйдёт в бесконечную рекурсию.\n\n"
            "Хорошая аналогия — матрёшка: открываем куклу, внутри такая же, только меньше, пока не дойдём до самой маленькой.\n\n"
            "```python\ndef factorial(n: int) -> int:\n"
            "    if n <= 1:          # базовый случай\n"
            "        return 1\n"
            "    return n * factorial(n - 1)   # задача меньшего размера\n\n"
            "print(factorial(5))  # 120\n```"
        ),
    },
    {
        "q": ["Bạn có thể giải thích ngắn gọn về hiện tượng nhật thực không?"],
        "think": (
            "Vietnamese: explain solar eclipse briefly. Moon passes between Earth and Sun, blocks sunlight; types: total, "
            "partial, annular. Never look directly at the Sun. Answer in Vietnamese with correct diacritics."
        ),
        "answer": (
            "**Nhật thực** xảy ra khi Mặt Trăng đi vào giữa Trái Đất và Mặt Trời, che khuất ánh sáng Mặt Trời ở một số vùng trên "
            "Trái Đất.\n\n"
            "Có ba loại chính:\n\n"
            "- **Nhật thực toàn phần**: Mặt Trăng che kín hoàn toàn Mặt Trời, bầu trời tối lại trong vài phút.\n"
            "- **Nhật thực một phần**: chỉ một phần Mặt Trời bị che.\n"
            "- **Nhật thực hình khuyên**: Mặt Trăng ở xa hơn nên không che hết, để lại một \"vòng lửa\".\n\n"
            "⚠️ Tuyệt đối không nhìn trực tiếp vào Mặt Trời khi quan sát; hãy dùng kính chuyên dụng."
        ),
    },
    {
        "q": ["한국어로 '감사합니다'와 '고맙습니다'의 차이가 뭐예요?"],
        "think": (
            "Korean: 감사합니다 vs 고맙습니다. Both formal polite 'thank you'. 감사 is Sino-Korean (感謝), slightly more formal; "
            "고맙다 is native Korean, a bit warmer. Both fine in most situations. Casual: 고마워. Answer in Korean."
        ),
        "answer": (
            "두 표현 모두 정중하게 \"고맙다\"는 뜻이고, 대부분의 상황에서 바꿔 써도 괜찮아요.\n\n"
            "- **감사합니다**: 한자어 '감사(感謝)'에서 온 말로, 조금 더 격식 있게 들려요. 공식 자리나 방송에서 자주 써요.\n"
            "- **고맙습니다**: 순우리말 '고맙다'에서 온 말로, 조금 더 따뜻하고 친근한 느낌이 있어요.\n\n"
            "친구 사이에서는 **고마워**라고 하면 돼요. 😊"
        ),
    },
    {
        "q": ["can u explain what an API is?? 🤔 my boss keeps saying it and i just nod 😅"],
        "think": (
            "Casual tone with emoji. Explain API simply: a menu/waiter analogy. A program asks another program for something in "
            "an agreed format and gets a response. Example: weather app calls weather service API. Keep it friendly with a little emoji."
        ),
        "answer": (
            "Totally normal to nod along — here's the gist 😄\n\n"
            "An **API** (Application Programming Interface) is a set of rules for how one program can ask another program "
            "for something.\n\n"
            "Restaurant analogy 🍽️: you (an app) don't walk into the kitchen (someone else's system). You read the **menu** "
            "(the API docs), tell the **waiter** (the API) what you want in the agreed way, and get your dish (the data) back.\n\n"
            "Real example: a weather app on your phone doesn't measure the weather itself — it sends a request like "
            "`GET /forecast?city=Lisbon` to a weather service's API and shows you the answer. ☀️🌧️\n\n"
            "So when your boss says \"we'll integrate with their API\", it means \"our software will talk to their software "
            "using the rules they published.\" 👍"
        ),
    },
    {
        "q": ["कृपया बताइए कि प्रकाश संश्लेषण क्या होता है?"],
        "think": (
            "Hindi: what is photosynthesis. Plants use sunlight, water, carbon dioxide to make glucose and release oxygen; "
            "chlorophyll. Answer in Hindi, simply."
        ),
        "answer": (
            "**प्रकाश संश्लेषण** वह प्रक्रिया है जिसमें हरे पौधे सूर्य के प्रकाश की मदद से अपना भोजन बनाते हैं।\n\n"
            "- पौधे जड़ों से **पानी** लेते हैं।\n- पत्तियाँ हवा से **कार्बन डाइऑक्साइड** लेती हैं।\n"
            "- पत्तियों में मौजूद **क्लोरोफिल** सूर्य का प्रकाश पकड़ता है।\n\n"
            "इनसे पौधा **ग्लूकोज़** (भोजन) बनाता है और **ऑक्सीजन** बाहर छोड़ता है, जिसे हम साँस में लेते हैं।"
        ),
    },
]

CITIES = [
    ("Lisbon", "PT", 19, "partly cloudy"), ("Tokyo", "JP", 24, "light rain"), ("Nairobi", "KE", 22, "sunny"),
    ("Reykjavík", "IS", 6, "windy, overcast"), ("São Paulo", "BR", 27, "thunderstorms"), ("Zürich", "CH", 14, "fog"),
    ("Montréal", "CA", 3, "snow showers"), ("Cairo", "EG", 31, "clear"), ("Sydney", "AU", 18, "sunny"),
    ("Kraków", "PL", 11, "drizzle"), ("Seoul", "KR", 21, "hazy"), ("Mexico City", "MX", 23, "clear, evening showers"),
]

CURRENCIES = [("EUR", "USD", 1.0842), ("USD", "JPY", 151.37), ("GBP", "EUR", 1.1685), ("CHF", "EUR", 1.0412),
              ("USD", "BRL", 5.0621), ("AUD", "USD", 0.6583), ("EUR", "PLN", 4.3127), ("USD", "KRW", 1338.5)]

TOOLS = {
    "get_weather": {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the current weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "City name, e.g. 'Lisbon'"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "Temperature unit"},
                },
                "required": ["city"],
            },
        },
    },
    "search_web": {
        "type": "function",
        "function": {
            "name": "search_web",
            "description": "Search the web and return the top results as title, url and snippet.",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "max_results": {"type": "integer", "minimum": 1, "maximum": 10, "default": 5},
                },
                "required": ["query"],
            },
        },
    },
    "run_sql": {
        "type": "function",
        "function": {
            "name": "run_sql",
            "description": "Run a read-only SQL query against the analytics database (PostgreSQL) and return rows as JSON.",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
        },
    },
    "read_file": {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a UTF-8 text file from the workspace.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        },
    },
    "list_directory": {
        "type": "function",
        "function": {
            "name": "list_directory",
            "description": "List files in a workspace directory.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string", "default": "."}}},
        },
    },
    "execute_python": {
        "type": "function",
        "function": {
            "name": "execute_python",
            "description": "Execute Python code in a sandbox and return stdout, stderr and the exit code.",
            "parameters": {
                "type": "object",
                "properties": {"code": {"type": "string"}, "timeout_s": {"type": "number", "default": 10}},
                "required": ["code"],
            },
        },
    },
    "get_exchange_rate": {
        "type": "function",
        "function": {
            "name": "get_exchange_rate",
            "description": "Latest exchange rate: how many units of `quote` one unit of `base` buys.",
            "parameters": {
                "type": "object",
                "properties": {"base": {"type": "string", "pattern": "^[A-Z]{3}$"},
                               "quote": {"type": "string", "pattern": "^[A-Z]{3}$"}},
                "required": ["base", "quote"],
            },
        },
    },
    "calculator": {
        "type": "function",
        "function": {
            "name": "calculator",
            "description": "Evaluate an arithmetic expression exactly. Supports + - * / ** and parentheses.",
            "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"]},
        },
    },
    "send_email": {
        "type": "function",
        "function": {
            "name": "send_email",
            "description": "Send an email on behalf of the user. Only call after the user confirmed the text.",
            "parameters": {
                "type": "object",
                "properties": {
                    "to": {"type": "array", "items": {"type": "string", "format": "email"}},
                    "subject": {"type": "string"},
                    "body": {"type": "string"},
                },
                "required": ["to", "subject", "body"],
            },
        },
    },
}

REASONING_FILLER = [
    "Let me make sure I'm not missing an edge case here.",
    "Wait, let me double-check that.",
    "Hmm, that seems right, but let me verify it another way.",
    "Okay, I think that's the cleanest way to explain it.",
    "Actually, I should keep the answer focused on what was asked.",
]

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
        f"$$S_{{{n}}} = \\frac{{n}}{{2}}\\bigl(2a + (n-1)d\\bigr) = \\frac{{{n}}}{{2}}\\bigl({2 * a} + {(n - 1) * d}\\bigr) = {s}$$\n\n"
        f"Check: the {n}th term is ${last}$, and $\\frac{{{n}({a} + {last})}}{{2}} = {s}$.\n\n"
        f"$$\\boxed{{{s}}}$$"
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
        + f"\n\nso $\\gcd({x}, {y}) = {gcd}$, and\n\n$$\\operatorname{{lcm}}({x}, {y}) = \\frac{{{a} \\cdot {b}}}{{{gcd}}} = {lcm}.$$\n\n"
        f"**GCD = {gcd}, LCM = {lcm}.**"
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
        f"Check: left side {a1}·{x} + ({b1}) = {a1 * x + b1}; right side {a2}·{x} + ({b2}) = {a2 * x + b2}. Equal, so x = {x}."
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
        f"x = ({-b} ± {int(disc ** 0.5)}) / 2 gives {(-b + int(disc ** 0.5)) // 2} and {(-b - int(disc ** 0.5)) // 2}. Consistent."
    )
    roots = sorted({r1, r2})
    answer = (
        f"Factor: we need two numbers whose product is ${c}$ and whose sum is ${-b}$ — namely ${r1}$ and ${r2}$.\n\n"
        + f"$$ {factored} = 0 $$"
        + "\n\n"
        + (f"So $x = {roots[0]}$ or $x = {roots[1]}$." if len(roots) == 2 else f"So the equation has the double root $x = {roots[0]}$.")
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
        f"Since ${exp} \\equiv {exp % len(cycle)} \\pmod{{{len(cycle)}}}$, the last digit is that of ${base}^{{{idx + 1}}}$:\n\n"
        f"$$\\boxed{{{digit}}}$$"
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
        f"Tempting answer: ({v1} + {v2})/2 = {(v1 + v2) / 2:g}. But that's wrong because more time is spent at the slower "
        f"speed. Average speed = total distance / total time.\n\n"
        f"Time out = {d}/{v1} = {d / v1:g} h. Time back = {d}/{v2} = {d / v2:g} h. Total time = {d / v1 + d / v2:g} h.\n"
        f"Total distance = {2 * d} km. Average = {2 * d} / {d / v1 + d / v2:g} = {float(avg):g} km/h.\n\n"
        f"This is the harmonic mean 2·{v1}·{v2}/({v1}+{v2}) = {2 * v1 * v2}/{v1 + v2} = {float(avg):g}. Note that the distance cancels."
    )
    answer = (
        f"Average speed is total distance over total time — not the mean of the two speeds.\n\n"
        f"- Out: {d} km ÷ {v1} km/h = {d / v1:g} h\n- Back: {d} km ÷ {v2} km/h = {d / v2:g} h\n\n"
        f"$$\\bar v = \\frac{{{2 * d}\\text{{ km}}}}{{{d / v1 + d / v2:g}\\text{{ h}}}} = {float(avg):g}\\text{{ km/h}}$$\n\n"
        f"(the harmonic mean of {v1} and {v2}; the distance doesn't matter)."
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
        f"The user wants the full Collatz trajectory of {n}, the number of steps and the maximum. I'll go carefully, one "
        f"step at a time, because one arithmetic slip ruins everything after it.\n\n" + "\n".join(lines)
        + f"\n\nWe reached 1 after {len(seq) - 1} steps.\n\nNow the maximum: scanning the values, the largest is {peak}. "
        f"Let me re-verify a few of the odd steps where mistakes are most likely: "
        + "; ".join(f"3 · {a} + 1 = {3 * a + 1}" for a in [s for s in seq if s % 2][:6])
        + ". All correct.\n\n" + g.pick(REASONING_FILLER)
    )
    answer = (
        f"Starting at **{n}**, the sequence reaches 1 after **{len(seq) - 1} steps**, and the largest value along the way "
        f"is **{peak:,}**.\n\nThe full trajectory:\n\n```\n" + " → ".join(map(str, seq)) + "\n```"
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
    q = f"Write a SQL query that returns the {n} {plural} with the highest {word} {val} in the `{table}` table, only counting rows from the last 30 days."
    think = (
        f"Group by {key}, aggregate {agg}({val}), filter the last 30 days in WHERE (before grouping, so it's a row filter). "
        f"I need a timestamp column — I'll assume created_at and say so. Order by the aggregate descending, limit {n}. "
        f"NULLs: {agg} ignores NULL values; if a group has only NULLs, the result is NULL and in PostgreSQL NULLs sort first "
        f"in DESC order, so add NULLS LAST."
    )
    answer = (
        f"Assuming `{table}` has a `created_at` timestamp column:\n\n"
        f"```sql\nSELECT {key},\n       {agg}({val}) AS {word}_{val}\nFROM {table}\n"
        f"WHERE created_at >= now() - interval '30 days'\nGROUP BY {key}\n"
        f"ORDER BY {word}_{val} DESC NULLS LAST\nLIMIT {n};\n```\n\n"
        f"The date filter is in `WHERE`, so it removes rows *before* grouping; `NULLS LAST` keeps groups whose values are "
        f"all NULL from appearing at the top."
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
        "timeouts rather than application exceptions — 504 is a gateway timeout, 502 a bad gateway. The errors are spread "
        "over several endpoints, including simple ones, so it's probably not one slow query but the upstream pool itself."
    )
    answer = (
        "The failures are spread across endpoints, the most frequent being:\n\n"
        + "\n".join(f"{i + 1}. `{path}` — {n}× HTTP {status}" for i, ((status, path), n) in enumerate(top))
        + "\n\nAll 5xx responses take seconds (up to ~30 s) while successful requests finish in under a second, which points "
        "at the **upstream application servers timing out or refusing connections**, not at individual handlers.\n\n"
        "What I'd check first:\n\n1. Upstream health and saturation: worker count, CPU, and the nginx error log "
        "(`upstream timed out`, `connect() failed`).\n2. Database connection-pool exhaustion — it makes every endpoint slow at once.\n"
        "3. Any deploy or config change shortly before 14:00 UTC.\n4. `proxy_read_timeout` vs. the app's own timeouts, so "
        "failures surface quickly instead of after 30 s."
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
        rec["generated_at"] = f"2026-03-{g.rng.randint(10, 28):02d}T{g.rng.randint(0, 23):02d}:{g.rng.randint(0, 59):02d}:00Z"
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
             "reasoning_content": f"I need the current weather in two cities. I can call get_weather for {c1} and {c2} in parallel. "
                                  f"The user didn't specify units; I'll use {unit}.",
             "tool_calls": calls},
            _tool_msg(calls[0], {"city": c1, "country": cc1, "temperature": conv(t1), "unit": unit, "conditions": w1}),
            _tool_msg(calls[1], {"city": c2, "country": cc2, "temperature": conv(t2), "unit": unit, "conditions": w2}),
            {"role": "assistant",
             "reasoning_content": f"{c1}: {conv(t1)}{sym}, {w1}. {c2}: {conv(t2)}{sym}, {w2}. Difference {abs(conv(t1) - conv(t2))} degrees. "
                                  f"Rain-related conditions decide the umbrella advice.",
             "content": f"Right now:\n\n- **{c1}**: {conv(t1)}{sym}, {w1}\n- **{c2}**: {conv(t2)}{sym}, {w2}\n\n"
                        f"That's a difference of {abs(conv(t1) - conv(t2))}{sym}. "
                        + ("An umbrella is a good idea." if any(k in (w1 + w2) for k in ("rain", "drizzle", "shower", "storm"))
                           else "No rain is reported in either city at the moment, so you can probably leave the umbrella at home.")}]
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
            {"role": "assistant", "content": None, "reasoning_content": f"I need the current {base}/{quote} rate first.",
             "tool_calls": [c1]},
            _tool_msg(c1, {"base": base, "quote": quote, "rate": rate, "as_of": "2026-03-12T09:00:00Z"}),
            {"role": "assistant", "content": "",
             "reasoning_content": f"Rate is {rate}. Multiply {amount} by {rate}; use the calculator to avoid float rounding slips.",
             "tool_calls": [c2]},
            _tool_msg(c2, {"result": f"{total}"}),
            {"role": "assistant", "reasoning_content": f"{amount} {base} × {rate} = {total} {quote}.",
             "content": f"{amount:,} {base} ≈ **{total:,.2f} {quote}** at the current rate of {rate} {quote} per {base} "
                        f"(as of 12 March 2026, 09:00 UTC). Banks and card providers usually add a margin of 1–3%."}]
    return [TOOLS["get_exchange_rate"], TOOLS["calculator"]], msgs


def agent_debug(g: Gen):
    fname = g.pick(["stats.py", "utils/mean.py", "report.py"])
    code = ("def mean(xs):\n    return sum(xs) / len(xs)\n\n\ndef summary(rows):\n"
            "    values = [r['value'] for r in rows if r.get('value') is not None]\n    return {'mean': mean(values), 'n': len(values)}\n")
    c1 = _call(g, "list_directory", {"path": "."})
    c2 = _call(g, "read_file", {"path": fname})
    c3 = _call(g, "execute_python", {"code": f"from {fname[:-3].replace('/', '.')} import summary\nprint(summary([]))"})
    c4 = _call(g, "execute_python", {"code": "def mean(xs):\n    return sum(xs) / len(xs) if xs else float('nan')\nprint(mean([]))",
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
             "reasoning_content": "mean() divides by len(xs); if every row has value None, values is empty and len is 0. "
                                  "Reproduce with summary([]).", "tool_calls": [c3]},
            _tool_msg(c3, {"stdout": "", "stderr": "Traceback (most recent call last):\n  ...\nZeroDivisionError: division by zero",
                           "exit_code": 1}),
            {"role": "assistant", "content": None, "reasoning_content": "Confirmed. Check that a guarded version returns nan.",
             "tool_calls": [c4]},
            _tool_msg(c4, {"stdout": "nan\n", "stderr": "", "exit_code": 0}),
            {"role": "assistant",
             "reasoning_content": "Explain the cause: empty list after filtering Nones. Propose a fix and a test.",
             "content": f"Found it. In `{fname}`, `summary()` drops rows whose `value` is `None` and then calls `mean()`. "
                        "On nights when every row is missing a value, the list is empty and `len(xs)` is 0:\n\n"
                        "```python\ndef mean(xs):\n    return sum(xs) / len(xs)   # ZeroDivisionError for []\n```\n\n"
                        "Suggested fix — return NaN (or `None`) for empty input and make the report show it as \"no data\":\n\n"
                        "```python\nimport math\n\ndef mean(xs):\n    return sum(xs) / len(xs) if xs else math.nan\n```\n\n"
                        "and a regression test:\n\n```python\ndef test_summary_empty():\n    s = summary([{'value': None}])\n"
                        "    assert s['n'] == 0 and math.isnan(s['mean'])\n```"}]
    return [TOOLS["list_directory"], TOOLS["read_file"], TOOLS["execute_python"]], msgs


def agent_sql(g: Gen):
    month = g.pick(["2026-01", "2026-02", "2025-12"])
    bad = f"SELECT country, count(*) FROM signups WHERE month = '{month}' GROUP BY country ORDER BY 2 DESC LIMIT 5"
    good = (f"SELECT country, count(*) AS signups FROM signups WHERE created_at >= '{month}-01' "
            f"AND created_at < ('{month}-01'::date + interval '1 month') GROUP BY country ORDER BY signups DESC LIMIT 5")
    rows = [{"country": c, "signups": n} for c, n in zip(["DE", "US", "BR", "IN", "JP"],
                                                          sorted(g.rng.sample(range(180, 2400), 5), reverse=True))]
    c1, c2 = _call(g, "run_sql", {"query": bad}), _call(g, "run_sql", {"query": good})
    msgs = [{"role": "user", "content": f"Which 5 countries had the most sign-ups in {month}?"},
            {"role": "assistant", "content": None,
             "reasoning_content": "Query the signups table grouped by country. I'll guess there is a month column.",
             "tool_calls": [c1]},
            _tool_msg(c1, {"error": 'column "month" does not exist', "hint": "signups(id, country, created_at, plan)"}),
            {"role": "assistant", "content": "There's no `month` column; I'll filter on `created_at` instead.",
             "reasoning_content": "Use a half-open date range on created_at so the index can be used.", "tool_calls": [c2]},
            _tool_msg(c2, {"rows": rows}),
            {"role": "assistant", "reasoning_content": "Format as a ranked table.",
             "content": f"Top 5 countries by sign-ups in {month}:\n\n| # | country | sign-ups |\n|---|---|---|\n"
                        + "\n".join(f"| {i + 1} | {r['country']} | {r['signups']:,} |" for i, r in enumerate(rows))}]
    return [TOOLS["run_sql"]], msgs


def agent_search(g: Gen):
    topic, results, answer = g.pick([
        ("Python 3.13 free-threaded build",
         [{"title": "What's New In Python 3.13", "url": "https://docs.python.org/3/whatsnew/3.13.html",
           "snippet": "CPython now has experimental support for running in a free-threaded mode, with the GIL disabled."},
          {"title": "PEP 703 – Making the GIL Optional", "url": "https://peps.python.org/pep-0703/",
           "snippet": "This PEP proposes adding a build configuration (--disable-gil) to CPython."}],
         "Python 3.13 ships an **experimental free-threaded build** in which the GIL can be disabled (PEP 703). It is a "
         "separate build (often installed as `python3.13t`), not the default, and some C extensions need updates to "
         "support it [1][2]."),
        ("HTTP 429 Retry-After header",
         [{"title": "429 Too Many Requests - HTTP | MDN", "url": "https://developer.mozilla.org/en-US/docs/Web/HTTP/Status/429",
           "snippet": "A Retry-After header might be included to this response indicating how long to wait."},
          {"title": "RFC 9110 §10.2.3 Retry-After", "url": "https://www.rfc-editor.org/rfc/rfc9110#name-retry-after",
           "snippet": "The value is either an HTTP-date or a number of seconds to delay after receiving the response."}],
         "A 429 response **may** include `Retry-After`, whose value is either a number of seconds or an HTTP date [1][2]. "
         "Clients should wait at least that long before retrying, and fall back to exponential backoff when it's absent."),
        ("PostgreSQL 16 logical replication from standby",
         [{"title": "PostgreSQL 16 Release Notes", "url": "https://www.postgresql.org/docs/16/release-16.html",
           "snippet": "Allow logical replication from standby servers."}],
         "Since **PostgreSQL 16**, logical decoding and therefore logical replication can run on a **standby** server, "
         "which takes load off the primary [1]."),
    ])
    c = _call(g, "search_web", {"query": topic, "max_results": g.pick([3, 5])})
    msgs = [{"role": "user", "content": g.pick([f"What's the current state of {topic}?", f"Can you look up {topic} for me?"])},
            {"role": "assistant", "content": "", "reasoning_content": "This needs up-to-date information; search first.",
             "tool_calls": [c]},
            _tool_msg(c, {"results": results}),
            {"role": "assistant", "reasoning_content": "Summarise with numbered citations matching the results.",
             "content": answer + "\n\nSources:\n" + "\n".join(f"[{i + 1}] {r['title']} — {r['url']}" for i, r in enumerate(results))}]
    return [TOOLS["search_web"]], msgs


def agent_email(g: Gen):
    to = g.pick(["ana.ribeiro@example.com", "j.müller@example.de", "team-infra@example.org"])
    body = ("Hi,\n\nthe database maintenance window is moved to Saturday 06:00–08:00 UTC. Expect up to 10 minutes of "
            "read-only mode.\n\nThanks,\nSam")
    c = _call(g, "send_email", {"to": [to], "subject": "Maintenance window moved to Saturday", "body": body})
    msgs = [{"role": "system", "content": "You can send emails for the user. Confirm before sending."},
            {"role": "user", "content": f"Tell {to} that the DB maintenance moves to Saturday 6-8 UTC, up to 10 min read-only."},
            {"role": "assistant", "content": f"Here's a draft:\n\n---\n{body}\n---\n\nShall I send it?"},
            {"role": "user", "content": g.pick(["Yes, send it.", "looks good, go ahead", "Send ✅"])},
            {"role": "assistant", "content": None, "reasoning_content": "The user confirmed. Send the drafted email unchanged.",
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
             "reasoning_content": "None of the available tools are needed for this; I can answer directly.\n\n" + think}]
    return g.rng.sample(list(TOOLS.values()), 3), msgs


AGENT_SCENARIOS = [agent_weather, agent_weather, agent_currency, agent_debug, agent_sql, agent_search, agent_email, agent_no_tool]


def agentic_records(g: Gen, n: int):
    out = []
    for i in range(n):
        tools, msgs = g.pick(AGENT_SCENARIOS)(g)
        if g.maybe(0.2) and msgs[0]["role"] != "system":
            msgs.insert(0, {"role": "system", "content": "You are an autonomous assistant with tool access. Think before acting."})
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
        (dump({"id": "bad-00008", "source": "chat", "messages": good() + [{"role": "user", "content": "And one more thing…"}]}),
         "no_generated_turn"),
        (dump({"id": "bad-00009", "source": "chat", "conversations": [{"from": "human", "value": q}]}), "no_generated_turn"),
        (dump({"id": "bad-00010", "source": "chat", "messages": [{"role": "narrator", "content": "Once upon a time…"}] + good()}),
         "unknown_role"),
        (dump({"id": "bad-00011", "source": "chat", "conversations": [{"from": "human", "value": q},
                                                                       {"from": "bing", "value": ans}]}), "unknown_role"),
        (dump({"id": "bad-00012", "source": "agent", "tools": [TOOLS["get_weather"]], "messages": [
            {"role": "user", "content": "Weather in Oslo?"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_0", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\""}}]},
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
        (dump({"id": "bad-00015", "source": "chat", "messages": [q, {"role": "assistant", "content": ans}]}), "bad_message"),
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
