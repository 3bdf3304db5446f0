"""Profiles as data: DataFrames and SQL for notebooks, answers for scripts and agents.

``profile`` is the notebook facade (``tensorboard_plugin_profile.open``) over the service;
``tables`` turns a tool's DataTable JSON into a typed DataFrame, ``events`` the decoded
event columns into DataFrames in batches, ``sql`` runs read-only DuckDB queries over them.
The ``tbprof`` agent subcommands and the MCP server (``web/``) answer from here.
"""
