"""Writes tests/data/heldout.jsonl (one-off; the file is the fixture)."""
import json
import random
import sys
from pathlib import Path

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).with_name("heldout.jsonl"))
rng = random.Random(7)


def d(o):
    return json.dumps(o, ensure_ascii=False)


def U(c):
    return {"role": "user", "content": c}


def A(c, r=None, **kw):
    m = {"role": "assistant", "content": c}
    if r is not None:
        m["reasoning_content"] = r
    m.update(kw)
    return m


def S(c):
    return {"role": "system", "content": c}


def T(cid, c):
    return {"role": "tool", "tool_call_id": cid, "content": c if isinstance(c, str) else d(c)}


def call(cid, name, args, wrap=True):
    fn = {"name": name, "arguments": args}
    return {"id": cid, "type": "function", "function": fn} if wrap else fn


TOOL_LOOKUP = {
    "type": "function",
    "function": {
        "name": "lookup_package",
        "description": "Look up a package's latest version & licence on PyPI. Names are case-insensitive; returns <null> if unknown.",
        "parameters": {"type": "object", "required": ["name"],
                       "properties": {"name": {"type": "string", "description": "e.g. 'requests'"},
                                      "include_yanked": {"type": "boolean", "default": False}}},
    },
}
TOOL_SHELL = {
    "type": "function",
    "function": {
        "name": "run_shell",
        "description": "Run a shell command in the project's container and return stdout/stderr.",
        "parameters": {"type": "object", "required": ["cmd"],
                       "properties": {"cmd": {"type": "string"}, "cwd": {"type": "string", "default": "/srv/app"}}},
    },
}
TOOL_TRAINS = {
    "type": "function",
    "function": {
        "name": "find_trains",
        "description": "Find train connections between two stations on a date (ISO 8601).",
        "parameters": {"type": "object", "required": ["origin", "destination", "date"],
                       "properties": {"origin": {"type": "string"}, "destination": {"type": "string"},
                                      "date": {"type": "string", "format": "date"},
                                      "max_changes": {"type": "integer", "minimum": 0}}},
    },
}
TOOL_NOTES = {
    "type": "function",
    "function": {
        "name": "search_notes",
        "description": "Full-text search over the user's notes.",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string"}, "limit": {"type": "integer"}, "include_archived": {"type": "boolean"},
            "filters": {"type": "object"}, "cursor": {"type": ["string", "null"]}}, "required": ["query"]},
    },
}
TOOL_CONVERT = {
    "type": "function",
    "function": {
        "name": "convert_units",
        "description": "Convert a quantity between units, e.g. 5 mi -> km.",
        "parameters": {"type": "object", "properties": {"value": {"type": "number"}, "from": {"type": "string"},
                                                         "to": {"type": "string"}}, "required": ["value", "from", "to"]},
    },
}

# ------------------------------------------------------------------------------------------------ good records

G = []

G.append(d({"id": "ho-basic", "source": "chat", "messages": [
    U("How many minutes are there in a week?"),
    A("A week has **10,080 minutes**: 7 days × 24 hours × 60 minutes = 10,080.",
      "7 days, 24 hours each is 168 hours. 168 × 60 = 10,080 minutes.")]}))

G.append(d({"id": "ho-ok", "source": "degenerate", "messages": [U("Reply with just OK."), A("OK.", "")]}))

G.append(d({"id": "ho-sys-go", "source": "code", "messages": [
    S("You are an expert Go developer. Use only the standard library."),
    U("Count word frequencies in a text file in Go and print the 5 most common words."),
    A("```go\npackage main\n\nimport (\n\t\"bufio\"\n\t\"fmt\"\n\t\"os\"\n\t\"sort\"\n\t\"strings\"\n)\n\n"
      "func main() {\n\tf, err := os.Open(os.Args[1])\n\tif err != nil {\n\t\tfmt.Fprintln(os.Stderr, err)\n\t\tos.Exit(1)\n\t}\n"
      "\tdefer f.Close()\n\n\tcounts := map[string]int{}\n\tsc := bufio.NewScanner(f)\n\tsc.Split(bufio.ScanWords)\n"
      "\tfor sc.Scan() {\n\t\tw := strings.ToLower(strings.Trim(sc.Text(), \".,;:!?\\\"'()\"))\n\t\tif w != \"\" {\n\t\t\tcounts[w]++\n\t\t}\n\t}\n\n"
      "\ttype kv struct {\n\t\tword  string\n\t\tcount int\n\t}\n\tvar all []kv\n\tfor w, c := range counts {\n\t\tall = append(all, kv{w, c})\n\t}\n"
      "\tsort.Slice(all, func(i, j int) bool {\n\t\tif all[i].count != all[j].count {\n\t\t\treturn all[i].count > all[j].count\n\t\t}\n"
      "\t\treturn all[i].word < all[j].word\n\t})\n\tfor i := 0; i < len(all) && i < 5; i++ {\n\t\tfmt.Printf(\"%-12s %d\\n\", all[i].word, all[i].count)\n\t}\n}\n```\n\n"
      "Ties are broken alphabetically so the output is deterministic.",
      "bufio.Scanner with ScanWords splits on whitespace. Lowercase and trim punctuation. Map counts, then sort a slice of "
      "pairs by count desc, word asc for deterministic ties. Print top 5.")]}))

