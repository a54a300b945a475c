"""`datasets` builders that `python -m mrtasks.build` drives to write the Hub dataset's Parquet files."""
