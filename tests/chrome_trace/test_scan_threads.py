"""The compiled scanner split across threads (issue 30): each window of text is cut at
guessed event starts, the parts scan at once without the GIL, and are joined in file order.
A guess inside a string, an escape or a nested arg must never change a byte of the result:
the columns, interned tables and times are those of one thread and of the pure-Python
reader, for 2 to 9 threads and any block size."""

from __future__ import annotations

import json
import random

import pytest

from tensorboard_plugin_profile.chrome_trace import read_chrome_trace
from tensorboard_plugin_profile.chrome_trace.collect import Collector
from tensorboard_plugin_profile.common.errors import CorruptProfile

from .test_scan import COLUMNS, FILES, SCANNER, TABLES, _assert_same, _collect, _state

pytestmark = pytest.mark.skipif(SCANNER is None, reason="built without a C compiler")

# Texts that look like event boundaries ("}, {") where a guess may land: inside strings,
# after escapes, in nested args (arrays of objects go to the Python path).
TRAPS = ["},{", "}, {", '\\"},{\\"', "}\n,\n{", "{[", 'a},{"ph": "X"}', "\\\\},{"]


def _events(count: int, seed: int) -> list:
    rng = random.Random(seed)
    events = []
    for i in range(count):
        trap = rng.choice(TRAPS) * rng.randint(1, 30)
        event = {"ph": "X", "name": f"op{i % 17}", "cat": "cpu_op", "pid": 1,
                 "tid": rng.randint(1, 4), "ts": 1000 + i, "dur": rng.randint(0, 5),
                 "args": {"text": trap, "n": i}}  # fmt: skip
        kind = i % 7
        if kind == 1:
            event["args"]["nested"] = [{"a": trap}, {"b": [1, 2]}]  # the Python path
        elif kind == 2:
            event["name"] = trap  # a name with escapes: the Python path
        elif kind == 3:
            event = {"ph": "s", "id": i, "cat": "ac2g", "pid": 1, "tid": 2, "ts": 1000 + i}
        elif kind == 4:
            event["args"]["dims"] = [[1, 2], [3]]
        events.append(event)
    return events


def _file(tmp_path, events: list, indent=None):
    path = tmp_path / "trap.json"
    path.write_text(json.dumps({"traceEvents": events, "meta": "},{"}, indent=indent))
    return path


def _scan_all(text: str, threads: int):
    """Calls the scanner as the stream does, on one window holding the whole text."""
    collector = Collector()
    pos = text.index("{", text.index("["))
    first_end = json.JSONDecoder().raw_decode(text, pos)[1]
    pos, count = SCANNER.scan(text[:first_end], pos, collector, 1 << 30, 1)  # sets the base
    calls = 1
    while count:
        comma = text.find(",", pos)
        start = text.find("{", comma)
        if comma < 0 or start < 0 or text[comma + 1 : start].strip():
            break
        pos, count = SCANNER.scan(text, start, collector, 1 << 30, threads)
        calls += 1
    return collector, calls


@pytest.mark.parametrize("threads", range(2, 10))
@pytest.mark.parametrize("indent", [None, 2])
def test_split_points_in_strings_escapes_and_args_read_the_same(tmp_path, threads, indent):
    path = _file(tmp_path, _events(400, threads), indent)
    pure = _state(*_collect(path, False)[:2])
    for block in (1 << 20, 4096, 997):
        collector, stream, _ = _collect(path, True, block, threads=threads)
        assert _state(collector, stream) == pure, block


@pytest.mark.parametrize("threads", range(2, 10))
def test_plain_events_are_split_and_joined(threads):
    """Events the scanner reads whole: one call takes them all, on any number of parts, and
    gives the bytes of one thread (names first seen in a later part get the same ids)."""
    events = [{"ph": "X", "name": f"n{(i * 7919) % 501}", "pid": 1, "tid": i % 3, "ts": i,
               "dur": 1, "args": {f"k{i % 11}": f"v{i % 13}"}} for i in range(3000)]  # fmt: skip
    text = json.dumps(events, indent=1)
    one, _ = _scan_all(text, 1)
    many, calls = _scan_all(text, threads)
    assert calls == 2  # the first event, then all the others in one call
    assert len(many.ev_begin) == 3000
    for name in COLUMNS:
        assert getattr(many, name) == getattr(one, name), name
    for name in TABLES:
        assert getattr(many, name).values == getattr(one, name).values, name


def test_a_wrong_guess_falls_back_and_reads_the_same():
    """Every guessed start is inside a string: the parts after it are dropped, each call
    still makes progress, and the result is that of one thread."""
    events = [{"ph": "X", "name": "e", "pid": 1, "tid": 1, "ts": i, "dur": 1,
               "args": {"s": "}, {" * 200}} for i in range(200)]  # fmt: skip
    text = json.dumps(events)
    one, _ = _scan_all(text, 1)
    many, calls = _scan_all(text, 4)
    assert len(many.ev_begin) == 200 and calls > 3  # fallbacks: more calls
    for name in COLUMNS:
        assert getattr(many, name) == getattr(one, name), name


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_fixtures_read_the_same_on_three_threads(path):
    one = _state(*_collect(path, True, 1 << 20, threads=1)[:2])
    for block in (1 << 20, 4096):
        assert _state(*_collect(path, True, block, threads=3)[:2]) == one, block
    assert _assert_same(path, blocks=(4096,), threads=3) > 0


def test_cut_and_malformed_files_give_the_same_answer(tmp_path):
    text = _file(tmp_path, _events(300, 1)).read_text()
    cut = tmp_path / "cut.json"
    cut.write_text(text[: len(text) * 2 // 3])
    counts = {t: read_chrome_trace(str(cut), threads=t).num_events for t in (1, 2, 3, 9)}
    assert len(set(counts.values())) == 1 and counts[1] > 0
    bad = tmp_path / "bad.json"
    middle = text.index('"ph"', len(text) // 2)
    bad.write_text(text[:middle] + '"ph" "X", ' + text[middle + 6 :])  # a colon missing
    messages = set()
    for threads in (1, 2, 3, 9):
        with pytest.raises(CorruptProfile, match="bad.json is not a Chrome trace") as error:
            read_chrome_trace(str(bad), threads=threads)
        messages.add(str(error.value))
    assert len(messages) == 1
