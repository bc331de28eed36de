"""A buyer's money: a budget that accrues month by month from a plan, financing beyond it, and what is committed to
orders and paid on shipment."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from model.scenario.schema import by_year


class BudgetPlan(Protocol):
    """Where a buyer's NVIDIA-system money comes from, by month of a calendar year."""

    def monthly_budget_usd(self, year: int) -> float:
        """What the buyer funds itself in a month of `year`."""
        ...


@dataclass
class CapexPlan:
    """Capex by calendar year (actuals and guidance, growing after the last year given) x the share that goes to
    NVIDIA systems x a scenario multiplier. `own_share` is the part the buyer funds itself (neoclouds borrow the
    rest against their contracts)."""

    capex_usd_bn: dict[str, float]
    growth_after_guidance: float
    systems_share: float
    multiplier: float
    own_share: float = 1.0

    def __post_init__(self) -> None:
        self._budget_by_year: dict[int, float] = {}

    def annual_capex_usd(self, year: int) -> float:
        return by_year(self.capex_usd_bn, year, self.growth_after_guidance) * 1e9

    def monthly_budget_usd(self, year: int) -> float:
        if year not in self._budget_by_year:
            self._budget_by_year[year] = (self.annual_capex_usd(year) * self.systems_share * self.own_share
                                          * self.multiplier / 12)
        return self._budget_by_year[year]

    def monthly_spending_usd(self, year: int) -> float:
        """The month's NVIDIA-system spending in the plan, funded by the buyer or by debt alike."""
        return self.annual_capex_usd(year) * self.systems_share * self.multiplier / 12


@dataclass
class ShareOfDemand:
    """Spending that is a share of all NVIDIA demand: `share` of the total, the rest being `named_spending_usd`
    (what every named buyer spends in a month of a year)."""

    share: float | dict[str, float]
    multiplier: float
    named_spending_usd: Callable[[int], float]

    def __post_init__(self) -> None:
        self._budget_by_year: dict[int, float] = {}

    def monthly_budget_usd(self, year: int) -> float:
        if year not in self._budget_by_year:
            share = by_year(self.share, year)
            self._budget_by_year[year] = self.named_spending_usd(year) * share / (1 - share) * self.multiplier
        return self._budget_by_year[year]


@dataclass(frozen=True)
class DebtTerms:
    """Debt raised against contract backlog: a multiple of the backlog of contracts signed at least `lag_months`
    ago (debt closes months after the contract); once raised, it stays raised."""

    multiple_of_backlog: float
    lag_months: int


class Treasury:
    """Budget, financing, commitments and payments of one buyer. Budget not committed beyond `carry_months` of
    spending lapses (guidance is cut, as CoreWeave's was in 2025)."""

    def __init__(self, plan: BudgetPlan, carry_months: float, debt: DebtTerms | None = None):
        self.plan = plan
        self.carry_months = carry_months
        self.debt = debt
        self.budget_cum_usd = 0.0
        self.budget_lapsed_usd = 0.0
        self.debt_usd = 0.0  # borrowed against contract backlog
        self.contract_funding_usd = 0.0  # customers' money for contracts delivered on schedule
        self.committed_usd = 0.0  # value of every order placed
        self.capex_usd = 0.0  # paid on shipment

    def monthly_budget_usd(self, year: int) -> float:
        return self.plan.monthly_budget_usd(year)

    def accrue(self, year: int, backlog_usd: Callable[[int], float]) -> None:
        """Add the month's budget, let what cannot be placed lapse, and borrow against the backlog of contracts
        (`backlog_usd(lag_months)`: value yet to serve of contracts signed at least that long ago)."""
        monthly = self.plan.monthly_budget_usd(year)
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
        """Money beyond the budget: debt plus contract funding."""
        return self.debt_usd + self.contract_funding_usd

    def cash_usd(self) -> float:
        return self.budget_cum_usd + self.financing_usd - self.committed_usd

    def commit(self, usd: float) -> None:
        self.committed_usd += usd

    def pay(self, usd: float) -> None:
        self.capex_usd += usd

    def fund(self, usd: float) -> None:
        """A customer's commitment that pays for systems (project finance, prepayment): it does not lapse."""
        self.contract_funding_usd += usd
