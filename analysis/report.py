"""The whole report: every figure that applies to the inputs, `report.md` and one self-contained `report.html`.

`airace report RESULTS... --out DIR` and `python -m analysis.report RESULTS... --out DIR` both land here. The
result folders are read once and every figure module draws from the same tables; a progress bar on stderr (when it
is a terminal) names the figure being drawn. `report.html` holds everything inline (figures as PNG data, tables,
each scenario's story and parameters, the sources of the reference data), so it reads offline and loads nothing.
"""

from __future__ import annotations

import argparse
import base64
import concurrent.futures as cf
import contextlib
import gc
import html
import importlib
import multiprocessing
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from analysis import FIGURE_MODULES, record
from analysis.cli import DEFAULT_OPTIONS, Options, add_common_arguments, options_from
from analysis.command import positive_whole_number
from analysis.figure import FigureFile, NotApplicable, sys_name, write_text
from analysis.names import agent_name, describe_runs, input_titles, parameter_labels, scenario_story
from analysis.summaries import systems_in
from model.errors import InputError, dumps_strict
from model.results import ResultSet, Source, read_folders
from model.results import outcomes as O
from model.results.folders import REPORT_JSON, check_output_folder, replace_folder

TOP = 5
COLLECT_EVERY = 20_000  # allocations between collections of young objects while drawing (Python's default: 700)


@dataclass(frozen=True)
class Table:
    """A table of the report, rendered both as Markdown and as HTML."""

    heading: str
    note: str
    header: list[str]
    rows: list[list[str]]


@dataclass
class Section:
    """One input's part of the summary."""

    title: str
    intro: str
    tables: list[Table] = field(default_factory=list)


def _num(median: float, lo: float, hi: float, runs: int, scale: float, fmt: str) -> str:
    if pd.isna(median):
        return "-"
    text = format(median / scale, fmt)
    if runs > 1 and not (pd.isna(lo) or pd.isna(hi)) and lo != hi:
        text += f" ({format(lo / scale, fmt)}-{format(hi / scale, fmt)})"
    return text


