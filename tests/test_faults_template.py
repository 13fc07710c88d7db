"""Issue 23.14: hostile chat templates that build huge values. Every string- and list-building operation the sandbox
allows is sized before it builds; each is a `template_error` skip naming the operation, never a crash or an OOM.

The hostile operations run, prefixed to the real Qwen3.6 template, through the real renderer (`ChatTemplate.render`)
in ONE child process under an address-space limit: code that built the value first would get a MemoryError (or render),
not the limit message, so each case fails on code without the caps. One real `dflash-nb tokenize` run has a model
directory whose chat_template.jinja is hostile for some records: they are skipped, the run exits 0, its peak RSS stays
small."""
from __future__ import annotations

import json, os, resource, subprocess, sys, textwrap
from pathlib import Path

import pytest

OK = [{'role': 'user', 'content': 'q'}, {'role': 'assistant', 'content': 'a'}]
B = "{% set b = 'x' * 1000000 %}"  # a 1M-character string (one `*`, under the cap)

# name: (template prefix, what the one-line error names)
CASES = {
    'str.ljust': ("{{ 'x'.ljust(10**9) }}", 'ljust() would build 1,000,000,000 characters'),
    'str.ljust in a loop': ("{% for i in range(1) %}{{ 'x'.ljust(10**9) }}{% endfor %}", 'ljust() would build'),
    'str.replace in a macro': (B + "{% macro m() %}{{ ('a' * 1000).replace('a', b) }}{% endmacro %}{{ m() }}",
                               'replace()'),
    'lipsum in a loop': ("{% for i in range(1) %}{{ lipsum(10**6) }}{% endfor %}", 'lipsum()'),
    'str.rjust': ("{{ 'x'.rjust(10**9) }}", 'rjust()'),
    'str.center': ("{{ 'x'.center(10**9) }}", 'center()'),
    'str.zfill': ("{{ '1'.zfill(10**9) }}", 'zfill()'),
    'str.expandtabs': ("{{ ('\t' * 100).expandtabs(10**7) }}", 'expandtabs()'),
    'str.format width': ("{{ '{:>1000000000}'.format(1) }}", 'format()'),
    'str.format precision': ("{{ '{:.1000000000f}'.format(1.0) }}", 'format()'),
    'str.format repeated field': (B + "{{ ('{0}' * 1000).format(b) }}", 'format()'),
    'str.format_map': (B + "{{ ('{a}' * 1000).format_map({'a': b}) }}", 'format()'),
    "'%' width": ("{{ '%1000000000d' % 1 }}", "'%' formatting"),
    "'%' star width": ("{{ '%*d' % (10**9, 1) }}", "'%' formatting"),
    "'%' mapping repeated": (B + "{{ ('%(a)s' * 1000) % {'a': b} }}", "'%' formatting"),
    'str.replace': (B + "{{ ('a' * 1000).replace('', b) }}", 'replace()'),
    'str.join': (B + "{{ b.join(['a'] * 1000) }}", 'join()'),
    'str.join generator': (B + "{{ b.join(range(1000)|map('string')) }}", 'join()'),
    'str.translate': (B + "{{ ('a' * 1000).translate({97: b}) }}", 'translate()'),
    'int.to_bytes': ("{{ (1).to_bytes(10**9, 'big')|length }}", 'to_bytes()'),
    "list '*'": ("{{ ([1] * 10**9)|length }}", "'*' would build"),
    "list '*' of a big string": (B + "{{ [b] * 1000 }}", 'writing a value'),
    "'+' doubling": (
        "{% set ns = namespace(s='x' * 1000000) %}{% for i in range(30) %}{% set ns.s = ns.s + ns.s %}{% endfor %}",
                     "'+' would build"),
    "'~' doubling": (
        "{% set ns = namespace(s='x' * 1000000) %}{% for i in range(30) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
                     "'~' would build"),
    "'~' of a container": (B + "{{ ([b] * 100) ~ '' }}", "'~' would build"),
    'format filter': ("{{ '%1000000000d'|format(1) }}", "the 'format' filter"),
    'indent filter': ("{{ ('a\n' * 100000)|indent(10**6) }}", "the 'indent' filter"),
    'center filter': ("{{ 'x'|center(10**9) }}", "the 'center' filter"),
    'replace filter': (B + "{{ ('a' * 1000)|replace('a', b) }}", "the 'replace' filter"),
    'join filter': (B + "{{ (['a'] * 1000)|join(b) }}", "the 'join' filter"),
    'tojson indent': ("{{ messages|tojson(indent=10**9) }}", "the 'tojson' filter"),
    'tojson of a list of one big string': (B + "{{ ([b] * 1000)|tojson }}", "the 'tojson' filter"),
    'tojson separators': ("{{ ([1] * 100000)|tojson(separators=('x' * 1000, ':')) }}", "the 'tojson' filter"),
    'tojson indent, deep': (B + "{{ ([b] * 40)|tojson(indent=2) }}", "the 'tojson' filter"),
    'wordwrap filter': ("{{ ('a ' * 5000000)|wordwrap(2, wrapstring='x' * 100) }}", "the 'wordwrap' filter"),
    'batch filter': ("{{ [1]|batch(10**9, 0)|list|length }}", "the 'batch' filter"),
    'slice filter': ("{{ [1]|slice(10**9)|list|length }}", "the 'slice' filter"),
    'sum filter': ("{% set l = [1] * 100000 %}{{ ([l] * 1000)|sum(start=[])|length }}", "the 'sum' filter"),
    'escape filter of a container': (B + "{{ ([b] * 100)|e }}", "the 'e' filter"),
    'string filter of a container': (B + "{{ ([b] * 100)|string }}", "the 'string' filter"),
    'lipsum': ("{{ lipsum(10**6) }}", 'lipsum()'),
    'strftime_now': ("{{ strftime_now('%c' * 1000000) }}", 'strftime_now()'),
    'output of a loop': (B + "{% for i in range(100) %}{{ b }}{% endfor %}", 'would write'),
    'output of a macro': (B + "{% macro m() %}{% for i in range(100) %}{{ b }}{% endfor %}{% endmacro %}{{ m() }}",
                          'would write'),
    'loop iterations': ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
                        'loops would run'),
    'recursive loop iterations': (
        "{% for x in [[1] * 100000] * 100 recursive %}{{ loop(x) if x is iterable else '' }}{% endfor %}",
                                  'loops would run'),
    'many values kept alive': ("{% set ns = namespace(l=[]) %}{% for i in range(3000) %}"
                               "{% set ns.l = ns.l + ['x'.ljust(1000000) ~ i] %}{% endfor %}{{ ns.l|length }}", 'MB'),
}

