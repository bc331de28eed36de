"""`airace sweep`: many seeded runs of a scenario (Latin hypercube over its `[sweep]` table), locally or on Dask."""

from model.sweep.design import Design, ParamSpec, build_design, lhs_unit, parse_sweep_table
from model.sweep.runner import RunTask, execute_run, run_sweep

__all__ = ["Design", "ParamSpec", "RunTask", "build_design", "execute_run", "lhs_unit", "parse_sweep_table",
           "run_sweep"]