def summary(rs: ResultSet, label: str, title: str) -> Section:
    """Leaders by H100e at the end, firsts per generation, largest clusters (medians and 5-95% for sweeps), all from
    the outcomes module (its conventions: named agents lead and are first, the rest of the market counts in totals)."""
    src = rs.source(label)
    agents = rs.agents[rs.agents["label"] == label]
    standing = O.standings(agents, at="end")
    end = standing["date"].max()
    ranged = " (median, 5-95% range in brackets)" if src.n_runs > 1 else ""
    intro = (f"{'Sweep' if src.is_sweep else 'Run'} of `{src.scenario_file or '?'}`, {src.n_runs} "
             f"run{'s' if src.n_runs != 1 else ''}, {agents['date'].min():%Y-%m} to {end:%Y-%m}; folder "
             f"`{src.path}`.")
    section = Section(title, intro)
    named = standing[O.is_named(standing["kind"])]
    rest = standing[~O.is_named(standing["kind"])].groupby("run")["h100e"].sum()
    note = (f" (the rest of the market, an aggregate, holds {rest.median() / 1e6:.2f} M)" if len(rest) else "")
    h = O.band(named, ["agent", "kind"], "h100e").sort_values(["h100e", "agent"], ascending=[False, True])
    c = O.band(named, ["agent"], "largest_cluster_gpus").set_index("agent")
    fr = O.band(named, ["agent"], "frontier_run_days").set_index("agent")
    vendors = O.vendors_present(agents)
    several = len(vendors) > 1  # then each owner's compute and cluster is told by vendor
    by_vendor = _vendor_split(agents) if several else {}
    rows = []
    for r in h.head(TOP).itertuples():
        cl = c.loc[r.agent]
        rows.append([agent_name(r.agent), r.kind, _num(r.h100e, r.h100e_p05, r.h100e_p95, src.n_runs, 1e6, ".2f"),
                     *([by_vendor.get(r.agent, "-")] if several else []),
                     _num(cl["largest_cluster_gpus"], cl["largest_cluster_gpus_p05"], cl["largest_cluster_gpus_p95"],
                          src.n_runs, 1, ",.0f")])
    section.tables.append(Table(f"H100e leaders at {end:%Y-%m}{ranged}{note}",
                                "H100e counts every vendor's chips by dense BF16 FLOP/s relative to H100's; by "
                                "vendor: each owner's H100e split by vendor (mean across runs)." if several else "",
                                ["agent", "kind", "H100e (millions)", *(["by vendor"] if several else []),
                                 "largest cluster (GPUs)"], rows))
    if several:
        section.tables.append(_vendor_table(agents, rs.market[rs.market["label"] == label], end))

    first = O.firsts_across_runs(O.firsts(rs.events[rs.events["label"] == label], agents), src.n_runs)
    at_scale = src.scenario_params.get("at_scale_gpus")
    rows = []
    for system in systems_in(first["system"].unique()):
        cells = [sys_name(system)]
        for event in O.FIRST_EVENTS:
            sel = first[(first["system"] == system) & (first["event"] == event)]
            if sel.empty:
                cells.append("-")
                continue
            r = sel.iloc[0]
            share = (f" ({r['agent_frequency']:.0%} of {r['runs_with_event']} runs)" if src.n_runs > 1 else "")
            gpus = f", {r['gpus']:,.0f} GPUs" if event == "first_cluster_at_scale" else ""
            cells.append(f"{r['date']:%Y-%m} {agent_name(r['agent'])}{share}{gpus}")
        rows.append(cells)
    scale = f"first cluster of {at_scale:,} GPUs" if isinstance(at_scale, int) else "first at-scale cluster"
    section.tables.append(Table(
        "Firsts per generation" + (" (median month over the runs that reached it, the most frequent first agent and "
                                   "its share of those runs)" if src.n_runs > 1 else ""),
        "" if rows else "(no events)", ["system", "first delivery", "first online", scale], rows))

    rows = []
    cluster_vendor = _cluster_vendors(agents) if several else {}
    for agent, r in c.sort_values("largest_cluster_gpus", ascending=False).head(TOP).iterrows():
        f = fr.loc[agent]
        rows.append([agent_name(agent), _num(r["largest_cluster_gpus"], r["largest_cluster_gpus_p05"],
                                             r["largest_cluster_gpus_p95"], src.n_runs, 1, ",.0f"),
                     *([cluster_vendor.get(agent, "-")] if several else []),
                     _num(f["frontier_run_days"], f["frontier_run_days_p05"], f["frontier_run_days_p95"],
                          src.n_runs, 1, ".0f")])
    section.tables.append(Table(f"Largest clusters at {end:%Y-%m}{ranged}",
                                "largest_cluster_gpus: " + O.largest_cluster_meaning(rs.agents.columns) + "."
                                + (" vendor: of that cluster's systems (the most frequent across runs)."
                                   if several else ""),
                                ["agent", "largest cluster (GPUs)", *(["vendor"] if several else []),
                                 "days to train the reference run"], rows))
    return section


def _vendor_split(agents: pd.DataFrame) -> dict[str, str]:
    """{agent: "NVIDIA 60%, Google 40%"}: each owner's H100e at the end by vendor (mean share across runs)."""
    split = O.owner_compute_by_vendor(agents, at="end")
    runs = split.groupby("agent")["run"].transform("nunique") if "run" in split.columns else 1
    mean = (split.assign(w=split["share"] / runs).groupby(["agent", "vendor"])["w"].sum()
            .sort_values(ascending=False))
    return {agent: ", ".join(f"{v} {w:.0%}" for (_, v), w in part.items() if w >= 0.005)
            for agent, part in mean.groupby(level="agent", sort=False)}


def _cluster_vendors(agents: pd.DataFrame) -> dict[str, str]:
    """{agent: vendor of its largest cluster at the end} (most frequent across runs; "-" when it has none)."""
    if "largest_cluster_systems" not in agents.columns:
        return {}
    c = O.largest_clusters(agents, at="end")
    c = c[c["largest_cluster_vendor"] != ""]
    return {agent: O.mode(g["largest_cluster_vendor"])[0] for agent, g in c.groupby("agent")}


