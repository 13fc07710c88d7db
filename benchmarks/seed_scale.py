#!/usr/bin/env python
"""The seed run at its real size: 902,087 completions in 1,805 S3 objects -> `dflash-nb tokenize`, side by side with
the seed.

    python benchmarks/seed_scale.py --scale 0.1        # a tenth (90,209 records, 181 objects): the quick check
    python benchmarks/seed_scale.py                    # the whole seed: 902,087 records, 1.89 B tokens (~15 min on 2
busy cores) python benchmarks/seed_scale.py --compare          # every scale run so far, side by side (what grows with
the size)

The seed (a real run): 902,087 Qwen3.6-27B completions with thinking traces (1.64 B output tokens, 7.25 GB of JSONL in
1,805 objects on S3) tokenized into 1.866 B tokens (87.5% masked; mean 2,068, median 1,727, p90 4,200, max 8,191;
45 shards; 0 skipped) in 6.5 minutes with 32 download and 12 tokenize workers.

1. Starts `s3rver` (npm; installed into ROOT/s3rver on first use) on loopback, keeping its objects on disk under
   ROOT/s3 (moto keeps them in memory: 7 GB in + 9 GB out do not fit). s3rver ignores `If-None-Match`/`If-Match` on
   PUT: the output's commit then succeeds unconditionally (right for the one writer here; it is not a race test).
   Node runs it with OpenSSL's legacy provider: its continuation token (a listing of over 1,000 keys) is DES.
2. Writes the corpus once into the server (bucket `corpus`, prefix `x<scale>/`), deterministic by --seed: real text
   (the paragraphs of data/samples) around the shipped sample conversations, thinking in every final turn, ~10% with
   tool calls, total lengths drawn from a distribution with the seed's median, p90 and max (and so its mean), prompts
   sized so ~12.5% of the tokens are unmasked. Objects already written (ROOT/x<scale>/corpus.log) are not written again.
3. Runs `dflash-nb tokenize --completions s3://corpus/x<scale>/ --output-dir s3://out/x<scale> --workers N`
   (default download workers) with its cache and staging under ROOT/x<scale>/cache, watching it from outside every
   second: phases (download / tokenize / finish / upload), CPU time and peak RSS of every process, disk used.
4. Prints the run's table next to the seed's and writes ROOT/x<scale>/result.json.

Resumable: kill -9 anywhere (this script takes s3rver and tokenize down with it) and the same command goes on from
where it was: the corpus from its log, tokenize from its last committed chunk (its own resume); a finished run just
prints its result again.
"""
from __future__ import annotations
import argparse, bisect, json, math, os, random, resource, shutil, signal, socket, subprocess, sys, threading, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEED = dict(samples=902_087, objects=1_805, bytes=7.25e9, total_tokens=1_866e6, loss_fraction=0.875, mean=2_068,
            median=1_727, p90=4_200, max=8_191, shards=45, skipped=0, seconds=6.5 * 60, tokenize_workers=12,
            download_workers=32)
KEY = dict(aws_access_key_id='S3RVER', aws_secret_access_key='S3RVER', region_name='us-east-1')
S3RVER_VERSION = '3.7.1'


# ---------------------------------------------------------------------------------------------- s3rver on disk
def _pdeathsig():
    "In a child: die with this script (a kill -9 of the benchmark leaves no server or tokenize behind)."
    import ctypes
    ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)

def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(('127.0.0.1', port)) == 0

def start_s3rver(root: Path, port: int) -> subprocess.Popen:
    exe = root/'s3rver'/'node_modules'/'.bin'/'s3rver'
    if not exe.exists():
        print(f"installing s3rver {S3RVER_VERSION} (npm) into {root/'s3rver'} ...", flush=True)
        (root/'s3rver').mkdir(parents=True, exist_ok=True)
        subprocess.run(['npm', 'install', '--no-audit', '--no-fund', '--prefix', str(root/'s3rver'),
                        f's3rver@{S3RVER_VERSION}'],
                       check=True, stdout=subprocess.DEVNULL)
    if _port_open(port): raise SystemExit(f"port {port} is in use (an s3rver of an earlier run still up?); pass --port")
    (root/'s3').mkdir(parents=True, exist_ok=True)
    # s3rver's continuation tokens (a listing of over 1,000 keys) use DES, which OpenSSL 3 keeps in its legacy provider
    env = os.environ | dict(NODE_OPTIONS=(os.environ.get('NODE_OPTIONS', '') + ' --openssl-legacy-provider').strip())
    p = subprocess.Popen([str(exe), '-d', str(root/'s3'), '-a', '127.0.0.1', '-p', str(port)], env=env,
                         stdout=open(root/'s3rver.log', 'ab'), stderr=subprocess.STDOUT, preexec_fn=_pdeathsig)
    for _ in range(100):
        if _port_open(port): break
        if p.poll() is not None: raise SystemExit(f"s3rver exited ({p.returncode}); see {root/'s3rver.log'}")
        time.sleep(0.1)
    c = client(port)
    for b in ('corpus', 'out'):
        try: c.create_bucket(Bucket=b)
        except c.exceptions.BucketAlreadyOwnedByYou: pass
        except Exception as e:
            if 'BucketAlreadyExists' not in str(e) and 'BucketAlreadyOwnedByYou' not in str(e): raise
    return p

