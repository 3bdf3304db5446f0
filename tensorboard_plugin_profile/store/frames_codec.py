"""Values made of dataclasses, pandas frames and numpy arrays ⇄ a JSON tree + raw arrays.

The disk cache stores decoded profiles with this codec, never with pickle (a
cache directory may be shared, and unpickling runs code): the tree is plain
JSON, the arrays are raw little-endian buffers, and decoding only ever builds
numpy arrays, pandas containers, builtin values and dataclasses defined in
this package. It is generic over what the decoder puts in a ``Space``:

- numpy arrays of any numeric/bool dtype (kept as is, so they load as they were; the
  mostly-empty columns of ``memsize.sparse_values`` as their present rows, and loaded
  as such again);
- pandas nullable integer/float/boolean arrays (values + mask; mostly-missing
  columns store only the present rows);
- ``Categorical`` (codes + categories, any category dtype this codec handles);
- object and string columns (the distinct values once, plus an int32 code per
  row; mostly-``None`` columns store only the present rows);
- DataFrames, Series, indexes, dicts/lists/tuples of small values, dataclasses.

Every 1-D numeric array goes through ``column_codec`` (narrow integers, runs, bits; zlib
inside a dataclass field whose metadata says ``cold``), which gives back the same dtype and
values. Anything else raises ``Unsupported``; the caller then simply does not cache.

Usage::

    tree, arrays = encode(space)
    same = decode(tree, arrays)      # arrays: list of numpy arrays, as written (taken)
"""

from __future__ import annotations

import base64
import dataclasses
import importlib
import math
from typing import Any, Callable, Optional

import numpy as np
import pandas as pd

from ..common.memsize import sparse_rows, sparse_values
from . import column_codec

PACKAGE = __name__.split(".", 1)[0]

# Type tags of the distinct values of an object column.
_T_STR, _T_BYTES, _T_INT, _T_FLOAT, _T_BOOL = range(5)
_NULLS = {"none": None, "nan": float("nan"), "na": pd.NA}


class Unsupported(TypeError):
    """A value this codec does not store (the cache skips it)."""


class Stale(ValueError):
    """A stored tree that no longer matches the code (a renamed field or class)."""


def encode(value: Any) -> tuple:
    """(JSON-able tree, list of contiguous numpy arrays) for ``value``."""
    arrays: list = []
    return _Encoder(arrays).value(value), arrays


def decode(tree: Any, arrays: list, max_bytes: Optional[int] = None) -> Any:
    """The value of ``tree``; takes the arrays out of ``arrays`` as it goes (each is freed
    once its column is rebuilt). Runs and compressed arrays may expand to ``max_bytes``."""
    return _Decoder(arrays, max_bytes).value(tree)


