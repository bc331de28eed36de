"""A buyer's money: a budget that accrues month by month from a plan, financing beyond it, and what is committed to
orders and paid on shipment."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from model.scenario.schema import by_year


class BudgetPlan(Protocol):
    """Where a buyer's NVIDIA-system money comes from, by calendar month."""

    def monthly_budget_usd(self, year: int, month: int = 7) -> float:
        """What the buyer funds itself in `month` (1-12) of `year`."""
        ...


def within_year_weights(annual_usd: Callable[[int], float], year: int, first_year: int | None = None) -> list[float]:
    """How a year's total spreads over its twelve months when spending grows continuously rather than in annual
    steps: the monthly rate is geometric between the middles of consecutive years (each year's rate there being
    its total / 12), then scaled so the twelve months sum to the year's total (the sourced figure is kept). Before
    `first_year` (the first year with a figure) the growth of the first two years is carried backwards."""
    totals = [max(annual_usd(y), 1e-9) for y in (year - 1, year, year + 1)]
    if first_year is not None and year - 1 < first_year:  # no figure before the first: the same growth backwards
        totals[0] = totals[1] ** 2 / totals[2]
    before, here, after = (math.log(v / 12) for v in totals)
    rates = []
    for m in range(12):
        x = m + 0.5 - 6  # months from the year's middle (month middles)
        rates.append(math.exp(here + (here - before if x < 0 else after - here) * x / 12))
    total = sum(rates)
    return [r / total for r in rates]


@dataclass
class CapexPlan:
    """Capex by calendar year (actuals and guidance, growing after the last year given) x the share that goes to
    NVIDIA systems x a scenario multiplier, spent along a path that grows through the year (`within_year_weights`:
    buyers' quarterly capex rose through 2024-2025 rather than stepping each January). `own_share` is the part the
    buyer funds itself (neoclouds borrow the rest against their contracts)."""

    capex_usd_bn: dict[str, float]
    growth_after_guidance: float
    systems_share: float
    multiplier: float
    own_share: float = 1.0

    def __post_init__(self) -> None:
        self._budget_by_month: dict[tuple[int, int], float] = {}

    def annual_capex_usd(self, year: int) -> float:
        return by_year(self.capex_usd_bn, year, self.growth_after_guidance) * 1e9

    def annual_budget_usd(self, year: int) -> float:
        """The year's budget for NVIDIA systems (what the months of `monthly_budget_usd` add up to)."""
        return self.annual_capex_usd(year) * self.systems_share * self.own_share * self.multiplier

    def monthly_budget_usd(self, year: int, month: int = 7) -> float:
        key = (year, month)
        if key not in self._budget_by_month:
            first = min((int(y) for y in self.capex_usd_bn), default=None)
            weights = within_year_weights(self.annual_capex_usd, year, first)
            annual = self.annual_budget_usd(year)
            for m in range(12):
                self._budget_by_month[(year, m + 1)] = annual * float(weights[m])
        return self._budget_by_month[key]


@dataclass(frozen=True)
class DebtTerms:
    """Debt raised against contract backlog: a multiple of the backlog of contracts signed at least `lag_months`
    ago (debt closes months after the contract); once raised, it stays raised."""

    multiple_of_backlog: float
    lag_months: int


class Treasury:
    """Budget, financing, commitments and payments of one buyer. Budget not committed beyond `carry_months` of
    spending lapses (guidance is cut, as CoreWeave's was in 2025).

    Orders are paid when they ship, so an order still waiting at NVIDIA is funded from the budget of the months
    before it ships: up to `advance_usd` (the budget of the buyer's pre-order horizon, set each month) of the unpaid
    orders does not count against the cash on hand. A buyer that pre-orders the next generation keeps buying what
    ships now (hyperscalers bought Hopper through 2024 with Blackwell on order)."""

    def __init__(self, plan: BudgetPlan, carry_months: float, debt: DebtTerms | None = None):
        self.plan = plan
        self.carry_months = carry_months
        self.debt = debt
        self.budget_cum_usd = 0.0
        self.budget_lapsed_usd = 0.0
        self.debt_usd = 0.0  # borrowed against contract backlog
        self.contract_funding_usd = 0.0  # customers' money for contracts delivered on schedule
        self.demand_funding_usd = 0.0  # money beyond the plan raised for compute that demand needs (providers)
        self.committed_usd = 0.0  # value of every order placed
        self.capex_usd = 0.0  # paid on shipment
        self.advance_usd = 0.0  # budget of the coming months that orders waiting at NVIDIA may draw on
        self.advance_peak_usd = 0.0  # the most ever drawn on: commitments never exceed budget + financing + this

    def monthly_budget_usd(self, year: int, month: int = 7) -> float:
        return self.plan.monthly_budget_usd(year, month)

    def accrue(self, year: int, backlog_usd: Callable[[int], float], month: int = 7,
               advance_usd: float = 0.0) -> None:
        """Add the month's budget, let what cannot be placed lapse, and borrow against the backlog of contracts
        (`backlog_usd(lag_months)`: value yet to serve of contracts signed at least that long ago); `advance_usd`:
        the budget of the months ahead that unpaid orders may draw on."""
        self.advance_usd = advance_usd
        self.advance_peak_usd = max(self.advance_peak_usd, advance_usd)
        monthly = self.plan.monthly_budget_usd(year, month)
        self.budget_cum_usd += monthly
        carry = self.carry_months * monthly
        excess = self.budget_cum_usd + self.financing_usd - self.committed_usd - carry
        excess = min(excess, self.budget_cum_usd)
        if excess > 0:
            self.budget_cum_usd -= excess
            self.budget_lapsed_usd += excess
        if self.debt is not None and self.debt.multiple_of_backlog:
            self.debt_usd = max(self.debt_usd, self.debt.multiple_of_backlog * backlog_usd(self.debt.lag_months))

    @property
    def financing_usd(self) -> float:
        """Money beyond the budget: debt, contract funding and money raised for demand."""
        return self.debt_usd + self.contract_funding_usd + self.demand_funding_usd

    @property
    def unpaid_usd(self) -> float:
        """Orders placed and not yet shipped (so not yet paid)."""
        return max(0.0, self.committed_usd - self.capex_usd)

    def cash_usd(self) -> float:
        """What can be committed now: budget and financing not committed, plus the part of the unpaid orders the
        coming months' budget will pay for."""
        return (self.budget_cum_usd + self.financing_usd - self.committed_usd
                + min(self.unpaid_usd, self.advance_usd))

    def commit(self, usd: float) -> None:
        self.committed_usd += usd

    def pay(self, usd: float) -> None:
        self.capex_usd += usd

    def fund(self, usd: float) -> None:
        """A customer's commitment that pays for systems (project finance, prepayment): it does not lapse."""
        self.contract_funding_usd += usd

    def raise_for_demand(self, usd: float) -> None:
        """Money a provider raises beyond its plan (cash flow, debt) for compute its market needs: it does not
        lapse."""
        self.demand_funding_usd += usd