G.append(d({"id": "ho-ws", "source": "chat", "messages": [
    U("   What is the boiling point of water at sea level?   \n"),
    A("  \n The boiling point of water at sea level is **100 °C** (212 °F).\n\n ",
      "\n\n  At standard atmospheric pressure (1 atm), water boils at 100 degrees Celsius.  \n\t")]}))

G.append(d({"id": "ho-reasoning-alias", "source": "math", "messages": [
    U("Is 221 a prime number?"),
    {"role": "assistant", "content": "No. 221 = 13 × 17, so it is not prime.",
     "reasoning": "√221 ≈ 14.9, so check primes up to 13. 2 no, 3: 2+2+1=5 no, 5 no, 7: 7×31=217, 7×32=224 no, "
                  "11: 11×20=220 no, 13: 13×17=221 yes."}]}))

G.append(d({"messages": [U("Name three primary colours of light."),
                         A("Red, green and blue (RGB).", "Additive colour model: red, green, blue.")]}))

G.append(d({"id": "ho-history", "source": "chat", "messages": [
    S("You are a cycling coach."),
    U("I want to ride my first 100 km. How should I train?"),
    A("Build up gradually: add about 10% to your longest ride each week, ride 3–4 times a week, and include one long ride.",
      "Beginner going for a century in km. Progressive overload, long ride, recovery."),
    U("How much should I eat during the ride?"),
    A("<think>\nEndurance fuelling: 30-60 g carbs per hour.\n</think>\n\nAim for 30–60 g of carbohydrate per hour after the "
      "first hour, plus about 500 ml of fluid per hour."),
    U("And what should I eat the evening before?"),
    A("A normal, carbohydrate-rich dinner you know well — pasta, rice or potatoes with some protein and vegetables. Avoid "
      "trying new or very fatty foods, and drink enough water.",
      "Evening before: familiar carb-rich meal, not huge, avoid experiments, hydrate.")]}))

G.append(d({"id": "ho-unicode", "source": "multilingual", "messages": [
    U("Translate 'good morning' into Chinese, Arabic and Hebrew, and add a fitting emoji. Also: is \"Cafe\u0301\" spelled right?"),
    A("- 中文：早上好 ☀️\n- العربية: صباح الخير 🌅\n- עברית: בוקר טוב 👋🏽\n\n"
      "\"Café\" is correct — with an acute accent on the e. Team emoji for fun: 👩‍💻👨‍👩‍👧‍👦🏳️‍🌈🇯🇵",
      "Chinese: 早上好. Arabic: صباح الخير (right-to-left). Hebrew: בוקר טוב. The user wrote Cafe + combining acute "
      "(U+0301), which displays as Café.")]}))

G.append(d({"id": "ho-linesep", "source": "code", "messages": [
    U("Why does my JSON parser choke on this string: \"line one\u2028line two\"?"),
    A("U+2028 (LINE SEPARATOR) is valid inside JSON strings, but some tools treat it as a line break:\u2028for example "
      "`str.splitlines()` in Python splits on it, and so does \u0085 (NEL). Split JSONL on `\\n` only.",
      "The character between 'one' and 'line' is U+2028. JSON allows it raw in strings; JavaScript before ES2019 did not. "
      "Python's splitlines treats U+2028, U+2029, U+0085, \\x0b, \\x0c, \\x1c-\\x1e as line boundaries.")]}))

