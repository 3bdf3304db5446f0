"""Pod-scale sessions: a map over hosts with small results, and a reduce in the server.

A multi-host answer (overview for all hosts, pod viewer, TF stats, kernel stats, the HLO
tools) never needs every host's event tables at once: each host is decoded and summarised
on its own (``analysis/host_summary.py``) in a worker process (``store/host_pool.py``) or
a Dask task (``dask_pool``), only the summary comes back, and the tool merges summaries
(``tools/<tool>.reduce``). Summaries are cached per host in memory and on disk, so a
restarted server or a session that gained a host recomputes only what changed
(``host_map``). docs/pod_scale.md explains the design.

May import every earlier stage (store, analysis, tools); only ``service`` and ``web``
import it.
"""
