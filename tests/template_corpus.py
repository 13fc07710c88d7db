"""A corpus for the loss-mask rule across chat templates, and an oracle for it built on transformers alone.

* Families: the real templates in ../shared/reference/templates (read there, never copied; each with its tokens.json
  facts), plus small templates written here, one per failure class the rule must handle (eos after the final turn,
  special reasoning tags with no end-of-turn token, named templates, string-concatenated tool arguments,
  last-message-only think blocks, reasoning the template does not render, a `thinking` field with two stop tokens).
* `model_dir` builds, for a family, a model directory as a user has one: a tokenizer.json carrying the family's
  control tokens (`union_tokenizer_json`: the embedded Qwen3.6 BPE plus every family's control tokens, each one added
  token), tokenizer_config.json (template(s), bos/eos, added_tokens_decoder) and generation_config.json (the
  family's stop tokens as `eos_token_id`).
* `RECORDS`: every record shape, system prompts, multi-turn history, agentic loops with parallel calls, reasoning
  under each of its three names, string and dict arguments, unicode.
* `oracle`: DESIGN.md's rule computed with `transformers.AutoTokenizer.apply_chat_template` and the family's own
  facts (stop tokens, reasoning field, argument form); it does not import dflash_nb.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

SHARED_TEMPLATES = Path(__file__).resolve().parents[2] / 'shared' / 'reference' / 'templates'


@dataclass
class Family:
    name: str
    templates: dict  # template name -> source ('default' alone for a single template)
    control: list
    special: list
    bos: str | None
    eos: str | None
    end_of_turn: list  # the model's stop tokens (generation_config eos_token_id)
    reasoning_field: str | None
    tool_args: str | None
    source: str = 'written for this corpus'


def real_families() -> list[Family]:
    "The reference templates with their tokens.json facts ([] where ../shared is absent)."
    out = []
    for d in sorted(p for p in SHARED_TEMPLATES.glob('*') if p.is_dir()) if SHARED_TEMPLATES.is_dir() else []:
        t = json.loads((d / 'tokens.json').read_text())
        if (d / 'chat_template.jinja').is_file(): tpls = {'default': (d / 'chat_template.jinja').read_text()}
        else: tpls = {f.name[len('chat_template.'):-len('.jinja')]: f.read_text() for f
                      in sorted(d.glob('chat_template.*.jinja'))}
        out.append(Family(d.name, tpls, t['control_tokens'], t['special'], t['bos_token'], t['eos_token'],
                          t['end_of_turn'],
                          t['reasoning_field'], t['tool_args'], source=f'../shared/reference/templates/{d.name}'))
    return out


# ---------------------------------------------------------------------------------------------- small templates

# Eos after the final turn (Phi-3.5 / Phi-4-mini style): the model stops at <|end|>; <|endoftext|> is appended.
PHI_LIKE = ("{% for m in messages %}{{ '<|' + m.role + '|>' + m.content }}{% for c in m.tool_calls or [] %}"
            "<|tool_call|>{{ c.function | tojson }}<|/tool_call|>{% endfor %}<|end|>{% endfor %}"
            "{% if add_generation_prompt %}<|assistant|>{% else %}{{ eos_token }}{% endif %}")

# Reasoning tags that are special tokens, and no end-of-turn token at all (GLM-4.5 style: the next header ends a turn).
GLM_LIKE = """[gMASK]<sop>{% if tools %}<|system|>
# Tools
{% for t in tools %}{{ t | tojson }}
{% endfor %}{% endif %}{% for m in messages %}{% if m.role == 'user' %}<|user|>
{{ m.content }}{% elif m.role == 'system' %}<|system|>
{{ m.content }}{% elif m.role == 'tool' %}<|observation|>
<tool_response>{{ m.content }}</tool_response>{% elif m.role == 'assistant' %}<|assistant|>
<think>{{ m.reasoning_content | default('') }}</think>
{{ m.content }}{% for c in m.tool_calls or [] %}<tool_call>{{ c.function.name }}
{% for k, v in c.function.arguments | items %}<arg_key>{{ k }}</arg_key>
<arg_value>{{ v if v is string else v | tojson }}</arg_value>
{% endfor %}</tool_call>{% endfor %}{% endif %}{% endfor %}{% if add_generation_prompt %}<|assistant|>
{% endif %}"""

# Named templates (Hermes 3 style): `default` renders no tools; `tool_use` lists them and writes the calls.
HERMES_DEFAULT = """{% for m in messages %}<|im_start|>{{ m.role }}
{{ m.content }}<|im_end|>
{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant
{% endif %}"""
HERMES_TOOL_USE = """<|im_start|>system
You are a function calling AI model. <tools>{% for t in tools %}{{ t | tojson }}{% endfor %}</tools><|im_end|>
{% for m in messages %}{% if m.role == 'assistant' %}<|im_start|>assistant
{{ m.content }}{% for c in m.tool_calls or [] %}<tool_call>
{"name": "{{ c.function.name }}", "arguments": {{ c.function.arguments | tojson }}}
</tool_call>{% endfor %}<|im_end|>
{% elif m.role == 'tool' %}<|im_start|>tool
<tool_response>
{{ m.content }}
</tool_response><|im_end|>
{% else %}<|im_start|>{{ m.role }}
{{ m.content }}<|im_end|>
{% endif %}{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant
{% endif %}"""

# Tool-call arguments concatenated as a string (DeepSeek-V3.1 style): a dict raises TypeError.
DSV31_LIKE = ("{{ bos_token }}{% for m in messages %}{% if m.role == 'system' %}{{ m.content }}"
              "{% elif m.role == 'user' %}<｜User｜>{{ m.content }}"
              "{% elif m.role == 'assistant' %}<｜Assistant｜></think>{{ m.content }}{% if m.tool_calls "
              "%}<｜tool▁calls▁begin｜>{% for c in m.tool_calls %}{{ '<｜tool▁call▁begin｜>' + c.function.name + "
              "'<｜tool▁sep｜>' + c.function.arguments + '<｜tool▁call▁end｜>' }}{% endfor %}<｜tool▁calls▁end｜>{% endif "
              "%}<｜end▁of▁sentence｜>{% elif m.role == 'tool' %}<｜tool▁output▁begin｜>{{ m.content "
              "}}<｜tool▁output▁end｜>{% endif %}{% endfor %}{% if add_generation_prompt %}<｜Assistant｜></think>{% endif "
              "%}")

# A think block written for an empty reasoning only when the assistant turn is the last message (Qwen3's original).
QWEN3_LIKE = """{%- set ns = namespace(last_query=-1) %}
{%- for m in messages %}{%- if m.role == 'user' %}{%- set ns.last_query = loop.index0 %}{%- endif %}{%- endfor %}
{%- for m in messages %}
{%- if m.role == 'assistant' %}
{{- '<|im_start|>assistant\\n' }}
{%- set r = m.reasoning_content | default('') %}
{%- if loop.index0 > ns.last_query and (loop.last or r) %}\
{{- '<think>\\n' + r.strip() + '\\n</think>\\n\\n' }}{%- endif %}
{{- m.content }}
{%- for c in m.tool_calls or [] %}{{- '\\n<tool_call>\\n' + c.function | tojson + '\\n</tool_call>' }}{%- endfor %}
{{- '<|im_end|>\\n' }}
{%- elif m.role == 'tool' %}\
{{- '<|im_start|>user\\n<tool_response>\\n' + m.content + '\\n</tool_response><|im_end|>\\n' }}
{%- else %}{{- '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"""

# Reasoning dropped from the final assistant turn (Kimi-K2-Thinking style): kept in earlier turns.
KIMI_LIKE = """{%- for m in messages %}
{%- if m.role == 'assistant' %}<|im_assistant|>assistant<|im_middle|>\
{% if not loop.last and m.reasoning_content %}<think>{{ m.reasoning_content }}</think>{% endif %}\
{{ m.content }}
{%- if m.tool_calls %}<|tool_calls_section_begin|>{% for c in m.tool_calls %}\
<|tool_call_begin|>functions.{{ c.function.name }}:{{ loop.index0 }}\
<|tool_call_argument_begin|>{{ c.function.arguments | tojson }}<|tool_call_end|>{% endfor %}\
<|tool_calls_section_end|>{% endif %}<|im_end|>
{%- elif m.role == 'tool' %}<|im_system|>tool<|im_middle|>{{ m.content }}<|im_end|>
{%- else %}<|im_{{ m.role }}|>{{ m.role }}<|im_middle|>{{ m.content }}<|im_end|>{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|im_assistant|>assistant<|im_middle|>{% endif %}"""

# Reasoning read from `thinking`, two stop tokens (gpt-oss style: <|call|> after a tool call, <|return|> after the
# answer).
GPTOSS_LIKE = """{%- for m in messages %}
{%- if m.role == 'assistant' %}
{%- if m.thinking %}<|start|>assistant<|channel|>analysis<|message|>{{ m.thinking }}<|end|>{% endif %}
{%- if m.tool_calls %}{% for c in m.tool_calls %}\
<|start|>assistant to=functions.{{ c.function.name }}<|channel|>commentary json\
<|message|>{{ c.function.arguments | tojson }}<|call|>{% endfor %}
{%- else %}<|start|>assistant<|channel|>final<|message|>{{ m.content }}\
{{ '<|return|>' if loop.last else '<|end|>' }}{% endif %}
{%- elif m.role == 'tool' %}<|start|>functions to=assistant<|channel|>commentary<|message|>{{ m.content }}<|end|>
{%- else %}<|start|>{{ m.role }}<|message|>{{ m.content }}<|end|>{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|start|>assistant{% endif %}"""

_DS = ['<｜begin▁of▁sentence｜>', '<｜User｜>', '<｜Assistant｜>', '<｜end▁of▁sentence｜>', '<｜tool▁calls▁begin｜>',
       '<｜tool▁call▁begin｜>', '<｜tool▁sep｜>', '<｜tool▁call▁end｜>', '<｜tool▁calls▁end｜>', '<｜tool▁output▁begin｜>',
       '<｜tool▁output▁end｜>']
_KIMI = ['<|im_user|>', '<|im_system|>', '<|im_assistant|>', '<|im_middle|>', '<|im_end|>',
         '<|tool_calls_section_begin|>',
         '<|tool_calls_section_end|>', '<|tool_call_begin|>', '<|tool_call_argument_begin|>', '<|tool_call_end|>']
_OSS = ['<|start|>', '<|channel|>', '<|message|>', '<|end|>', '<|return|>', '<|call|>']
_GLM = ['[gMASK]', '<sop>', '<|system|>', '<|user|>', '<|assistant|>', '<|observation|>', '<|endoftext|>', '<think>',
        '</think>',
        '<tool_call>', '</tool_call>', '<tool_response>', '</tool_response>', '<arg_key>', '</arg_key>', '<arg_value>',
        '</arg_value>']
_PHI = ['<|system|>', '<|user|>', '<|assistant|>', '<|tool|>', '<|end|>', '<|endoftext|>', '<|tool_call|>',
        '<|/tool_call|>']

MINE = [
    Family('phi-like (eos after the final turn)', {'default': PHI_LIKE}, _PHI, _PHI, None, '<|endoftext|>',
           ['<|end|>', '<|endoftext|>'], None, 'dict'),
    Family('glm-like (special reasoning tags, no end-of-turn token)', {'default': GLM_LIKE}, _GLM, _GLM, None,
           '<|endoftext|>',
           ['<|endoftext|>', '<|user|>', '<|observation|>'], 'reasoning_content', 'dict'),
    Family('hermes-like (named templates)', {'default': HERMES_DEFAULT, 'tool_use': HERMES_TOOL_USE},
           ['<|im_start|>', '<|im_end|>', '<tool_call>', '</tool_call>'], ['<|im_start|>', '<|im_end|>'], None,
           '<|im_end|>',
           ['<|im_end|>'], None, 'dict'),
    Family('deepseek-v3.1-like (string-concatenated arguments)', {'default': DSV31_LIKE}, _DS + ['</think>'], _DS,
           '<｜begin▁of▁sentence｜>', '<｜end▁of▁sentence｜>', ['<｜end▁of▁sentence｜>'], None, 'string'),
    Family('qwen3-like (think block on the last message only)', {'default': QWEN3_LIKE},
           ['<|im_start|>', '<|im_end|>', '<think>', '</think>', '<tool_call>', '</tool_call>'],
           ['<|im_start|>', '<|im_end|>'],
           None, '<|im_end|>', ['<|im_end|>', '<|endoftext|>'], 'reasoning_content', 'dict'),
    Family('kimi-like (reasoning not rendered on the final turn)', {'default': KIMI_LIKE},
           _KIMI + ['<think>', '</think>'], _KIMI,
           None, '<|im_end|>', ['<|im_end|>'], 'reasoning_content', 'dict'),
    Family('gpt-oss-like (thinking field, two stop tokens)', {'default': GPTOSS_LIKE}, _OSS, _OSS, None, '<|return|>',
           ['<|return|>', '<|call|>'], 'thinking', 'dict'),
]


# ---------------------------------------------------------------------------------------------- model directories

def union_tokenizer_json(base_tokenizer_json: dict, families) -> dict:
    """The embedded Qwen3.6 BPE plus the control tokens of every family (special where a family marks them so: the
    reasoning tags `<think>`/`</think>` are special, as GLM and this project's Qwen tokenizer mark them). One tokenizer
    for all families keeps the corpus fast (loaded and derived once); each family's tokens are single added tokens."""
    tj = dict(base_tokenizer_json)
    added = [dict(t) for t in tj['added_tokens']]
    by_text = {t['content']: t for t in added}
    next_id = max(t['id'] for t in added) + 1
    for fam in families:
        for text in dict.fromkeys(fam.control + fam.end_of_turn + [x for x in (fam.bos, fam.eos) if x]):
            if text not in by_text:
                by_text[text] = t = dict(id=next_id, content=text, single_word=False, lstrip=False, rstrip=False,
                                         normalized=False, special=False)
                added.append(t); next_id += 1
            by_text[text]['special'] |= text in fam.special or text in (fam.bos, fam.eos)
    tj['added_tokens'] = added
    return tj


def model_dir(tokenizer_json: dict, fam: Family, out: Path) -> Path:
    """A model directory for `fam`: `tokenizer_json` (with the family's tokens), its template(s), bos/eos and stop
    tokens."""
    out.mkdir(parents=True)
    (out / 'tokenizer.json').write_text(json.dumps(tokenizer_json, ensure_ascii=False))
    added = tokenizer_json['added_tokens']
    ids = {t['content']: t['id'] for t in added}
    cfg = {'tokenizer_class': 'PreTrainedTokenizerFast', 'clean_up_tokenization_spaces': False,
           'model_max_length': 1 << 20,
           'added_tokens_decoder': {str(t['id']): {k: v for k, v in t.items() if k != 'id'} for t in added}}
    if fam.bos: cfg['bos_token'] = fam.bos
    if fam.eos: cfg['eos_token'] = fam.eos
    cfg['chat_template'] = (fam.templates['default'] if list(fam.templates) == ['default']
                            else [{'name': n, 'template': s} for n, s in fam.templates.items()])
    (out / 'tokenizer_config.json').write_text(json.dumps(cfg, ensure_ascii=False, indent=1))
    (out / 'generation_config.json').write_text(json.dumps({'eos_token_id': [ids[t] for t in fam.end_of_turn]}))
    return out


# ---------------------------------------------------------------------------------------------- records

TOOLS = [{'type': 'function', 'function': {'name': 'get_weather', 'description': 'Weather for a city (°C).',
          'parameters': {'type': 'object', 'properties': {'city': {'type': 'string'}, 'days': {'type': 'integer'}},
                         'required': ['city']}}},
         {'type': 'function', 'function': {'name': 'search', 'description': 'Search the web.',
          'parameters': {'type': 'object', 'properties': {'q': {'type': 'string'}}}}}]
SYS = {'role': 'system', 'content': 'You are a terse assistant.'}


def call(i, name, args):
    return {'id': f'call_{i}', 'type': 'function', 'function': {'name': name, 'arguments': args}}


def tool(i, content): return {'role': 'tool', 'tool_call_id': f'call_{i}', 'content': content}


@dataclass
class Case:
    id: str
    messages: list  # as normalised records hold them (reasoning under the record's own field name)
    tools: list | None = None
    shape: str = 'messages'  # messages | sharegpt | completion


RECORDS = [
    Case('plain', [SYS, {'role': 'user', 'content': 'What is 2+2?'}, {'role': 'assistant', 'content': '4.'}]),
    Case('unicode-no-system', [{'role': 'user', 'content': 'Grüße — 你好 🙂 e\u0301'}, {'role': 'assistant',
                                                                                     'content': 'Hallo! 你好。 👍🏽'}]),
    Case('multi-turn', [SYS, {'role': 'user', 'content': 'Hi'}, {'role': 'assistant', 'content': 'Hello.'},
                        {'role': 'user', 'content': 'Name a colour.'}, {'role': 'assistant', 'content': 'Blue.'}]),
    Case('reasoning_content', [SYS, {'role': 'user', 'content': 'What is 2+2?'},
                               {'role': 'assistant', 'content': '4.', 'reasoning_content': 'Add them: 2+2=4.'}]),
    Case('reasoning-field', [{'role': 'user', 'content': 'Hi'}, {'role': 'assistant', 'content': 'Hello.'},
                             {'role': 'user', 'content': 'Capital of France?'},
                             {'role': 'assistant', 'content': 'Paris.', 'reasoning': 'France → Paris.'}]),
    Case('thinking-field', [SYS, {'role': 'user', 'content': 'Say OK.'}, {'role': 'assistant', 'content': 'OK.',
                                                                          'thinking': 'Easy.'}]),
    Case('empty-reasoning-ok', [{'role': 'user', 'content': 'Say OK.'}, {'role': 'assistant', 'content': 'OK.',
                                                                         'reasoning_content': ''}]),
    Case('agentic-parallel', [SYS, {'role': 'user', 'content': 'Weather in Paris and Zürich?'},
                              {'role': 'assistant', 'content': '', 'reasoning_content': 'Two cities: call both.',
                               'tool_calls': [call(1, 'get_weather', {'city': 'Paris'}),
                                              call(2, 'get_weather', {'city': 'Zürich', 'days': 2})]},
                              tool(1, '{"temp_c": 18}'), tool(2, '{"temp_c": 12}'),
                              {'role': 'assistant', 'content': 'Paris 18°C, Zürich 12°C.',
                               'reasoning_content': 'Report both.'}], TOOLS),
    Case('agentic-string-args', [{'role': 'user', 'content': 'Search for DFlash.'},
                                 {'role': 'assistant', 'content': '',
                                  'tool_calls': [call(3, 'search', '{"q":"DFlash  drafter"}')]},
                                 tool(3, 'DFlash: block diffusion drafts.'),
                                 {'role': 'assistant', 'content': 'It drafts blocks with diffusion.'}], TOOLS),
    Case('agentic-no-reasoning', [SYS, {'role': 'user', 'content': 'Weather in Rome?'},
                                  {'role': 'assistant', 'content': 'Checking.',
                                   'tool_calls': [call(4, 'get_weather', {'city': 'Rome'})]},
                                  tool(4, 'sunny'), {'role': 'assistant', 'content': 'Sunny in Rome.'}], TOOLS),
    Case('tools-in-history', [{'role': 'user', 'content': 'Weather in Oslo?'},
                              {'role': 'assistant', 'content': '',
                               'tool_calls': [call(5, 'get_weather', {'city': 'Oslo'})]},
                              tool(5, 'snow'), {'role': 'assistant', 'content': 'Snow.'},
                              {'role': 'user', 'content': 'Thanks!'},
                              {'role': 'assistant', 'content': 'You are welcome.'}], TOOLS),
    Case('sharegpt', [SYS, {'role': 'user', 'content': 'Hi'}, {'role': 'assistant', 'content': 'Hello.'},
                      {'role': 'user', 'content': 'Bye'}, {'role': 'assistant', 'content': 'Goodbye.'}],
         shape='sharegpt'),
    Case('empty-answer', [SYS, {'role': 'user', 'content': 'Say nothing.'}, {'role': 'assistant', 'content': ''}]),
    Case('inline-think', [SYS, {'role': 'user', 'content': 'What is 2+2?'},
                          {'role': 'assistant', 'content': '<think>\nAdd them.\n</think>\n\n4.'}]),
    Case('inline-think-multi', [{'role': 'user', 'content': 'Hi'}, {'role': 'assistant',
                                                                    'content': '<think>\nGreet.\n</think>\n\nHello.'},
                                {'role': 'user', 'content': '3*3?'},
                                {'role': 'assistant', 'content': '<think>\nMultiply.\n</think>\n\n9.'}]),
    Case('prompt-completion', [{'role': 'user', 'content': 'Count to three.'},
                               {'role': 'assistant', 'content': '1, 2, 3.', 'reasoning_content': 'Simple.'}],
         shape='completion'),
]


def record_line(case: Case) -> str:
    "The case as one JSONL line in its record shape."
    if case.shape == 'sharegpt':
        names = {'system': 'system', 'user': 'human', 'assistant': 'gpt'}
        return json.dumps({'id': case.id, 'conversations': [{'from': names[m['role']],
                                                             'value': m['content']} for m in case.messages]},
                          ensure_ascii=False)
    obj = {'id': case.id, 'messages': case.messages}
    if case.shape == 'completion': obj = {'id': case.id, 'messages': case.messages[:-1],
                                          'completion': case.messages[-1]}
    if case.tools: obj['tools'] = case.tools
    return json.dumps(obj, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------- the oracle

@dataclass
class Expected:
    skip: str | None = None  # the skip reason, when the record cannot become a sample
    why: str = ''  # 'raises' (the template raised) or 'prefix' (the rule is undefined)
    input_ids: list = field(default_factory=list)
    loss_mask: list = field(default_factory=list)
    flags: list = field(default_factory=list)


_REASONING = ('reasoning_content', 'thinking', 'reasoning')


def oracle_messages(messages: list, fam: Family) -> list:
    "The record's messages as the family's template reads them: reasoning under its field, arguments in its form."
    out = []
    for m in messages:
        m = dict(m)
        r = [m.pop(k) for k in _REASONING if k in m]
        r = next((x for x in r if x is not None), None)
        if r is not None: m[fam.reasoning_field or 'reasoning_content'] = r
        if m.get('tool_calls'):
            calls = []
            for c in m['tool_calls']:
                a = c['function']['arguments']
                if fam.tool_args == 'string' and not isinstance(a, str): a = json.dumps(a, ensure_ascii=False)
                if fam.tool_args != 'string' and isinstance(a, str): a = json.loads(a)
                calls.append({**c, 'function': {**c['function'], 'arguments': a}})
            m['tool_calls'] = calls
        out.append(m)
    return out


def _first_stop(text: str, stops) -> int | None:
    hits = [(i, -len(s)) for s in stops if (i := text.find(s)) >= 0]
    return None if not hits else min(hits)[0] - min(hits)[1]


def oracle(tok, case: Case, fam: Family) -> Expected:
    "DESIGN.md's loss-mask rule, with transformers' apply_chat_template and the family's stop tokens."
    msgs, tools = oracle_messages(case.messages, fam), case.tools
    render = lambda m, agp=False: tok.apply_chat_template(m, tools=tools, tokenize=False, add_generation_prompt=agp)
    last_user = max(i for i, m in enumerate(msgs) if m['role'] == 'user')
    gen = [j for j in range(last_user + 1, len(msgs)) if msgs[j]['role'] == 'assistant']
    try:
        full = render(msgs)
        prompts = [render(msgs[:j], True) for j in gen]
        owns = [render(msgs[:j + 1]) for j in gen]
    except Exception:
        return Expected(skip='template_error', why='raises')
    spans, pos, flags = [], 0, []
    for k, j in enumerate(gen):
        p = len(prompts[k])
        if not full.startswith(prompts[k]) or p < pos: return Expected(skip='template_error', why='prefix')
        own = owns[k] if full.startswith(owns[k]) and len(owns[k]) >= p else None
        region = full[p:len(own)] if own is not None else full[p:len(prompts[k + 1]) if k + 1 < len(gen) else len(full)]
        end = _first_stop(region, fam.end_of_turn)
        if end is None:
            if own is None: return Expected(skip='template_error', why='no end')
            end = len(region)
        spans.append((p, p + end)); pos = p + end
        r = next((case.messages[j].get(f) for f in _REASONING if case.messages[j].get(f) is not None), '') or ''
        if r.strip() and r.strip() not in region: flags.append('reasoning_not_rendered')
    ids, mask, at = [], [], 0
    for a, b in spans:
        for text, gen_ in ((full[at:a], False), (full[a:b], True)):
            if text:
                t = tok(text, add_special_tokens=False)['input_ids']; ids += t; mask += [gen_] * len(t)
        at = b
    if full[at:]:
        t = tok(full[at:], add_special_tokens=False)['input_ids']; ids += t; mask += [False] * len(t)
    return Expected(input_ids=ids, loss_mask=mask, flags=sorted(set(flags)))