class _Encoder:
    def __init__(self, arrays: list):
        self.arrays = arrays
        self.cold = 0  # inside a field declared cold: leaves are compressed

    def array(self, array: np.ndarray) -> dict:
        if array.dtype.kind not in "biufc":
            raise Unsupported(f"arrays of dtype {array.dtype} are not stored")
        if array.ndim == 1 and len(array) > 1 and array.strides[0] == 0:
            # One value repeated (a column no event has): stored once, read back as a view.
            return {"$bc": [len(array), self.array(array[:1])]}
        return column_codec.pack(array, self.leaf)

    def leaf(self, array: np.ndarray) -> dict:
        """Stores one array of the payload (compressed in a cold field, if that pays)."""
        packed = column_codec.compress(array) if self.cold else None
        if packed is not None:
            self.arrays.append(packed)
            return {"$z": [array.dtype.str, len(array), {"$a": len(self.arrays) - 1}]}
        self.arrays.append(np.ascontiguousarray(array))
        return {"$a": len(self.arrays) - 1}

    def value(self, v: Any) -> Any:
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, np.generic):
            return {"$np": [v.dtype.str, self.value(v.item())]}
        if isinstance(v, int):
            return v
        if isinstance(v, float):
            return v if math.isfinite(v) else {"$f": repr(v)}
        if isinstance(v, bytes):
            return {"$b": base64.b64encode(v).decode()}
        if isinstance(v, list):
            return [self.value(x) for x in v]
        if isinstance(v, tuple):
            return {"$t": [self.value(x) for x in v]}
        if isinstance(v, dict):
            return {"$d": [[self.value(k), self.value(x)] for k, x in v.items()]}
        if isinstance(v, np.ndarray):
            return self.column(v)
        if isinstance(v, pd.DataFrame):
            return {"$df": self.frame(v)}
        if isinstance(v, pd.Series):
            return {"$s": [self.value(v.name), self.column(_values(v)), self.index(v.index)]}
        if isinstance(v, pd.Index):
            return self.index(v)
        if isinstance(v, pd.api.extensions.ExtensionArray):
            return self.column(v)
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            return self.dataclass(v)
        raise Unsupported(f"values of type {type(v).__name__} are not stored")

    def dataclass(self, v: Any) -> dict:
        cls = type(v)
        if not cls.__module__.startswith(PACKAGE + ".") or "<" in cls.__qualname__:
            raise Unsupported(f"dataclass {cls.__qualname__} is not this package's")
        fields = [[f.name, self.field(v, f)] for f in dataclasses.fields(v)]
        return {"$dc": f"{cls.__module__}:{cls.__qualname__}", "f": fields}

    def field(self, v: Any, field: dataclasses.Field) -> Any:
        cold = bool(field.metadata.get("cold"))
        self.cold += cold
        try:
            return self.value(getattr(v, field.name))
        finally:
            self.cold -= cold

    def frame(self, df: pd.DataFrame) -> dict:
        names = list(df.columns)
        if len(set(names)) != len(names):
            raise Unsupported("frames with repeated column names are not stored")
        cols = [
            [self.value(name), self.column(_values(df.iloc[:, i]))] for i, name in enumerate(names)
        ]
        return {"cols": cols, "index": self.index(df.index)}

    def index(self, index: pd.Index) -> dict:
        if isinstance(index, pd.RangeIndex):
            return {"$ri": [index.start, index.stop, index.step, self.value(index.name)]}
        if isinstance(index, pd.MultiIndex):
            raise Unsupported("MultiIndex is not stored")
        return {"$ix": [self.column(_values(index)), self.value(index.name)]}

    def column(self, values: Any) -> dict:
        if isinstance(values, np.ndarray):
            if values.dtype == object:
                return {"$obj": self.objects(values)}
            rows = sparse_rows(values)
            if rows is not None:  # a mostly-empty column: its values, not its zero pages
                return {"$zp": [len(values), self.array(rows), self.array(values[rows])]}
            return self.array(values)
        if isinstance(values, pd.Categorical):
            categories = self.index(values.categories)
            return {"$cat": [self.array(values.codes), categories, bool(values.ordered)]}
        if isinstance(values.dtype, pd.StringDtype):
            objects = np.asarray(values, dtype=object)
            return {"$str": [str(values.dtype), self.objects(objects)]}
        if isinstance(values, _NUMPY_WRAPPER):
            return self.column(values.to_numpy())
        if isinstance(values, _MASKED):
            return {"$mask": [str(values.dtype), self.masked(values)]}
        raise Unsupported(f"columns of dtype {values.dtype} are not stored")

    def masked(self, values: Any) -> dict:
        """A nullable column: its present rows only when they are fewer than half, read
        from its own buffers (a full ``to_numpy`` would copy the column and make every
        page of a ``sparse_values`` buffer resident)."""
        present = ~np.asarray(values.isna())
        data = getattr(values, "_data", None)
        if isinstance(data, np.ndarray) and int(present.sum()) * 2 < len(present):
            rows = np.flatnonzero(present)
            return {"n": len(present), "rows": self.array(rows), "data": self.array(data[rows])}
        data = values.to_numpy(dtype=values.dtype.numpy_dtype, na_value=0)
        return self.sparse(data, present)

    def sparse(self, data: np.ndarray, present: np.ndarray) -> dict:
        """``data`` where ``present``: only those rows when they are fewer than half."""
        if int(present.sum()) * 2 < len(data):
            rows = np.flatnonzero(present)
            return {"n": len(data), "rows": self.array(rows), "data": self.array(data[rows])}
        return {"n": len(data), "present": self.array(present), "data": self.array(data)}

    def objects(self, values: np.ndarray) -> dict:
        values = values.reshape(-1)
        missing = np.asarray(pd.isna(values), dtype=bool)
        null = _null_kind(values, missing)
        codes, uniques = pd.factorize(values[~missing]) if (~missing).any() else ([], [])
        uniques = np.asarray(uniques, dtype=object)
        _check_value_types(uniques)
        tags, blob, ends = _pack(uniques)
        out_codes = np.full(len(values), -1, dtype=np.int32)
        out_codes[~missing] = codes
        return {
            "null": null,
            "codes": self.sparse(out_codes, ~missing),
            "tags": self.array(tags),
            "blob": self.array(blob),
            "ends": self.array(ends),
        }


