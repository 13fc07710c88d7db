"""Conversations for chat-template tests: a seeded generator covering the Qwen3.6 format's features, plus the
conversations every template must refuse. Used by test_qwen.py and test_chat_template.py."""
import random

TEXTS = ["Hello!", "  padded with spaces  ", "\n\nleading newlines", "trailing newlines\n\n", "", "   ",
         "Grüße aus München — ça va?", "你好，世界。", "مرحبا بالعالم", "नमस्ते दुनिया", "emoji 😀👍🏽",
         "multi\nline\n\ntext", "tabs\tand\ttabs", "<tool_response>\nfake\n</tool_response>",
         "<tool_response>x</tool_response> not only", "code: `print('hi')`\n```python\nx = 1\n```",
         "a </think> in the middle", "<think>\nuser thinks\n</think>", "{{ not jinja }} {% raw %}",
         "json {\"a\": [1, 2]}", "x" * 50]
REASONING = ["", " ", "Let me think.", "\nstep 1\nstep 2\n", "  spaced  ", "多步推理。", "uses </think> inside?"]
ANSWERS = ["OK.", "", "  The answer is 42.  ", "\n\nFinal answer\n", "Sure — here it is:\n\n- a\n- b",
           "答案是四十二。", "Done </think> weird"]
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Weather for a city (°C).",
     "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "Stadt, e.g. Zürich"},
                    "days": {"type": "integer"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "search", "description": "Search the web <safely> & quickly",
     "parameters": {"type": "object", "properties": {"q": {"type": "string"}, "filters": {"type": "object"}}}}},
    {"name": "flat_tool", "description": "A tool given without the function wrapper", "parameters": {}},
]
ARG_VALUES = ["Paris", "", "multi\nline\nvalue", "  spaced  ", 3, 0, -1.5, 1e21, True, False, None,
              [1, "two", 3.0], {"nested": {"k": "ü"}}, [], {}, "東京", "quote \" and backslash \\", "<tag>"]

def content_of(r, text):
    "A string or a list of text parts, sometimes None."
    k = r.random()
    if k < 0.6: return text
    if k < 0.85:
        cut = r.randint(0, len(text))
        return [{"type": "text", "text": text[:cut]}, {"type": "text", "text": text[cut:]}]
    if k < 0.95: return [{"type": "text", "text": text}]
    return None

def tool_call(r):
    name = r.choice(["get_weather", "search", "flat_tool", "do_thing"])
    args = {}
    for i in range(r.choice([0, 1, 1, 2, 3])):
        args[r.choice(["city", "q", "days", "filters", "x", f"arg{i}"])] = r.choice(ARG_VALUES)
    k = r.random()
    if k < 0.7: return {"id": f"call_{r.randint(0, 999)}", "type": "function",
                        "function": {"name": name, "arguments": args}}
    if k < 0.9: return {"name": name, "arguments": args}
    return {"type": "function", "function": {"name": name}}  # no arguments key

def assistant(r, final=True):
    m = {"role": "assistant"}
    answer = r.choice(ANSWERS)
    style = r.random()
    if style < 0.4: m["reasoning_content"] = r.choice(REASONING)
    elif style < 0.5: m[r.choice(["reasoning", "thinking"])] = r.choice(REASONING)
    elif style < 0.7:
        answer = r.choice(["<think>\n", "<think>", ""]) + r.choice(REASONING) + r.choice(
            ["\n</think>\n\n", "</think>", "</think>\n"]) + answer
    elif style < 0.75: m["reasoning_content"] = None
    if r.random() < 0.3:
        m["tool_calls"] = [tool_call(r) for _ in range(r.choice([1, 1, 2, 3]))]
        if r.random() < 0.3: answer = r.choice(["", None])
    m["content"] = content_of(r, answer) if answer is not None else None
    return m

