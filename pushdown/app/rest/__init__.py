"""``pushdown serve``: Gravitino's REST API for access control, over this store.

Nothing here is imported by the other commands: the web framework is loaded only when
the server starts (``settings`` is the exception: the config file's ``[serve]`` table is
checked whenever the config is loaded).
"""
