"""Where profiles live and what we keep of them: the logdir (runs, sessions, host files,
safe opens), reading one host file into a preprocessed ``Space``, the host pool that decodes
several at once, the memory budget and the disk cache with its codec.

May import ``common``, ``kernels``, the format packages (``xspace``, ``chrome_trace``) and
``preprocessing``; never ``analysis``, ``tools``, ``service`` or ``web``.
"""
