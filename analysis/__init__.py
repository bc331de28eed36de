"""Seaborn figures and a Markdown report from result folders and sweep folders.

Each figure module is runnable on its own (`python -m analysis.capacity RESULTS... --out DIR`); `airace report`
runs them all and writes `report.md`. Data flows one way: result tables -> `analysis.load` -> `analysis.summaries`
-> the figure modules; nothing here calls the market model.
"""

FIGURE_MODULES = ("capacity", "generations", "timeline", "frontier", "market", "comparison", "sensitivity")
