"""Offline tools that read nnlite's files without loading a namespace.

``oiv``: the fsimage viewer (Delimited, JSON, XML, FileDistribution). ``oev``: the edits viewer
(JSON, XML, stats) and its reverse (``binary``). ``verify``: check an edits file or an fsimage
and report precisely what is wrong. ``progress``: a progress bar for long runs.
"""

# The processor names, here so that the CLI can offer them without importing pyarrow.
OIV_PROCESSORS = ("Delimited", "JSON", "XML", "FileDistribution")
OEV_PROCESSORS = ("JSON", "XML", "stats", "binary")