G.append(d({"id": "ho-parts", "source": "chat", "messages": [
    {"role": "user", "content": [{"type": "text", "text": "Give me a synonym for 'quick'."},
                                 {"type": "text", "text": " One word, please."}]},
    A("Rapid.", "Synonyms: fast, rapid, swift. One word.")]}))

G.append(d({"id": "ho-inline-think", "source": "math", "messages": [
    U("What is 15% of 80?"),
    A("<think>\n10% of 80 is 8, 5% is 4, so 15% is 12.\n</think>\n\n15% of 80 is **12**.")]}))

G.append(d({"id": "ho-inline-empty-think", "source": "chat", "messages": [
    U("Say hello in Portuguese."), A("<think>\n\n</think>\n\nOlá!")]}))

G.append(d({"id": "ho-agent-loop", "source": "agent", "tools": [TOOL_LOOKUP, TOOL_SHELL], "messages": [
    U("Is the installed version of httpx in our container the latest one?"),
    A("", "First find the installed version, then look up the latest on PyPI.",
      tool_calls=[call("c1", "run_shell", {"cmd": "pip show httpx | head -2"})]),
    T("c1", "Name: httpx\nVersion: 0.27.0"),
    A(None, "Installed 0.27.0. Now the latest release.",
      tool_calls=[call("c2", "lookup_package", "{\"name\": \"httpx\", \"include_yanked\": false}")]),
    T("c2", {"name": "httpx", "version": "0.28.1", "license": "BSD-3-Clause"}),
    A("No — the container has **httpx 0.27.0**, and the latest release is **0.28.1**. Upgrade with "
      "`pip install -U httpx==0.28.1` after checking the changelog for breaking changes.",
      "0.27.0 < 0.28.1, so it's outdated.")]}))

G.append(d({"id": "ho-parallel-tools", "source": "agent", "tools": [TOOL_CONVERT], "messages": [
    U("Convert 26.2 miles to km and 5 kg to pounds."),
    A(None, "Two independent conversions: call both at once.",
      tool_calls=[call("p1", "convert_units", {"value": 26.2, "from": "mi", "to": "km"}),
                  call("p2", "convert_units", "{\"value\": 5, \"from\": \"kg\", \"to\": \"lb\"}")]),
    T("p1", {"value": 42.165, "unit": "km"}),
    T("p2", {"value": 11.023, "unit": "lb"}),
    A("- 26.2 miles ≈ **42.16 km** (a marathon)\n- 5 kg ≈ **11.02 lb**", "Report both, rounded.")]}))

G.append(d({"id": "ho-tool-preface", "source": "agent", "tools": [TOOL_NOTES], "messages": [
    U("Find my notes about the data-pipeline retro, including archived ones."),
    A("Let me search your notes.", "Search with filters; include archived.",
      tool_calls=[call("n1", "search_notes", {"query": "data pipeline retro", "limit": 5, "include_archived": True,
                                              "filters": {"tags": ["retro", "数据"], "min_score": 0.75}, "cursor": None})]),
    T("n1", {"results": [{"title": "Retro: pipeline outage 03-02", "snippet": "Root cause: schema drift in the events table"}]}),
    A("I found one note: **\"Retro: pipeline outage 03-02\"** — the root cause was schema drift in the events table.",
      "One result. Summarise.")]}))

G.append(d({"id": "ho-agent-text-tool", "source": "agent", "tools": [TOOL_TRAINS], "messages": [
    S("You help travellers in Europe. Prices in EUR."),
    U("Find me a train from Zürich HB to München Hbf on 2026-04-03 with at most one change."),
    A(None, "Call find_trains with max_changes 1.",
      tool_calls=[call("t1", "find_trains", {"origin": "Zürich HB", "destination": "München Hbf", "date": "2026-04-03",
                                             "max_changes": 1})]),
    T("t1", "07:33 → 11:05 · EC 196 · direct · 49,90 €\n09:33 → 13:21 · EC 194 · 1 change (Lindau-Reutin) · 39,90 €"),
    A("Two options on 3 April 2026:\n\n| departs | arrives | train | changes | price |\n|---|---|---|---|---|\n"
      "| 07:33 | 11:05 | EC 196 | direct | €49.90 |\n| 09:33 | 13:21 | EC 194 | 1 (Lindau-Reutin) | €39.90 |",
      "Two results, both fit. Present as a table.")]}))

