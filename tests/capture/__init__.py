"""Tests of the capture package (a package: its conftest must not shadow tests/conftest.py)."""
