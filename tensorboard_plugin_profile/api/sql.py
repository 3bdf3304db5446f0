"""``Profile.sql(query)``: one read-only SQL query over a profile, answered by DuckDB.

The views are the facade's DataFrames, across every host of the run:

- ``events``: the trace events (``Profile.iter_events``: host, plane, line, name, start_ps,
  duration_ps, the well-known stats). Each batch is registered as it is, so DuckDB scans
  the decoded columns in place (numpy columns without a copy, names as ENUMs), and the
  view is their ``UNION ALL BY NAME``;
- ``steps``, ``op_stats``, ``kernels``: ``Profile.steps()``, ``op_stats()``, ``kernels()``.

Only the views a query names are built. The connection is in memory and private to the
query; before the query runs it loses access to files and the network
(``enable_external_access``), its memory is capped (``MEMORY_LIMIT``) and its settings
are locked, and the query must be one
``SELECT`` (``WITH`` and ``VALUES`` included). A timer thread interrupts it after
``timeout_s``. DuckDB is an optional extra: ``pip install 'tensorboard_plugin_profile[sql]'``.

Usage::

    run_query(profile, "select name, sum(duration_ps) from events group by 1 order by 2 desc")
"""

from __future__ import annotations

import re
import threading
from typing import Any, Callable, Optional

import pandas as pd

from ..common.errors import DeadlineExceeded, InvalidArgument, Unavailable

DEFAULT_TIMEOUT_S = 30.0
MAX_QUERY_CHARS = 100_000
# The batches of the ``events`` view: large, so a session has few of them.
EVENT_BATCH_ROWS = 4_000_000
# What DuckDB may hold for one query before it spills or fails with a clear error.
MEMORY_LIMIT = "2GB"
VIEWS = ("events", "steps", "op_stats", "kernels")
INSTALL_HINT = "pip install 'tensorboard_plugin_profile[sql]'"


def run_query(
    profile: Any,
    query: str,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_rows: Optional[int] = None,
) -> pd.DataFrame:
    """The query's answer as a DataFrame (its first ``max_rows`` rows when given);
    ``InvalidArgument`` with DuckDB's message when the SQL is wrong or not a single
    SELECT, ``DeadlineExceeded`` past ``timeout_s``."""
    duckdb = _duckdb()
    if not isinstance(query, str) or not query.strip():
        raise InvalidArgument("Give one SQL SELECT query, e.g. 'select count(*) from events'.")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidArgument(f"The query has {len(query)} characters; at most {MAX_QUERY_CHARS}.")
    if not timeout_s or timeout_s <= 0:
        raise InvalidArgument(f"timeout_s must be positive, not {timeout_s}.")
    con = duckdb.connect(":memory:")
    try:
        _check_one_select(con, query, duckdb)
        for name in views_named(query):
            _register(con, name, profile)
        con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
        if max_rows is not None:
            query = f"SELECT * FROM ({query.strip().rstrip(';')}) LIMIT {int(max_rows)}"
        return _execute(con, query, timeout_s, duckdb)
    finally:
        con.close()


def views_named(query: str) -> list:
    """The views a query mentions (a word match: at worst a view is built for nothing)."""
    return [v for v in VIEWS if re.search(rf"\b{v}\b", query, re.IGNORECASE)]


def _duckdb() -> Any:
    try:
        import duckdb
    except ImportError:
        raise Unavailable(f"SQL needs DuckDB, an optional extra: {INSTALL_HINT}.") from None
    return duckdb


def _check_one_select(con: Any, query: str, duckdb: Any) -> None:
    try:
        statements = con.extract_statements(query)
    except duckdb.Error as e:
        raise InvalidArgument(f"SQL error: {_message(e)}") from None
    if len(statements) != 1:
        raise InvalidArgument(f"Give exactly one SQL statement; this has {len(statements)}.")
    kind = statements[0].type
    if kind != duckdb.StatementType.SELECT:
        raise InvalidArgument(
            f"Only SELECT queries are answered (the views are read-only); this is {kind.name}."
        )


def _register(con: Any, name: str, profile: Any) -> None:
    if name == "events":
        batches = list(profile.iter_events(batch_rows=EVENT_BATCH_ROWS))
        if not batches:
            from .events import empty_events

            batches = [empty_events()]
        parts = []
        for i, batch in enumerate(batches):
            con.register(f"_events_{i}", batch)
            parts.append(f"SELECT * FROM _events_{i}")
        con.execute(f"CREATE VIEW events AS {' UNION ALL BY NAME '.join(parts)}")
        return
    frames: dict[str, Callable[[], pd.DataFrame]] = {
        "steps": profile.steps,
        "op_stats": profile.op_stats,
        "kernels": profile.kernels,
    }
    con.register(f"_{name}", frames[name]())
    con.execute(f"CREATE VIEW {name} AS SELECT * FROM _{name}")


def _execute(con: Any, query: str, timeout_s: float, duckdb: Any) -> pd.DataFrame:
    timer = threading.Timer(timeout_s, con.interrupt)
    timer.daemon = True
    timer.start()
    try:
        return con.execute(query).df()
    except duckdb.InterruptException:
        raise DeadlineExceeded(
            f"The query ran past its time limit ({timeout_s:g} s) and was stopped; narrow it "
            "(WHERE, LIMIT) or give a longer timeout."
        ) from None
    except duckdb.Error as e:
        raise InvalidArgument(f"SQL error: {_message(e)}") from None
    finally:
        timer.cancel()


def _message(error: Exception) -> str:
    """DuckDB's message, first lines only (it may append a long caret diagram)."""
    lines = str(error).strip().splitlines()
    return " ".join(line.strip() for line in lines[:6] if line.strip())