def client(port: int):
    import boto3
    from botocore.config import Config
    return boto3.client('s3', endpoint_url=f'http://127.0.0.1:{port}', config=Config(max_pool_connections=8), **KEY)


# ---------------------------------------------------------------------------------------------- the corpus
# Quantiles of the total length (tokens): piecewise log-linear through these knots; the seed's median 1,727,
# p90 4,200 and max 8,191, the low end set so the mean is the seed's 2,068 (checked by `length_mean`).
KNOTS = [(0.0, 120), (0.02, 330), (0.5, 1_727), (0.9, 4_200), (0.99, 7_000), (1.0, 8_191)]

def target_length(u: float) -> int:
    i = max(1, bisect.bisect_left([k[0] for k in KNOTS], u))
    (u0, a), (u1, b) = KNOTS[i - 1], KNOTS[i]
    return int(round(math.exp(math.log(a) + (math.log(b) - math.log(a)) * (u - u0) / (u1 - u0))))

def length_mean(n: int = 200_000) -> float: return sum(target_length((i + 0.5) / n) for i in range(n)) / n

_BANK = None

def _paragraphs(text: str) -> list[str]:
    out = []
    for p in text.split('\n\n'):
        p = p.strip()
        if len(p) >= 40: out.append(p)
    return out

def build_bank(seed: int) -> dict:
    """The building blocks, from the shipped samples: base conversations (their JSON with two holes: the end of the last
    user message and the final turn's reasoning) with their token counts, and paragraphs of real text with theirs."""
    from dflash_nb.records import read_records, Record
    from dflash_nb.jobs import default_model_path
    from dflash_nb.tokenize import ChatTokenizer, tokenize_record
    ct = ChatTokenizer(default_model_path())
    base = {'plain': [], 'tools': []}
    texts = []
    for r in read_records(ROOT/'data'/'samples'):
        if not isinstance(r, Record): continue
        try: s = tokenize_record(ct, r, max_seq_len=None)
        except ValueError: continue
        msgs = json.loads(json.dumps(r.messages))
        if msgs[-1].get('role') != 'assistant': continue
        for m in msgs:
            for k in ('content', 'reasoning_content'):
                if isinstance(m.get(k), str): texts.append(m[k])
        users = [i for i, m in enumerate(msgs) if m.get('role') == 'user' and isinstance(m.get('content'), str)]
        if not users: continue
        msgs[users[-1]]['content'] += '\x00P'
        msgs[-1]['reasoning_content'] = ((msgs[-1].get('reasoning_content') or '').strip() + '\x00R').lstrip()
        rec = {'id': '\x00I', 'source': r.source or 'seed', 'messages': msgs, **({'tools': r.tools} if r.tools else {})}
        line = json.dumps(rec, ensure_ascii=False)
        parts = line.split('\\u0000')            # the holes, in order: id, prompt end, reasoning end
        assert len(parts) == 4 and parts[1][0] == 'I' and parts[2][0] == 'P' and parts[3][0] == 'R', line[:200]
        parts = [parts[0], parts[1][1:], parts[2][1:], parts[3][1:]]
        calls = any(m.get('tool_calls') for m in msgs)
        prompt = int(len(s.input_ids) - s.loss_mask.sum())
        base['tools' if calls else 'plain'].append(dict(parts=parts, prompt=prompt, total=len(s.input_ids)))
    paras = sorted(set(p for t in texts for p in _paragraphs(t)))
    toks = [len(ids) for ids in ct.encode_segments(paras)]
    keep = [(json.dumps(p, ensure_ascii=False)[1:-1], n) for p, n in zip(paras, toks) if n <= 400]
    return dict(base=base, paras=[p for p, _ in keep], para_tokens=[n for _, n in keep],
                sep_tokens=len(ct.encode('a\n\nb')) - len(ct.encode('a')) - len(ct.encode('b')))

