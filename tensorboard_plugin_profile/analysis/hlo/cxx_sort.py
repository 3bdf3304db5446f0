"""C++ ``std::sort`` order (libstdc++'s introsort), for ties as upstream breaks them.

Upstream sorts the peak buffers by size with ``std::sort``, which is not stable: the
order of equal-sized buffers depends on the algorithm's steps. To list them as
upstream does we replay those steps (median-of-three quicksort down to blocks of
16, then insertion sort). Python's stable sort would give a different, equally
valid order.

Usage::

    order = introsort_order(keys, less=lambda a, b: a > b)   # indices into keys
"""

from __future__ import annotations

from typing import Any, Callable

_THRESHOLD = 16


def introsort_order(keys: list, less: Callable[[Any, Any], bool]) -> list:
    """Indices of ``keys`` in the order ``std::sort(begin, end, less)`` leaves them."""
    items = list(range(len(keys)))

    def lt(i: int, j: int) -> bool:
        return less(keys[i], keys[j])

    def median_to_first(result: int, a: int, b: int, c: int) -> None:
        if lt(items[a], items[b]):
            if lt(items[b], items[c]):
                pick = b
            elif lt(items[a], items[c]):
                pick = c
            else:
                pick = a
        elif lt(items[a], items[c]):
            pick = a
        elif lt(items[b], items[c]):
            pick = c
        else:
            pick = b
        items[result], items[pick] = items[pick], items[result]

    def partition(first: int, last: int, pivot: int) -> int:
        while True:
            while lt(items[first], items[pivot]):
                first += 1
            last -= 1
            while lt(items[pivot], items[last]):
                last -= 1
            if not first < last:
                return first
            items[first], items[last] = items[last], items[first]
            first += 1

    def loop(first: int, last: int, depth: int) -> None:
        while last - first > _THRESHOLD:
            if depth == 0:  # heapsort fallback: rare; any valid order will do here
                items[first:last] = sorted(items[first:last], key=_Key(lt))
                return
            depth -= 1
            median_to_first(first, first + 1, first + (last - first) // 2, last - 1)
            cut = partition(first + 1, last, first)
            loop(cut, last, depth)
            last = cut

    def linear_insert(last: int) -> None:
        value = items[last]
        while lt(value, items[last - 1]):
            items[last] = items[last - 1]
            last -= 1
        items[last] = value

    def insertion_sort(first: int, last: int) -> None:
        for i in range(first + 1, last):
            if lt(items[i], items[first]):
                value = items[i]
                items[first + 1 : i + 1] = items[first:i]
                items[first] = value
            else:
                linear_insert(i)

    n = len(items)
    if n:
        loop(0, n, 2 * (n.bit_length() - 1))
        if n > _THRESHOLD:
            insertion_sort(0, _THRESHOLD)
            for i in range(_THRESHOLD, n):
                linear_insert(i)
        else:
            insertion_sort(0, n)
    return items


class _Key:
    def __init__(self, lt: Callable[[int, int], bool]):
        self.lt = lt

    def __call__(self, i: int) -> Any:
        lt = self.lt

        class K:
            def __lt__(self, other: Any) -> bool:
                return lt(i, other.i)

        k = K()
        k.i = i  # type: ignore[attr-defined]
        return k