G.append(d({"id": "ho-tool-history", "source": "agent", "tools": [TOOL_CONVERT], "messages": [
    U("How many feet is 100 m?"),
    A(None, "convert", tool_calls=[call("h1", "convert_units", {"value": 100, "from": "m", "to": "ft"})]),
    T("h1", {"value": 328.084, "unit": "ft"}),
    A("100 m ≈ 328 ft.", "done"),
    U("Thanks. Roughly how many storeys is that?"),
    A("About **30 storeys**, assuming roughly 3.3 m (11 ft) per storey.",
      "Typical storey height ~3-3.5 m. 100/3.3 ≈ 30.")]}))

G.append(d({"id": "ho-unwrapped-call", "source": "agent", "tools": [TOOL_LOOKUP], "messages": [
    U("What licence does the requests package use?"),
    A(None, "Look it up.", tool_calls=[call("u1", "lookup_package", {"name": "requests"}, wrap=False)]),
    T("u1", {"name": "requests", "version": "2.32.3", "license": "Apache-2.0"}),
    A("`requests` is licensed under the **Apache License 2.0**.", "Apache-2.0.")]}))

# long record: insertion sort trace, > 1024 tokens of generated text after a short prompt
nums = [rng.randint(10, 99) for _ in range(40)]
arr, passes = nums[:], []
for i in range(1, len(arr)):
    key, j = arr[i], i - 1
    while j >= 0 and arr[j] > key:
        arr[j + 1] = arr[j]
        j -= 1
    arr[j + 1] = key
    passes.append(f"Pass {i}: insert {key} at position {j + 1} -> {arr}")
G.append(d({"id": "ho-long-insertion-sort", "source": "code", "messages": [
    U(f"Trace insertion sort on {nums}. Show the list after every pass."),
    A(f"Sorted result:\n\n```\n{arr}\n```\n\nInsertion sort made {len(passes)} passes; see the trace above.",
      "I'll insert each element into the sorted prefix to its left, shifting larger elements right.\n\n"
      + "\n".join(passes) + "\n\nDone — the list is sorted.")]}))

G.append(d({"id": "ho-medium", "source": "code", "messages": [
    U("Write a small Python CLI that counts lines, words and characters like `wc`, for several files."),
    A("```python\n#!/usr/bin/env python3\n\"\"\"Minimal wc: lines, words, characters for each file, plus a total.\"\"\"\n"
      "import argparse\nimport sys\n\n\ndef count(text: str) -> tuple[int, int, int]:\n"
      "    return text.count(\"\\n\"), len(text.split()), len(text)\n\n\n"
      "def main(argv=None) -> int:\n    ap = argparse.ArgumentParser(description=__doc__)\n"
      "    ap.add_argument(\"files\", nargs=\"*\", help=\"files to count (stdin when none)\")\n"
      "    args = ap.parse_args(argv)\n    totals = [0, 0, 0]\n    status = 0\n"
      "    for name in args.files or [\"-\"]:\n        try:\n"
      "            text = sys.stdin.read() if name == \"-\" else open(name, encoding=\"utf-8\").read()\n"
      "        except OSError as e:\n            print(f\"wc.py: {name}: {e.strerror}\", file=sys.stderr)\n"
      "            status = 1\n            continue\n        counts = count(text)\n"
      "        totals = [t + c for t, c in zip(totals, counts)]\n        print(f\"{counts[0]:8d}{counts[1]:8d}{counts[2]:8d} {name}\")\n"
      "    if len(args.files) > 1:\n        print(f\"{totals[0]:8d}{totals[1]:8d}{totals[2]:8d} total\")\n    return status\n\n\n"
      "if __name__ == \"__main__\":\n    sys.exit(main())\n```\n\n"
      "Differences from GNU `wc`: it counts characters rather than bytes (`wc -m`, not `wc -c`), and it reads each file "
      "into memory, which is fine for ordinary text files. A missing file prints an error and sets the exit status to 1, "
      "but the other files are still counted.",
      "Like wc: lines = count of newlines, words = whitespace-split, chars = len. argparse with nargs='*'; stdin when no "
      "files; keep going on errors with exit status 1; print a total when more than one file.")]}))

# ShareGPT
G.append(d({"id": "ho-sg-basic", "source": "chat", "conversations": [
    {"from": "human", "value": "What's the capital of Australia?"},
    {"from": "gpt", "value": "<think>\nCommon mistake is Sydney. It's Canberra.\n</think>\n\nThe capital of Australia is **Canberra**."}]}))

