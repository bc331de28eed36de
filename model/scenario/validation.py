"""Validation of a resolved scenario tree into a typed `Scenario`, with one-line errors.

The first problem becomes one `InputError` line naming the file (the scenario file in the `extends` chain that sets
the field, or `--set`), the dotted field, the value and what was expected, e.g.

    scenarios/x.toml: hyperscaler.microsoft.capex_usd_bn.2025: expected a number >= 0, got 'abc'

Types and ranges are the pydantic models of `model.scenario.schema` (strict: a string is not a number); relations
between fields (dates in order, probabilities summing to one, contracts naming known agents, reference jobs HGX
H100 can run) are checked after.
"""

from __future__ import annotations

import copy
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from model.errors import InputError, nearest
from model.hardware.systems import NVIDIA_SYSTEM_KEYS, SYSTEM_KEYS, systems
from model.performance.serving import serve_estimate
from model.performance.training import train_estimate
from model.scenario.schema import BASELINE_SYSTEM, ReferenceJobs, Scenario, by_year


class Problem(Exception):
    """The first problem found in a tree: the dotted field and what is wrong with it (no file yet)."""

    def __init__(self, path: str, text: str):
        super().__init__(f"{path}: {text}")
        self.path, self.text = path, text


# -- pydantic errors as one line ------------------------------------------------------------------------------
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


def _problem_of(error: dict) -> Problem:
    loc = tuple(error["loc"])
    path = _dotted(loc)
    if error["type"] == "extra_forbidden":
        return Problem(path, f"unknown key{nearest(str(loc[-1]), _fields_at(loc))}")
    if error["type"] == "missing":
        return Problem(path, "missing; expected a value here")
    value = error.get("input")
    hint = ""
    if error["type"] == "literal_error" and isinstance(value, str):
        hint = nearest(value, [s.strip("' ") for s in str(error.get("ctx", {}).get("expected", "")).split(",")])
    if error["type"] == "literal_error" and "[key]" in loc:
        return Problem(path, f"unknown system key; expected one of the catalog{hint}")
    return Problem(path, f"expected {_expectation(error)}, got {value!r}{hint}")


# -- relations between fields -------------------------------------------------------------------------------
def _fail(path: str, text: str) -> None:
    raise Problem(path, text)


def _check_relations(s: Scenario, fail: Callable[[str, str], None] = _fail) -> None:
    if s.end < s.start:
        fail("end", f"expected a month on or after start ({s.start}), got {s.end!r}")
    earliest = min(system.first_shipment for system in systems().values())
    if s.start < earliest:
        fail("start", f"expected a month on or after {earliest} (the first system's first shipment), "
                      f"got {s.start!r}")
    _check_reference_jobs(s.reference_jobs, fail)
    sup = s.supplier
    if len(sup.slip_probs) != len(sup.slip_months):
        fail("supplier.slip_probs", f"expected {len(sup.slip_months)} probabilities (one per slip_months entry), "
                                    f"got {sup.slip_probs!r}")
    if abs(sum(sup.slip_probs) - 1.0) > 1e-6:
        fail("supplier.slip_probs", f"expected probabilities summing to 1, got {sup.slip_probs!r}")
    for table, keys in (("gpus_per_wafer", SYSTEM_KEYS), ("nvidia_share_of_system_price", NVIDIA_SYSTEM_KEYS)):
        missing = [k for k in keys if k not in getattr(sup, table)]
        if missing:
            fail(f"supplier.{table}", f"expected a value for every system, missing {', '.join(missing)}")
    for table in ("reserved_cowos_share", "reserved_hbm_share"):
        shares = getattr(sup, table)
        for year in sorted({y for by_vendor in shares.values() for y in by_vendor}):
            total = sum(by_year(by_vendor, int(year)) for by_vendor in shares.values())
            if total > 1 + 1e-9:
                fail(f"supplier.{table}", f"expected the vendors' shares to sum to at most 1 in every year, got "
                                          f"{total:g} in {year}")
    for path, series in (("supplier.cowos_wafers_per_month", sup.cowos_wafers_per_month),
                         ("supplier.hbm_tb_per_month", sup.hbm_tb_per_month)):
        dates = list(series)
        for a, b in zip(dates, dates[1:], strict=False):
            if b <= a:
                fail(f"{path}.{b}", f"expected dates in increasing order, got {b!r} after {a!r}")
    _check_fleets_fit(s, fail)
    providers = set(s.hyperscaler) | set(s.neocloud)
    agents = providers | set(s.lab) | set(s.other)
    seen: set[str] = set()
    for kind, name in s.named_agents():
        if name in seen:
            fail(f"{kind}.{name}", f"expected agent names to be unique across kinds, got a second {name!r}")
        seen.add(name)
    for name, lab in s.lab.items():
        for i, host in enumerate(lab.hosts):
            if host not in providers:
                fail(f"lab.{name}.hosts.{i}", f"expected a hyperscaler or neocloud, got {host!r}"
                                              f"{nearest(host, sorted(providers))}")
    for name in s.allocation.partners:
        if name not in agents or name in s.other:
            fail(f"allocation.partners.{name}", f"expected a named agent, got {name!r}"
                                                f"{nearest(name, sorted(agents - set(s.other)))}")
    for i, name in enumerate(s.deliver_contracts_of):
        if name not in agents:
            fail(f"deliver_contracts_of.{i}", f"expected an agent, got {name!r}{nearest(name, sorted(agents))}")
    for vendor, name in sup.owners.items():
        if name not in agents or name in s.other:
            fail(f"supplier.owners.{vendor}", f"expected a named agent, got {name!r}"
                                              f"{nearest(name, sorted(agents - set(s.other)))}")
    for kind, name in s.named_agents():
        for k in getattr(s, kind)[name].fleet_start:
            vendor = systems()[k].vendor
            if not sup.sold_to_others(k) and sup.owners.get(vendor) != name:
                fail(f"{kind}.{name}.fleet_start.{k}", f"expected systems sold to others or its own vendor's, got "
                                                       f"{k!r} ({vendor} sells it to {sup.owners.get(vendor)} only)")
    for i, c in enumerate(s.contracts):
        if (c.value_usd_bn is None) == (c.gpus is None):
            fail(f"contracts.{i}", "expected one of value_usd_bn or gpus")
        if c.gpus is not None and c.system is None:
            fail(f"contracts.{i}.system", "expected the system the contract's GPUs are of (gpus is given)")
        if c.system is not None and not sup.sold_to_others(c.system):
            vendor = systems()[c.system].vendor
            if sup.owners.get(vendor) != c.provider:
                fail(f"contracts.{i}.system", f"expected a system the provider can have, got {c.system!r} "
                                              f"({vendor} sells it to {sup.owners.get(vendor)} only)")
        if c.provider not in agents or c.provider in s.other:
            fail(f"contracts.{i}.provider", f"expected a provider agent, got {c.provider!r}"
                                            f"{nearest(c.provider, sorted(providers))}")
        if c.lab not in agents:
            fail(f"contracts.{i}.lab", f"expected an agent, got {c.lab!r}{nearest(c.lab, sorted(agents))}")
        if c.start is not None and c.start < c.date:
            fail(f"contracts.{i}.start", f"expected a month on or after its date ({c.date}), got {c.start!r}")


