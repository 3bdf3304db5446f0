"""The bundled demo profile (recorded by ``record.py``)."""