class _Decoder:
    def __init__(self, arrays: list, max_bytes: Optional[int]):
        self.arrays = arrays
        self.budget = column_codec.Budget(max_bytes)

    def take(self, i: int) -> np.ndarray:
        """The stored array ``i``, handed over once: the list lets go of it, so a narrow
        buffer is freed as soon as its column is rebuilt (a tree refers to each once)."""
        array = self.arrays[i]
        if array is None:
            raise Stale(f"array {i} is referred to twice")
        self.arrays[i] = None
        return array

    def value(self, t: Any) -> Any:
        if isinstance(t, list):
            return [self.value(x) for x in t]
        if not isinstance(t, dict):
            return t
        if "$dc" in t:
            return self.dataclass(t)
        (tag, body), *_ = t.items()
        handler = self._HANDLERS.get(tag)
        if handler is None:
            raise Stale(f"unknown tag {tag!r}")
        return handler(self, body)

    def dataclass(self, t: dict) -> Any:
        module_name, _, qualname = t["$dc"].partition(":")
        if not module_name.startswith(PACKAGE + ".") or "<" in qualname:
            raise Stale(f"class {t['$dc']} is not this package's")
        try:
            cls: Any = importlib.import_module(module_name)
            for part in qualname.split("."):
                cls = getattr(cls, part)
        except (ImportError, AttributeError):
            raise Stale(f"class {t['$dc']} no longer exists") from None
        if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
            raise Stale(f"{t['$dc']} is no longer a dataclass")
        stored = {name: body for name, body in t["f"]}
        if set(stored) != {f.name for f in dataclasses.fields(cls)}:
            raise Stale(f"the fields of {t['$dc']} changed")
        obj = cls.__new__(cls)
        for name, body in stored.items():
            object.__setattr__(obj, name, self.value(body))
        return obj

    def frame(self, body: dict) -> pd.DataFrame:
        columns = {self.value(name): _as_column(self.value(col)) for name, col in body["cols"]}
        index = self.value(body["index"])
        return pd.DataFrame(columns, index=index, copy=False)

    def series(self, body: list) -> pd.Series:
        name, values, index = (self.value(x) for x in body)
        return pd.Series(_as_column(values), index=index, name=name, copy=False)

    def index(self, body: list) -> pd.Index:
        values, name = self.value(body[0]), self.value(body[1])
        if isinstance(values, np.ndarray) and values.dtype == object:
            return pd.Index(values, dtype=object, name=name, copy=False)
        return pd.Index(values, name=name, copy=False)

    def categorical(self, body: list) -> pd.Categorical:
        codes, categories, ordered = self.value(body[0]), self.value(body[1]), body[2]
        dtype = pd.CategoricalDtype(categories, ordered=ordered)
        return pd.Categorical.from_codes(codes, dtype=dtype)

    def masked(self, body: list) -> Any:
        dtype = pd.api.types.pandas_dtype(body[0])
        stored = body[1]
        data = self.value(stored["data"])
        if "rows" in stored:  # mostly missing: only the pages of present rows are allocated
            rows = self.value(stored["rows"])
            values = sparse_values(stored["n"], data.dtype, rows, data)
            mask = np.ones(stored["n"], dtype=bool)
            mask[rows] = False
            return _masked_array(dtype, values, mask)
        return _masked_array(dtype, data, ~self.value(stored["present"]))

    def objects(self, body: dict) -> np.ndarray:
        uniques = _unpack(
            self.value(body["tags"]), self.value(body["blob"]), self.value(body["ends"])
        )
        stored, null = body["codes"], _NULLS[body["null"]]
        codes = self.value(stored["data"])
        if "rows" in stored:
            out = np.empty(stored["n"], dtype=object)  # filled with None
            if null is not None:
                out[:] = null
            out[self.value(stored["rows"])] = uniques[codes]
            return out
        with_null = np.empty(len(uniques) + 1, dtype=object)
        with_null[:-1] = uniques
        with_null[-1] = null
        return with_null[codes]  # code -1 (missing) takes the last entry

    def strings(self, body: list) -> Any:
        return pd.array(self.objects(body[1]), dtype=pd.api.types.pandas_dtype(body[0]))

    def sparse(self, body: list) -> np.ndarray:
        rows, values = self.value(body[1]), self.value(body[2])
        return sparse_values(body[0], values.dtype, rows, values)

    def packed(self, tag: str, body: Any) -> np.ndarray:
        return column_codec.unpack(tag, body, self.value, self.budget)

    _HANDLERS: dict = {
        "$a": lambda self, i: self.take(i),
        "$np": lambda self, b: np.dtype(b[0]).type(self.value(b[1])),
        "$f": lambda self, b: float(b),
        "$b": lambda self, b: base64.b64decode(b),
        "$t": lambda self, b: tuple(self.value(x) for x in b),
        "$d": lambda self, b: {self.value(k): self.value(v) for k, v in b},
        "$df": frame,
        "$s": series,
        "$ix": index,
        "$ri": lambda self, b: pd.RangeIndex(b[0], b[1], b[2], name=self.value(b[3])),
        "$cat": categorical,
        "$mask": masked,
        "$bc": lambda self, b: np.broadcast_to(self.value(b[1]), (b[0],)),
        "$zp": sparse,
        "$obj": objects,
        "$str": strings,
        **{tag: (lambda self, b, tag=tag: self.packed(tag, b)) for tag in column_codec.TAGS},
    }


