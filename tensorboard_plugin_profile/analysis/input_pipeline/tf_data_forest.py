"""The tf.data event forest of one host plane: who waits on whom (docs/conversion.md §5.9).

Edges go from an iterator call to the tf.data calls it waited on: the ``Iterator::…``
events nested in it on its thread, and — for asynchronous iterators — the producer's
iterator call that made the element it consumed (a ``<Stage>Consume`` inside the
consumer iterator and a ``<Stage>Produce`` around the producer iterator share an
``element_id``; the producer iterator's ``parent_id`` is the consumer iterator's ``id``).

Nesting uses ``nesting.nest`` on *ranks* of begin/end points, ordered so ties are never
ambiguous; the links are one merge on (iterator id, element id). No loop per event.

Usage::

    kinds = name_kinds(plane.events["name"])
    edges = children(plane, kinds, legacy_ids=False)   # DataFrame parent, child (rows)
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...kernels.nesting import nest
from ...xspace import schema
from ...xspace.model import KIND_UINT64, Plane

_STAGE_RANK = {stage: i for i, stage in enumerate(schema.TF_DATA_ASYNC_STAGES)}


def name_kinds(names: pd.Series) -> dict:
    """Per-event flags from the event names, computed once per distinct name."""
    categories = pd.Series(names.cat.categories.astype(str))
    codes = names.cat.codes.to_numpy()
    produce = categories.str.removesuffix("Produce").map(_STAGE_RANK)
    consume = categories.str.removesuffix("Consume").map(_STAGE_RANK)
    per_name = {
        "iterator": categories.str.startswith(schema.ITERATOR_PREFIX),
        # Any "Iterator:…" name is tf.data to ParseTfOpFullname.
        "tf_data": categories.str.startswith("Iterator:"),
        "root": categories.str.startswith(schema.ITERATOR_PREFIX)
        & (categories.str.count("::") == 1),
        "second": categories == schema.DEVICE_INPUT_PIPELINE_SECOND_ITERATOR,
        "produce": produce.where(categories.str.endswith("Produce"), -1).fillna(-1),
        "consume": consume.where(categories.str.endswith("Consume"), -1).fillna(-1),
    }
    return {k: v.to_numpy()[codes] for k, v in per_name.items()}


def int_stat(plane: Plane, name: str, legacy_ids: bool) -> tuple:
    column = plane.events[name]
    values = column.to_numpy(dtype=np.int64, na_value=0).copy()
    present = column.notna().to_numpy()
    if legacy_ids:
        st = plane.stats
        as_uint = st["event"].to_numpy()[((st["stat"] == name) & (st["kind"] == KIND_UINT64))]
        values[as_uint] = 0
    return values, present


def event_parents(plane: Plane, lines=None) -> np.ndarray:
    """Direct parent row of every event on its thread (-1 at top level or async).

    ``lines`` (optional) limits the work to those line rows; others get -1.

    Like the event forest: a parent contains its child (inclusive ends), events that
    begin together nest longer-first, and abutting events do not nest. Times become
    distinct ranks in that order, so ``nest`` sees no ties.
    """
    ev = plane.events
    n = len(ev)
    parent = np.full(n, -1, dtype=np.int64)
    is_async = ev[schema.IS_ASYNC].fillna(0).to_numpy(dtype=np.int64) != 0
    wanted = ~is_async
    if lines is not None:
        wanted &= np.isin(ev["line"].to_numpy(), lines)
    rows = np.flatnonzero(wanted)
    if not len(rows):
        return parent
    line = ev["line"].to_numpy().astype(np.int64)[rows]
    begin = ev["begin_ps"].to_numpy()[rows]
    end = begin + ev["duration_ps"].to_numpy()[rows]
    order = np.lexsort((rows, -end, begin, line))
    rows, line, begin, end = rows[order], line[order], begin[order], end[order]
    k = len(rows)
    pos = np.arange(k)
    point = np.lexsort(_point_keys(line, begin, end, pos))
    rank = np.empty(2 * k, dtype=np.int64)
    rank[point] = np.arange(2 * k)
    nested = nest(line, rank[:k], rank[k:], pos)
    found = nested.parent >= 0
    parent[rows[found]] = rows[nested.parent[found]]
    return parent


def _point_keys(line, begin, end, pos) -> tuple:
    # At one time: ends first (innermost first), then begins (outermost first); an
    # instant event's end follows its own begin.
    zero = end == begin
    point_line = np.concatenate([line, line])
    time = np.concatenate([begin, np.where(zero, begin, end)])
    kind = np.concatenate([np.ones_like(pos), np.where(zero, 1, 0)])
    tie = np.concatenate([2 * pos, np.where(zero, 2 * pos + 1, -pos)])
    return tie, kind, time, point_line


def children(plane: Plane, kinds: dict, legacy_ids: bool) -> pd.DataFrame:
    """Edges (parent row → tf.data child row) in the order the walk visits them."""
    is_tf_data = kinds["tf_data"]
    # Only threads that run tf.data (iterators, producers, consumers) matter here.
    relevant = is_tf_data | (kinds["produce"] >= 0) | (kinds["consume"] >= 0)
    parent = event_parents(plane, np.unique(plane.events["line"].to_numpy()[relevant]))
    nested_rows = np.flatnonzero(is_tf_data & (parent >= 0))
    nested = pd.DataFrame({"parent": parent[nested_rows], "child": nested_rows})
    linked = _producer_links(plane, kinds, parent, legacy_ids)
    edges = pd.concat([nested.assign(kind=0), linked.assign(kind=1)], ignore_index=True)
    edges = edges[is_tf_data[edges["parent"].to_numpy()]]
    # Nested children in thread order first, then linked producers (upstream order).
    edges = edges.assign(order=np.arange(len(edges)))
    return edges.sort_values(["parent", "kind", "order"], kind="stable")[["parent", "child"]]


def _producer_links(plane, kinds: dict, parent, legacy_ids) -> pd.DataFrame:
    """Consumer iterator → the producer iterator call that made the consumed element."""
    element, has_element = int_stat(plane, schema.ELEMENT_ID, legacy_ids)
    ids, has_id = int_stat(plane, schema.STEP_ID, legacy_ids)
    parent_ids, has_parent_id = int_stat(plane, schema.PARENT_ID, legacy_ids)
    is_iterator, produce, consume = kinds["iterator"], kinds["produce"], kinds["consume"]
    is_producer = np.zeros(len(parent) + 1, dtype=bool)
    is_producer[np.flatnonzero((produce >= 0) & has_element)] = True
    children = np.flatnonzero(is_iterator & is_producer[parent])
    # The first iterator nested in each producer event (stop there if it has no parent id).
    first = pd.DataFrame({"producer": parent[children], "child": children})
    first = first.drop_duplicates("producer", keep="first")
    first = first[has_parent_id[first["child"].to_numpy()]]
    producers = pd.DataFrame(
        {
            "iterator": parent_ids[first["child"].to_numpy()],
            "element": element[first["producer"].to_numpy()],
            "child": first["child"].to_numpy(),
            "stage": produce[first["producer"].to_numpy()],
        }
    ).sort_values(["stage", "child"], kind="stable")
    consume_rows = np.flatnonzero((consume >= 0) & has_element & (parent >= 0))
    owner = parent[consume_rows]
    ok = is_iterator[owner] & has_id[owner]
    consumers = pd.DataFrame(
        {
            "iterator": ids[owner[ok]],
            "element": element[consume_rows[ok]],
            "parent": owner[ok],
            "stage": consume[consume_rows[ok]],
            "row": consume_rows[ok],
        }
    ).sort_values(["stage", "row"], kind="stable")
    links = consumers.merge(producers, on=["iterator", "element"], how="inner", sort=False)
    return links[["parent", "child"]]
