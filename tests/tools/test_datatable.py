"""The DataTable writer: upstream's JSON shape, and CSV export."""

from __future__ import annotations

import csv
import io

from conftest import FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorboard_plugin_profile.service import ProfileService
from tensorboard_plugin_profile.tools.datatable import (
    Column,
    column_table,
    data_table,
    dumps,
    one_digit,
    percent,
    to_csv,
)


def test_json_shape_is_upstreams():
    cols = [
        Column("rank", "Rank", "number"),
        Column("name", "μs name", "string"),
        Column("tip", "tooltip", "string", {"role": "tooltip"}),
        Column("ok", "OK", "boolean"),
    ]
    table = data_table(cols, [[1, "a", "t", True]], {"z": 1, "a": "x"})
    assert dumps(table) == (
        '{"cols":[{"id":"rank","label":"Rank","type":"number"},'
        '{"id":"name","label":"μs name","type":"string"},'
        '{"id":"tip","label":"tooltip","p":{"role":"tooltip"},"type":"string"},'
        '{"id":"ok","label":"OK","type":"boolean"}],"p":{"a":"x","z":"1"},'
        '"rows":[{"c":[{"v":1.0},{"v":"a"},{"v":"t"},{"v":true}]}]}'
    )
    assert dumps(data_table([], [])) == '{"cols":[],"rows":[]}'


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(-5, 5), st.text(max_size=3), st.floats(allow_nan=False), st.booleans()
        )
    )
)
def test_a_table_built_by_columns_is_the_table_built_by_rows(rows):
    cols = [
        Column("rank", "Rank", "number"),
        Column("name", "Name", "string"),
        Column("ms", "Time", "number"),
        Column("ok", "OK", "boolean"),
    ]
    by_columns = column_table(cols, [list(c) for c in zip(*rows)] or [[]] * 4, {"a": 1})
    by_rows = data_table(cols, rows, {"a": 1})
    assert by_columns == by_rows and dumps(by_columns) == dumps(by_rows)


def test_csv_uses_labels_and_str_values():
    table = data_table(
        [Column("rank", "Rank", "number"), Column("ok", "OK", "boolean")], [[1, False], [2.5, True]]
    )
    assert to_csv(table) == '"Rank","OK"\n"1","False"\n"2.5","True"\n'


def test_csv_never_starts_a_formula_but_keeps_numbers():
    cols = [
        Column("name", "=Name", "string"),
        Column("time", "Time (us)", "number"),
        Column("total_self_time_percent", "Share (%)", "number"),
    ]
    names = ['=HYPERLINK("http://x")', "+1", "-2", "@SUM(A1)", "\tx", "\rx", "plain", "a=b"]
    rows = [[n, -3.5, 0.31] for n in names] + [["x", float("nan"), float("inf")], ["y", 5, 1]]
    parsed = list(csv.reader(io.StringIO(to_csv(data_table(cols, rows)), newline="")))
    assert parsed[0] == ["'=Name", "Time (us)", "Share (%)"]
    assert [r[0] for r in parsed[1:9]] == ["'" + n for n in names[:6]] + ["plain", "a=b"]
    assert parsed[1][1:] == ["-3.5", "31"]  # a negative number stays a number; in percent
    assert parsed[9] == ["x", "", ""]  # non-finite numbers are left empty
    assert parsed[10] == ["y", "5", "100"]


def test_csv_percent_columns_that_already_hold_percent_stay_as_they_are():
    """Only upstream's fraction columns are scaled: a PyTorch kernel share of 100 % and an op
    tree's total time in percent were written 100x too large (10000) before."""
    for tool, fixture in (("pytorch_kernels", "pytorch_amd_mi250"), ("op_types", "tf_keras_fit")):
        service = ProfileService(str(FIXTURES / fixture))
        run = service.runs()[0]
        answer = service.tool_data(run, tool).json()
        tables = answer if isinstance(answer, list) else [answer]
        index, table, column = next(
            (i, t, k)
            for i, t in enumerate(tables)
            for k, c in enumerate(t.get("cols", []))
            if c["label"].endswith("(%)")
        )
        _, text = service.tool_csv(run, tool, params={"table": str(index)})
        parsed = list(csv.reader(io.StringIO(text, newline="")))
        json_values = [r["c"][column]["v"] for r in table["rows"]]
        assert max(json_values) == 100.0  # percent in the JSON...
        assert max(float(r[column]) for r in parsed[1:] if r[column]) == 100.0  # ...and in CSV
        service.close()


def test_number_formats():
    assert one_digit(14.875539) == "14.9"
    assert one_digit(float("nan")) == "-nan"
    assert percent(30.47) == "30.5%" and percent(-1) == "unknown"


def test_csv_text_never_starts_a_formula():
    columns = [Column("name", "Name", "string"), Column("parent", "Parent", "number")]
    table = data_table(columns, [["=HYPERLINK(1)", -1], ["@x", 2], ["ok", 3]])
    assert to_csv(table) == '"Name","Parent"\n"\'=HYPERLINK(1)","-1"\n"\'@x","2"\n"ok","3"\n'


def test_csv_of_names_with_lone_surrogates_is_valid_utf8():
    # A Chrome-trace name may hold "\ud800"; before, the CSV could not be encoded (a 500).
    table = data_table([Column("name", "Name\udfff", "string")], [["op\ud800"], ["=b\ud800"]])
    text = to_csv(table)
    assert text.encode("utf-8").decode("utf-8") == '"Name\ufffd"\n"op\ufffd"\n"\'=b\ufffd"\n'
