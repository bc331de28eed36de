"""The scenario schema: every field, its type, range and default, as frozen pydantic models.

The market reads a validated `Scenario` by attribute (`scenario.kinds.neocloud.pue`). Defaults live here and only
here.

Every number is finite and lies in a physically meaningful range, so that any scenario that passes validation runs
in bounded time and memory (the bounds are far outside every sourced value; each says why where it is defined):
power and campus sizes from 1 MW (a few racks) up to 100 GW (`MAX_MW`, twice the world's data-centre power in
2024), money up to USD 100 trillion a year (`MAX_USD_BN`, about the world's GDP), growth rates up to 10 (11x) a
year, multipliers and exponents up to 100, durations up to `MAX_MONTHS` (50 years), GPU counts up to
`MAX_GPUS` (2**24 in one job or fabric, 10**8 in one starting fleet), frontier runs from 10**20 to 10**32 FLOP,
and the horizon from the first shipment in the catalog to `LAST_MONTH`.

Fields that exist for some kinds of buyer only are fields of that kind's model (`NeocloudKind`, `LabKind`), so
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

from model.hardware.systems import NVIDIA_SYSTEM_KEYS, SYSTEM_KEYS, VENDORS
from model.hardware.systems import systems as SYSTEM_CATALOG
from model.hardware.workloads import workloads

BASELINE_SYSTEM = "hgx_h100"  # the system every other is measured against (H100-equivalents)
MONTH_PATTERN = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")
YEAR_PATTERN = re.compile(r"^\d{4}$")
BUYER_KINDS = ("hyperscaler", "neocloud", "lab", "other")
LAST_MONTH = "2100-12"  # the catalog's projections end around 2030; no horizon goes past the century
MAX_MONTHS = 600  # 50 years: every lead time, lag, delay or lifetime is shorter
MAX_YEARS = 50.0
MAX_MW = 100_000.0  # 100 GW: twice the world's data centres in 2024 (IEA: 415 TWh, ~47 GW); no buyer is larger
MIN_SITE_MW = 1.0  # a site holds at least a few racks (one NVL72 rack draws about 0.13 MW)
MAX_USD_BN = 100_000.0  # USD 100 trillion a year: about the world's GDP
MAX_GROWTH = 10.0  # +1000% a year: above anything sustained by any firm (AI labs' revenue grew ~10x in a year)
MAX_FACTOR = 100.0  # scenario knobs that scale something (multipliers, exponents, sharpness)
MAX_GPUS = 1 << 24  # 16.8 M GPUs in one job, cluster or fabric (30x the largest fabric of the scenarios)
MAX_FLEET_GPUS = 100_000_000  # GPUs in one buyer's starting fleet (more than every data-centre GPU shipped)
MIN_FLOP, MAX_FLOP = 1e20, 1e32  # frontier runs: GPT-3 was 3e23; 1e32 is 10**6 x today's largest
MAX_TOKENS = 1 << 24  # sequence lengths and request sizes


def _month(text: str) -> str:
    if not MONTH_PATTERN.match(text):
        raise ValueError("a month as YYYY-MM")
    return text


def _year(text: str) -> str:
    if not YEAR_PATTERN.match(text):
        raise ValueError("a year as YYYY")
    return text


def _before_last(text: str) -> str:
    if text > LAST_MONTH:
        raise ValueError(f"a month up to {LAST_MONTH}")
    return text


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("a finite number")
    return value


def _workload(key: str) -> str:
    if key not in workloads():
        raise ValueError(f"a workload of the catalog ({', '.join(workloads())})")
    return key


def _export_market(market: str) -> str:
    known = sorted({s.export_market for s in SYSTEM_CATALOG().values() if s.export_market})
    if market not in known:
        raise ValueError(f"a market the catalog makes systems for ({', '.join(known)})")
    return market


Month = Annotated[str, AfterValidator(_month), AfterValidator(_before_last)]
Year = Annotated[str, AfterValidator(_year)]
System = Literal[SYSTEM_KEYS]  # type: ignore[valid-type]  # every vendor's systems (issue 18)
NvidiaSystem = Literal[NVIDIA_SYSTEM_KEYS]  # type: ignore[valid-type]  # tables only NVIDIA's systems have
Vendor = Literal[VENDORS]  # type: ignore[valid-type]
Number = Annotated[float, AfterValidator(_finite)]
NonNegative = Annotated[float, Field(ge=0), AfterValidator(_finite)]
Positive = Annotated[float, Field(gt=0), AfterValidator(_finite)]
Fraction = Annotated[float, Field(ge=0, le=1)]
PositiveInt = Annotated[int, Field(gt=0)]
NonNegativeInt = Annotated[int, Field(ge=0)]
Months = Annotated[int, Field(ge=0, le=MAX_MONTHS)]  # a lead time, lag or delay
PositiveMonths = Annotated[float, Field(gt=0, le=MAX_MONTHS)]
Years = Annotated[float, Field(gt=0, le=MAX_YEARS)]
Gpus = Annotated[int, Field(gt=0, le=MAX_GPUS)]
FleetGpus = Annotated[int, Field(ge=0, le=MAX_FLEET_GPUS)]
Tokens = Annotated[int, Field(gt=0, le=MAX_TOKENS)]
MW = Annotated[float, Field(ge=0, le=MAX_MW)]
SiteMW = Annotated[float, Field(ge=MIN_SITE_MW, le=MAX_MW)]
UsdBn = Annotated[float, Field(ge=0, le=MAX_USD_BN)]
Growth = Annotated[float, Field(gt=-1, le=MAX_GROWTH)]  # a rate a year: -0.5 halves, 1 doubles
Factor = Annotated[float, Field(ge=0, le=MAX_FACTOR)]
PositiveFactor = Annotated[float, Field(gt=0, le=MAX_FACTOR)]
Flop = Annotated[float, Field(ge=MIN_FLOP, le=MAX_FLOP)]
ByYear = dict[Year, UsdBn]
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

    flop_2024: Flop
    growth_per_year: Annotated[float, Field(ge=0.1, le=MAX_GROWTH + 1)]  # a factor a year: 4.5 = 4.5x
    max_run_days: Annotated[float, Field(gt=0, le=MAX_YEARS * 365)]
    min_run_growth: Annotated[float, Field(ge=1, le=MAX_FACTOR)]
    precision: Precision


class PowerOutlook(_Frozen):
    """Where power can be had: the sourced outlook for data-centre power (GW by year, grid and on-site generation),
    which sets how fast buyers' grid connections grow after their own figures end and how large a phase one campus
    can add in a year (`campus_phase_mw` by year, geometric between its anchors, then growing with the outlook)."""

    datacenter_gw: Annotated[dict[Year, Annotated[float, Field(gt=0, le=10_000)]], Field(min_length=2)]  # GW, < 10 TW
    campus_phase_mw: Annotated[dict[Year, SiteMW], Field(min_length=1)]  # a phase of at least one site


class Demand(_Frozen):
    """Labs' demand for compute: serving from their revenue (tokens served per dollar of revenue, at the tokens per
    second an H100 serves a frontier reasoning model), training from the frontier trend (a run within the longest
    run labs accept, at a model FLOP utilisation)."""

    tokens_served_per_usd: Annotated[float, Field(gt=0, le=1e9)]  # a token for a billionth of a dollar at most
    serving_tokens_per_s_per_h100: Annotated[float, Field(gt=0, le=1e6)]  # far above any H100's decode rate
    training_mfu: Annotated[float, Field(gt=0, le=1)]


class Rental(_Frozen):
    """Rental price per GPU-hour: cost recovery plus a scarcity premium."""

    amortization_years: Years
    utilization: Annotated[float, Field(gt=0, lt=1)]
    margin: Factor
    pue: Annotated[float, Field(ge=1, le=3)]
    usd_per_kwh: Annotated[float, Field(ge=0, le=10)]  # USD 10/kWh: 50x a high retail price
    scarcity_premium: Factor
    scarcity_backlog_months: PositiveMonths


class TrainJob(_Frozen):
    workload: Annotated[str, AfterValidator(_workload)]
    gpus: Gpus
    seq_len: Tokens
    global_batch_seqs: Annotated[int, Field(gt=0, le=1 << 30)]
    precision: Precision


class ServeJob(_Frozen):
    workload: Annotated[str, AfterValidator(_workload)]
    gpus: Gpus
    input_tokens: Tokens
    output_tokens: Tokens
    scenario: Literal["offline", "server", "interactive"]
    precision: Literal["fp8", "nvfp4"]
    weight: PositiveFactor
    since: Month | None = None  # the workload's public release: buyers value systems on it from then on


def _increasing(steps: list[int]) -> list[int]:
    if any(b <= a for a, b in zip(steps, steps[1:], strict=False)):
        raise ValueError("steps in increasing order")
    return steps


class Valuation(_Frozen):
    """How buyers value systems with their performance model: on the software of the era they decide in (eras of
    `software_era_months`, starting in January), counting on software improving while an order waits for at most
    `software_ahead_months`, and training at their own scale (the reference training job also asked on each of
    `training_scale_steps` times its GPUs). A system's cost to a buyer is its full cost of ownership: its price, the
    facility its power needs (`facility_usd_per_mw` of critical IT load) and the energy it draws over its service
    life."""

    software_era_months: Literal[1, 2, 3, 4, 6, 12]  # eras that tile the year
    software_ahead_months: Months
    # what a MW of critical IT load costs to build (buyers score systems on their full cost: price, the facility
    # their power needs, and energy over their service life); USD 100M/MW is ten times any reported build
    facility_usd_per_mw: Annotated[float, Field(ge=0, le=1e8)]
    training_scale_steps: Annotated[list[Annotated[int, Field(gt=1, le=4096)]], Field(min_length=1, max_length=8),
                                    AfterValidator(_increasing)]  # 4096 x a job stays below MAX_GPUS for jobs < 4k


class ReferenceJobs(_Frozen):
    """What buyers ask their performance model about each system (relative to HGX H100)."""

    train: TrainJob
    serve: Annotated[list[ServeJob], Field(min_length=1)]


class Supplier(_Frozen):
    """The vendors: roadmap slips and pricing (the same rules for every vendor), NVIDIA's share of a rack's price,
    and the packaging and memory they share: TSMC's CoWoS wafers and HBM a month in total, split between vendors by
    reserved shares by year (`model.market.foundry`). `owners`: the one buyer of each vendor whose chips are not
    sold to others (Google's TPUs, AWS's Trainium), unless the scenario opens them (`sells_to_others`).
    `software_discount`: the share of its modelled performance a
    buyer counts on from a system whose software stack lags, by year (1 where there is no evidence of a gap)."""

    slip_after: Month
    slip_months: Annotated[list[Months], Field(min_length=1, max_length=MAX_MONTHS)]
    slip_probs: Annotated[list[Fraction], Field(min_length=1, max_length=MAX_MONTHS)]
    launch_premium: Factor
    premium_decay_months: PositiveMonths
    price_decline_per_year: Annotated[float, Field(ge=0, lt=1)]
    attach_revenue_fraction: Factor
    ramp_first_month_fraction: Annotated[float, Field(gt=0, le=1)]
    supply_growth_multiplier: Factor
    order_size_exponent: Annotated[float, Field(ge=0, le=10)]  # pro rata to units**10 is already winner-takes-all
    expected_share_of_capacity: Annotated[float, Field(gt=0, le=1)]
    # share of a month's unused reservations (CoWoS, HBM) another vendor short of its own can use that month
    unused_reservation_transfer_share: Fraction
    # months from a month's CoWoS and HBM to the systems NVIDIA ships and books (test, boards, trays); 0: the same month
    packaging_to_shipment_months: Months = 0
    delay_months: dict[System, Months]
    volume_delay_months: dict[System, Months] = {}
    cowos_wafers_per_month: Annotated[dict[Month, Annotated[float, Field(gt=0, le=10_000_000)]], Field(min_length=1)]
    hbm_tb_per_month: Annotated[dict[Month, Annotated[float, Field(gt=0, le=100_000_000)]], Field(min_length=1)]
    gpus_per_wafer: dict[System, Annotated[float, Field(gt=0, le=1000)]]
    nvidia_share_of_system_price: dict[NvidiaSystem, Annotated[float, Field(gt=0, le=1)]]
    reserved_cowos_share: dict[Vendor, Annotated[dict[Year, Fraction], Field(min_length=1)]] = {}
    reserved_hbm_share: dict[Vendor, Annotated[dict[Year, Fraction], Field(min_length=1)]] = {}
    owners: dict[Vendor, str] = {}
    sells_to_others: list[Vendor] = []  # vendors that sell to every buyer though the catalog says they do not
    on_time: list[System] = []  # systems that ship on their catalog dates (plus `delay_months`): no random slip
    # an owner of custom chips keeps the CoWoS and HBM its vendor reserved for it busy with its own chips first
    # (the reservation is booked ahead and paid for); False: it chooses by value per dollar alone
    owners_fill_reservation: bool = True
    software_discount: dict[System, Annotated[dict[Year, Annotated[float, Field(gt=0, le=1)]],
                                              Field(min_length=1)]] = {}

    def sold_to_others(self, system: str) -> bool:
        """Whether anyone may buy `system` in this scenario (the catalog's flag, or its vendor opened here)."""
        s = SYSTEM_CATALOG()[system]
        return s.sold_to_others or s.vendor in self.sells_to_others

    def discount(self, system: str, year: int) -> float:
        """The share of its modelled performance buyers count on from `system` in `year` (1: no known gap)."""
        table = self.software_discount.get(system)
        return by_year(table, year) if table else 1.0

    def delays_months(self, system: str) -> tuple[int, int]:
        """Months a scenario adds to a system's catalog dates: to its first shipment, and further to its volume
        ramp (0 for a system the tables leave out)."""
        return self.delay_months.get(system, 0), self.volume_delay_months.get(system, 0)


# -- who brings a new generation up first (issue 15): NVIDIA's allocation of launch volume, site readiness for
# liquid cooling, bring-up that grows with size. These replace per-kind integration lags.
class Allocation(_Frozen):
    """How NVIDIA shares a system's scarce output while it ramps (before its volume date): each open order weighs
    (units outstanding)^`supplier.order_size_exponent`, times (1 + `partner_weight`) for a buyer with a public
    strategic relationship with NVIDIA (an equity stake, an investment or a capacity agreement, public from the month
    given in `partners`), times (1 + `order_age_weight_per_month` x the months the order has waited).
    After the volume date only order size counts."""

    partner_weight: Factor
    order_age_weight_per_month: Factor
    partners: dict[str, Month] = {}  # agent -> month its first public tie with NVIDIA began


class BringUp(_Frozen):
    """From delivery to online: a system whose rack needs liquid cooling goes only into space fitted for it (a
    fit-out each buyer decides, with a lead time), and a delivered batch is burnt in and accepted in a time that
    grows with its size."""

    liquid_cooling_above_kw_per_rack: Annotated[float, Field(gt=0, le=10_000)]  # kW per rack (per server below a rack)
    liquid_fitout_months: Months
    days_base: Annotated[float, Field(ge=0, le=MAX_MONTHS * 31)]  # bring-up at most the longest horizon
    days_per_doubling: Annotated[float, Field(ge=0, le=MAX_MONTHS * 31)]


class KindBase(_Frozen):
    """Behaviour and physics shared by every buyer of a kind."""

    start_site_mw: SiteMW
    budget_carry_months: PositiveMonths
    capex_multiplier: Factor
    ai_systems_share: Fraction
    capex_growth_after_guidance: Growth
    pue: Annotated[float, Field(ge=1, le=3)]
    construction_lead_months: Months
    construction_delay_max_months: Months
    max_site_mw: SiteMW | None = None  # a cap on one site; None: campuses grow phase by phase (`PowerOutlook`)
    min_build_mw: MW
    power_buffer_months: Months
    training_weight: Fraction
    preorder_lookahead_months: Months
    wait_tau_months: PositiveMonths
    gpu_lifetime_years: Years
    fleet_start_age_months: Months
    power_unconstrained: bool = False  # many small sites whose power is not modelled (the rest of the market)


class ProviderInvestment(_Frozen):
    """How a provider invests against its contract backlog: the share of its compute that can serve contracts
    (the rest runs its own products and its customers by the hour); compute contracted to start within its
    pre-order horizon, the liquid fit-out and `backlog_margin_months` that this share does not cover is funded by
    the customers' commitments, when the gap is worth at least `min_funding_usd_bn`. After its capex guidance ends,
    a provider whose compute is used beyond the target utilisation raises money for more, up to
    `demand_capex_max_share` of the year's planned capex."""

    contract_capacity_share: Fraction
    backlog_margin_months: Months
    min_funding_usd_bn: UsdBn
    demand_capex_max_share: Factor  # after guidance: money raised for demand a year, over the year's planned capex


class HyperscalerKind(KindBase, ProviderInvestment):
    pass


class NeocloudKind(KindBase, ProviderInvestment):
    """Neoclouds fund part of their capex with debt raised against their contract backlog."""

    equity_funded_share: Fraction
    financing_lag_months: Months
    debt_multiple_of_backlog: Factor


class LabKind(KindBase):
    """Labs buy compute with revenue, mostly under contracts with providers."""

    revenue_growth_after: Growth
    compute_spend_per_revenue: Factor
    contracting_interval_months: Annotated[int, Field(gt=0, le=MAX_MONTHS)]
    contract_years: Years
    min_contract_usd_bn: UsdBn


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
    power_mw_start: MW = 0.0
    power_mw_under_construction: MW = 0.0
    power_add_mw_per_year: MW | dict[Year, MW] = 0.0
    fleet_start: dict[System, FleetGpus] = {}

    def systems_share(self, kind: KindBase) -> float:
        """Share of capex that goes to NVIDIA systems: this buyer's own, else its kind's."""
        return kind.ai_systems_share if self.ai_systems_share is None else self.ai_systems_share


class Provider(Owner):
    """A hyperscaler or a neocloud."""


class Lab(Owner):
    hosts: list[str] = []
    frontier_flop_factor: PositiveFactor = 1.0
    revenue_usd_bn: ByYear = {}
    nvidia_share_of_compute: Fraction = 1.0


class RestOfMarket(_Frozen):
    """Everyone else, as one buyer with its own NVIDIA spending by year (sourced by part, then growing)."""

    capex_usd_bn: Annotated[ByYear, Field(min_length=1)]
    fleet_start: dict[System, FleetGpus] = {}
    export_market: Annotated[str, AfterValidator(_export_market)] | None = None
    """A market under export controls (e.g. "China"): the buyer may order only the catalog's systems made for it
    (`export_market` there); None: any system sold to others."""


class Contract(_Frozen):
    """An announced capacity contract: its value, or its size in GPUs of a named system (then valued at the
    provider's rental price when signed); `system`: what it runs on (default: the newest system shipping)."""

    lab: str
    provider: str
    date: Month
    start: Month | None = None
    value_usd_bn: Annotated[float, Field(gt=0, le=MAX_USD_BN)] | None = None
    gpus: Gpus | None = None
    system: System | None = None
    duration_years: Years


class Scenario(_Frozen):
    """A whole scenario, validated. `tree` is the plain parameter tree it was validated from (for manifests)."""

    start: Month
    end: Month
    at_scale_gpus: Gpus
    transit_months: Months
    fabric_max_gpus: Gpus
    reference_frontier_flop: Flop
    power_lead_time_multiplier: PositiveFactor
    choice_sharpness: PositiveFactor
    choice_min_weight: Annotated[float, Field(ge=0, lt=1)]
    reference_jobs: ReferenceJobs
    valuation: Valuation
    allocation: Allocation
    bring_up: BringUp
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
