"""The capability table: what one GPU of each system delivers on the reference jobs, and how long a frontier run
takes on a cluster, as plain numbers the market looks up.

The table is filled by `model.capability.build` from the performance model; the market only reads it. Frontier
run days are kept as a grid that is filled on demand (each cell one question to the performance model) and
memoised, so a run pays only for the cells it uses and later runs in the process pay nothing; a cell's value does
not depend on which questions came first.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class SystemValue:
    """Throughput per GPU of a system on the reference jobs, relative to one GPU of HGX H100 on the same job."""

    training: float
    serving: tuple[float, ...]  # one per reference serving job, in the scenario's order
    # the reference training job on larger clusters (`CapabilityTable.training_sizes_gpus`, the job's own size
    # first), each relative to HGX H100 on as many GPUs
    training_at_scale: tuple[float, ...] = ()


FrontierOracle = Callable[[str, int, float], float | None]  # (system, gpus, flop) -> days, None if it cannot run
FLOP_STEPS_PER_DOUBLING = 0.5  # frontier-run FLOP grid: every factor of 4 (the model's size doubles)
MAX_ASKED_FLOP = 1e32
"""The largest run the performance model is asked about (10**6 x today's largest; a compute-optimal model of
~10**15 parameters). A larger run keeps that run's throughput, so its days grow in proportion to its FLOP: the work
per question stays bounded whatever a trend asks for (the scenario schema's bound on FLOP is the same)."""


class _Column:
    """Best throughput (FLOP per day) of a frontier run of one size on clusters of 2**i GPUs of one system, i = 0
    .. top, each the best over that size and every smaller one (a lab may leave part of a cluster idle when that
    is faster). Smaller sizes are asked about only while they could do better: a cluster of n GPUs cannot beat n
    GPUs at peak (`peak_per_gpu`, FLOP per day), so once the best so far exceeds that, nothing smaller matters.
    Each value is the exact best over all smaller sizes, whatever the order of the questions."""

    def __init__(self, oracle: FrontierOracle, system: str, flop: float, top: int, peak_per_gpu: float):
        self.oracle, self.system, self.flop, self.top = oracle, system, flop, top
        self.peak_per_gpu = peak_per_gpu
        self.raw: dict[int, float] = {}  # throughput on exactly 2**i GPUs (0: does not fit)
        self.best: dict[int, float] = {}  # best on 2**i GPUs or fewer

    def _throughput(self, i: int) -> float:
        if i not in self.raw:
            days = self.oracle(self.system, 1 << i, self.flop)
            self.raw[i] = 0.0 if days is None or days <= 0 else self.flop / days
        return self.raw[i]

    def at(self, i: int) -> float:
        """Best throughput on 2**i GPUs or fewer (0: the run fits on none)."""
        if i not in self.best:
            most = self._throughput(i)
            j = i - 1
            while j >= 0:
                if j in self.best:
                    most = max(most, self.best[j])
                    break
                if most > 0 and (1 << j) * self.peak_per_gpu <= most:
                    break  # neither this size nor any smaller one can do better
                most = max(most, self._throughput(j))
                j -= 1
            self.best[i] = most
        return self.best[i]

    def between(self, x: float) -> float:
        """Throughput on 2**x GPUs: power-law (log-log) between the grid sizes around it; 0 below the smallest
        feasible grid size."""
        i = min(math.floor(x), self.top)
        low = self.at(i)
        if x <= i or i == self.top:
            return low
        high = self.at(i + 1)
        return 0.0 if low <= 0 else low * (high / low) ** (x - i)


@dataclass
class FrontierDays:
    """Days to train a frontier run of a given FLOP on one cluster of a given number of GPUs of a system.

    `oracle(system, gpus, flop)` is asked on a grid: clusters of 2**i GPUs up to the largest fabric, runs of
    `reference_flop` x 4**j FLOP; `peak_flop_per_gpu_day(system)` bounds what one GPU can do (it saves asking
    about cluster sizes that cannot matter). Between cluster sizes throughput follows a power law, and each size
    gets the best of itself and every smaller size, so days never increase with GPUs (nor with faster GPUs);
    between run sizes throughput is interpolated geometrically, and a run counts as feasible where both
    neighbouring run sizes are.

    Equal days on clusters of different sizes therefore mean they are all past the size beyond which the run
    trains no faster (the oracle's answer: for the performance model, failures that interrupt a synchronous job
    about as often as it restarts), each using that many GPUs; nothing in the table caps it but `max_gpus`. The
    best size is found on the grid only, so a run whose best lies between two grid sizes is reported at the better
    of the two (a few per cent slower than the size between)."""

    oracle: FrontierOracle
    reference_flop: float
    max_gpus: int
    peak_flop_per_gpu_day: Callable[[str], float] = lambda system: math.inf  # an upper bound (dense peak)
    columns: dict[tuple[str, int], _Column] = field(default_factory=dict)

    @property
    def top(self) -> int:
        return max(0, math.ceil(math.log2(self.max_gpus)))

    def column(self, system: str, j: int) -> _Column:
        key = (system, j)
        if key not in self.columns:
            flop = self.reference_flop * 2.0 ** (j / FLOP_STEPS_PER_DOUBLING)
            self.columns[key] = _Column(self.oracle, system, flop, self.top, self.peak_flop_per_gpu_day(system))
        return self.columns[key]

    def days(self, system: str, gpus: int, flop: float) -> float | None:
        """Days for a run of `flop` on `gpus` GPUs of `system`; None if it does not fit."""
        if gpus < 1 or flop <= 0:
            return None
        x = min(math.log2(gpus), float(self.top))
        y = math.log2(min(flop, MAX_ASKED_FLOP) / self.reference_flop) * FLOP_STEPS_PER_DOUBLING
        j = math.floor(y)
        w = y - j
        throughput = self.column(system, j).between(x)
        if w > 1e-9 and throughput > 0:
            upper = self.column(system, j + 1).between(x)
            throughput = math.exp((1 - w) * math.log(throughput) + w * math.log(upper)) if upper > 0 else 0.0
        return flop / throughput if throughput > 0 else None

    def cells_asked(self) -> int:
        """How many grid cells the oracle has been asked for (cost accounting)."""
        return sum(len(c.raw) for c in self.columns.values())


SystemValuer = Callable[[str, str | None], SystemValue]  # (system, software era "YYYY-MM" or None) -> value


def software_era(month: str | None, era_months: int) -> str | None:
    """The software era a decision in `month` ("YYYY-MM...") falls in: the first month of its era, eras of
    `era_months` tiling the year from January (scenario `valuation.software_era_months`; None: mature)."""
    if month is None:
        return None
    year, mon = int(month[:4]), int(month[5:7])
    return f"{year:04d}-{(mon - 1) // era_months * era_months + 1:02d}"


@dataclass(frozen=True)
class CapabilityTable:
    """Per system: value per GPU on the reference jobs (relative to HGX H100) in each software era, and
    frontier-run days by cluster.

    Values are asked of the performance model on first use and kept (`valuer(system, era)`); a reference serving
    job counts only from the month its workload was public (`serve_since`), so a buyer in 2024 does not value a
    system on DeepSeek-R1 traffic."""

    valuer: SystemValuer
    systems: tuple[str, ...]
    serve_weights: tuple[float, ...]  # weights of the reference serving jobs
    serve_since: tuple[str | None, ...]  # first month ("YYYY-MM") each serving job counts; None: always
    frontier: FrontierDays
    era_months: int  # months of one software era (`software_era`)
    training_sizes_gpus: tuple[int, ...] = ()  # cluster sizes of `SystemValue.training_at_scale`
    # (system, era) -> how many times longer training takes on that era's software than on mature software
    software_slowdown: Callable[[str, str | None], float] = lambda system, era: 1.0
    _values: dict[tuple[str, str | None], SystemValue] = field(default_factory=dict, compare=False, repr=False)
    _slowdowns: dict[tuple[str, str | None], float] = field(default_factory=dict, compare=False, repr=False)

    def value(self, system: str, month: str | None = None) -> SystemValue:
        """The system's value on the software of `month`'s era (None: mature software)."""
        key = (system, software_era(month, self.era_months))
        if key not in self._values:
            self._values[key] = self.valuer(*key)
        return self._values[key]

    def training_ratio(self, system: str) -> float:
        """Training throughput per GPU on the reference training job with mature software, relative to HGX
        H100 (how clusters of mixed systems are labelled)."""
        return self.value(system).training

    def training_ratio_at(self, value: SystemValue, cluster_gpus: int | None) -> float:
        """The training ratio on a cluster of `cluster_gpus` GPUs: geometric between the sizes asked (the job's own
        size below the first, the largest above the last); the reference job's when no size is given."""
        sizes, ratios = self.training_sizes_gpus, value.training_at_scale
        if cluster_gpus is None or not ratios or cluster_gpus <= sizes[0]:
            return value.training
        if cluster_gpus >= sizes[-1]:
            return ratios[-1]
        i = next(j for j in range(1, len(sizes)) if cluster_gpus <= sizes[j])
        w = math.log(cluster_gpus / sizes[i - 1]) / math.log(sizes[i] / sizes[i - 1])
        low, high = ratios[i - 1], ratios[i]
        return low * (high / low) ** w if low > 0 and high > 0 else (1 - w) * low + w * high

    def value_per_gpu(self, system: str, training_weight: float, month: str | None = None,
                      software_month: str | None = None, cluster_gpus: int | None = None) -> float:
        """How many HGX H100 GPUs one GPU of `system` replaces on a fixed mix of work: the reference training job
        (share `training_weight` of the H100 time; on a cluster of `cluster_gpus` when given, the buyer's own scale)
        and the serving jobs public by `month` (the rest, split by their own weights; all of them when `month` is
        None), on the software of `software_month`'s era (default: `month`'s). With no serving job public yet,
        training alone.

        The mix is fixed work, so the system's time on it is the sum of each job's share over its speed-up, and the
        value is the weighted harmonic mean of the speed-ups (Smith, "Characterizing computer performance with a
        single number", CACM 31(10), 1988: the mean of rates that matches total time on equal work). An arithmetic
        mean would let one job with a large speed-up stand for the whole mix; a system that cannot run one of the
        jobs (speed-up 0) is worth nothing on the mix."""
        value = self.value(system, software_month or month)
        training = self.training_ratio_at(value, cluster_gpus)
        live = [(w, r) for w, r, since in zip(self.serve_weights, value.serving, self.serve_since, strict=True)
                if since is None or month is None or since <= month[:7]]
        total = sum(w for w, _ in live)
        shares = [(training_weight if total > 0 else 1.0, training)]
        shares += [((1 - training_weight) * w / total, r) for w, r in live]
        time_per_h100_work = 0.0
        for share, ratio in shares:
            if share <= 0:
                continue
            if ratio <= 0:
                return 0.0
            time_per_h100_work += share / ratio
        return 1.0 / time_per_h100_work if time_per_h100_work > 0 else 0.0

    def software_era(self, month: str | None) -> str | None:
        """The software era of `month` ("YYYY-MM...", None: mature software)."""
        return software_era(month, self.era_months)

    def slowdown(self, system: str, month: str | None) -> float:
        """How many times longer training on `system` takes on the software of `month`'s era than on mature
        software (1 for None), as the performance model says for the reference training job."""
        key = (system, self.software_era(month))
        if key[1] is None:
            return 1.0
        if key not in self._slowdowns:
            self._slowdowns[key] = self.software_slowdown(*key)
        return self._slowdowns[key]

    def frontier_run_days(self, system: str, gpus: int, flop: float, month: str | None = None) -> float | None:
        """Days to train a frontier run of `flop` on one cluster of `gpus` GPUs of `system` (None if it cannot), on
        the software of `month`'s era (None: mature): the days on mature software (`FrontierDays`) x the era's
        slowdown on the reference training job."""
        days = self.frontier.days(system, gpus, flop)
        return None if days is None else days * self.slowdown(system, month)

    def reference_run_days(self, system: str, gpus: int, month: str | None = None) -> float | None:
        """Days for the scenario's reference frontier run on one cluster, on the software of `month`'s era."""
        return self.frontier_run_days(system, gpus, self.frontier.reference_flop, month)
