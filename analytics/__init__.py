"""Analytics over fsimages: a PySpark job (analyze.py) and its presentation (report.py).

Like ``catalog/``, this package imports pyspark only inside functions, so importing it costs
nothing and the rest of nnlite never needs a JVM.
"""
