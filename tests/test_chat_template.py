"""dflash_nb.chat_template renders byte-identically to transformers' `apply_chat_template` (compared here against
transformers itself, with a tiny tokenizer that carries each template), and fails with clear `ChatTemplateError`s."""
import json, pickle
from pathlib import Path
import pytest
from chat_conversations import RAISES, conversations

from dflash_nb.chat_template import ChatTemplate, ChatTemplateError, load_chat_template, load_special_tokens

REFERENCE_TEMPLATE = Path(__file__).resolve().parents[2]/'shared'/'reference'/'qwen3_6_chat_template.jinja'
SPECIALS = {'bos_token': '<s>', 'eos_token': '</s>'}

def hf_tokenizer(template):
    "A minimal transformers tokenizer whose apply_chat_template renders `template`."
    from tokenizers import Tokenizer, models
    from transformers import PreTrainedTokenizerFast
    tok = Tokenizer(models.WordLevel({'<s>': 0, '</s>': 1, '[UNK]': 2}, unk_token='[UNK]'))
    return PreTrainedTokenizerFast(tokenizer_object=tok, chat_template=template, **SPECIALS)

def outcome(fn):
    "What a render gives: the text, or ('raises', message)."
    try: return fn()
    except ChatTemplateError as e: return ('raises', e.reason)
    except Exception as e: return ('raises', str(e))

def assert_same(template, convs, **extra):
    hf, ours = hf_tokenizer(template), ChatTemplate(template, SPECIALS)
    n = 0
    for msgs, tools, kw in convs:
        for agp in (False, True):
            kw2 = {**kw, **extra, 'add_generation_prompt': agp}
            want = outcome(lambda: hf.apply_chat_template(msgs, tools=tools, tokenize=False, **kw2))
            got = outcome(lambda: ours.render(msgs, tools=tools, **kw2))
            if isinstance(want, tuple): assert isinstance(got, tuple), (msgs, want)
            else: assert got == want, msgs; n += 1
    return n

CONVS = conversations(400, seed=7)

# ---------------------------------------------------------------- templates of several families

# A Llama-3.1-like template: bos_token, a date variable, tools in the first user message, tojson(indent=4).
LLAMA = """{{- bos_token }}
{%- if not date_string is defined %}{%- set date_string = "26 Jul 2024" %}{%- endif %}
{%- if messages[0]['role'] == 'system' %}
    {%- set system_message = messages[0]['content'] if messages[0]['content'] is string else '' %}
    {%- set messages = messages[1:] %}
{%- else %}
    {%- set system_message = "" %}
{%- endif %}
{{- "<|start_header_id|>system<|end_header_id|>\\n\\n" }}
{{- "Today Date: " + date_string + "\\n\\n" }}
{{- system_message|trim }}
{{- "<|eot_id|>" }}
{%- for message in messages %}
    {%- if message.role == 'tool' %}
        {{- "<|start_header_id|>ipython<|end_header_id|>\\n\\n" }}
        {%- if message.content is mapping or message.content is iterable and message.content is not string %}
            {{- message.content | tojson }}
        {%- else %}
            {{- message.content }}
        {%- endif %}
        {{- "<|eot_id|>" }}
    {%- elif message.tool_calls is defined %}
        {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' -}}
        {%- for tool_call in message.tool_calls %}
            {%- set tc = tool_call.function if tool_call.function is defined else tool_call %}
            {{- '{"name": "' + tc.name + '", "parameters": ' }}{{- tc.arguments | tojson(indent=4) }}{{- "}" }}
        {%- endfor %}
        {{- "<|eot_id|>" }}
    {%- else %}
        {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' }}
        {%- if message.content is string %}{{ message['content'] | trim }}{% endif %}
        {{- '<|eot_id|>' }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{%- endif %}
"""

# Whitespace-sensitive: no `-` markers at all, so trim_blocks/lstrip_blocks decide every newline and indent.
PLAIN = """{% for message in messages %}
    {% if message.role == 'user' %}
<user>
    {{ message.content if message.content is string else 'parts' }}
</user>
    {% elif message.role == 'assistant' %}
<assistant>{% generation %}{{ message.content if message.content is string else '' }}{% endgeneration %}</assistant>
    {% else %}
<{{ message.role }}/>
    {% endif %}
{% endfor %}
{% if add_generation_prompt %}<assistant>{% endif %}
"""

