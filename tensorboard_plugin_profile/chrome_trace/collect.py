"""Chrome-trace events → compact columns, one event at a time.

``Collector.add(event)`` is the only per-event code of the Chrome-trace reader. It
keeps nothing per event but numbers in ``array`` columns: processes, threads, names,
categories and stat keys are interned once (ids into small tables), string stat
values too. What each phase becomes:

- ``X`` (and ``B``/``E`` pairs, instants ``i``/``I``/``R``): an event on the line of
  its (pid, tid); ``args`` become stats. A negative ``dur`` becomes 0 (counted in
  ``negative_durations``), as an ``E`` before its ``B`` does.
- ``s``/``t``/``f``: a flow point, bound to an event later (``raw.py``).
- ``C``: one sample per series on a counter line of the process.
- ``N``/``O``/``D``: one object, shown as an event from creation to deletion with
  its last snapshot's fields as stats (``objects.py``).
- ``M``: process and thread names, labels and sort order.
- PyTorch ``[memory]`` instants also become allocator counter series (``memory.py``).

Times are kept in picoseconds relative to the first timestamp seen (the ``base``,
integer microseconds), so epoch-based microsecond times never overflow int64; ``raw.py``
moves the origin to the earliest event.
"""

from __future__ import annotations

import json
from array import array
from typing import Any

import numpy as np

from ..xspace.model import KIND_DOUBLE, KIND_INT64, KIND_STR
from .exact_times import JsonFloat, micros_to_ps, text_of
from .memory import add_memory_counters
from .objects import ObjectTable

COUNTER_CATEGORY = "counter"
COUNTER_VALUE = "value"
COUNTER_LINE_PREFIX = "counter"
_INSTANT_PHASES = frozenset("iIR")
_FLOW_PHASES = {"s": 0, "t": 1, "f": 2}
_to_json = json.JSONEncoder(separators=(",", ":")).encode
_INT64 = (-(1 << 63), (1 << 63) - 1)


def _int64(value: int) -> int:
    """The value, or OverflowError when an int64 column cannot hold it."""
    if not _INT64[0] <= value <= _INT64[1]:
        raise OverflowError(value)
    return value


class Interner:
    """Distinct values → dense ids, in first-seen order."""

    def __init__(self) -> None:
        self.ids: dict = {}
        self.values: list = []

    def __call__(self, value: Any) -> int:
        found = self.ids.get(value)
        if found is None:
            found = self.ids[value] = len(self.values)
            self.values.append(value)
        return found


def _dur_ps(dur: Any) -> int:
    """A duration in microseconds as picoseconds: exactly from a fraction's text."""
    text = text_of(dur)
    exact = None if text is None else micros_to_ps(text)
    return int(round(dur * 1e6)) if exact is None else exact


