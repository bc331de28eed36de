"""The scenario schema: every field, its type and range, checked before a model runs.

Validation turns the first problem into one `InputError` line naming the file (the scenario file in the `extends`
chain that sets the field, or `--set`), the dotted field, the value and what was expected, e.g.

    scenarios/x.toml: hyperscaler.microsoft.capex_usd_bn.2025: expected a number >= 0, got 'abc'

Types and ranges are pydantic models (strict: a string is not a number); relations between fields (dates in
order, probabilities summing to one, contracts naming known agents) are checked after.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from model.errors import InputError, nearest
from model.hardware.systems import SYSTEM_KEYS, systems
from model.hardware.workloads import workloads

BASELINE_SYSTEM = "hgx_h100"  # the system every other is measured against (H100-equivalents)
_MONTH = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")
_YEAR = re.compile(r"^\d{4}$")


def _month(text: str) -> str:
    if not _MONTH.match(text):
        raise ValueError("a month as YYYY-MM")
    return text


def _year(text: str) -> str:
    if not _YEAR.match(text):
        raise ValueError("a year as YYYY")
    return text


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("a finite number")
    return value


def _workload(key: str) -> str:
    if key not in workloads():
        raise ValueError(f"a workload of the catalog ({', '.join(workloads())})")
    return key


Month = Annotated[str, AfterValidator(_month)]
Year = Annotated[str, AfterValidator(_year)]
System = Literal[SYSTEM_KEYS]  # type: ignore[valid-type]
Number = Annotated[float, AfterValidator(_finite)]
NonNegative = Annotated[float, Field(ge=0), AfterValidator(_finite)]
Positive = Annotated[float, Field(gt=0), AfterValidator(_finite)]
Fraction = Annotated[float, Field(ge=0, le=1)]
PositiveInt = Annotated[int, Field(gt=0)]
NonNegativeInt = Annotated[int, Field(ge=0)]
ByYear = dict[Year, NonNegative]
ByMonth = dict[Month, Positive]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Frontier(_Strict):
    flop_2024: Positive
    growth_per_year: Positive
    max_run_days: Positive
    min_run_growth: Annotated[float, Field(ge=1)]
    precision: Literal["bf16", "fp8", "nvfp4"]


class Rental(_Strict):
    amortization_years: Positive
    utilization: Annotated[float, Field(gt=0, lt=1)]
    margin: NonNegative
    pue: Annotated[float, Field(ge=1, le=3)]
    usd_per_kwh: NonNegative
    scarcity_premium: NonNegative
    scarcity_backlog_months: Positive


class TrainJob(_Strict):
    workload: Annotated[str, AfterValidator(_workload)]
    gpus: PositiveInt
    seq_len: PositiveInt
    global_batch_seqs: PositiveInt
    precision: Literal["bf16", "fp8", "nvfp4"]


class ServeJob(_Strict):
    workload: Annotated[str, AfterValidator(_workload)]
    gpus: PositiveInt
    input_tokens: PositiveInt
    output_tokens: PositiveInt
    scenario: Literal["offline", "server", "interactive"]
    precision: Literal["fp8", "nvfp4"]
    weight: Positive


class ReferenceJobs(_Strict):
    train: TrainJob
    serve: Annotated[list[ServeJob], Field(min_length=1)]


class Supplier(_Strict):
    slip_after: Month
    slip_months: Annotated[list[NonNegativeInt], Field(min_length=1)]
    slip_probs: Annotated[list[Fraction], Field(min_length=1)]
    launch_premium: NonNegative
    premium_decay_months: Positive
    price_decline_per_year: Annotated[float, Field(ge=0, lt=1)]
    attach_revenue_fraction: NonNegative
    ramp_first_month_fraction: Annotated[float, Field(gt=0, le=1)]
    supply_growth_multiplier: NonNegative
    order_size_exponent: NonNegative
    expected_share_of_capacity: Annotated[float, Field(gt=0, le=1)]
    delay_months: dict[System, NonNegativeInt]
    volume_delay_months: dict[System, NonNegativeInt] = {}
    cowos_wafers_per_month: Annotated[ByMonth, Field(min_length=1)]
    hbm_tb_per_month: Annotated[ByMonth, Field(min_length=1)]
    gpus_per_wafer: dict[System, Positive]
    nvidia_share_of_system_price: dict[System, Annotated[float, Field(gt=0, le=1)]]


class Kind(_Strict):
    """Behaviour and physics shared by every buyer of a kind; the optional fields apply to some kinds only."""

    start_site_mw: Positive
    budget_carry_months: Positive
    capex_multiplier: NonNegative
    ai_systems_share: Fraction
    capex_growth_after_guidance: Annotated[float, Field(gt=-1), AfterValidator(_finite)]
    pue: Annotated[float, Field(ge=1, le=3)]
    integration_lag_months: NonNegativeInt
    construction_lead_months: NonNegativeInt
    construction_delay_max_months: NonNegativeInt
    max_site_mw: Positive
    min_build_mw: NonNegative
    power_buffer_months: NonNegativeInt
    training_weight: Fraction
    preorder_lookahead_months: NonNegativeInt
    wait_tau_months: Positive
    gpu_lifetime_years: Positive
    fleet_start_age_months: NonNegativeInt
    # neoclouds: money borrowed against contracts
    equity_funded_share: Fraction | None = None
    financing_lag_months: NonNegativeInt | None = None
    debt_multiple_of_backlog: NonNegative | None = None
    # labs: compute bought with revenue
    revenue_growth_after: Annotated[float, Field(gt=-1)] | None = None
    compute_spend_per_revenue: NonNegative | None = None
    contracting_interval_months: PositiveInt | None = None
    contract_years: Positive | None = None
    min_contract_usd_bn: NonNegative | None = None
    # the rest of the market
    power_unconstrained: bool = False


class Kinds(_Strict):
    hyperscaler: Kind
    neocloud: Kind
    lab: Kind
    other: Kind


class _Owner(_Strict):
    capex_usd_bn: ByYear = {}
    ai_systems_share: Fraction | None = None
    power_mw_start: NonNegative = 0.0
    power_mw_under_construction: NonNegative = 0.0
    power_add_mw_per_year: NonNegative | ByYear = 0.0
    fleet_start: dict[System, NonNegativeInt] = {}


class Provider(_Owner):
    pass


class Lab(_Owner):
    hosts: list[str] = []
    frontier_flop_factor: Positive = 1.0
    revenue_usd_bn: ByYear = {}
    nvidia_share_of_compute: Fraction = 1.0


class RestOfMarket(_Strict):
    share_of_nvidia_demand: Annotated[float, Field(ge=0, lt=1)] | dict[Year, Annotated[float, Field(ge=0, lt=1)]]
    fleet_start: dict[System, NonNegativeInt] = {}


class Contract(_Strict):
    lab: str
    provider: str
    date: Month
    start: Month | None = None
    value_usd_bn: Positive
    duration_years: Positive


class Scenario(_Strict):
    start: Month
    end: Month
    at_scale_gpus: PositiveInt
    transit_months: NonNegativeInt
    fabric_max_gpus: PositiveInt
    reference_frontier_flop: Positive
    power_lead_time_multiplier: Positive
    choice_sharpness: Positive
    choice_min_weight: Annotated[float, Field(ge=0, lt=1)]
    reference_jobs: ReferenceJobs
    max_campus_mw: Annotated[ByMonth, Field(min_length=1)]
    frontier: Frontier
    rental: Rental
    supplier: Supplier
    kinds: Kinds
    hyperscaler: dict[str, Provider] = {}
    neocloud: dict[str, Provider] = {}
    other: dict[str, RestOfMarket] = {}
    lab: dict[str, Lab] = {}
    contracts: list[Contract] = []
    deliver_contracts_of: list[str] = []  # labs whose contracts are funded and built on schedule
    sweep: dict[str, Any] | None = None  # validated by model.sweep


KIND_EXTRAS = {
    "neocloud": ("equity_funded_share", "financing_lag_months", "debt_multiple_of_backlog"),
    "lab": ("revenue_growth_after", "compute_spend_per_revenue", "contracting_interval_months", "contract_years",
            "min_contract_usd_bn"),
}


# -- errors ---------------------------------------------------------------------------------------------------
def _dotted(loc: tuple) -> str:
    skip = ("function-", "literal[", "union[", "[key]", "float", "dict[", "constrained-")
    return ".".join(str(part) for part in loc if not str(part).startswith(skip))


def _expectation(error: dict) -> str:
    kind, ctx, msg = error["type"], error.get("ctx", {}), error["msg"]
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        op = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<", "less_than_equal": "<="}[kind]
        bound = next(iter(ctx.values()))
        return f"a number {op} {bound:g}"
    if kind in ("float_type", "int_type", "float_parsing", "int_parsing", "int_from_float"):
        return "a whole number" if kind.startswith("int") else "a number"
    if kind == "string_type":
        return "a string"
    if kind == "bool_type":
        return "true or false"
    if kind in ("list_type", "dict_type", "model_type"):
        return {"list_type": "a list", "dict_type": "a table", "model_type": "a table"}[kind]
    if kind == "literal_error":
        return "one of " + ctx.get("expected", "")
    if kind == "too_short":
        return f"at least {ctx.get('min_length')} entries"
    if kind == "value_error":
        return msg.removeprefix("Value error, ")
    return msg[0].lower() + msg[1:] if msg else kind


def _fields_at(loc: tuple) -> list[str]:
    """Valid keys at the table holding `loc` (for 'unknown key' hints)."""
    model: Any = Scenario
    for part in loc[:-1]:
        if isinstance(part, int) or model is None:
            model = getattr(model, "__args__", [None])[0] if model is not None else None
            continue
        fields = getattr(model, "model_fields", None)
        if fields is None:  # a dict of named agents: the value model
            args = getattr(model, "__args__", None)
            model = args[-1] if args else None
            continue
        field = fields.get(part)
        if field is None:
            return []
        model = field.annotation
        for _ in range(3):  # unwrap Annotated / Optional / list / dict to the model
            args = getattr(model, "__args__", None)
            if getattr(model, "model_fields", None) is not None or not args:
                break
            model = next((a for a in args if getattr(a, "model_fields", None) is not None), args[-1])
    return list(getattr(model, "model_fields", {}) or {})


def _message(error: dict, where: Callable[[str], str]) -> str:
    loc = tuple(error["loc"])
    path = _dotted(loc)
    if error["type"] == "extra_forbidden":
        return f"{where(path)}: {path}: unknown key{nearest(str(loc[-1]), _fields_at(loc))}"
    if error["type"] == "missing":
        return f"{where(path)}: {path}: missing; expected a value here"
    value = error.get("input")
    hint = ""
    if error["type"] == "literal_error" and isinstance(value, str):
        hint = nearest(value, [s.strip("' ") for s in str(error.get("ctx", {}).get("expected", "")).split(",")])
    if error["type"] == "literal_error" and "[key]" in loc:
        return f"{where(path)}: {path}: unknown system key; expected one of the catalog{hint}"
    return f"{where(path)}: {path}: expected {_expectation(error)}, got {value!r}{hint}"


# -- relations between fields -------------------------------------------------------------------------------
def _check_relations(tree: dict[str, Any], fail: Callable[[str, str], None]) -> None:
    if tree["end"] < tree["start"]:
        fail("end", f"expected a month on or after start ({tree['start']}), got {tree['end']!r}")
    earliest = min(s.first_shipment for s in systems().values())
    if tree["start"] < earliest:
        fail("start", f"expected a month on or after {earliest} (the first system's first shipment), "
                      f"got {tree['start']!r}")
    _check_reference_jobs(tree["reference_jobs"], fail)
    sup = tree["supplier"]
    if len(sup["slip_probs"]) != len(sup["slip_months"]):
        fail("supplier.slip_probs", f"expected {len(sup['slip_months'])} probabilities (one per slip_months entry), "
                                    f"got {sup['slip_probs']!r}")
    if abs(sum(sup["slip_probs"]) - 1.0) > 1e-6:
        fail("supplier.slip_probs", f"expected probabilities summing to 1, got {sup['slip_probs']!r}")
    for table in ("gpus_per_wafer", "nvidia_share_of_system_price"):
        missing = [k for k in SYSTEM_KEYS if k not in sup[table]]
        if missing:
            fail(f"supplier.{table}", f"expected a value for every system, missing {', '.join(missing)}")
    for path, series in (("supplier.cowos_wafers_per_month", sup["cowos_wafers_per_month"]),
                         ("supplier.hbm_tb_per_month", sup["hbm_tb_per_month"]),
                         ("max_campus_mw", tree["max_campus_mw"])):
        dates = list(series)
        for a, b in zip(dates, dates[1:], strict=False):
            if b <= a:
                fail(f"{path}.{b}", f"expected dates in increasing order, got {b!r} after {a!r}")
    for kind, extras in KIND_EXTRAS.items():
        for name in extras:
            if tree["kinds"][kind].get(name) is None:
                fail(f"kinds.{kind}.{name}", f"expected a value for {kind}s, got nothing")
    providers = set(tree.get("hyperscaler", {})) | set(tree.get("neocloud", {}))
    agents = providers | set(tree.get("lab", {})) | set(tree.get("other", {}))
    seen: set[str] = set()
    for kind in ("hyperscaler", "neocloud", "other", "lab"):
        for name in tree.get(kind, {}):
            if name in seen:
                fail(f"{kind}.{name}", "expected agent names to be unique across kinds, got a second "
                                       f"{name!r}")
            seen.add(name)
    for name, lab in tree.get("lab", {}).items():
        for i, host in enumerate(lab.get("hosts", [])):
            if host not in providers:
                fail(f"lab.{name}.hosts.{i}", f"expected a hyperscaler or neocloud, got {host!r}"
                                              f"{nearest(host, sorted(providers))}")
    for i, name in enumerate(tree.get("deliver_contracts_of", [])):
        if name not in agents:
            fail(f"deliver_contracts_of.{i}", f"expected an agent, got {name!r}{nearest(name, sorted(agents))}")
    for i, c in enumerate(tree.get("contracts", [])):
        if c["provider"] not in agents or c["provider"] in tree.get("other", {}):
            fail(f"contracts.{i}.provider", f"expected a provider agent, got {c['provider']!r}"
                                            f"{nearest(c['provider'], sorted(providers))}")
        if c["lab"] not in agents:
            fail(f"contracts.{i}.lab", f"expected an agent, got {c['lab']!r}{nearest(c['lab'], sorted(agents))}")
        if c.get("start") is not None and c["start"] < c["date"]:
            fail(f"contracts.{i}.start", f"expected a month on or after its date ({c['date']}), got {c['start']!r}")


def _check_reference_jobs(jobs: dict[str, Any], fail: Callable[[str, str], None]) -> None:
    """Every system is compared with HGX H100 on the reference jobs, so H100 must be able to run them."""
    from model.performance.serving import serve_estimate
    from model.performance.training import train_estimate

    train = jobs["train"]
    precision = "fp8" if train["precision"] == "nvfp4" else train["precision"]  # H100 has no FP4
    if not train_estimate(BASELINE_SYSTEM, train["gpus"], train["workload"], precision, train["seq_len"],
                          train["global_batch_seqs"]).feasible:
        fail("reference_jobs.train", f"expected a job HGX H100 can run (every system is compared with it), got "
                                     f"{train['workload']} on {train['gpus']} GPUs with a batch of "
                                     f"{train['global_batch_seqs']}")
    for i, job in enumerate(jobs["serve"]):
        if not serve_estimate(BASELINE_SYSTEM, job["gpus"], job["workload"], "fp8", job["input_tokens"],
                              job["output_tokens"], scenario=job["scenario"]).feasible:
            fail(f"reference_jobs.serve.{i}", f"expected a job HGX H100 can serve (every system is compared with "
                                              f"it), got {job['workload']} on {job['gpus']} GPUs")


def path_is_known(parts: list[str]) -> bool:
    """Whether the schema has a place for this dotted path: fields of tables, and keys of tables keyed by system,
    year or month (not new agents: those belong in a scenario file)."""
    annotation: Any = Scenario
    for i, part in enumerate(parts):
        annotation = _unwrap(annotation)
        fields = getattr(annotation, "model_fields", None)
        if fields is not None:
            if part not in fields:
                return False
            annotation = fields[part].annotation
            continue
        if get_origin(annotation) is dict:
            key_type, annotation = get_args(annotation)
            key_type = _unwrap(key_type)
            if get_origin(key_type) is Literal:
                if part not in get_args(key_type):
                    return False
            elif key_type is str and i == len(parts) - 1 and not (_MONTH.match(part) or _YEAR.match(part)):
                return False  # a new agent name: agents are declared in scenario files
            continue
        return False
    return True


def _unwrap(annotation: Any) -> Any:
    """The type inside Annotated[...] and Optional/Union (the first branch that is a table)."""
    while True:
        origin = get_origin(annotation)
        if origin is Annotated:
            annotation = get_args(annotation)[0]
        elif origin in (Union, UnionType):
            args = [a for a in get_args(annotation) if a is not type(None)]
            annotation = next((a for a in args if getattr(a, "model_fields", None) is not None
                               or get_origin(_unwrap(a)) is dict), args[0])
        else:
            return annotation


# -- which file says what ------------------------------------------------------------------------------------
def _chain(path: Path) -> list[tuple[Path, dict]]:
    """The scenario file and the files it extends, child first (raw TOML)."""
    out, seen = [], set()
    while path not in seen and path.is_file():
        seen.add(path)
        try:
            data = tomllib.loads(path.read_text())
        except (tomllib.TOMLDecodeError, OSError):
            break
        out.append((path, data))
        parent = data.get("extends")
        if not isinstance(parent, str):
            break
        path = path.parent / parent
    return out


def _has(data: Any, dotted: str) -> bool:
    for part in dotted.split("."):
        if isinstance(data, dict) and part in data:
            data = data[part]
        elif isinstance(data, list) and part.isdigit() and int(part) < len(data):
            data = data[int(part)]
        else:
            return False
    return True


def blame(origin: str | Path, dotted: str) -> str:
    """The file (or '--set') responsible for a field: the first file in the extends chain that sets it or the
    longest part of its path; the scenario file itself when none does."""
    if not isinstance(origin, Path):
        return str(origin)
    chain = _chain(origin)
    parts = dotted.split(".")
    for length in range(len(parts), 0, -1):
        prefix = ".".join(parts[:length])
        for file, data in chain:
            if _has(data, prefix):
                return str(file)
    return str(origin)


# -- the entry point -----------------------------------------------------------------------------------------
def validate(tree: dict[str, Any], origin: str | Path) -> dict[str, Any]:
    """Check a resolved scenario tree; return it unchanged, or raise InputError for the first problem."""
    try:
        Scenario.model_validate(tree)
    except ValidationError as exc:
        raise InputError(_message(exc.errors()[0], lambda path: blame(origin, path))) from None

    def fail(path: str, expectation: str) -> None:
        raise InputError(f"{blame(origin, path)}: {path}: {expectation}")

    _check_relations(tree, fail)
    return tree