# Loop controls, namespace, dict(), the message keys as JSON (key order and dropped None values show), errors.
PROBE = """{%- set ns = namespace(users=0, last=none) %}
{%- for m in messages %}
    {%- if m.role == 'user' %}{% set ns.users = ns.users + 1 %}{% set ns.last = loop.index0 %}{% endif %}
    {%- if m.role == 'narrator' %}{{ raise_exception('narrators are not allowed') }}{% endif %}
    {%- if loop.index > 6 %}{% break %}{% endif %}
    {%- if m.role == 'tool' %}{% continue %}{% endif %}
[{{ loop.index0 }}] {{ m|tojson(sort_keys=false) }}
{%- endfor %}
{{ dict(users=ns.users, last=ns.last, tools=(tools|length if tools else 0))|tojson(separators=(',', ':')) }}
{%- if add_generation_prompt %}{{ eos_token }}{% endif %}{{ extra | default('') }}"""

@pytest.mark.parametrize('name,template', [('llama', LLAMA), ('plain', PLAIN), ('probe', PROBE)])
def test_other_templates_render_like_transformers(name, template):
    assert assert_same(template, CONVS, extra='E', date_string='01 Jan 2025') > 400  # the rest raise in both

def test_qwen_templates_render_like_transformers():
    from dflash_nb.qwen import QWEN36_CHAT_TEMPLATE
    assert assert_same(QWEN36_CHAT_TEMPLATE, CONVS) > 700

def test_official_qwen_template_renders_like_transformers():
    if not REFERENCE_TEMPLATE.is_file():  # third-party text: read where it is, never copied into the repo
        pytest.skip(f"the official Qwen3.6 chat template is not at {REFERENCE_TEMPLATE}; no in-repo copy can stand in")
    assert assert_same(REFERENCE_TEMPLATE.read_text(encoding='utf-8'), CONVS) > 700

def test_raise_exception_becomes_chat_template_error():
    msgs = [{'role': 'user', 'content': 'q'}, {'role': 'narrator', 'content': 'n'}]
    with pytest.raises(Exception,
                       match='narrators are not allowed'): hf_tokenizer(PROBE).apply_chat_template(msgs, tokenize=False)
    with pytest.raises(ChatTemplateError, match='narrators are not allowed') as e:
        ChatTemplate(PROBE, origin='/models/x/chat_template.jinja').render(msgs)
    assert e.value.reason == 'narrators are not allowed' and isinstance(e.value, ValueError)
    assert '/models/x/chat_template.jinja (line 4)' in str(e.value)

@pytest.mark.parametrize('name,messages', [r for r in RAISES if r[0] != 'empty'],
                         ids=[n for n, _ in RAISES if n != 'empty'])
def test_qwen_raise_cases_raise_in_transformers_too(name, messages):
    from dflash_nb.qwen import QWEN36_CHAT_TEMPLATE
    with pytest.raises(Exception): hf_tokenizer(QWEN36_CHAT_TEMPLATE).apply_chat_template(messages, tokenize=False)
    with pytest.raises(ChatTemplateError): ChatTemplate(QWEN36_CHAT_TEMPLATE).render(messages)

# ---------------------------------------------------------------- errors and inputs

def test_errors_name_origin_line_and_cause():
    with pytest.raises(ChatTemplateError, match=r'/m/t.jinja does not compile: line 2'):
        ChatTemplate('ok\n{% if %}', origin='/m/t.jinja')
    with pytest.raises(ChatTemplateError, match='empty'): ChatTemplate('  ')
    t = ChatTemplate("a\n{{ messages[0].content.upper() + messages[0].missing }}", origin='T')
    with pytest.raises(ChatTemplateError, match=r'T \(line 2\) failed: UndefinedError'): t.render([{'role': 'user',
                                                                                                    'content': 'x'}])
    with pytest.raises(ChatTemplateError, match='SecurityError'):  # the sandbox holds
        ChatTemplate("{{ messages.__class__.__mro__ }}{{ ''.__class__.__subclasses__() }}").render(
            [{'role': 'user', 'content': 'x'}])
    with pytest.raises(ChatTemplateError, match='immutable|SecurityError'):
        ChatTemplate("{{ messages.append(1) }}").render([{'role': 'user', 'content': 'x'}])
    with pytest.raises(ChatTemplateError, match='message 1'): ChatTemplate('x').render([{'role': 'user'}, 'hi'])
    with pytest.raises(ChatTemplateError, match='list of message dicts'): ChatTemplate('x').render('hi')
    with pytest.raises(ChatTemplateError, match='tools must be'): ChatTemplate('x').render([{'role': 'user'}],
                                                                                           tools=[print])

