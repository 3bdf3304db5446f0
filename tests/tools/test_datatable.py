"""The DataTable writer: upstream's JSON shape, and CSV export."""

from __future__ import annotations

from tensorboard_plugin_profile.tools.datatable import (
    Column,
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


def test_csv_uses_labels_and_str_values():
    table = data_table(
        [Column("rank", "Rank", "number"), Column("ok", "OK", "boolean")], [[1, False], [2.5, True]]
    )
    assert to_csv(table) == '"Rank","OK"\n"1.0","False"\n"2.5","True"\n'


def test_number_formats():
    assert one_digit(14.875539) == "14.9"
    assert one_digit(float("nan")) == "-nan"
    assert percent(30.47) == "30.5%" and percent(-1) == "unknown"


def test_csv_text_never_starts_a_formula():
    columns = [Column("name", "Name", "string"), Column("parent", "Parent", "number")]
    table = data_table(columns, [["=HYPERLINK(1)", -1], ["@x", 2], ["ok", 3]])
    assert to_csv(table) == '"Name","Parent"\n"\'=HYPERLINK(1)","-1.0"\n"\'@x","2.0"\n"ok","3.0"\n'