CHILD = textwrap.dedent("""
    import json, resource, signal, sys
    from dflash_nb.chat_template import ChatTemplate, ChatTemplateError
    from dflash_nb.qwen import QWEN36_CHAT_TEMPLATE
    cases, ok = json.loads(sys.argv[1]), json.loads(sys.argv[2])
    vm = next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmSize:')) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (vm + (768 << 20),) * 2)  # what a render may map, on top of what is here
    def _alarm(*_): raise TimeoutError('took longer than 20 s')  # (code without a loop cap runs 10**10 iterations)
    signal.signal(signal.SIGALRM, _alarm)
    out = {}
    for name, prefix in cases.items():
        signal.alarm(20)
        try: out[name] = 'rendered %d characters' % len(ChatTemplate(prefix + QWEN36_CHAT_TEMPLATE).render(ok))
        except ChatTemplateError as e: out[name] = str(e)
        except MemoryError as e: out[name] = 'MemoryError (escaped the renderer)'
    print(json.dumps(out))
""")


@pytest.fixture(scope='module')
def rendered():
    "Each hostile case rendered once in one child under RLIMIT_AS: `({name: error line}, child's peak RSS in bytes)`."
    code = ("import json, resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
            "print(json.dumps([r.returncode, r.stdout, r.stderr[-3000:], "
            "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))")
    r = subprocess.run([sys.executable, '-c', code, sys.executable, '-c', CHILD,
                        json.dumps({k: v[0] for k, v in CASES.items()}), json.dumps(OK)],
                       capture_output=True, text=True, timeout=600)
    rc, out, err, peak_kb = json.loads(r.stdout)
    assert rc == 0, err
    return json.loads(out), peak_kb * 1024