G.append(d({"id": "ho-sg-multi", "source": "chat", "conversations": [
    {"from": "system", "value": "You are a concise assistant."},
    {"from": "human", "value": "Recommend a sci-fi novel."},
    {"from": "gpt", "value": "Try *The Left Hand of Darkness* by Ursula K. Le Guin."},
    {"from": "human", "value": "Something more recent?"},
    {"from": "gpt", "value": "<think>\nRecent, well regarded: Project Hail Mary (2021).\n</think>\n\n*Project Hail Mary* by Andy Weir (2021)."}]}))

G.append(d({"id": "ho-sg-roles", "source": "chat", "conversations": [
    {"role": "user", "content": "Is a tomato a fruit?"},
    {"role": "assistant", "content": "Botanically yes — it develops from the flower's ovary and contains seeds. In cooking it's treated as a vegetable."}]}))

G.append(d({"id": "ho-sg-rolenames", "source": "math", "conversations": [
    {"role": "human", "content": "What is 2 to the power of 10?"},
    {"role": "gpt", "content": "<think>\n2^10 = 1024.\n</think>\n\n2¹⁰ = **1024**."}]}))

G.append(d({"id": "ho-sg-observation", "source": "agent", "conversations": [
    {"from": "human", "value": "What's 17 °C in Fahrenheit?"},
    {"from": "gpt", "value": "<think>\nUse the converter tool.\n</think>\n\n<tool_call>\n<function=convert_units>\n<parameter=value>\n17\n</parameter>\n<parameter=from>\nC\n</parameter>\n<parameter=to>\nF\n</parameter>\n</function>\n</tool_call>"},
    {"from": "observation", "value": "{\"value\": 62.6, \"unit\": \"F\"}"},
    {"from": "gpt", "value": "<think>\n62.6 F.\n</think>\n\n17 °C is **62.6 °F**."}]}))

G.append(d({"id": "ho-sg-function-response", "source": "agent", "conversations": [
    {"from": "human", "value": "Roll two dice for me."},
    {"from": "gpt", "value": "<tool_call>\n<function=roll>\n<parameter=dice>\n2d6\n</parameter>\n</function>\n</tool_call>"},
    {"from": "function_response", "value": "[4, 6]"},
    {"from": "gpt", "value": "<tool_call>\n<function=roll>\n<parameter=dice>\n1d6\n</parameter>\n</function>\n</tool_call>"},
    {"from": "tool", "value": "[3]"},
    {"from": "gpt", "value": "You rolled 4 and 6 (total 10). I also rolled a bonus die: 3."}]}))

G.append(d({"source": "multilingual", "conversations": [
    {"from": "human", "value": "Wie sagt man „Danke schön“ auf Italienisch?"},
    {"from": "gpt", "value": "<think>\nGrazie mille.\n</think>\n\nAuf Italienisch sagt man **„Grazie mille“**."}]}))

G.append(d({"id": "ho-sg-ws", "source": "chat", "conversations": [
    {"from": "human", "value": "\n\n  List two uses of baking soda.  "},
    {"from": "gpt", "value": "   <think>\n  Cleaning, baking.  \n</think>\n\n  1. Leavening in baking\n2. Gentle cleaning scrub   \n\n"}]}))

# Shape 3
G.append(d({"id": "ho-gen-basic", "source": "math", "messages": [U("What is the derivative of x³ + 2x?")],
            "completion": {"role": "assistant", "content": "d/dx (x³ + 2x) = **3x² + 2**.",
                           "reasoning_content": "Power rule: 3x², derivative of 2x is 2."},
            "model": "qwen3.6-27b", "finish_reason": "stop"}))

G.append(d({"id": "ho-gen-norole", "source": "chat", "messages": [U("Give a one-line definition of entropy.")],
            "completion": {"content": "Entropy measures how many microscopic arrangements are consistent with a system's macroscopic state — loosely, its disorder.",
                           "reasoning_content": "Statistical definition, short."}}))

G.append(d({"id": "ho-gen-str-think", "source": "code", "messages": [U("What does `git stash pop` do?")],
            "completion": "<think>\nApplies the latest stash and removes it from the stash list.\n</think>\n\n`git stash pop` re-applies the most recent stash to your working tree and then drops it from the stash list (unless there's a conflict, in which case the stash is kept)."}))

