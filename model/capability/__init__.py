"""What the market needs to know from the performance model, computed once per scenario (the capability table).

`model.capability.table` holds the table type the market reads (no performance model in it); `model.capability.build`
builds a table from the catalog, the scenario's reference jobs and frontier settings by asking the performance model,
and keeps one per scenario inputs in the process, so that runs of a sweep share it. This package's `__init__` imports
neither, so that importing the table type does not import the performance model.
"""
