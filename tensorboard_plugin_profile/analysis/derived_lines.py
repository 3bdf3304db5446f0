"""Derived GPU timelines (spec/conversion.md §3.5)."""

from __future__ import annotations


def derive(planes: list, group_names: dict) -> list:
    return planes
