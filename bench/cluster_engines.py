"""Dask distributed vs Ray on this machine: start-up, memory and throughput of a 2-worker local cluster.

    python -m bench.cluster_engines dask      # prints one JSON object
    /path/to/venv-with-ray/bin/python bench/cluster_engines.py ray

Standalone (stdlib + psutil + the engine), so it runs in a venv holding only Ray. Measures:
``startup_s`` (until 2 worker processes answer), ``rss_mb`` (every process of the cluster, driver
included, after the runs), ``noop_tasks_per_s`` (1,000 empty tasks: scheduling overhead) and
``cpu_speedup`` (24 CPU-bound tasks of ~0.1 s on 2 workers vs the same in the driver alone).
"""

from __future__ import annotations

import json
import os
import sys
import time


def _spin(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


def _noop(x: int) -> int:
    return x


def _tree_rss_mb() -> float:
    import psutil

    me = psutil.Process()
    procs = [me, *me.children(recursive=True)]
    total = 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    if "ray" in sys.modules:  # Ray's daemons (GCS, raylet) are not our children: count them by name
        for p in psutil.process_iter(["name", "cmdline"]):
            cmd = " ".join(p.info["cmdline"] or [])
            if p.pid != me.pid and p not in procs and ("ray" in (p.info["name"] or "") or "/ray/" in cmd):
                try:
                    total += p.memory_info().rss
                except psutil.Error:
                    pass
    return total / 2**20


def _calibrate() -> int:
    n = 200_000
    start = time.perf_counter()
    _spin(n)
    return int(n * 0.1 / (time.perf_counter() - start))


def measure(engine: str) -> dict[str, float | str]:
    work = _calibrate()
    started = time.perf_counter()
    if engine == "dask":
        from distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                               dashboard_address="127.0.0.1:0")
        client = Client(cluster)
        client.wait_for_workers(2)
        startup = time.perf_counter() - started

        def run(fn, items):  # noqa: ANN001, ANN202
            return client.gather(client.map(fn, items, pure=False))
    else:
        import ray

        ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR")
        remote_noop, remote_spin = ray.remote(_noop), ray.remote(_spin)
        ray.get([remote_noop.remote(i) for i in range(2)])  # until workers answer
        startup = time.perf_counter() - started

        def run(fn, items):  # noqa: ANN001, ANN202
            remote = remote_noop if fn is _noop else remote_spin
            return ray.get([remote.remote(i) for i in items])
    run(_noop, range(20))  # warm-up
    start = time.perf_counter()
    run(_noop, range(1000))
    noop_rate = 1000 / (time.perf_counter() - start)
    start = time.perf_counter()
    for _ in range(24):
        _spin(work)
    serial = time.perf_counter() - start
    start = time.perf_counter()
    run(_spin, [work] * 24)
    parallel = time.perf_counter() - start
    rss = _tree_rss_mb()
    if engine == "dask":
        client.close()
        cluster.close()
    else:
        ray.shutdown()
    return {"engine": engine, "startup_s": round(startup, 2), "rss_mb": round(rss),
            "noop_tasks_per_s": round(noop_rate), "cpu_serial_s": round(serial, 2),
            "cpu_cluster_s": round(parallel, 2), "cpu_speedup": round(serial / parallel, 2),
            "load_avg_1m": round(os.getloadavg()[0], 1)}


if __name__ == "__main__":
    print(json.dumps(measure(sys.argv[1] if len(sys.argv) > 1 else "dask")))