def _check_fleets_fit(s: Scenario, fail: Callable[[str, str], None]) -> None:
    """A buyer's starting fleet is online from the start, so it must fit in the power it starts with (facility MW:
    the systems' power per GPU x the kind's PUE); a fleet larger than that would be cut without a word."""
    catalog = systems()
    for kind, name in s.named_agents():
        if kind == "other":
            continue  # the rest of the market: power not modelled
        owner = getattr(s, kind)[name]
        terms = getattr(s.kinds, kind)
        if terms.power_unconstrained or not owner.fleet_start:
            continue
        need_mw = sum(gpus * catalog[k].system_power_kw_per_gpu * terms.pue / 1000.0
                      for k, gpus in owner.fleet_start.items())
        if need_mw > owner.power_mw_start * (1 + 1e-9):
            shown = ", ".join(f"{k} = {gpus:,}" for k, gpus in owner.fleet_start.items())
            fail(f"{kind}.{name}.fleet_start", f"expected a starting fleet that fits in power_mw_start "
                                               f"({owner.power_mw_start:,.0f} MW), got {shown}, which needs "
                                               f"{need_mw:,.0f} MW (PUE {terms.pue:g})")


def _check_reference_jobs(jobs: ReferenceJobs, fail: Callable[[str, str], None]) -> None:
    """Every system is compared with HGX H100 on the reference jobs, so H100 must be able to run them."""
    train = jobs.train
    precision = "fp8" if train.precision == "nvfp4" else train.precision  # H100 has no FP4
    if not train_estimate(BASELINE_SYSTEM, train.gpus, train.workload, precision, train.seq_len,
                          train.global_batch_seqs).feasible:
        fail("reference_jobs.train", f"expected a job HGX H100 can run (every system is compared with it), got "
                                     f"{train.workload} on {train.gpus} GPUs with a batch of "
                                     f"{train.global_batch_seqs}")
    for i, job in enumerate(jobs.serve):
        if not serve_estimate(BASELINE_SYSTEM, job.gpus, job.workload, "fp8", job.input_tokens, job.output_tokens,
                              scenario=job.scenario).feasible:
            fail(f"reference_jobs.serve.{i}", f"expected a job HGX H100 can serve (every system is compared with "
                                              f"it), got {job.workload} on {job.gpus} GPUs")


def check(tree: dict[str, Any]) -> Scenario:
    """The typed scenario of a resolved tree, or `Problem` for the first thing wrong with it."""
    try:
        scenario = Scenario.model_validate(tree)
    except ValidationError as exc:
        raise _problem_of(exc.errors()[0]) from None
    _check_relations(scenario)
    scenario._tree = copy.deepcopy(tree)
    return scenario


# -- which file says what ------------------------------------------------------------------------------------
def _chain(path: Path) -> list[tuple[Path, dict]]:
    """The scenario file and the files it extends, child first (raw TOML)."""
    out, seen = [], set()
    while path not in seen and path.is_file():
        seen.add(path)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError):
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


# -- the entry points ----------------------------------------------------------------------------------------
def validate(tree: dict[str, Any], origin: str | Path) -> Scenario:
    """The typed scenario of a resolved tree, or InputError naming the file (`origin` and the files it extends,
    or a label such as '--set'), the field, the value and what was expected."""
    try:
        return check(tree)
    except Problem as problem:
        raise InputError(f"{blame(origin, problem.path)}: {problem.path}: {problem.text}") from None


def validate_overridden(base: dict[str, Any], tree: dict[str, Any], origin: str | Path, source: str) -> Scenario:
    """Validate `tree`, which is `base` (from `origin`) with overrides from `source` applied: one validation when
    all is well. On a problem, a problem of `base` itself is blamed on its file, as if `base` had been validated
    first; any other is blamed on `source`."""
    try:
        return check(tree)
    except Problem as problem:
        validate(base, origin)
        raise InputError(f"{source}: {problem.path}: {problem.text}") from None