def tool_msg(r):
    m = {"role": "tool", "content": content_of(r, r.choice(TEXTS + ['{"temp": 21}', "error: not found"]))}
    if r.random() < 0.5: m["tool_call_id"] = f"call_{r.randint(0, 999)}"
    if r.random() < 0.3: m["name"] = "get_weather"
    return m

def user(r): return {"role": "user",
                     "content": content_of(r, r.choice(TEXTS[:3] + TEXTS[6:] if r.random() < 0.9 else TEXTS))}

def conversation(r):
    msgs = []
    if r.random() < 0.5: msgs.append({"role": "system", "content": content_of(
        r, r.choice(["You are helpful.", "", "  Be brief.\n", "系统提示", "multi\nline system"]))})
    for turn in range(r.choice([1, 1, 2, 3, 4])):
        msgs.append(user(r))
        if r.random() < 0.2: msgs.append(user(r))  # two user messages in a row
        for step in range(r.choice([0, 0, 1, 2, 3])):  # agentic loop
            a = assistant(r); a.setdefault("tool_calls", [tool_call(r)])
            msgs.append(a)
            for _ in range(r.choice([1, 1, 2, 3])): msgs.append(tool_msg(r))
            if r.random() < 0.1:  # tool output wrapped in a user turn by hand
                msgs.append({"role": "user", "content": "<tool_response>\nmanual\n</tool_response>"})
        if r.random() < 0.85: msgs.append(assistant(r))
    tools = None
    k = r.random()
    if k < 0.35: tools = r.sample(TOOLS, r.randint(1, 3))
    elif k < 0.4: tools = []
    kwargs = {}
    for key, vals in (("enable_thinking", [True, False]), ("preserve_thinking", [True, False]),
                      ("add_vision_id", [True])):
        if r.random() < 0.3: kwargs[key] = r.choice(vals)
    return msgs, tools, kwargs

def media_conversation(r):
    parts = [{"type": "image", "image": "x.png"}, {"type": "image_url", "image_url": {"url": "http://x"}},
             {"type": "video", "video": "v.mp4"}, {"type": "text", "text": "look"}]
    msgs = [{"role": "user", "content": r.sample(parts, r.randint(1, 4))},
            {"role": "assistant", "content": "A picture."},
            {"role": "user", "content": [r.choice(parts[:3]), {"type": "text", "text": " and?"}]}]
    if r.random() < 0.5: msgs.append({"role": "assistant", "content": "Also a picture."})
    return msgs, None, ({"add_vision_id": True} if r.random() < 0.5 else {})

def conversations(n, seed=0):
    "`n` random conversations plus n/20 with images and videos, as (messages, tools, template kwargs)."
    r = random.Random(seed)
    out = [conversation(r) for _ in range(n)]
    out += [media_conversation(r) for _ in range(n // 20)]
    return out

# (name, messages): conversations the Qwen3.6 format refuses.
RAISES = [
    ("empty", []),
    ("no user query", [{"role": "system", "content": "s"}, {"role": "assistant", "content": "hi"}]),
    ("only tool responses", [{"role": "user", "content": "<tool_response>\nx\n</tool_response>"}, {"role": "assistant",
                                                                                                   "content": "a"}]),
    ("system not first", [{"role": "user", "content": "q"}, {"role": "system", "content": "s"}]),
    ("unknown role", [{"role": "user", "content": "q"}, {"role": "narrator", "content": "n"}]),
    ("bad content type", [{"role": "user", "content": 42}]),
    ("bad part", [{"role": "user", "content": [{"type": "audio", "audio": "a.wav"}]}]),
    ("image in system", [{"role": "system", "content": [{"type": "image", "image": "x"}]}, {"role": "user",
                                                                                            "content": "q"}]),
    ("string arguments", [{"role": "user", "content": "q"}, {"role": "assistant", "content": "", "tool_calls": [{
        "function": {"name": "f", "arguments": "{\"a\": 1}"}}]}]),
    ("tool call without name", [{"role": "user", "content": "q"}, {"role": "assistant", "content": "",
                                                                   "tool_calls": [{"function": {"arguments": {}}}]}]),
]
