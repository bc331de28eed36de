"""Regenerate the README's outcome tables and figures from seeded sweeps (`make readme` runs them, then this).

    python -m analysis.readme RESULTS_DIR [--readme README.md] [--figures docs]

RESULTS_DIR holds one sweep folder per scenario, named after it (`baseline`, `rubin_delay`, ...; `uncertainty` for
the sensitivity figure). Every number comes from `model.results.outcomes` (its conventions: medians over seeds,
named agents lead and are first, revenue per fully simulated period); the text between each pair of marker comments
`<!-- generated:NAME -->` ... `<!-- /generated:NAME -->` in the README is replaced, and nothing else. Reported
figures come from the sourced files in `analysis/data/`.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import textwrap
from collections.abc import Sequence
from dataclasses import replace
from functools import cache
from pathlib import Path

import pandas as pd
from PIL import Image

from analysis import clusters, hindcast, record, sensitivity, shares, timeline, vendors
from analysis import revenue as revenue_figure
from analysis.figure import sys_name
from analysis.names import agent_name
from analysis.summaries import systems_in
from model.errors import InputError
from model.results import ResultSet, Source, read_folder, read_folders, write_file_atomically
from model.results import outcomes as O

BASELINE = "baseline"
UNCERTAINTY = "uncertainty"
NO_PARTNER_WEIGHT = "baseline_no_partner_weight"  # the baseline with `allocation.partner_weight = 0` (an assumption)
SCENARIO_ORDER = ("baseline", "rubin_delay", "hbm_shortage", "power_constrained", "neocloud_surge", "openai_stargate",
                  "tpu_surge", "amd_breakthrough")
SCENARIO_YEARS = (2025, 2026, 2027)  # revenue columns of the scenario table; the last one's December for stocks
FIGURES = {"shares": "figure_shares.png", "clusters": "figure_clusters.png", "timeline": "figure_timeline.png",
           "revenue": "figure_revenue.png", "vendors": "figure_vendors.png", "sensitivity": "figure_sensitivity.png"}
BASELINE_FIGURES = (shares, clusters, timeline, revenue_figure, vendors)  # drawn from the baseline's seeds
README_FIGURE_WIDTH_PX = 1200  # two thirds of the report's 150-dpi width: sharp on screen, small in the repository


@cache
def reported_fiscal_revenue_usd() -> dict[str, float]:
    """NVIDIA's reported data-center revenue per fiscal year ("FY2025": USD): the sum of the sourced quarters, for
    the fiscal years whose four quarters are all reported (the data file's test checks the sums against the reported
    years)."""
    df = record.read("revenue")
    years = df.groupby("fiscal_year")["dc_revenue_usd_bn"].agg(["sum", "count"])
    return {f"FY{int(y)}": float(row["sum"]) * 1e9 for y, row in years.iterrows() if row["count"] == 4}


def _interval(values: pd.Series, scale: float, fmt: str) -> str:
    s = O.spread(values)
    text = format(s["median"] / scale, fmt)
    lo, hi = format(s["p05"] / scale, fmt), format(s["p95"] / scale, fmt)
    return text if lo == hi == text else f"{text} [{lo}, {hi}]"


def _table(note: str, header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A note (wrapped like the README's prose), then a Markdown table."""
    lines = [*textwrap.wrap(note, 118), "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _first_cell(row: pd.Series | None) -> str:
    if row is None:
        return "-"
    date = f"{row['date']:%Y-%m}"
    if row["date_p05"] != row["date_p95"]:
        date += f" [{row['date_p05']:%Y-%m}, {row['date_p95']:%Y-%m}]"
    first_in = row["agent_frequency"] * row["runs_with_event"]
    text = f"{date} {agent_name(row['agent'])} ({first_in:.0f}/{row['runs_with_event']})"
    if row["runs_with_event"] < row["runs"]:
        text += f", in {row['runs_with_event']} of {row['runs']} seeds"
    return text


def firsts_section(src: Source, no_partner_weight: Source | None = None) -> str:
    """Who brought each generation that arrives during the run first to delivery, online and to a cluster at scale;
    with `no_partner_weight` (the baseline's seeds with `allocation.partner_weight = 0`, an unsourced assumption),
    also who is first online and at scale without NVIDIA favouring its public partners."""
    first = O.firsts_across_runs(O.firsts(src.events, src.agents), src.n_runs)
    other = (O.firsts_across_runs(O.firsts(no_partner_weight.events, no_partner_weight.agents),
                                  no_partner_weight.n_runs) if no_partner_weight is not None else None)
    at_scale = src.scenario_params.get("at_scale_gpus")
    scale = f"first cluster of {at_scale:,} GPUs" if isinstance(at_scale, int) else "first cluster at scale"
    header = ["generation", "first delivered", "first online", scale]
    if other is not None:
        header += ["first online, partner_weight = 0", f"{scale}, partner_weight = 0"]
    rows = []
    for system in systems_in(first["system"].unique()):
        cells = [sys_name(system)]
        for table, events in ((first, O.FIRST_EVENTS), (other, O.FIRST_EVENTS[1:])):
            if table is None:
                continue
            for event in events:
                sel = table[(table["system"] == system) & (table["event"] == event)]
                cells.append(_first_cell(sel.iloc[0] if len(sel) else None))
        rows.append(cells)
    note = (f"Median month over {src.n_runs} seeds [5%, 95%], then the agent first in most seeds (seeds it was "
            "first in / seeds with the event). Generations some buyer already runs at the start are not part of the "
            "race; the rest of the market, an aggregate, is never first.")
    if other is not None:
        note += (f" The last two columns: {no_partner_weight.n_runs} seeds with `allocation.partner_weight = 0` "
                 "(NVIDIA's public ties weigh nothing in its launch allocation; the baseline's 1 is an assumption).")
    return _table(note, header, rows)


def compute_section(src: Source) -> str:
    """Compute, leaders, clusters, frontier runs and NVIDIA revenue at each year end."""
    totals = O.totals(src.agents, at="year_ends")
    kinds = O.kind_shares(src.agents, at="year_ends")
    leaders = O.leaders_across_runs(O.standings(src.agents, at="year_ends")).set_index("date")
    revenue = O.revenue(src.market, "calendar_year")
    rows = []
    for date, t in totals.groupby("date"):
        lead = leaders.loc[date]
        rest = kinds[(kinds["date"] == date) & ~O.is_named(kinds["kind"])]["share"]
        year = revenue[revenue["year"] == date.year]["nvidia_revenue_usd"] if date.month == 12 else pd.Series()
        rows.append([f"{date:%Y-%m}", _interval(t["total_h100e"], 1e6, ".1f"),
                     f"{agent_name(lead['agent'])} ({lead['frequency']:.0%}), {lead['share']:.0%}",
                     f"{rest.median():.0%}" if len(rest) else "-",
                     _interval(t["largest_cluster_gpus"], 1e3, ",.0f"),
                     _interval(t["largest_cluster_h100e"], 1e3, ",.0f") if "largest_cluster_h100e" in t else "-",
                     _interval(t["fastest_frontier_run_days"].dropna(), 1, ".0f") if t["fastest_frontier_run_days"]
                     .notna().any() else "-",
                     _interval(year, 1e9, ",.0f") if len(year) else "-"])
    header = ["year end", "H100e online (M)", "leader (share of seeds it leads), its share of compute",
              "rest of market's share", "largest cluster of a named agent (k GPUs)",
              "largest cluster of a named agent (k H100e)",
              "fastest reference run (days)", "NVIDIA revenue in the calendar year ($B)"]
    note = (f"Median over {src.n_runs} seeds [5%, 95%]. H100e: 989 dense BF16 TFLOP/s, every vendor's chips. The "
            "clusters and the days are the agents table's `largest_cluster_gpus`, `largest_cluster_h100e` and "
            "`frontier_run_days` (what they hold: the result folder under Commands). A cluster is one site's GPUs of "
            "one architecture on one fabric: it stops at the scenario's `fabric_max_gpus` (a three-tier fat tree), "
            "newer GPUs draw more power each (a campus of the same MW holds fewer), and a campus adds one phase a "
            "year while generations change, so it holds several generations' clusters side by side.")
    return _table(note, header, rows)


def revenue_section(src: Source) -> str:
    """NVIDIA revenue per fully simulated fiscal year against the reported data-center revenue."""
    revenue = O.revenue(src.market, "fiscal_year")
    reported = reported_fiscal_revenue_usd()
    rows = []
    for period, group in revenue.groupby("period", sort=False):
        model_usd = O.spread(group["nvidia_revenue_usd"])["median"]
        rep = reported.get(str(period))
        rows.append([f"{period} ({group['period_start'].iloc[0]:%b %Y}-{group['period_end'].iloc[0]:%b %Y})",
                     _interval(group["nvidia_revenue_usd"], 1e9, ",.0f"),
                     f"{rep / 1e9:,.1f}" if rep else "-",
                     f"{model_usd / rep - 1:+.0%}" if rep else "-"])
    note = (f"Median over {src.n_runs} seeds [5%, 95%]; fiscal years fully simulated only. Reported: "
            "`analysis/data/nvidia_dc_revenue.csv` (sources per quarter).")
    return _table(note, ["NVIDIA fiscal year", "model ($B)", "reported data-center revenue ($B)",
                         "model vs reported"], rows)


def scenario_story(scenario_file: str) -> str:
    """The story a scenario file tells in its opening comment: its title (before the first colon) and the first
    clause after it, without parentheses."""
    path = Path(scenario_file)
    if not path.is_file():
        return ""
    comment = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        comment.append(line.lstrip("# ").strip())
    text = re.sub(r"\s*\([^)]*\)", "", " ".join(comment))
    title, _, rest = text.partition(": ")
    clause = re.split(r"[.:;?]\s", rest + " ", maxsplit=1)[0].strip()
    return f"{title}: {clause}" if clause else title


def same_seeds(sources: Sequence[Source]) -> tuple[list[Source], list[int]]:
    """The sources restricted to the seeds all of them ran, so that scenarios differ by their story only."""
    seeds = sorted(set.intersection(*(set(s.runs["seed"].astype(int)) for s in sources)))
    out = []
    for s in sources:
        runs = s.runs[s.runs["seed"].astype(int).isin(seeds)]
        keep = set(runs["run"])
        out.append(replace(s, runs=runs, **{t: getattr(s, t)[getattr(s, t)["run"].isin(keep)]
                                            for t in ("agents", "market", "events")}))
    return out, seeds


def scenario_section(sources: Sequence[Source]) -> str:
    """One row per scenario: revenue per year, compute, the neoclouds' share, Vera Rubin at scale, the fastest run."""
    sources, seeds = same_seeds(sources)
    if not seeds:
        raise InputError(f"{', '.join(str(s.path) for s in sources)}: no seed that every scenario ran (expected "
                         "sweeps with the same base seed)")
    last = SCENARIO_YEARS[-1]
    december = pd.Timestamp(year=last, month=12, day=1)
    header = ["scenario", "story", *(f"NVIDIA revenue {y} ($B)" for y in SCENARIO_YEARS),
              f"H100e end {last} (M)", f"neoclouds' share end {last}", "first Vera Rubin cluster at scale",
              f"fastest reference run end {last} (days)"]
    rows = []
    for src in sources:
        revenue = O.revenue(src.market, "calendar_year")
        cells = [f"`{Path(src.scenario_file).name}`", scenario_story(src.scenario_file)]
        for year in SCENARIO_YEARS:
            sel = revenue[revenue["year"] == year]["nvidia_revenue_usd"]
            cells.append(f"{O.spread(sel)['median'] / 1e9:,.0f}" if len(sel) else "-")
        totals = O.totals(src.agents, at=[december])
        kinds = O.kind_shares(src.agents, at=[december])
        neo = kinds[kinds["kind"] == "neocloud"]["share"]
        cells.append(f"{totals['total_h100e'].median() / 1e6:.1f}" if len(totals) else "-")
        cells.append(f"{neo.median():.1%}" if len(neo) else "-")
        vr = O.firsts_across_runs(O.firsts(src.events, src.agents, which=["first_cluster_at_scale"]), src.n_runs)
        vr = vr[vr["system"] == "vr_nvl72"]
        cells.append(f"{vr['date'].iloc[0]:%Y-%m} {agent_name(vr['agent'].iloc[0])}" if len(vr) else "-")
        days = totals["fastest_frontier_run_days"].dropna()
        cells.append(f"{days.median():.0f}" if len(days) else "-")
        rows.append(cells)
    note = (f"Medians over the same {len(seeds)} seeds ({seeds[0]}-{seeds[-1]}) for every scenario. The story is the "
            "opening comment of each file, which says what changes against the baseline.")
    return _table(note, header, rows)


def web_png(source: Path, target: Path) -> Path:
    """`source` scaled to README_FIGURE_WIDTH_PX wide and reduced to a 256-colour palette, written to `target`."""
    with Image.open(source) as im:
        height = round(im.height * README_FIGURE_WIDTH_PX / im.width)
        small = im.convert("RGB").resize((README_FIGURE_WIDTH_PX, height), Image.Resampling.LANCZOS)
        small = small.quantize(colors=256, method=Image.Quantize.MEDIANCUT)
        write_file_atomically(target, lambda p: small.save(p, format="PNG", optimize=True))
    return target


def draw_figures(baseline: ResultSet, uncertainty: ResultSet | None, figures_dir: Path) -> list[Path]:
    """The README's figures, drawn by the report's own figure modules, written as small PNGs into `figures_dir`."""
    written = []
    with tempfile.TemporaryDirectory() as tmp:
        made = {f.name: f.png for module in BASELINE_FIGURES for f in module.make(baseline, Path(tmp))}
        if uncertainty is not None:
            made.update({f.name: f.png for f in sensitivity.make(uncertainty, Path(tmp))})
        for name, target in FIGURES.items():
            if name in made:
                written.append(web_png(made[name], figures_dir / target))
    return written


def replace_section(text: str, name: str, body: str) -> str:
    """`text` with the lines between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->` replaced by `body`."""
    pattern = re.compile(rf"(<!-- generated:{re.escape(name)} [^>]*-->\n)(.*?)(<!-- /generated:{re.escape(name)} -->)",
                         re.DOTALL)
    if not pattern.search(text):
        raise InputError(f"README: no marker pair <!-- generated:{name} ... --> ... <!-- /generated:{name} --> "
                         "(expected one where the generated table goes)")
    return pattern.sub(lambda m: m.group(1) + body.rstrip("\n") + "\n" + m.group(3), text, count=1)


def sections(results: Path) -> dict[str, str]:
    baseline = read_folder(results / BASELINE)
    scenarios = [read_folder(results / name) for name in SCENARIO_ORDER if (results / name).exists()]
    uncertainty = read_folder(results / UNCERTAINTY) if (results / UNCERTAINTY).exists() else None
    no_partner = read_folder(results / NO_PARTNER_WEIGHT) if (results / NO_PARTNER_WEIGHT).exists() else None
    return {"baseline-firsts": firsts_section(baseline, no_partner), "baseline-compute": compute_section(baseline),
            "baseline-revenue": revenue_section(baseline),
            "baseline-hindcast": hindcast.readme_section(baseline, uncertainty),
            "scenarios": scenario_section(scenarios)}


def main(argv: Sequence[str] | None = None) -> int:
    prog = "python -m analysis.readme"
    parser = argparse.ArgumentParser(prog=prog, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", type=Path, help="folder with one sweep folder per scenario (make readme)")
    parser.add_argument("--readme", type=Path, default=Path("README.md"))
    parser.add_argument("--figures", type=Path, default=Path("docs"), help="folder for the README's PNG figures")
    args = parser.parse_args(argv)
    try:
        text = args.readme.read_text(encoding="utf-8")
        for name, body in sections(args.results).items():
            text = replace_section(text, name, body)
        uncertainty = args.results / UNCERTAINTY
        figures = draw_figures(read_folders([args.results / BASELINE]),
                               read_folders([uncertainty]) if uncertainty.exists() else None, args.figures)
    except InputError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    write_file_atomically(args.readme, lambda p: p.write_text(text, encoding="utf-8"))
    print(f"wrote {args.readme} and {', '.join(str(f) for f in figures)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