class Collector:
    def __init__(self) -> None:
        self.base_us: Any = None
        self.strings = Interner()  # names, categories and string stat values
        self.stat_keys = Interner()
        self.lines = Interner()  # (pid, tid)
        self.process_meta: dict = {}  # pid -> {"name", "labels", "sort_index"}
        self.thread_meta: dict = {}  # (pid, tid) -> {"name", "sort_index"}
        self.skipped: dict = {}  # phase -> count of events not shown
        self.negative_durations = 0  # X events whose dur < 0, kept with duration 0
        # Events: line, name, category, begin, duration (ps).
        self.ev_line = array("q")
        self.ev_name = array("q")
        self.ev_cat = array("q")
        self.ev_begin = array("q")
        self.ev_dur = array("q")
        # Stats in long form: owner event, key, kind, int, float.
        self.st_event = array("q")
        self.st_key = array("q")
        self.st_kind = array("b")
        self.st_int = array("q")
        self.st_float = array("d")
        # Flow points: line, time, flow key, phase (0 s, 1 t, 2 f), binds to the enclosing slice.
        self.flow_line = array("q")
        self.flow_ts = array("q")
        self.flow_key = array("q")
        self.flow_phase = array("b")
        self.flow_keys = Interner()  # (category, id)
        self.objects = ObjectTable()
        self.counters: dict = {}  # (pid, counter name, series) -> (times, values) arrays
        self._open: dict = {}  # (pid, tid) -> stack of (name, cat, begin, args) for B/E
        self.end_ps = 0

    # --- time ---------------------------------------------------------------
    def _ps(self, ts: Any) -> int:
        if self.base_us is None:
            self.base_us = int(ts)
        text = text_of(ts)
        exact = None if text is None else micros_to_ps(text)
        if exact is not None:  # to the picosecond, from the text (exact_times.py says why)
            return _int64(exact - self.base_us * 1_000_000)
        delta = ts - self.base_us
        ps = delta * 1_000_000 if type(delta) is int else int(round(delta * 1e6))
        return _int64(ps)

    # --- events ---------------------------------------------------------------
    def add(self, ev: dict) -> None:
        try:
            self._add(ev)
        except (TypeError, ValueError, OverflowError):
            # A time that is not a number or out of range: counted, nothing half-added
            # (every time is converted before anything is appended).
            self._skip(f"phase {ev.get('ph')!r} with a bad time")

    def _add(self, ev: dict) -> None:
        ph = ev.get("ph")
        if ph == "X":
            ts = ev.get("ts")
            if ts is None:
                return self._skip("X without ts")
            dur = ev.get("dur") or 0
            begin = self._ps(ts)
            dur_ps = _int64(_dur_ps(dur)) if dur else 0
            if dur_ps < 0:  # an error of the writer: drawn as an instant, and counted
                self.negative_durations += 1
                dur_ps = 0
            self._event(ev, begin, dur_ps, ev.get("args"))
        elif ph in _FLOW_PHASES:
            self._flow(ev, _FLOW_PHASES[ph])
        elif ph == "C":
            self._counter(ev)
        elif ph == "M":
            self._metadata(ev)
        elif ph in ("N", "O", "D"):
            ts = ev.get("ts")
            if ts is not None:
                ps = self._ps(ts)
                line = self.lines((ev.get("pid"), ev.get("tid")))
                self.objects.add(ph, ev, line, ps, self.strings)
        elif ph in _INSTANT_PHASES:
            ts = ev.get("ts")
            if ts is not None:
                self._event(ev, self._ps(ts), 0, ev.get("args"))
        elif ph == "B" or ph == "E":
            self._begin_end(ph, ev)
        else:
            self._skip(f"phase {ph!r}")

    def _skip(self, what: str) -> None:
        self.skipped[what] = self.skipped.get(what, 0) + 1

    def _event(self, ev: dict, begin: int, dur: int, args: Any) -> int:
        line = self.lines((ev.get("pid"), ev.get("tid")))
        row = self.add_event(line, str(ev.get("name", "")), str(ev.get("cat", "")), begin, dur)
        if args and isinstance(args, dict):
            self.add_stats(row, args)
        return row

    def add_event(self, line: int, name: str, cat: str, begin: int, dur: int) -> int:
        row = len(self.ev_begin)
        self.ev_line.append(line)
        strings = self.strings
        name_id = strings.ids.get(name)
        self.ev_name.append(strings(name) if name_id is None else name_id)
        cat_id = strings.ids.get(cat)
        self.ev_cat.append(strings(cat) if cat_id is None else cat_id)
        self.ev_begin.append(begin)
        self.ev_dur.append(dur)
        if begin + dur > self.end_ps:
            self.end_ps = begin + dur
        return row

    def add_stat(self, row: int, key: str, value: Any) -> None:
        self.add_stats(row, {key: value})

    def add_stats(self, row: int, args: dict) -> None:
        """Stat rows of one event; values keep their JSON type (lists and objects as JSON text).

        The hottest loop of the reader: locals instead of attribute lookups.
        """
        keys, key_ids = self.stat_keys, self.stat_keys.ids
        strings, string_ids = self.strings, self.strings.ids
        kinds, int_values, float_values = self.st_kind, self.st_int, self.st_float
        self.st_event.extend([row] * len(args))
        key_column = self.st_key
        for key, value in args.items():
            key_id = key_ids.get(key)
            key_column.append(keys(key) if key_id is None else key_id)
            tv = type(value)
            if tv is int or tv is bool:
                try:
                    int_values.append(value)
                    kinds.append(KIND_INT64)
                    float_values.append(0.0)
                    continue
                except OverflowError:
                    value = str(value)
            elif tv is float or tv is JsonFloat:
                kinds.append(KIND_DOUBLE)
                int_values.append(0)
                float_values.append(value)
                continue
            elif tv is not str:
                value = _to_json(value)
            string_id = string_ids.get(value)
            int_values.append(strings(value) if string_id is None else string_id)
            kinds.append(KIND_STR)
            float_values.append(0.0)

    def _begin_end(self, ph: str, ev: dict) -> None:
        ts = ev.get("ts")
        if ts is None:
            return self._skip(f"{ph} without ts")
        key = (ev.get("pid"), ev.get("tid"))
        stack = self._open.setdefault(key, [])
        if ph == "B":
            stack.append((ev, self._ps(ts)))
            return None
        if not stack:
            return self._skip("E without B")
        begin_ev, begin = stack.pop()
        args = dict(begin_ev.get("args") or {})
        args.update(ev.get("args") or {})
        self._event(begin_ev, begin, max(self._ps(ts) - begin, 0), args)
        return None

    def _flow(self, ev: dict, phase: int) -> None:
        ts, flow_id = ev.get("ts"), ev.get("id", ev.get("bind_id"))
        if ts is None or flow_id is None:
            return self._skip("flow without ts or id")
        ps = self._ps(ts)
        self.flow_line.append(self.lines((ev.get("pid"), ev.get("tid"))))
        self.flow_ts.append(ps)
        self.flow_key.append(self.flow_keys((str(ev.get("cat", "")), str(flow_id))))
        self.flow_phase.append(phase)
        return None

    def _counter(self, ev: dict) -> None:
        ts, args = ev.get("ts"), ev.get("args")
        if ts is None or not isinstance(args, dict):
            return self._skip("C without ts or args")
        name = str(ev.get("name", ""))
        if ev.get("id") is not None:
            name = f"{name} {ev['id']}"
        begin = self._ps(ts)
        for series, value in args.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                key = (ev.get("pid"), name, str(series))
                columns = self.counters.get(key)
                if columns is None:
                    columns = self.counters[key] = (array("q"), array("d"))
                columns[0].append(begin)
                columns[1].append(float(value))
        return None

    def _metadata(self, ev: dict) -> None:
        name, args = ev.get("name"), ev.get("args") or {}
        pid = ev.get("pid")
        if name == "process_name":
            self.process_meta.setdefault(pid, {})["name"] = str(args.get("name", ""))
        elif name == "process_labels":
            self.process_meta.setdefault(pid, {})["labels"] = str(args.get("labels", ""))
        elif name == "process_sort_index":
            self.process_meta.setdefault(pid, {})["sort_index"] = args.get("sort_index")
        elif name == "thread_name":
            key = (pid, ev.get("tid"))
            self.thread_meta.setdefault(key, {})["name"] = str(args.get("name", ""))
        elif name == "thread_sort_index":
            key = (pid, ev.get("tid"))
            self.thread_meta.setdefault(key, {})["sort_index"] = args.get("sort_index")

    def finish(self) -> None:
        """Slices still open at the end (B without E) end with the trace."""
        for stack in self._open.values():
            while stack:
                begin_ev, begin = stack.pop()
                self._event(begin_ev, begin, max(self.end_ps - begin, 0), begin_ev.get("args"))
        self.objects.finish(self)
        add_memory_counters(self)  # PyTorch [memory] events: allocator series
        self._finish_counters()

    def _finish_counters(self) -> None:
        """Each series on its own line of the process; a sample lasts until the next one.
        Whole series at once: a trace may hold millions of samples."""
        for (pid, name, series), (times, values) in self.counters.items():
            label = name if series == name else f"{name} {series}"
            tid = (COUNTER_LINE_PREFIX, label)
            self.thread_meta[(pid, tid)] = {"name": label}
            line = self.lines((pid, tid))
            begin = np.frombuffer(times, dtype=np.int64)
            end = np.append(begin[1:], max(self.end_ps, int(begin[-1])))
            first = self._add_events(
                line, series, COUNTER_CATEGORY, begin, np.maximum(end - begin, 0)
            )
            self._add_values(first, np.frombuffer(values, dtype=np.float64))
        self.counters.clear()

    def _add_events(self, line: int, name: str, cat: str, begin, dur) -> int:
        """``add_event`` for many events of one line, name and category; the first row."""
        first, n = len(self.ev_begin), len(begin)
        self.ev_line.frombytes(np.full(n, line, dtype=np.int64).tobytes())
        self.ev_name.frombytes(np.full(n, self.strings(name), dtype=np.int64).tobytes())
        self.ev_cat.frombytes(np.full(n, self.strings(cat), dtype=np.int64).tobytes())
        self.ev_begin.frombytes(np.ascontiguousarray(begin, dtype=np.int64).tobytes())
        self.ev_dur.frombytes(np.ascontiguousarray(dur, dtype=np.int64).tobytes())
        if n:
            self.end_ps = max(self.end_ps, int((begin + dur).max()))
        return first

    def _add_values(self, first: int, values) -> None:
        """One ``value`` stat per row from ``first`` on: whole numbers as int64 (as text
        beyond int64, like ``add_stats``), others as doubles."""
        n = len(values)
        whole = np.isfinite(values) & (values == np.floor(values))
        fits = whole & (values >= -(2.0**63)) & (values < 2.0**63)
        kinds = np.where(fits, KIND_INT64, KIND_DOUBLE).astype(np.int8)
        ints = np.where(fits, values, 0).astype(np.int64)
        floats = np.where(fits, 0.0, values)
        key = self.stat_keys(COUNTER_VALUE)
        for i in np.flatnonzero(whole & ~fits).tolist():  # rare: kept as text
            kinds[i], ints[i], floats[i] = KIND_STR, self.strings(str(int(values[i]))), 0.0
        self.st_event.frombytes(np.arange(first, first + n, dtype=np.int64).tobytes())
        self.st_key.frombytes(np.full(n, key, dtype=np.int64).tobytes())
        self.st_kind.frombytes(kinds.tobytes())
        self.st_int.frombytes(ints.tobytes())
        self.st_float.frombytes(floats.tobytes())