def _vendor_table(agents: pd.DataFrame, market: pd.DataFrame, end: pd.Timestamp) -> Table:
    """Each vendor's share of all compute at the end and of what shipped over the run (H100e and GPUs)."""
    compute = O.mean_shares(O.compute_shares(agents, "vendor", at="end"), "vendor").set_index("vendor")
    ship = O.shipment_shares(market, "month", partial="flag")
    keys = O.run_keys(ship)
    total = ship.groupby([*keys, "vendor"])[["gpus", "h100e"]].sum()
    share = total / total.groupby(level=keys).transform("sum")
    shipped = share.groupby(level="vendor").mean()
    order = sorted(compute.index, key=lambda v: (v != "NVIDIA", -compute.loc[v, "share"], v))
    rows = [[v, f"{compute.loc[v, 'share']:.1%}",
             f"{shipped.loc[v, 'h100e']:.1%}" if v in shipped.index else "-",
             f"{shipped.loc[v, 'gpus']:.1%}" if v in shipped.index else "-"] for v in order]
    return Table(f"Vendors: share of compute at {end:%Y-%m} and of everything shipped during the run",
                 "H100e: dense BF16 FLOP/s relative to H100's, every vendor alike; GPUs: packages or chips; mean "
                 "across runs.", ["vendor", "share of H100e online", "share of H100e shipped",
                                  "share of GPUs shipped"], rows)


# -- Markdown ---------------------------------------------------------------------------------------------------------
def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(r) + " |" for r in rows), ""]


def summaries(rs: ResultSet) -> list[Section]:
    """Every input's summary, in the inputs' order (both reports show them)."""
    titles = input_titles(rs)
    return [summary(rs, label, titles[label]) for label in rs.labels]


def render(rs: ResultSet, figures: list[FigureFile], skipped: list[tuple[str, str]], out: Path,
           seconds: float, sections: list[Section] | None = None) -> str:
    titles = input_titles(rs)
    lines = ["# airace report", "", "## Inputs", ""]
    rows = [[titles[s.label], "sweep" if s.is_sweep else "run", str(s.n_runs), f"`{s.scenario_file or '?'}`",
             f"`{s.path}`"] for s in rs.sources]
    lines += _md_table(["input", "type", "runs", "scenario", "folder"], rows)
    lines += ["## Summary", ""]
    for section in summaries(rs) if sections is None else sections:
        lines += [f"### {section.title}", "", section.intro, ""]
        for t in section.tables:
            lines += [f"**{t.heading}**", ""]
            if t.note:
                lines += [t.note, ""]
            lines += _md_table(t.header, t.rows) if t.rows else []
    lines += ["## Figures", "", "Every figure with the CSV behind it; `report.html` holds the same in one file.", ""]
    for f in figures:
        data = ", ".join(f"[{c.name}]({c.relative_to(out).as_posix()})" for c in f.csvs)
        lines += [f"### {f.title}", "", f"![{f.title}]({f.png.relative_to(out).as_posix()})", ""]
        if f.notes:
            lines += [f.notes, ""]
        lines += [f"[SVG]({f.svg.relative_to(out).as_posix()}) · data: {data}", ""]
    lines += ["## Notes", ""]
    for name, why in skipped:
        lines.append(f"- `{name}` not drawn: {why}")
    lines += ["- Reference data (the public record the figures set the model beside): `analysis/data/`, a source "
              "URL on every row; `report.html` lists the sources.",
              "- Conventions (leaders, firsts, periods, bands across runs): `model.results.outcomes`.",
              f"- Made by `airace report` in {seconds:.1f} s.", ""]
    return "\n".join(lines)


# -- HTML -------------------------------------------------------------------------------------------------------------
CSS = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; margin: 0 auto; max-width: 1240px;
       padding: 0 24px 48px; color: #1b1b1b; line-height: 1.45; }