_MASKED = (pd.arrays.IntegerArray, pd.arrays.FloatingArray, pd.arrays.BooleanArray)
# pandas < 2.1 calls it PandasArray.
_NUMPY_WRAPPER = getattr(pd.arrays, "NumpyExtensionArray", None) or pd.arrays.PandasArray


def _masked_array(dtype: Any, data: np.ndarray, mask: np.ndarray) -> Any:
    kind = np.dtype(dtype.numpy_dtype).kind
    cls: Callable = {
        "i": pd.arrays.IntegerArray,
        "u": pd.arrays.IntegerArray,
        "f": pd.arrays.FloatingArray,
        "b": pd.arrays.BooleanArray,
    }[kind]
    return cls(np.asarray(data, dtype=dtype.numpy_dtype), np.asarray(mask, dtype=bool))


def _values(container: Any) -> Any:
    """A Series' or Index's values without a copy: numpy for numpy dtypes, else the array."""
    if isinstance(container.dtype, np.dtype):
        return container.to_numpy(copy=False)
    return container.array


def _as_column(values: Any) -> Any:
    # Object arrays stay object (pandas 3 would infer its string dtype from them).
    if isinstance(values, np.ndarray) and values.dtype == object:
        return pd.Series(values, dtype=object, copy=False)
    return values


def _null_kind(values: np.ndarray, missing: np.ndarray) -> str:
    """How the missing rows of an object column are spelled: None, NaN or pd.NA."""
    try:
        others = missing & ~np.asarray(values == None, dtype=bool)  # noqa: E711 (elementwise)
    except TypeError:  # pd.NA refuses to be a bool
        others = missing
    if not others.any():
        return "none"
    kinds = {type(v) for v in pd.unique(values[others])}
    if others.sum() == missing.sum():
        if kinds == {float}:
            return "nan"
        if kinds == {type(pd.NA)}:
            return "na"
    raise Unsupported("object columns mixing kinds of missing values are not stored")


def _check_value_types(uniques: np.ndarray) -> None:
    kinds = {type(v) for v in uniques}
    if not kinds <= {str, bytes, int, float, bool}:
        raise Unsupported(f"object columns holding {sorted(k.__name__ for k in kinds)}")
    if len(kinds & {int, float, bool}) > 1:  # 1 == 1.0 == True: factorize would merge them
        raise Unsupported("object columns mixing number types are not stored")


def _pack(uniques: np.ndarray) -> tuple:
    tags = np.empty(len(uniques), dtype=np.uint8)
    parts = []
    for i, v in enumerate(uniques):
        if isinstance(v, str):
            tags[i], part = _T_STR, v.encode("utf-8", "surrogatepass")
        elif isinstance(v, bytes):
            tags[i], part = _T_BYTES, v
        elif isinstance(v, bool):
            tags[i], part = _T_BOOL, b"1" if v else b""
        elif isinstance(v, int):
            tags[i], part = _T_INT, str(v).encode()
        else:
            tags[i], part = _T_FLOAT, repr(v).encode()
        parts.append(part)
    ends = np.cumsum([len(p) for p in parts], dtype=np.int64)
    return tags, np.frombuffer(b"".join(parts), dtype=np.uint8), ends


def _unpack(tags: np.ndarray, blob: np.ndarray, ends: np.ndarray) -> np.ndarray:
    data = blob.tobytes()
    out = np.empty(len(tags), dtype=object)
    start = 0
    for i, (tag, end) in enumerate(zip(tags.tolist(), ends.tolist())):
        part = data[start:end]
        start = end
        if tag == _T_STR:
            out[i] = part.decode("utf-8", "surrogatepass")
        elif tag == _T_BYTES:
            out[i] = part
        elif tag == _T_BOOL:
            out[i] = part == b"1"
        elif tag == _T_INT:
            out[i] = int(part)
        elif tag == _T_FLOAT:
            out[i] = float(part)
        else:
            raise Stale(f"unknown value tag {tag}")
    return out