def test_inputs_are_not_mutated_and_tuples_work():
    msgs = [{'role': 'user', 'content': 'hi', 'reasoning': 'r', 'tool_calls': None}]
    before = json.dumps(msgs)
    t = ChatTemplate("{{ messages[0]|tojson }}")
    assert json.loads(t.render(tuple(msgs))) == {'thinking': 'r', 'role': 'user', 'content': 'hi', 'reasoning': 'r',
                                                 'reasoning_content': 'r'}
    assert json.dumps(msgs) == before

def test_compiled_once_and_picklable():
    a, b = ChatTemplate(LLAMA, SPECIALS), ChatTemplate(LLAMA)
    assert a._template is b._template
    c = pickle.loads(pickle.dumps(a))
    msgs = [{'role': 'user', 'content': 'hi'}]
    assert c.render(msgs) == a.render(msgs) and c.special_tokens == SPECIALS and c.render(msgs).startswith('<s>')

# ---------------------------------------------------------------- loading from a directory

def test_load_chat_template_sources(tmp_path):
    with pytest.raises(ChatTemplateError, match='not a directory'): load_chat_template(tmp_path/'missing')
    with pytest.raises(ChatTemplateError, match=f'no chat template in {tmp_path}'): load_chat_template(tmp_path)
    (tmp_path/'chat_template.json').write_text(json.dumps({'chat_template': 'P'}))
    assert load_chat_template(tmp_path) == 'P'
    cfg = tmp_path/'tokenizer_config.json'
    cfg.write_text('{"chat_template": ')
    with pytest.raises(ChatTemplateError, match='tokenizer_config.json'): load_chat_template(tmp_path)
    cfg.write_text(json.dumps({'chat_template': [{'name': 'rag', 'template': 'R'}]}))
    with pytest.raises(ChatTemplateError, match="none named 'default'"): load_chat_template(tmp_path)
    cfg.write_text(json.dumps({'chat_template': 'C', 'eos_token': {'content': '</s>'}, 'bos_token': '<s>',
                               'pad_token': None}))
    assert load_chat_template(tmp_path) == 'C'
    (tmp_path/'chat_template.jinja').write_text('J {{ eos_token }}')
    assert load_chat_template(tmp_path) == 'J {{ eos_token }}'
    assert load_special_tokens(tmp_path) == {'eos_token': '</s>', 'bos_token': '<s>'}
    t = ChatTemplate.from_model_dir(tmp_path)
    assert t.render([{'role': 'user', 'content': 'x'}]) == 'J </s>' and 'chat_template.jinja' in t.origin

def test_from_model_dir_matches_transformers_on_the_built_qwen_dir(tmp_path):
    import os
    os.environ.setdefault('HF_HUB_OFFLINE', '1')
    from transformers import AutoTokenizer
    from dflash_nb.qwen import build_qwen36_tokenizer
    d = build_qwen36_tokenizer(tmp_path/'q')
    tok, ours = AutoTokenizer.from_pretrained(str(d)), ChatTemplate.from_model_dir(d)
    for msgs, tools, kw in CONVS[:100]:
        want = outcome(lambda: tok.apply_chat_template(msgs, tools=tools, tokenize=False, add_generation_prompt=True,
                                                       **kw))
        got = outcome(lambda: ours.render(msgs, tools=tools, add_generation_prompt=True, **kw))
        assert got == want or isinstance(want, tuple) and isinstance(got, tuple)
