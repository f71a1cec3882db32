"""Developer tools behind `python -m fake_torch` (fake_torch/__main__.py): the demo, the
benchmarks, the stub generator, the API report, the run report and the corpus scan.

The top layer (fake_torch/_layers.py): tools may import anything; nothing in the package
imports them.
"""
