"""Terminal output of the command line: width and colour decided once, tables that fit,
progress bars, the failure summary.

Every command writes people's output through :func:`console`, which honours ``COLUMNS``,
``NO_COLOR`` and ``FORCE_COLOR`` and colours only a terminal. Output meant for programs (csv,
json) never goes through it.
"""
