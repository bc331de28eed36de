"""The scenario schema: every field, its type, range and default, as frozen pydantic models.

The market reads a validated `Scenario` by attribute (`scenario.kinds.neocloud.pue`). Defaults live here and only
here. Fields that exist for some kinds of buyer only are fields of that kind's model (`NeocloudKind`, `LabKind`), so
they are required where they apply and refused where they do not. Validation, with its one-line errors, is in
`model.scenario.validation`.
"""

from __future__ import annotations

import copy
import math
import re
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PrivateAttr

from model.hardware.systems import SYSTEM_KEYS
from model.hardware.workloads import workloads

BASELINE_SYSTEM = "hgx_h100"  # the system every other is measured against (H100-equivalents)
MONTH_PATTERN = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")
YEAR_PATTERN = re.compile(r"^\d{4}$")
BUYER_KINDS = ("hyperscaler", "neocloud", "lab", "other")


def _month(text: str) -> str:
    if not MONTH_PATTERN.match(text):
        raise ValueError("a month as YYYY-MM")
    return text


def _year(text: str) -> str:
    if not YEAR_PATTERN.match(text):
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
Precision = Literal["bf16", "fp8", "nvfp4"]


def by_year(table: float | dict[str, float], year: int, growth_after: float = 0.0) -> float:
    """A value given as a number or as a table by calendar year: a year without an entry takes the latest earlier
    entry (the first entry before the table starts), and years after the last entry grow from it by `growth_after`
    a year."""
    if not isinstance(table, dict):
        return float(table)
    if not table:
        return 0.0
    years = sorted(int(y) for y in table)
    known = [y for y in years if y <= year]
    if not known:
        return float(table[str(years[0])])
    value = float(table[str(known[-1])])
    return value * (1 + growth_after) ** (year - known[-1]) if known[-1] == years[-1] else value


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Frontier(_Frozen):
    """Labs' own frontier runs: a trend in FLOP, bounded by how long a run may take."""

    flop_2024: Positive
    growth_per_year: Positive
    max_run_days: Positive
    min_run_growth: Annotated[float, Field(ge=1)]
    precision: Precision


class PowerOutlook(_Frozen):
    """Where power can be had: the sourced outlook for data-centre power (GW by year, grid and on-site generation),
    which sets how fast buyers' grid connections grow after their own figures end and how large a phase one campus
    can add in a year (`campus_phase_mw` by year, geometric between its anchors, then growing with the outlook)."""

    datacenter_gw: Annotated[ByYear, Field(min_length=2)]
    campus_phase_mw: Annotated[ByYear, Field(min_length=1)]


class Demand(_Frozen):
    """Labs' demand for compute: serving from their revenue (tokens served per dollar of revenue, at the tokens per
    second an H100 serves a frontier reasoning model), training from the frontier trend (a run within the longest
    run labs accept, at a model FLOP utilisation)."""

    tokens_served_per_usd: Positive
    serving_tokens_per_s_per_h100: Positive
    training_mfu: Annotated[float, Field(gt=0, le=1)]


class Rental(_Frozen):
    """Rental price per GPU-hour: cost recovery plus a scarcity premium."""

    amortization_years: Positive
    utilization: Annotated[float, Field(gt=0, lt=1)]
    margin: NonNegative
    pue: Annotated[float, Field(ge=1, le=3)]
    usd_per_kwh: NonNegative
    scarcity_premium: NonNegative
    scarcity_backlog_months: Positive


class TrainJob(_Frozen):
    workload: Annotated[str, AfterValidator(_workload)]
    gpus: PositiveInt
    seq_len: PositiveInt
    global_batch_seqs: PositiveInt
    precision: Precision


class ServeJob(_Frozen):
    workload: Annotated[str, AfterValidator(_workload)]
    gpus: PositiveInt
    input_tokens: PositiveInt
    output_tokens: PositiveInt
    scenario: Literal["offline", "server", "interactive"]
    precision: Literal["fp8", "nvfp4"]
    weight: Positive
    since: Month | None = None  # the workload's public release: buyers value systems on it from then on


class ReferenceJobs(_Frozen):
    """What buyers ask their performance model about each system (relative to HGX H100)."""

    train: TrainJob
    serve: Annotated[list[ServeJob], Field(min_length=1)]


class Supplier(_Frozen):
    """NVIDIA: roadmap slips, pricing, packaging and memory capacity, allocation."""

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

    def delays_months(self, system: str) -> tuple[int, int]:
        """Months a scenario adds to a system's catalog dates: to its first shipment, and further to its volume
        ramp (0 for a system the tables leave out)."""
        return self.delay_months.get(system, 0), self.volume_delay_months.get(system, 0)


class KindBase(_Frozen):
    """Behaviour and physics shared by every buyer of a kind."""

    start_site_mw: Positive
    budget_carry_months: Positive
    capex_multiplier: NonNegative
    ai_systems_share: Fraction
    capex_growth_after_guidance: Annotated[float, Field(gt=-1), AfterValidator(_finite)]
    pue: Annotated[float, Field(ge=1, le=3)]
    integration_lag_months: NonNegativeInt
    construction_lead_months: NonNegativeInt
    construction_delay_max_months: NonNegativeInt
    max_site_mw: Positive | None = None  # a cap on one site; None: campuses grow phase by phase (`PowerOutlook`)
    min_build_mw: NonNegative
    power_buffer_months: NonNegativeInt
    training_weight: Fraction
    preorder_lookahead_months: NonNegativeInt
    wait_tau_months: Positive
    gpu_lifetime_years: Positive
    fleet_start_age_months: NonNegativeInt
    power_unconstrained: bool = False  # many small sites whose power is not modelled (the rest of the market)