G.append(d({"id": "ho-gen-str-plain", "source": "chat", "messages": [S("Answer in one word."), U("Opposite of 'ancient'?")],
            "completion": "Modern."}))

G.append(d({"id": "ho-gen-tools", "source": "agent", "tools": [TOOL_TRAINS],
            "messages": [U("Any trains from Wien Hbf to Praha hl.n. tomorrow (2026-05-14), direct only?")],
            "completion": {"role": "assistant", "content": "",
                           "reasoning_content": "Direct only means max_changes = 0.",
                           "tool_calls": [call("g1", "find_trains",
                                               "{\"origin\": \"Wien Hbf\", \"destination\": \"Praha hl.n.\", \"date\": \"2026-05-14\", \"max_changes\": 0}")]},
            "finish_reason": "tool_calls"}))

G.append(d({"id": "ho-gen-history", "source": "code",
            "messages": [S("You are a Linux expert."), U("How do I see disk usage?"), A("Use `df -h` for filesystems and `du -sh *` for directories."),
                         U("And inode usage?")],
            "completion": {"role": "assistant", "content": "Use `df -i` — it shows used and free inodes per filesystem.",
                           "reasoning_content": "df -i."}}))

G.append(d({"id": "ho-gen-reasoning-alias", "source": "math", "messages": [U("Simplify 18/24.")],
            "completion": {"role": "assistant", "content": "18/24 = **3/4**.", "reasoning": "gcd(18,24)=6."}}))

G.append(d({"id": "ho-gen-continue-loop", "source": "agent", "tools": [TOOL_SHELL],
            "messages": [U("How much free disk space is on /srv?"),
                         A(None, "Run df.", tool_calls=[call("k1", "run_shell", {"cmd": "df -h /srv", "cwd": "/"})]),
                         T("k1", "Filesystem  Size  Used Avail Use% Mounted on\n/dev/sdb1   500G  412G   88G  83% /srv")],
            "completion": {"role": "assistant", "content": "/srv has **88 GB free** of 500 GB (83% used).",
                           "reasoning_content": "Avail 88G."}}))

G.append(d({"id": "ho-ok-no-reasoning", "source": "degenerate", "messages": [U("Answer with OK only."), A("OK.")]}))

G.append(d({"id": "ho-reasoning-only", "source": "chat", "messages": [
    U("Think of a number between 1 and 10 but don't tell me."), A("", "I'll pick 7 and keep it to myself.")]}))

G.append(d({"id": "ho-extra-fields", "source": "chat", "weight": 0.5, "meta": {"annotator": "x", "tags": ["a", "b"]},
            "messages": [U("Spell 'necessary' backwards."), A("yrassecen", "n-e-c-e-s-s-a-r-y reversed: y-r-a-s-s-e-c-e-n.")]}))

G.append(d({"id": "ho-unicode-args", "source": "agent", "tools": [TOOL_TRAINS, TOOL_LOOKUP], "messages": [
    U("Trains from 東京 to 京都 on 2026-06-01?"),
    A(None, "Call find_trains with the Japanese station names.",
      tool_calls=[call("j1", "find_trains", {"origin": "東京", "destination": "京都", "date": "2026-06-01"})]),
    T("j1", "のぞみ 9号 06:00 → 08:15"),
    A("The first Nozomi (のぞみ 9号) leaves 東京 at 06:00 and reaches 京都 at 08:15.", "One result.")]}))

G.append(d({"id": "ho-tools-unused", "source": "agent", "tools": [TOOL_SHELL], "messages": [
    U("What does the `-r` flag of `rm` do?"),
    A("`-r` (recursive) lets `rm` delete directories and everything inside them.", "No tool needed; general knowledge.")]}))

G.append(d({"id": "ho-ends-tool-call", "source": "agent", "tools": [TOOL_LOOKUP], "messages": [
    U("Check the latest version of numpy."),
    A(None, "Look it up.", tool_calls=[call("e1", "lookup_package", "{\"name\": \"numpy\"}")])]}))

G.append(d({"id": "ho-empty-system-tools", "source": "agent", "tools": [TOOL_CONVERT], "messages": [
    S(""), U("How many grams in an ounce?"), A("One (avoirdupois) ounce is about **28.35 g**.", "28.3495 g.")]}))