@pytest.mark.parametrize('name', list(CASES))
def test_hostile_template_operation_is_a_one_line_limit_error(rendered, name):
    "Each hostile operation: a ChatTemplateError naming the template, the line and the operation, before it builds."
    got = rendered[0][name]
    assert 'stopped:' in got and CASES[name][1] in got and '(limit' in got, got
    assert '\n' not in got and got.startswith('chat template <chat template string>')


def test_hostile_templates_stay_in_bounded_memory(rendered):
    "All the cases above together: the child's peak RSS stays far below what any one case would have built."
    assert rendered[1] < 500 << 20, f"peak RSS {rendered[1] >> 20} MB"


def test_real_templates_still_render_what_they_did(qwen_dir):
    "The caps refuse nothing a real template builds: the Qwen3.6 template (Jinja) on every shipped sample."
    from dflash_nb.chat_template import ChatTemplate
    from dflash_nb.qwen import render_qwen36
    from dflash_nb.records import Record, read_records
    ct, n = ChatTemplate.from_model_dir(qwen_dir), 0
    for r in read_records(Path(__file__).parents[1]/'data'/'samples'):
        if not isinstance(r, Record) or (want := render_qwen36(r.messages, r.tools)) is None: continue
        assert ct.render(r.messages, r.tools) == want; n += 1
    assert n > 100


def test_hostile_template_in_a_tokenize_run_is_a_skip(qwen_dir, tmp_path):
    """A real `dflash-nb tokenize` with a hostile chat_template.jinja: the records it hits are template_error skips
    naming the operation, the others are kept, exit 0, and the run's peak RSS stays < 500 MB (the old code built 600 MB
    for one)."""
    import shutil
    d = tmp_path/'tok'; shutil.copytree(qwen_dir, d)
    hostile = ("{% if messages[0].content == 'ljust' %}{{ 'x'.ljust(600000000) }}{% endif %}"
               "{% if messages[0].content == 'tojson' %}{{ messages|tojson(indent=600000000) }}{% endif %}"
               "{% if messages[0].content == 'join' %}{{ ('y' * 1000000).join(['a'] * 600) }}{% endif %}")
    (d/'chat_template.jinja').write_text(hostile + (qwen_dir/'chat_template.jinja').read_text())
    recs = [('ok0', 'q'), ('bad-ljust', 'ljust'), ('ok1', 'q'), ('bad-tojson', 'tojson'), ('bad-join', 'join'),
            ('ok2', 'q')]
    src = tmp_path/'c.jsonl'
    src.write_text(''.join(json.dumps({'id': i, 'messages': [{'role': 'user', 'content': c},
                                                             OK[1]]}) + '\n' for i, c in recs))
    exe = str(Path(sys.executable).with_name('dflash-nb'))
    code = ("import json, resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
            "print(json.dumps([r.returncode, r.stdout[-3000:], r.stderr[-3000:], "
            "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))")
    r = subprocess.run([sys.executable, '-c', code, exe, 'tokenize', '--model-path', str(d), '--completions', str(src),
                        '--output-dir', str(tmp_path/'out'), '--quiet'], capture_output=True, text=True, timeout=600)
    rc, out, err, peak_kb = json.loads(r.stdout)
    assert rc == 0, err
    st = json.loads((tmp_path/'out'/'stats.json').read_text())
    assert st['samples'] == 3 and st['skipped'] == {'template_error': 3}, st
    sk = {s['sample_id']: s for s in map(json.loads, (tmp_path/'out'/'skipped.jsonl').read_text().splitlines())}
    assert set(sk) == {'bad-ljust', 'bad-tojson', 'bad-join'}
    for sid, what in (('bad-ljust', 'ljust()'), ('bad-tojson', "'tojson' filter"), ('bad-join', 'join()')):
        assert sk[sid]['reason'] == 'template_error' and what in sk[sid]['detail'] and '\n' not in sk[sid][
            'detail'], sk[sid]
    assert peak_kb * 1024 < 500 << 20, f"peak RSS {peak_kb >> 10} MB"
