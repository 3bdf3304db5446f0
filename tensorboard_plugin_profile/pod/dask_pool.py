"""The per-host map on a Dask cluster, for sessions one machine cannot summarise fast enough.

``DaskPool(address).map(fn, items)`` runs ``fn(item)`` as Dask tasks on the cluster whose
scheduler listens at ``address`` (``tcp://host:8786``) and gathers the results. Each task
reads its host file itself (a shared file system or, later, a remote logdir): no profile
bytes go through the scheduler, only the small results come back. Tasks are retried
(``RETRIES``) when a worker dies; when the cluster cannot be reached or a task still
fails, ``map`` raises ``PoolUnavailable`` and the caller falls back to the local pool. A
typed error of a task (a corrupt file) is raised as that error.

Needs the optional ``dask.distributed`` (``pip install tensorboard-plugin-profile[dask]``).

Usage::

    pool = DaskPool("tcp://10.0.0.5:8786")
    summaries = pool.map(summarize_file, host_files)
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable, Optional, Sequence

from ..store.host_pool import PoolUnavailable, raise_typed, run_in_worker

logger = logging.getLogger(__name__)
RETRIES = 2
CONNECT_TIMEOUT_S = 10.0
# How long a whole map may take before the cluster is given up for this request.
MAP_TIMEOUT_S = 3600.0


class DaskPool:
    def __init__(self, address: str, connect_timeout_s: float = CONNECT_TIMEOUT_S):
        self.address = address
        self.connect_timeout_s = connect_timeout_s
        self._lock = threading.Lock()
        self._client: Any = None

    def map(
        self,
        fn: Callable[[Any], Any],
        items: Sequence[Any],
        on_done: Optional[Callable[[int], None]] = None,
        limit: Optional[int] = None,  # the cluster's own workers bound the tasks in flight
    ) -> list:
        """``[fn(item) for item in items]`` as Dask tasks (see the module docstring)."""
        client = self._connect()
        try:
            futures = client.map(run_in_worker, [fn] * len(items), items, retries=RETRIES,
                                 pure=False)  # fmt: skip
            deadline = time.monotonic() + MAP_TIMEOUT_S
            results = []
            for future in futures:  # in order: the cluster runs them all meanwhile
                results.append(future.result(timeout=max(deadline - time.monotonic(), 1)))
                if on_done is not None:
                    on_done(len(results))
        except Exception as e:  # any cluster failure: fall back, never a half answer
            logger.warning("Dask cluster at %s failed (%s); using the local pool", self.address, e)
            self._drop_client()
            raise PoolUnavailable(str(e)) from e
        outcomes = []
        for outcome in results:
            if outcome[0] == "error":
                raise_typed(outcome[1], outcome[2])
            outcomes.append(outcome[1])
        return outcomes

    def _connect(self) -> Any:
        with self._lock:
            if self._client is not None:
                return self._client
            try:
                from distributed import Client
            except ImportError as e:
                raise PoolUnavailable(
                    "--dask_scheduler needs dask.distributed: pip install "
                    "'tensorboard-plugin-profile[dask]'"
                ) from e
            try:
                self._client = Client(
                    self.address, timeout=self.connect_timeout_s, set_as_default=False
                )
            except Exception as e:  # unreachable or refusing: fall back
                logger.warning("cannot reach the Dask scheduler at %s (%s)", self.address, e)
                raise PoolUnavailable(str(e)) from e
            logger.info("per-host work runs on the Dask cluster at %s", self.address)
            return self._client

    def _drop_client(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            try:
                client.close(timeout=5)
            except Exception:  # closing a broken connection may fail
                pass

    def shutdown(self) -> None:
        self._drop_client()