G.append(d({"id": "ho-sg-history-think", "source": "chat", "conversations": [
    {"from": "human", "value": "Tea or coffee for focus?"},
    {"from": "gpt", "value": "<think>\nBoth have caffeine; tea has L-theanine.\n</think>\n\nTea gives a gentler lift thanks to L-theanine; coffee is stronger."},
    {"from": "human", "value": "Which has more caffeine per cup?"},
    {"from": "gpt", "value": "<think>\nCoffee ~95 mg, black tea ~47 mg.\n</think>\n\nCoffee — roughly 95 mg per cup versus about 47 mg for black tea."}]}))

# ------------------------------------------------------------------------------------------------ bad records

csv_rows = "\n".join(f"{1000 + i},{rng.choice(['north', 'south', 'east', 'west'])},{rng.randint(1, 9999) / 100:.2f},"
                     f"2026-0{rng.randint(1, 9)}-{rng.randint(10, 28)}" for i in range(320))
BAD = {
    3: '{"id": "ho-bad-truncated", "source": "chat", "messages": [{"role": "user", "content": "Hel',
    7: d([U("a list, not an object"), A("ok")]),
    11: d({"id": "ho-bad-nomsg", "source": "chat", "prompt": "What is 2+2?", "response": "4"}),
    14: d({"source": "chat", "messages": ["What is 2+2?", A("4")]}),
    17: d({"id": "ho-bad-narrator", "messages": [{"role": "narrator", "content": "It was a dark night."}, U("Continue."), A("The wind howled.")]}),
    20: d({"id": "ho-bad-args-json", "source": "agent", "tools": [TOOL_LOOKUP], "messages": [
        U("Latest pandas?"), A(None, tool_calls=[call("x1", "lookup_package", "{\"name\": \"pandas\",}")]),
        T("x1", "{\"version\": \"2.2.3\"}"), A("pandas 2.2.3.")]}),
    23: d({"id": "ho-bad-nouser", "messages": [S("You are helpful."), A("Hello! How can I help?")]}),
    26: d({"id": "ho-bad-ends-user", "messages": [U("Hi"), A("Hello!"), U("Tell me a joke.")]}),
    29: d({"id": "ho-bad-system-late", "messages": [U("Hi"), S("Be terse."), A("Hi.")]}),
    32: '{"id": "ho-bad-two-objects", "messages": []} {"id": "second"}',
    35: d("a bare JSON string"),
    38: d({"id": "ho-bad-empty", "messages": []}),
    41: d({"id": "ho-bad-bing", "conversations": [{"from": "human", "value": "Hi"}, {"from": "bing", "value": "Hello!"}]}),
    44: d({"id": "ho-bad-args-list", "tools": [TOOL_CONVERT], "messages": [
        U("Convert 3 ft to m"), A("", tool_calls=[call("y1", "convert_units", "[3, \"ft\", \"m\"]")]),
        T("y1", "0.9144"), A("3 ft = 0.9144 m.")]}),
    47: d({"id": "ho-bad-sg-nouser", "conversations": [{"from": "system", "value": "Be nice."}, {"from": "gpt", "value": "Hi there!"}]}),
    50: d({"id": "ho-bad-sg-ends-human", "conversations": [{"from": "human", "value": "Ping?"}]}),
    53: d({"id": "ho-bad-long-prompt", "source": "code", "messages": [
        U("Here is our sales export (id,region,amount,date). Which region has the most rows?\n\n```csv\nid,region,amount,date\n" + csv_rows + "\n```"),
        A(f"**{max(['north', 'south', 'east', 'west'], key=lambda r: csv_rows.count(',' + r + ','))}** has the most rows.",
          "Count rows per region.")]}),
    56: d({"id": "ho-bad-null-msg", "messages": [U("Hi"), None, A("Hello")]}),
    59: "null",
}
BLANK = {9: "", 30: "   \t ", 60: ""}
N = 66
lines, gi = [], iter(G)
for i in range(1, N + 1):
    if i in BAD:
        lines.append(BAD[i])
    elif i in BLANK:
        lines.append(BLANK[i])
    else:
        lines.append(next(gi))
rest = list(gi)
assert not rest, f"{len(rest)} good records left over"
OUT.parent.mkdir(parents=True, exist_ok=True)
OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
print(f"wrote {OUT}: {N} lines, {len(G)} good, {len(BAD)} bad, {len(BLANK)} blank")
