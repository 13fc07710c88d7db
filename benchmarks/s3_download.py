"""Download throughput from a loopback S3 server (moto, in a subprocess): 1 worker vs 32, in one run.

    python benchmarks/s3_download.py [--objects 2000] [--size 4096] [--workers 1 32]

Puts N small objects, then downloads them all into a fresh cache with each worker count and prints objects/s,
MB/s and the speed-up over the first count. Loopback has no network latency, so this measures per-request
overhead (client and moto's Python server, which here share the machine's cores), and is CPU-bound: more workers
help only as far as there are idle cores. On a real endpoint each request waits tens of ms for the network and the
store, which is what parallel workers hide; `--latency-ms 20` models that by sleeping in each GetObject.
"""
import argparse, os, shutil, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor

from dflash_nb.storage import download_objects
from dflash_nb.testing import MotoServer


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--objects", type=int, default=2000)
    ap.add_argument("--size", type=int, default=4096, help="bytes per object")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 32])
    ap.add_argument("--latency-ms", type=float, default=0.0,
                    help="add this much latency to every GetObject, as a remote endpoint's round trip would")
    a = ap.parse_args(argv)
    os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")
    with MotoServer() as srv:
        client = srv.client(workers=max(a.workers))
        client.create_bucket(Bucket="bench")
        body = (b'{"messages": [{"role": "user", "content": "x"}]}\n' * (a.size // 50 + 1))[:a.size]
        t = time.perf_counter()
        with ThreadPoolExecutor(16) as ex:
            list(ex.map(lambda i: client.put_object(Bucket="bench", Key=f"c/part-{i:05d}.jsonl", Body=body),
                        range(a.objects)))
        print(f"put {a.objects} objects of {a.size} B in {time.perf_counter() - t:.1f} s "
              f"(moto server on {srv.endpoint}; {os.cpu_count()} CPUs; added latency {a.latency_ms:g} ms/GET)")
        results = []
        for w in a.workers:
            cache = tempfile.mkdtemp(prefix="s3bench-")
            try:
                st = {}
                t = time.perf_counter()
                dl = srv.client(workers=w)
                if a.latency_ms:
                    dl.meta.events.register("before-send.s3.GetObject", lambda **kw: time.sleep(a.latency_ms / 1e3))
                n = sum(1 for _ in download_objects("s3://bench/c/", cache, workers=w, client=dl, progress=False,
                                                    stats=st))
                dt = time.perf_counter() - t
                assert n == a.objects == st["downloaded"], (n, st)
                results.append((w, dt))
                print(f"workers={w:>3}: {dt:6.2f} s  {n / dt:8.1f} objects/s  {st['bytes'] / dt / 1e6:6.2f} MB/s")
            finally:
                shutil.rmtree(cache, ignore_errors=True)
        (w0, t0), (w1, t1) = results[0], results[-1]
        print(f"speed-up {w1} vs {w0} workers: {t0 / t1:.1f}x")


if __name__ == "__main__":
    sys.exit(main())