h1 { margin-top: 24px; } h2 { border-bottom: 1px solid #ddd; padding-bottom: 4px; margin-top: 36px; }
table { border-collapse: collapse; margin: 8px 0 18px; font-size: 14px; }
th, td { border: 1px solid #ddd; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; } code { background: #f6f6f6; padding: 0 3px; }
figure { margin: 18px 0 32px; } figure img { width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 13px; color: #444; } .note { font-size: 13px; color: #444; }
details { margin: 6px 0 14px; } summary { cursor: pointer; } nav a { margin-right: 12px; }
"""


def _esc(text: Any) -> str:
    out = html.escape(str(text))
    # `code` spans of the Markdown summary read as code here too
    parts = out.split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def _html_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    head = "".join(f"<th>{_esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_esc(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _flatten(tree: Any, prefix: str = "") -> list[tuple[str, str]]:
    if isinstance(tree, dict):
        out = []
        for k, v in tree.items():
            out += _flatten(v, f"{prefix}.{k}" if prefix else str(k))
        return out
    if isinstance(tree, list) and tree and all(isinstance(x, dict) for x in tree):
        out = []
        for i, v in enumerate(tree):
            out += _flatten(v, f"{prefix}[{i}]")
        return out
    return [(prefix, str(tree))]


def _source_html(src: Source, title: str) -> str:
    parts = [f"<h3>{_esc(title)}</h3>"]
    story = scenario_story(src.scenario_file, src.path)
    if story:
        parts.append(f"<p><em>{_esc(story)}</em></p>")
    parts.append(f"<p class='note'>{_esc(('Sweep' if src.is_sweep else 'Run') + ' of `' + (src.scenario_file or '?'))}"
                 f"</code>, {_esc(describe_runs(src))}; folder <code>{_esc(src.path)}</code>.</p>")
    overrides = [o for o in src.manifest.get("overrides", []) if isinstance(o, str)]
    if overrides:
        parts.append("<p class='note'>Overrides (--set): " + ", ".join(f"<code>{_esc(o)}</code>" for o in overrides)
                     + "</p>")
    specs = src.manifest.get("parameters") if src.is_sweep else None
    if isinstance(specs, dict) and specs:
        labels = parameter_labels(list(specs), specs)
        rows = [[labels[p], p] for p in specs]
        parts.append(f"<p>Sampled parameters (design: {_esc(src.manifest.get('design', 'lhs'))}):</p>"
                     + _html_table(["parameter [range]", "scenario path"], rows))
    params = _flatten(src.scenario_params)
    if params:
        parts.append(f"<details><summary>All {len(params)} resolved scenario parameters</summary>"
                     + _html_table(["parameter", "value"], params) + "</details>")
    return "\n".join(parts)


def _record_html() -> str:
    parts = ["<h2 id='sources'>Sources of the reference data</h2>",
             "<p>The public record the figures set the model beside: sourced files in <code>analysis/data/</code>, "
             "one fact per row with its source URL and kind (reported, estimate, guidance, projection). Some facts "
             "are also scenario inputs (analysis/data/README.md says which); those are not independent checks.</p>"]
    for f in record.describe():
        links = "".join(f"<li><a href='{html.escape(u, quote=True)}' rel='noreferrer'>{_esc(u)}</a></li>"
                        for u in f.sources)
        parts.append(f"<h3><code>{_esc(f.path.name)}</code> ({f.rows} rows, {len(f.sources)} sources)</h3>"
                     f"<p class='note'>{_esc(f.description)}</p>"
                     f"<details><summary>Sources</summary><ul>{links}</ul></details>")
    return "\n".join(parts)


def render_html(rs: ResultSet, figures: list[FigureFile], skipped: list[tuple[str, str]], out: Path,
                seconds: float, sections: list[Section] | None = None) -> str:
    """One HTML file with everything inline: nothing is fetched when it is opened."""
    titles = input_titles(rs)
    body = ["<h1>airace report</h1>",
            "<nav><a href='#inputs'>Inputs</a><a href='#summary'>Summary</a><a href='#figures'>Figures</a>"
            "<a href='#sources'>Sources</a><a href='#notes'>Notes</a></nav>",
            "<h2 id='inputs'>Inputs</h2>",
            _html_table(["input", "type", "runs", "scenario", "folder"],
                        [[titles[s.label], "sweep" if s.is_sweep else "run", s.n_runs, f"`{s.scenario_file or '?'}`",
                          f"`{s.path}`"] for s in rs.sources])]
    body += [_source_html(s, titles[s.label]) for s in rs.sources]
    body.append("<h2 id='summary'>Summary</h2>")
    for section in summaries(rs) if sections is None else sections:
        body.append(f"<h3>{_esc(section.title)}</h3><p class='note'>{_esc(section.intro)}</p>")
        for t in section.tables:
            body.append(f"<p><strong>{_esc(t.heading)}</strong></p>")
            if t.note:
                body.append(f"<p class='note'>{_esc(t.note)}</p>")
            if t.rows:
                body.append(_html_table(t.header, t.rows))
    body.append("<h2 id='figures'>Figures</h2>")
    body.append("<ul>" + "".join(f"<li><a href='#fig-{f.name}'>{_esc(f.title)}</a></li>" for f in figures) + "</ul>")
    for f in figures:
        data = base64.b64encode(f.png.read_bytes()).decode("ascii")
        files = ", ".join(f"<code>{_esc(c.relative_to(out).as_posix())}</code>" for c in f.csvs)
        body.append(f"<figure id='fig-{f.name}'><img alt='{html.escape(f.title, quote=True)}' "
                    f"width='{f.width_px}' height='{f.height_px}' src='data:image/png;base64,{data}'>"
                    f"<figcaption><strong>{_esc(f.title)}.</strong> {_esc(f.notes)} Data beside this file: "
                    f"{files}; vector: <code>{_esc(f.svg.relative_to(out).as_posix())}</code>.</figcaption></figure>")
    body.append(_record_html())
    body.append("<h2 id='notes'>Notes</h2><ul>")
    body += [f"<li><code>{_esc(name)}</code> not drawn: {_esc(why)}</li>" for name, why in skipped]
    body += ["<li>Conventions (leaders, firsts, periods, bands across runs): <code>model.results.outcomes</code>.</li>",
             f"<li>Made by <code>airace report</code> in {seconds:.1f} s.</li></ul>"]
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; img-src data:; "
            "style-src 'unsafe-inline'\">"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>airace report: {_esc(', '.join(titles.values()))}</title><style>{CSS}</style></head>"
            "<body>\n" + "\n".join(body) + "\n</body></html>\n")


# -- driving ----------------------------------------------------------------------------------------------------------
def _progress(total: int):
    from tqdm import tqdm  # lazy: only the command line draws a bar

    tqdm.monitor_interval = 0  # no monitor thread: the figure workers are forked from this process
    return tqdm(total=total, desc="report", unit="figure", file=sys.stderr, disable=None, leave=False,
                dynamic_ncols=True)


_SHARED: tuple[ResultSet, Path, Options] | None = None  # what forked workers draw from (inherited, not pickled)


def _draw(name: str) -> tuple[str, list[FigureFile], str | None]:
    """One figure module on the shared tables: its files, or why it does not apply."""
    assert _SHARED is not None
    rs, out, opts = _SHARED
    module = importlib.import_module(f"analysis.{name}")
    try:
        return name, module.make(rs, out, opts), None
    except NotApplicable as exc:
        return name, [], str(exc)


def default_jobs() -> int:
    count = os.process_cpu_count() if hasattr(os, "process_cpu_count") else os.cpu_count()
    return max(1, count or 1)


@contextlib.contextmanager
def fewer_collections():
    """Python's cyclic garbage collector run less often while figures are drawn, and never over what was there before.

    Drawing makes hundreds of thousands of short-lived objects, so the collector ran every 700 allocations and,
    now and then, over every object of the imported libraries and the tables as well: a tenth of a report's CPU.
    Objects already alive are frozen (never scanned; forked workers inherit that, and share those pages longer),
    and young objects are collected every 20,000 allocations. Restored on leaving.
    """
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(COLLECT_EVERY, *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


def draw_all(rs: ResultSet, out: Path, opts: Options, jobs: int, progress: bool,
             meanwhile: Callable[[], None] | None = None) -> dict[str, tuple]:
    """Every figure module, in `jobs` forked processes that share the tables already read (one: in this process).
    `meanwhile` runs in this process while the workers draw (first, when there are none)."""
    global _SHARED
    _SHARED = (rs, out, opts)
    results: dict[str, tuple] = {}
    bar = _progress(len(FIGURE_MODULES)) if progress else None
    try:
        with fewer_collections():
            if jobs <= 1 or "fork" not in multiprocessing.get_all_start_methods() or threading.active_count() > 1:
                if meanwhile is not None:
                    meanwhile()
                for name in FIGURE_MODULES:
                    if bar is not None:
                        bar.set_postfix_str(name, refresh=True)
                    results[name] = _draw(name)
                    if bar is not None:
                        bar.update(1)
            else:
                # fork: workers start with the analysis package imported and the tables in memory (nothing to pickle or
                # read again). Only from a process without other Python threads (else the loop above); the threads
                # Python's warning counts then are OpenBLAS's pool, which re-initialises itself in a forked child.
                with warnings.catch_warnings():
                    warnings.filterwarnings("ignore", "This process .* is multi-threaded", DeprecationWarning)
                    pool = cf.ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork"))
                    futures = {pool.submit(_draw, name): name for name in FIGURE_MODULES}
                with pool:
                    if meanwhile is not None:
                        meanwhile()
                    for future in cf.as_completed(futures):
                        name, files, why = future.result()
                        results[name] = (name, files, why)
                        if bar is not None:
                            bar.set_postfix_str(name, refresh=False)
                            bar.update(1)
    finally:
        _SHARED = None
        if bar is not None:
            bar.close()
    return results


def build_report(paths: Sequence[str | Path], out: str | Path, opts: Options = DEFAULT_OPTIONS,
                 progress: bool = True, jobs: int | None = None) -> Path:
    """Draw every applicable figure into `out` and write `out/report.md` and `out/report.html`; returns report.md.
    `jobs`: processes drawing figures (default: the cores this process may use).

    `out` must be absent, empty or an earlier report folder (`model.results.folders.check_output_folder`); the
    report is drawn into a temporary folder that replaces `out` whole, with `report.json` marking it as a report."""
    t0 = time.perf_counter()
    rs = read_folders(paths)
    out = Path(out)
    check_output_folder(out, "report", keep=[Path(p) for p in paths])
    jobs = min(default_jobs() if jobs is None else jobs, len(FIGURE_MODULES))

    def fill(tmp: Path) -> None:
        record.describe()  # the reference files read (and kept) before the figure workers fork: they share them
        sections: list[Section] = []
        results = draw_all(rs, tmp, opts, jobs, progress, meanwhile=lambda: sections.extend(summaries(rs)))
        figures: list[FigureFile] = []
        skipped: list[tuple[str, str]] = []
        for name in FIGURE_MODULES:
            _, files, why = results[name]
            figures += files
            if why is not None:
                skipped.append((name, why))
        seconds = time.perf_counter() - t0
        write_text(tmp / "report.html", render_html(rs, figures, skipped, tmp, seconds, sections))
        write_text(tmp / "report.md", render(rs, figures, skipped, tmp, seconds, sections))
        write_text(tmp / REPORT_JSON, dumps_strict({"airace": "report", "inputs": [str(p) for p in paths],
                                                    "package_version": _package_version()}, indent=2) + "\n")

    replace_folder(out, fill)
    return out / "report.md"


def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("airace")
    except PackageNotFoundError:
        return "unknown"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common_arguments(parser)
    add_jobs_argument(parser)


def add_jobs_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--jobs", type=positive_whole_number, metavar="N",
                        help="processes drawing figures (default: every core this process may use; 1: no workers)")



def run(args: argparse.Namespace) -> int:
    path = build_report(args.results, args.out, options_from(args), jobs=getattr(args, "jobs", None))
    print(f"wrote {path}, {path.with_name('report.html')} and their figures")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    prog = "python -m analysis.report"
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except InputError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
