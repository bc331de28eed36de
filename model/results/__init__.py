"""The one results layer: the tables' schema, atomic result folders, one reader, and the outcomes module.

- `model.results.schema` — columns and dtypes of the agents, market and events tables (dates: timestamps).
- `model.results.folders` — what result and sweep folders hold, and atomic writing of folders and files.
- `model.results.read` — `read_folder` / `read_folders`: result and sweep folders as a `Source` / `ResultSet`.
- `model.results.outcomes` — leaders and shares, firsts, clusters at scale, revenue by period, across runs.

Everything that reports an outcome (the `airace run` summary, `compare`, `report`, the app) goes through here.
"""

from model.results.folders import write_csv, write_file_atomically, write_json, write_parquet, write_result_folder
from model.results.read import ResultSet, Source, folder_kind, read_folder, read_folders, read_table
from model.results.schema import DATE_DTYPE, SCHEMAS, SchemaError, conform

__all__ = ["DATE_DTYPE", "SCHEMAS", "ResultSet", "SchemaError", "Source", "conform", "folder_kind", "read_folder",
           "read_folders", "read_table", "write_csv", "write_file_atomically", "write_json", "write_parquet",
           "write_result_folder"]
