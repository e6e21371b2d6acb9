"""Independent jobs on a cluster: ``executor(url)`` gives an object whose ``map(fn, items)`` yields
``(index, result)`` pairs as the jobs finish.

URLs: ``local:N`` starts a Dask cluster of N worker processes (one thread each) on 127.0.0.1 for
this command and stops it afterwards; ``tcp://HOST:8786`` uses a running Dask scheduler (its
workers need madqa installed and the same paths: the corpus folder and ``MADQA_HOME``). Dask, not
Ray: measured in docs/performance.md ("Cluster engine").

What callers may rely on: a job on a worker that dies is run again on another worker (Dask
reschedules it; after ``allowed_failures`` + 1 lost workers, default 4, ClusterError); ``map``
yields each index exactly once, so the driver, which alone writes results, writes each once.
``fn`` must be a module-level function (it is pickled by reference) and should turn its own
failures into results; an exception it raises is re-raised here.
"""

from __future__ import annotations

import contextlib
import logging
import re
import uuid
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from madqa.errors import ClusterError

_LOCAL = re.compile(r"local:(\d+)")
_REMOTE = re.compile(r"tcp://[^\s/:]+:\d+")
REQUIRES = "the cluster needs Dask distributed: pip install dask distributed (see requirements-optional.txt)"


def check_url(url: str) -> str:
    """``url`` when it names a cluster madqa can use; ClusterError saying what can, otherwise."""
    if _LOCAL.fullmatch(url):
        if not 1 <= int(url.split(":")[1]) <= 256:
            raise ClusterError(f"--cluster {url}: local:N needs 1 <= N <= 256 workers")
        return url
    if _REMOTE.fullmatch(url):
        return url
    if url.startswith("ray://"):
        raise ClusterError(f"--cluster {url}: Ray is not supported (Dask was chosen; see docs/performance.md)")
    raise ClusterError(f"--cluster {url!r}: expected local:N or tcp://HOST:PORT (a Dask scheduler)")


class DaskExecutor:
    """A Dask client on a local cluster it started (``local:N``) or on a running scheduler."""

    def __init__(self, url: str, connect_timeout: float = 30) -> None:
        check_url(url)
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise ClusterError(REQUIRES) from None
        self.url = url
        self.cluster = None
        try:
            if url.startswith("local:"):
                import dask

                # the workers read each PDF in a limited child process (madqa.pdf_reader); Dask starts
                # local workers as daemonic processes, which may not have children, unless told not to.
                # The rest cuts the cluster's idle CPU (scheduler, nannies, workers) from ~9% of a core
                # to ~3% (docs/performance.md): the workers' sampling profiler and the 0.5 s system monitor
                # feed a dashboard that is not installed here, the 20 ms tick only watches for a blocked loop
                dask.config.set({"distributed.worker.daemon": False, "distributed.worker.profile.enabled": False,
                                 "distributed.admin.system-monitor.interval": "5s",
                                 "distributed.admin.tick.interval": "1s"})
                self.cluster = LocalCluster(n_workers=int(url[6:]), threads_per_worker=1, processes=True,
                                            host="127.0.0.1", dashboard_address="127.0.0.1:0",
                                            silence_logs=logging.ERROR)
                self.client = Client(self.cluster)
            else:
                self.client = Client(url, timeout=connect_timeout)
        except OSError as exc:  # no scheduler there, or the port is refused
            self.close()
            raise ClusterError(f"cannot reach the Dask scheduler at {url}: {exc}") from None

    @property
    def workers(self) -> int:
        """Worker processes now connected."""
        return len(self.client.scheduler_info(n_workers=-1).get("workers", {}))

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        """Run ``fn`` on every item on the cluster; ``(index, result)`` as each finishes, each index once."""
        from distributed import as_completed
        from distributed.scheduler import KilledWorker

        items = list(items)
        run = uuid.uuid4().hex[:8]
        futures = self.client.map(fn, items, key=[f"madqa-{run}-{i}" for i in range(len(items))], pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        seen: set[int] = set()
        try:
            for future in as_completed(futures):
                i = index[future.key]
                try:
                    result = future.result()
                except KilledWorker as exc:
                    raise ClusterError(f"job {i} was lost with every worker that ran it ({exc})") from None
                future.release()
                if i not in seen:
                    seen.add(i)
                    yield i, result
        finally:
            for future in futures:
                future.release()

    def close(self) -> None:
        client = getattr(self, "client", None)
        if client is not None:
            client.close()
        if self.cluster is not None:
            self.cluster.close()

    def __enter__(self) -> DaskExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def executor(url: str, connect_timeout: float = 30) -> DaskExecutor:
    """The executor for ``url`` (``local:N`` or ``tcp://HOST:PORT``); ClusterError when unusable."""
    return DaskExecutor(url, connect_timeout)


def cluster_for(url: str | None) -> Any:
    """A context manager giving the executor for ``url``, or None when no cluster is asked for."""
    return executor(url) if url else contextlib.nullcontext()
