"""What runs inside the child interpreter: ``bootstrap`` (the entry point), ``recorder``,
``compat`` and ``schema`` (the record format both sides share).

Standard library + torch only, Python 3.5 syntax: ``--old-python`` runs these under the
old script's interpreter. Nothing here imports the parent side (``migrate``, typer, rich).
In the child they are imported as the private package ``_torch_migrate_child``, so that a
script's own ``compat.py`` or ``recorder.py`` still imports as the script expects.
"""
