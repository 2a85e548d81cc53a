"""The harness live: the same lifecycle core served over HTTP and SSE on the wall clock.

``harness-lab serve`` (:mod:`harness_lab.live.server`) drives the unchanged run core with a
wall-clock driver (:mod:`harness_lab.live.driver`); the page ``docs/live.md`` has the HTTP
and SSE contract. These modules need the ``live`` extra (``pip install 'harness_lab[live]'``).
"""
