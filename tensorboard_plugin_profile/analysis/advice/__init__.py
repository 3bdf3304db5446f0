"""The advisor: findings (``findings``) from checks over steps, devices and the input
pipeline (``checks``), over ops and kernels (``op_checks``) and over PyTorch traces
(``pytorch``).
"""