class ProviderInvestment(_Frozen):
    """How a provider invests against its contract backlog: the share of its compute that can serve contracts
    (the rest runs its own products and its customers by the hour); compute contracted to start within its
    pre-order horizon and integration that this share does not cover is funded by the customers' commitments."""

    contract_capacity_share: Fraction


class HyperscalerKind(KindBase, ProviderInvestment):
    pass


class NeocloudKind(KindBase, ProviderInvestment):
    """Neoclouds fund part of their capex with debt raised against their contract backlog."""

    equity_funded_share: Fraction
    financing_lag_months: NonNegativeInt
    debt_multiple_of_backlog: NonNegative


class LabKind(KindBase):
    """Labs buy compute with revenue, mostly under contracts with providers."""

    revenue_growth_after: Annotated[float, Field(gt=-1), AfterValidator(_finite)]
    compute_spend_per_revenue: NonNegative
    contracting_interval_months: PositiveInt
    contract_years: Positive
    min_contract_usd_bn: NonNegative


class OtherKind(KindBase):
    pass


class Kinds(_Frozen):
    hyperscaler: HyperscalerKind
    neocloud: NeocloudKind
    lab: LabKind
    other: OtherKind


class Owner(_Frozen):
    """A named buyer that builds its own power and buys systems from a capex plan."""

    capex_usd_bn: ByYear = {}
    ai_systems_share: Fraction | None = None  # None: the kind's share
    power_mw_start: NonNegative = 0.0
    power_mw_under_construction: NonNegative = 0.0
    power_add_mw_per_year: NonNegative | ByYear = 0.0
    fleet_start: dict[System, NonNegativeInt] = {}

    def systems_share(self, kind: KindBase) -> float:
        """Share of capex that goes to NVIDIA systems: this buyer's own, else its kind's."""
        return kind.ai_systems_share if self.ai_systems_share is None else self.ai_systems_share


class Provider(Owner):
    """A hyperscaler or a neocloud."""


class Lab(Owner):
    hosts: list[str] = []
    frontier_flop_factor: Positive = 1.0
    revenue_usd_bn: ByYear = {}
    nvidia_share_of_compute: Fraction = 1.0


class RestOfMarket(_Frozen):
    """Everyone else, as one buyer with its own NVIDIA spending by year (sourced by part, then growing)."""

    capex_usd_bn: Annotated[ByYear, Field(min_length=1)]
    fleet_start: dict[System, NonNegativeInt] = {}


class Contract(_Frozen):
    lab: str
    provider: str
    date: Month
    start: Month | None = None
    value_usd_bn: Positive
    duration_years: Positive


class Scenario(_Frozen):
    """A whole scenario, validated. `tree` is the plain parameter tree it was validated from (for manifests)."""

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
    power_outlook: PowerOutlook
    frontier: Frontier
    demand: Demand
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

    _tree: dict[str, Any] = PrivateAttr(default_factory=dict)

    @property
    def tree(self) -> dict[str, Any]:
        """The plain parameter tree (a copy: JSON-able, as in a manifest)."""
        return copy.deepcopy(self._tree)

    def named_agents(self) -> list[tuple[str, str]]:
        """(kind, name) of every buyer, in the order agents are created: hyperscalers, neoclouds, the rest of the
        market, labs."""
        return [(kind, name) for kind in ("hyperscaler", "neocloud", "other", "lab") for name in getattr(self, kind)]


def path_is_known(parts: list[str]) -> bool:
    """Whether the schema has a place for this dotted path: fields of tables, and keys of tables keyed by system,
    year or month (not new agents: those belong in a scenario file)."""
    annotation: Any = Scenario
    for i, part in enumerate(parts):
        annotation = unwrap(annotation)
        fields = getattr(annotation, "model_fields", None)
        if fields is not None:
            if part not in fields:
                return False
            annotation = fields[part].annotation
            continue
        if get_origin(annotation) is dict:
            key_type, annotation = get_args(annotation)
            key_type = unwrap(key_type)
            if get_origin(key_type) is Literal:
                if part not in get_args(key_type):
                    return False
            elif key_type is str and i == len(parts) - 1 and not (MONTH_PATTERN.match(part)
                                                                  or YEAR_PATTERN.match(part)):
                return False  # a new agent name: agents are declared in scenario files
            continue
        return False
    return True


def unwrap(annotation: Any) -> Any:
    """The type inside Annotated[...] and Optional/Union (the first branch that is a table)."""
    while True:
        origin = get_origin(annotation)
        if origin is Annotated:
            annotation = get_args(annotation)[0]
        elif origin in (Union, UnionType):
            args = [a for a in get_args(annotation) if a is not type(None)]
            annotation = next((a for a in args if getattr(a, "model_fields", None) is not None
                               or get_origin(unwrap(a)) is dict), args[0])
        else:
            return annotation