@dataclass
class FundedBlock:
    """Compute (H100e) a provider's customers paid for in one month, at the price per H100e of then. It is the next
    `h100e` the provider orders after `mark_h100e` (its cumulative H100e ordered when the block was funded,
    after earlier blocks), and goes online in order."""

    h100e: float
    usd_per_h100e: float
    mark_h100e: float


@dataclass
class ContractFunding:
    """Compute a provider's customers have funded under their contracts (`Provider.invest_against_backlog`),
    counted once wherever it is: money not yet ordered, systems on order or on their way, or GPUs online. Money
    raised for contracts is spent first (it is why it was raised), so a block is the next H100e ordered after it
    was funded, and orders go online in the order they were placed. A block leaves the ledger once the contracts
    it was raised for are over (the oldest first, as contracted compute falls)."""

    blocks: list[FundedBlock] = field(default_factory=list)

    def fund(self, h100e: float, usd_per_h100e: float, ordered_h100e: float) -> None:
        """A gap of `h100e` funded now; `ordered_h100e`: the provider's cumulative H100e ordered so far."""
        mark = max(ordered_h100e, self.next_mark_h100e)
        self.blocks.append(FundedBlock(h100e, usd_per_h100e, mark))

    @property
    def next_mark_h100e(self) -> float:
        """Where a new block would queue: after the last block funded."""
        return max((b.mark_h100e + b.h100e for b in self.blocks), default=0.0)

    def release_beyond(self, contracted_h100e: float) -> None:
        """Keep at most `contracted_h100e` funded (contracts not over), dropping the oldest blocks first."""
        excess = sum(b.h100e for b in self.blocks) - contracted_h100e
        while excess > 1e-9 and self.blocks:
            oldest = self.blocks[0]
            if oldest.h100e <= excess:
                self.blocks.pop(0)
                excess -= oldest.h100e
            else:
                self.blocks[0] = FundedBlock(oldest.h100e - excess, oldest.usd_per_h100e, oldest.mark_h100e + excess)
                excess = 0.0

    def split(self, ordered_h100e: float, online_from_orders_h100e: float) -> tuple[float, float, float]:
        """(USD not yet ordered, H100e ordered and not yet online, H100e online) of the funded compute, given the
        provider's cumulative H100e ordered and cumulative H100e of its orders that went online."""
        cash_usd = pipeline = online = 0.0
        for b in self.blocks:
            ordered = min(b.h100e, max(0.0, ordered_h100e - b.mark_h100e))
            up = min(ordered, max(0.0, online_from_orders_h100e - b.mark_h100e))
            cash_usd += (b.h100e - ordered) * b.usd_per_h100e
            pipeline += ordered - up
            online += up
        return cash_usd, pipeline, online

    @property
    def h100e(self) -> float:
        return sum(b.h100e for b in self.blocks)


def split_ledgers(ledgers: tuple[ContractFunding, ...], ordered_h100e: float,
                  online_from_orders_h100e: float) -> tuple[float, float, float]:
    """`ContractFunding.split` of several ledgers whose blocks are spent one after another (each ledger's blocks
    queue behind those funded earlier in any of them): (USD not yet ordered, H100e on the way, H100e online)."""
    blocks = sorted((b for ledger in ledgers for b in ledger.blocks), key=lambda b: b.mark_h100e)
    return ContractFunding(blocks).split(ordered_h100e, online_from_orders_h100e)
