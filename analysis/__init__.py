"""Seaborn/matplotlib figures, a Markdown and a self-contained HTML report from result folders and sweep folders.

Each figure module is runnable on its own (`python -m analysis.shares RESULTS... --out DIR`); `airace report` runs
them all and writes `report.md` and `report.html`; `airace compare` is `analysis.compare`. Data flows one way: result
folders -> `model.results` (the reader and the outcomes module) -> the figure modules, the report and compare;
nothing here calls the market model or computes an outcome of its own. The public record the figures set the model
beside is `analysis/data/` (read by `analysis.record`).
"""

# In the report's order: the race at a glance, then clusters and runs, then money and the market, then sweeps.
FIGURE_MODULES = ("shares", "capacity", "generations", "vendors", "timeline", "clusters", "reach", "training",
                  "frontier", "power", "capex", "revenue", "backlog", "rental", "comparison", "uncertainty",
                  "sensitivity")