def _fill(rng: random.Random, tokens: int, bank: dict) -> tuple[str, int]:
    "Escaped paragraphs joined by blank lines, about `tokens` long (never more than one paragraph over)."
    paras, counts, sep = bank['paras'], bank['para_tokens'], max(0, bank['sep_tokens'])
    out, n, misses = [], 0, 0
    while n < tokens and misses < 8:
        i = rng.randrange(len(paras))
        if n + counts[i] + sep > tokens + 40: misses += 1; continue
        out.append(paras[i]); n += counts[i] + sep
    return '\\n\\n'.join(out), n

def make_object(k: int, n_objects: int, n_records: int, seed: int, bank: dict) -> bytes:
    "Object k of the corpus: its records, deterministic by (seed, k)."
    rng = random.Random(seed * 1_000_003 + k)
    lo, hi = k * n_records // n_objects, (k + 1) * n_records // n_objects
    lines = []
    for i in range(lo, hi):
        kind = 'tools' if rng.random() < 0.10 else 'plain'
        b = rng.choice(bank['base'][kind])
        total = min(8_191, target_length(rng.random()))
        prompt = min(int(rng.lognormvariate(math.log(120), 0.9)), total // 3)
        ptext, pn = _fill(rng, prompt - b['prompt'], bank) if prompt > b['prompt'] + 20 else ('', 0)
        # 0.96: joined paragraphs run ~4% over their sum
        rtext, _ = _fill(rng, int((total - b['total'] - pn) * 0.96), bank)
        p = b['parts']
        lines.append(f"{p[0]}seed-{i:07d}{p[1]}{chr(92) + 'n' + chr(92) + 'n' + ptext if ptext else ''}{p[2]}"
                     f"{chr(92) + 'n' + chr(92) + 'n' + rtext if rtext else ''}{p[3]}\n")
    return ''.join(lines).encode('utf-8')

def _gen_init(seed: int, port: int):
    global _BANK, _CLIENT
    _BANK, _CLIENT = build_bank(seed), client(port)

def _gen_one(args) -> tuple[int, int]:
    k, n_objects, n_records, seed, prefix = args
    data = make_object(k, n_objects, n_records, seed, _BANK)
    _CLIENT.put_object(Bucket='corpus', Key=f"{prefix}part-{k:05d}.jsonl", Body=data)
    return k, len(data)

def ensure_corpus(work: Path, port: int, n_objects: int, n_records: int, seed: int, prefix: str, procs: int) -> dict:
    "Write the objects not yet in the corpus log into the server; returns {objects, bytes, seconds}."
    log = work/'corpus.log'
    done = {}
    if log.exists():
        for line in log.read_text().splitlines():
            try: k, n = map(int, line.split()); done[k] = n
            except ValueError: pass  # a line cut by a kill
    todo = [k for k in range(n_objects) if k not in done]
    t0 = time.perf_counter()
    if todo:
        import multiprocessing
        print(
            f"corpus: writing {len(todo):,} of {n_objects:,} objects ({n_records:,} records) into s3://corpus/{prefix} "
            f"with {procs} processes ...", flush=True)
        with open(log, 'a') as f, multiprocessing.get_context('fork').Pool(procs, _gen_init, (seed, port)) as pool:
            for j, (k, n) in enumerate(pool.imap_unordered(_gen_one, [(k, n_objects, n_records, seed,
                                                                       prefix) for k in todo])):
                f.write(f"{k} {n}\n"); f.flush(); done[k] = n
                if (j + 1) % max(1, len(todo) // 20) == 0:
                    print(f"  {j + 1:,}/{len(todo):,} objects, {sum(done.values()) / 1e9:.2f} GB, "
                          f"{time.perf_counter() - t0:.0f} s", flush=True)
    return dict(objects=len(done), bytes=sum(done.values()), seconds=round(time.perf_counter() - t0, 1),
                written=len(todo))


# ---------------------------------------------------------------------------------------------- watching the run
def du(path: Path) -> int:
    total = 0
    for dirpath, _, files in os.walk(path):
        for f in files:
            try: total += os.lstat(os.path.join(dirpath, f)).st_size
            except OSError: pass
    return total

class Watch:
    "Samples the tokenize process tree and its folders every second from a thread."
    def __init__(self, pid: int, dl_dir: Path, stage: Path, input_bytes: int, server_pid: int | None):
        import psutil
        self.psutil, self.proc, self.dl_dir, self.stage, self.input_bytes = psutil, psutil.Process(
            pid), dl_dir, stage, input_bytes
        self.server = psutil.Process(server_pid) if server_pid else None
        self.t0, self.marks, self.procs, self.peak_disk = time.perf_counter(), {}, {}, {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True); self.thread.start()

    def _role(self, p) -> str:
        if p.pid == self.proc.pid: return 'tokenize (main)'
        try: cmd = ' '.join(p.cmdline())
        except Exception: cmd = ''
        return 'resource tracker' if 'resource_tracker' in cmd else 'tokenize worker'

    def _sample_proc(self, p, role):
        try:
            with p.oneshot():
                rss, cpu = p.memory_info().rss, p.cpu_times()
            d = self.procs.setdefault(p.pid, dict(role=role, peak_rss=0, cpu=0.0))
            d['peak_rss'] = max(d['peak_rss'], rss); d['cpu'] = cpu.user + cpu.system
        except self.psutil.Error: pass

    def _run(self):
        n = 0
        while not self.stop.is_set():
            now = time.perf_counter() - self.t0
            try: kids = self.proc.children(recursive=True)
            except self.psutil.Error: kids = []
            self._sample_proc(self.proc, 'tokenize (main)')
            for k in kids: self._sample_proc(k, self._role(k))
            if 'workers' not in self.marks and any(d['role'] == 'tokenize worker' for d in self.procs.values()):
                # the pool is up: the main process's CPU so far is start-up (imports, tokenizer load)
                self.marks['workers'] = now
                self.marks['main_cpu_startup'] = self.procs.get(self.proc.pid, {}).get('cpu', 0.0)
            if self.server: self._sample_proc(self.server, 's3rver (node)')
            main_cpu = self.procs.get(self.proc.pid, {}).get('cpu', 0.0)
            def mark(name):   # the end of a phase: its time, and the main process's CPU time so far
                if name not in self.marks: self.marks[name], self.marks[f'main_cpu_{name}'] = now, main_cpu
            if 'download' not in self.marks and n % 2 == 0 and du(self.dl_dir) >= self.input_bytes: mark('download')
            part = self.stage/'dataset.partial'
            if (part/'finish.json').exists(): mark('tokenize')
            if (self.stage/'dataset'/'manifest.json').exists() and not part.exists(): mark('tokenize'); mark('finish')
            if n % 5 == 0:
                for name, d in (('download cache', self.dl_dir), ('staging', self.stage)):
                    self.peak_disk[name] = max(self.peak_disk.get(name, 0), du(d) if d.exists() else 0)
            n += 1
            self.stop.wait(1.0)

    def close(self) -> float:
        self.stop.set(); self.thread.join()
        return time.perf_counter() - self.t0


# ---------------------------------------------------------------------------------------------- the run
def run_tokenize(work: Path, port: int, prefix: str, workers: int, input_bytes: int, server_pid: int | None,
                 extra) -> dict:
    cache = work/'cache'
    # the built tokenizer (and fastokens' verdict), as the repo's .cache has it
    for d in ('qwen3_6-tokenizer', 'encoders'):
        src = ROOT/'.cache'/d
        if src.exists() and not (cache/d).exists(): shutil.copytree(src, cache/d)
    env = os.environ | dict(DFLASH_NB_CACHE=str(cache), AWS_ACCESS_KEY_ID=KEY['aws_access_key_id'], OMP_NUM_THREADS='1',
                            AWS_SECRET_ACCESS_KEY=KEY['aws_secret_access_key'], AWS_DEFAULT_REGION=KEY['region_name'],
                            PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get('PYTHONPATH', ''))
    out = f"s3://out/{prefix.rstrip('/')}"
    cmd = [sys.executable, '-c', 'import sys; from dflash_nb.cli import main; sys.exit(main())', 'tokenize',
           '--completions', f's3://corpus/{prefix}', '--output-dir', out,
           '--workers', str(workers), '--s3-endpoint', f'http://127.0.0.1:{port}', *extra]
    print('$ dflash-nb ' + ' '.join(cmd[3:]), flush=True)
    import hashlib
    stage = cache/'staging'/hashlib.sha256(out.rstrip('/').encode()).hexdigest()[:16]
    resumed = len(list((stage/'dataset.partial').glob('chunk-*.json')))  # chunks an interrupted attempt committed
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(work/'tokenize.log', 'ab') as log:
        p = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, preexec_fn=_pdeathsig)
        w = Watch(p.pid, cache/'s3'/'corpus'/prefix.rstrip('/'), stage, input_bytes, server_pid)
        rc = p.wait()
        wall = w.close()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    tail = (work/'tokenize.log').read_bytes()[-3000:].decode('utf-8', 'replace').replace('\r', '\n').splitlines()
    if rc != 0: raise SystemExit(f"tokenize exited {rc}: " + ' | '.join(l for l in tail[-5:] if l.strip()))
    return dict(wall=wall, resumed_chunks=resumed, marks=w.marks, procs=w.procs, peak_disk=w.peak_disk, out=out,
                cpu_all=round((after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime), 1),
                peak_rss_children=after.ru_maxrss * 1024)

def output_stats(port: int, out: str) -> tuple[dict, dict]:
    c = client(port)
    key = out[len('s3://out/'):]
    get = lambda name: json.loads(c.get_object(Bucket='out', Key=f"{key}/{name}")['Body'].read())
    run = get('state.json')['_data_files'][0]['filename'].rsplit('/', 1)[0]   # the committed run's folder
    return get(f'{run}/stats.json'), get('manifest.json')

def table(res: dict) -> str:
    st, man, run = res['stats'], res['manifest'], res.get('run')
    rows = [('samples', f"{SEED['samples']:,}", f"{st['samples']:,}"),
            ('input', f"{SEED['bytes'] / 1e9:.2f} GB in {SEED['objects']:,} objects",
             f"{res['corpus']['bytes'] / 1e9:.2f} GB in {res['corpus']['objects']:,} objects"),
            ('total tokens', f"{SEED['total_tokens'] / 1e9:.3f} B", f"{st['total_tokens'] / 1e9:.3f} B"),
            ('loss tokens (share)',
             f"{SEED['total_tokens'] * SEED['loss_fraction'] / 1e9:.3f} B ({SEED['loss_fraction']:.1%})",
             f"{st['loss_tokens'] / 1e9:.3f} B ({st['loss_token_fraction']:.1%})"),
            ('mean / median / p90 / max', f"{SEED['mean']:,} / {SEED['median']:,} / {SEED['p90']:,} / {SEED['max']:,}",
             f"{st['mean_seq_len']:,.0f} / {st['median_seq_len']:,.0f} / {st['p90_seq_len']:,.0f} / "
             f"{st['max_seq_len']:,}"),
            ('shards', str(SEED['shards']), str(len(man['shards']))),
            ('skipped', str(SEED['skipped']), str(sum(st['skipped'].values())))]
    if run:
        rows.append(('wall time', f"{SEED['seconds'] / 60:.1f} min ({SEED['tokenize_workers']} tokenize, "
                     f"{SEED['download_workers']} download workers)",
                     f"{run['wall'] / 60:.1f} min ({res['workers']} tokenize, 32 download workers)"))
        rows.append(('tokens/s per tokenize worker (wall, downloads included)',
                     f"{SEED['total_tokens'] / SEED['seconds'] / SEED['tokenize_workers'] / 1e6:.2f} M",
                     f"{st['total_tokens'] / run['wall'] / res['workers'] / 1e6:.2f} M"))
    w = max(len(r[0]) for r in rows)
    lines = [f"{'':{w}}  {'seed (real run)':<44}  this run (x{res['scale']:g})"]
    lines += [f"{a:{w}}  {b:<44}  {c}" for a, b, c in rows]
    return '\n'.join(lines)

def report(res: dict) -> str:
    run, st = res.get('run'), res['stats']
    out = [table(res)]
    if not run:
        out.append("(the run finished in an earlier attempt whose timings were lost; its output's stats are shown)")
        return '\n'.join(out)
    m, wall = run['marks'], run['wall']
    t_tok, t_fin = m.get('tokenize', wall), m.get('finish', wall)
    dl = m.get('download')
    if run.get('resumed_chunks'):
        out.append(
            f"\n(this attempt resumed after {run['resumed_chunks']} chunk(s) an interrupted one committed: its times "
            "are this attempt's)")
    out.append(f"\nwall {wall:,.0f} s: download {'%.0f s' % dl if dl else '?'} (overlapped with tokenize; "
               f"{res['corpus']['bytes'] / 1e6 / dl if dl else float('nan'):,.0f} MB/s) | tokenize {t_tok:,.0f} s | "
               f"finish {t_fin - t_tok:,.0f} s | upload {wall - t_fin:,.0f} s")
    workers = [p for p in run['procs'].values() if p['role'] == 'tokenize worker']
    wcpu = sum(p['cpu'] for p in workers)
    main = next((p for p in run['procs'].values() if p['role'] == 'tokenize (main)'), None)
    tok = st['total_tokens']
    out.append(f"tokens/s per worker (wall of the tokenize phase): {tok / t_tok / res['workers'] / 1e6:.3f} M; "
               f"per worker CPU-second: {tok / wcpu / 1e6 if wcpu else float('nan'):.3f} M "
               f"({wcpu:,.0f} worker CPU-s; main process {main['cpu'] if main else 0:,.0f} CPU-s, of which "
               f"{m.get('main_cpu_startup', 0):,.0f} s start-up before the pool ({m.get('workers', 0):,.0f} s wall), "
               f"{((main['cpu'] if main else 0) - m.get('main_cpu_startup', 0)) / tok * 1e9:,.0f} ns/token after it; "
               f"all children {run['cpu_all']:,.0f} CPU-s)")
    out.append(f"load average during the run (1/5/15 min at its end): {res['load']}")
    out.append("peak RSS: " + '; '.join(f"{p['role']} {pid}: {p['peak_rss'] / 2**20:,.0f} MiB (CPU {p['cpu']:,.0f} s)"
                                        for pid, p in sorted(run['procs'].items(), key=lambda kv: kv[1]['role'])))
    out.append("disk: " + '; '.join(f"{k} {v / 1e9:.2f} GB" for k, v in res['disk'].items()))
    if res.get('extrapolation'): out.append(res['extrapolation'])
    if res.get('probes'): out.append("probes: " + json.dumps(res['probes']))
    return '\n'.join(out)

def extrapolate(res: dict) -> str:
    "Time for the seed's 1.866 B tokens on 16 and 64 cores from the measured per-worker and download rates."
    run, st = res['run'], res['stats']
    workers = [p for p in run['procs'].values() if p['role'] == 'tokenize worker']
    wcpu = sum(p['cpu'] for p in workers)
    main = next(p for p in run['procs'].values() if p['role'] == 'tokenize (main)')
    per_cpu = st['total_tokens'] / wcpu                      # tokens per worker CPU-second
    startup = run['marks'].get('main_cpu_startup', 0.0)
    # main-process CPU-seconds per token from the pool's start to the end of tokenizing (reading, downloading, writing
    # Arrow, hashing shards): the serial part; older results have only the whole run's (the upload's CPU included)
    main_ns = (run['marks'].get('main_cpu_tokenize', main['cpu']) - startup) / st['total_tokens']
    dl = run['marks'].get('download')
    dl_rate = res['corpus']['bytes'] / dl if dl else None    # bytes/s from the loopback server
    lines = ["extrapolation to the seed (1.866 B tokens, 7.25 GB), from the measured rates "
             f"({per_cpu / 1e6:.3f} M tokens per worker CPU-s; main process {main_ns * 1e9:.0f} ns/token; "
             f"download {dl_rate / 1e6 if dl_rate else float('nan'):,.0f} MB/s on loopback):"]
    for cores in (16, 64):
        w = cores - 1
        tok_s = min(w * per_cpu, 1 / main_ns)
        t = SEED['total_tokens'] / tok_s
        d = SEED['bytes'] / dl_rate if dl_rate else float('nan')
        lines.append(f"  {cores} cores ({w} workers): {tok_s / 1e6:,.1f} M tok/s -> {t / 60:,.1f} min tokenize "
                     f"(capped by the main process at {1 / main_ns / 1e6:,.1f} M tok/s); download {d / 60:,.1f} min at "
                     f"the measured rate, overlapped; so ~{max(t, d) / 60:,.1f} min + finish/upload")
    return '\n'.join(lines)

def probes(port: int, prefix: str, work: Path) -> dict:
    """The steps whose cost grows with the number of objects or records, timed on their own after the run: listing the
    input, the download cache's check of every object (what a rerun does first), what the output check before a commit
    reads (`output_state`), and the sizes of the manifest (its input list) and of the output's small files."""
    import tracemalloc
    from dflash_nb import storage
    c = client(port)
    url = f"s3://corpus/{prefix}"
    tracemalloc.start()
    t = time.perf_counter(); objs = storage.list_objects(url, None, c); t_list = time.perf_counter() - t
    list_mem = tracemalloc.get_traced_memory()[1]; tracemalloc.stop()
    bucket, key = storage.split_s3_url(url)
    jobs = [storage._Job.to(bucket, o, o.key[len(key):], work/'cache'/'s3'/bucket, o.key) for o in objs]
    t = time.perf_counter(); cached = sum(storage._is_cached(j) for j in jobs); t_cached = time.perf_counter() - t
    out = f"s3://out/{prefix.rstrip('/')}"
    t = time.perf_counter(); st = storage.output_state(out, c); t_state = time.perf_counter() - t
    okey = prefix.rstrip('/')
    size = lambda k: c.head_object(Bucket='out', Key=k)['ContentLength']
    state = json.loads(c.get_object(Bucket='out', Key=f"{okey}/state.json")['Body'].read())
    run = state['_data_files'][0]['filename'].rsplit('/', 1)[0]
    return dict(objects=len(objs), list_s=round(t_list, 3), list_peak_mb=round(list_mem / 1e6, 2),
                cache_check_s=round(t_cached, 3), cached=cached, output_state_s=round(t_state, 3),
                output_objects=len(st.objects),
                manifest_bytes=size(f"{okey}/manifest.json"), stats_bytes=size(f"{okey}/{run}/stats.json"),
                skipped_bytes=size(f"{okey}/{run}/skipped.jsonl"),
                content_hashes_bytes=size(f"{okey}/{run}/content_hashes.npy"))

def compare(root: Path) -> str:
    "The results of every scale run under `root`, side by side (what grows with the size)."
    res = sorted((json.loads(f.read_text()) for f in root.glob('x*/result.json')), key=lambda r: r['scale'])
    if not res: return f"{root}: no results yet"
    def row(name, f):
        vals = []
        for r in res:
            try: vals.append(f(r))
            except (KeyError, TypeError, ZeroDivisionError, StopIteration): vals.append('-')
        return f"{name:<44}" + ''.join(f"{v:>18}" for v in vals)
    main_p = lambda r: next(p for p in r['run']['procs'].values() if p['role'] == 'tokenize (main)')
    wk = lambda r: [p for p in r['run']['procs'].values() if p['role'] == 'tokenize worker']
    s3rver = lambda r: next(p for p in r['run']['procs'].values() if p['role'].startswith('s3rver'))
    tok = lambda r: r['stats']['total_tokens']
    m = lambda r, k: r['run']['marks'][k]
    lines = [row('scale', lambda r: f"x{r['scale']:g}"),
             row('records', lambda r: f"{r['stats']['samples']:,}"),
             row('objects', lambda r: f"{r['corpus']['objects']:,}"),
             row('tokens', lambda r: f"{tok(r) / 1e6:,.1f} M"),
             row('wall (s)', lambda r: f"{r['run']['wall']:,.0f}"),
             row('  tokenize phase (s)', lambda r: f"{m(r, 'tokenize'):,.0f}"),
             row('  finish (s)', lambda r: f"{m(r, 'finish') - m(r, 'tokenize'):,.1f}"),
             row('  upload (s)', lambda r: f"{r['run']['wall'] - m(r, 'finish'):,.0f}"),
             row('  download done at (s)', lambda r: f"{m(r, 'download'):,.0f}"),
             row('start-up before the pool (s wall / CPU)',
                 lambda r: f"{m(r, 'workers'):,.0f} / {m(r, 'main_cpu_startup'):,.0f}"),
             row('M tokens per worker CPU-s', lambda r: f"{tok(r) / sum(p['cpu'] for p in wk(r)) / 1e6:,.2f}"),
             row('main ns/token after start-up',
                 lambda r: f"{(main_p(r)['cpu'] - m(r, 'main_cpu_startup')) / tok(r) * 1e9:,.0f}"),
             row('  of which while tokenizing',
                 lambda r: f"{(m(r, 'main_cpu_tokenize') - m(r, 'main_cpu_startup')) / tok(r) * 1e9:,.0f}"),
             row('peak RSS main (MiB)', lambda r: f"{main_p(r)['peak_rss'] / 2**20:,.0f}"),
             row('peak RSS per worker (MiB, max)', lambda r: f"{max(p['peak_rss'] for p in wk(r)) / 2**20:,.0f}"),
             row('peak RSS s3rver (MiB)', lambda r: f"{s3rver(r)['peak_rss'] / 2**20:,.0f}"),
             row('peak staging (GB)', lambda r: f"{r['disk']['peak staging'] / 1e9:,.2f}"),
             row('download cache (GB)', lambda r: f"{r['disk']['download cache'] / 1e9:,.2f}"),
             row('load average at the end', lambda r: r['load'].split()[0])]
    if any('probes' in r for r in res):
        p = lambda k, fmt='{:,}': (lambda r: fmt.format(r['probes'][k]))
        lines += [row('listing the input (s)', p('list_s', '{:.3f}')), row('  its peak memory (MB)', p('list_peak_mb',
                                                                                                       '{:.2f}')),
                  row('cache check of every object (s)', p('cache_check_s', '{:.3f}')),
                  row('output check before commit (s)', p('output_state_s', '{:.3f}')),
                  row('manifest.json (bytes)', p('manifest_bytes')), row('stats.json (bytes)', p('stats_bytes')),
                  row('skipped.jsonl (bytes)', p('skipped_bytes')),
                  row('content_hashes.npy (bytes)', p('content_hashes_bytes'))]
    return '\n'.join(lines)

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--scale', type=float, default=1.0, help="fraction of the seed's records and objects (default 1)")
    ap.add_argument('--root', default='/work/bench/seed', help="where the server's disk, the caches and results go")
    ap.add_argument('--port', type=int, default=4599)
    ap.add_argument('--workers', type=int, default=2, help="tokenize workers (default 2)")
    ap.add_argument('--gen-procs', type=int, default=2, help="processes writing the corpus (default 2)")
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--compare', action='store_true',
                    help="print the results of all scales under --root side by side, and exit")
    ap.add_argument('--extra', nargs=argparse.REMAINDER, default=[], help="more `dflash-nb tokenize` options (last)")
    a = ap.parse_args(argv)
    if not 0 < a.scale <= 1: ap.error("--scale must be in (0, 1]")
    root = Path(a.root)
    if a.compare: print(compare(root)); return None
    work = root/f"x{a.scale:g}"; work.mkdir(parents=True, exist_ok=True)
    n_objects, n_records = max(1, round(SEED['objects'] * a.scale)), max(1, round(SEED['samples'] * a.scale))
    prefix = f"x{a.scale:g}/"
    if (work/'result.json').exists():
        res = json.loads((work/'result.json').read_text())
        if 'probes' not in res:   # (a result of an earlier version of this script)
            server = start_s3rver(root, a.port)
            try: res['probes'] = probes(a.port, prefix, work)
            finally: server.terminate()
            (work/'result.json').write_text(json.dumps(res, indent=1))
        print(report(res)); return res
    server = start_s3rver(root, a.port)
    corpus = ensure_corpus(work, a.port, n_objects, n_records, a.seed, prefix, a.gen_procs)
    print(f"corpus: {corpus['objects']:,} objects, {corpus['bytes'] / 1e9:.2f} GB "
          f"({'written in %.0f s' % corpus['seconds'] if corpus['written'] else 'cached'})", flush=True)
    res = dict(scale=a.scale, workers=a.workers, corpus=corpus, seed=SEED)
    c = client(a.port)
    key = prefix.rstrip('/')
    committed = any(o['Key'] == f"{key}/manifest.json" for o in c.list_objects_v2(Bucket='out', Prefix=f"{key}/").get(
        'Contents') or [])
    res['run'] = None if committed and '--overwrite' not in a.extra else run_tokenize(
        work, a.port, prefix, a.workers, corpus['bytes'], server.pid, a.extra)
    res['load'] = ' '.join(f"{x:.2f}" for x in os.getloadavg())
    res['stats'], res['manifest'] = output_stats(a.port, f"s3://out/{key}")
    res['manifest'] = dict(shards=res['manifest']['shards'], inputs=len(res['manifest']['inputs']['files']))
    res['disk'] = {'server: corpus': du(root/'s3'/'corpus'/key), 'server: output': du(root/'s3'/'out'/key),
                   'download cache': du(work/'cache'/'s3')}
    if res['run']:
        res['disk'] |= {f"peak {k}": v for k, v in res['run']['peak_disk'].items()}
        res['extrapolation'] = extrapolate(res)
    res['probes'] = probes(a.port, prefix, work)
    (work/'result.json').write_text(json.dumps(res, indent=1))
    print(report(res))
    server.terminate()
    return res

if __name__ == '__main__':
    main()
