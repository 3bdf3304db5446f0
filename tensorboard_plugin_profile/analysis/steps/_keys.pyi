# Interface of the optional compiled host step walk (_keys.c), which mypy cannot read.
from typing import Optional

def host_step_keys(
    line: object,
    line_ok: object,
    group: object,
    group_mask: object,
    name_code: object,
    step_code: object,
    begin: object,
    duration: object,
    span_type: object,
    stage_type: object,
    stage_rows: object,
    skip_rows: object,
    windows: object,
    num_types: int,
    /,
) -> Optional[tuple]:
    """(work spans, marker rows as bytes, packed keys, [(key stop, layout) per run of
    groups]), or None (sparse groups)."""
