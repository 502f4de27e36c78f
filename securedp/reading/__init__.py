"""The one exact reader: every input kind reaches exact values, ids and keys through this package.

Input kinds (Python lists, NumPy arrays including ``longdouble``, pandas columns and frames including
nullable and object dtypes, Polars eager and lazy frames, pyarrow arrays and tables, CSV and Parquet
files, standard input) are read here and nowhere else, one rule per type, reading only the columns a
release needs. One-column releases and grouped tables both stand on it, so a value means the same
thing whichever path reads it.
"""
