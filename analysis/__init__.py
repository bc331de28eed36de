"""Seaborn figures and a Markdown report from result folders and sweep folders.

Each figure module is runnable on its own (`python -m analysis.capacity RESULTS... --out DIR`); `airace report`
runs them all and writes `report.md`; `airace compare` is `analysis.compare`. Data flows one way: result folders ->
`model.results` (the reader and the outcomes module) -> the figure modules, the report and compare; nothing here
calls the market model or computes an outcome of its own.
"""

FIGURE_MODULES = ("capacity", "generations", "timeline", "frontier", "market", "comparison", "sensitivity")
