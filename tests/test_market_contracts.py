"""Labs and contracts that add up (issue 15, item 6): a contracted block belongs to one customer at a time, what a
customer holds is what its provider actually runs for it, reachable compute is owned + contracted with nothing
counted twice, and two labs never train on the same cluster at the same time."""

from __future__ import annotations

import pytest

from model.market import MarketModel
from model.market.contracts import ContractBook, contract_from_terms
from model.scenario.loading import load_scenario_dict


@pytest.fixture(scope="module")
def stepped():
    """The baseline to 2027-06, checked month by month; the clusters labs claimed for their runs."""
    params = load_scenario_dict("scenarios/baseline.toml")
    params.pop("sweep", None)
    params["end"] = "2027-06"
    model = MarketModel.from_params(params, seed=2)
    claims: list[tuple[str, str, str, int, int]] = []
    claim = model.claim_cluster

    def logged(provider, system, lab, until_month):
        claims.append((provider, system, lab, model.month, until_month))
        claim(provider, system, lab, until_month)

    model.claim_cluster = logged
    months = []
    while model.running:
        model.step()
        t = model.month
        held = {b.name: b.held_by_provider(t) for b in model.buyers}
        months.append((t, held, {p.name: p.h100e() for p in model.providers}))
    return model, months, claims


def test_no_provider_gives_more_than_it_runs_and_no_block_is_counted_twice(stepped):
    model, months, _ = stepped
    some = 0.0
    for t, held, online in months:
        for provider, h100e in online.items():
            given = sum(by.get(provider, 0.0) for by in held.values())
            assert given <= h100e * (1 + 1e-9) + 1e-6, (t, provider)
            some += given
        for c, given in ((c, g) for p in online for c, g in model.contracts.delivered_h100e(p, t, online[p])):
            assert 0.0 <= given <= c.h100e + 1e-6
    assert some > 0  # contracts do deliver


def test_reachable_compute_is_owned_plus_contracted(stepped):
    model, _, _ = stepped
    agents = model.agents_frame()
    assert (agents.reachable_h100e - agents.h100e - agents.contracted_h100e).abs().max() < 1e-6
    labs = agents[agents.kind == "lab"]
    assert (labs.contracted_h100e > 0).any()
    # a lab's contracted compute never exceeds what its contracts bought (the book's active H100e)
    last = model.month
    for lab in labs.agent.unique():
        bought = sum(c.h100e for c in model.contracts.of_lab(lab, last) if c.active(last))
        assert model.buyer(lab).contracted_h100e_held() <= bought + 1e-6


def test_a_contract_signed_when_the_provider_is_full_gets_nothing_until_it_has_room():
    book = ContractBook()
    first = contract_from_terms("a", "p", 0, 0, 5, 1e9, "hgx_h100", 1.0, gpus=1000)
    second = contract_from_terms("b", "p", 1, 1, 5, 1e9, "hgx_h100", 1.0, gpus=1000)
    book.add(first)
    book.add(second)
    assert [g for _, g in book.delivered_h100e("p", 1, 1500.0)] == [1000.0, 500.0]
    assert [g for _, g in book.delivered_h100e("p", 1, 800.0)] == [800.0, 0.0]  # signing order
    assert [g for _, g in book.delivered_h100e("p", 0, 800.0)] == [800.0]  # b not yet started


def test_two_labs_never_train_on_the_same_cluster_at_once(stepped):
    _, _, claims = stepped
    assert claims
    by_cluster: dict[tuple[str, str], list[tuple[str, int, int]]] = {}
    for provider, system, lab, start, end in claims:
        by_cluster.setdefault((provider, system), []).append((lab, start, end))
    for runs in by_cluster.values():
        runs.sort(key=lambda r: r[1])
        for (lab_a, _, end_a), (lab_b, start_b, _) in zip(runs, runs[1:], strict=False):
            assert lab_a == lab_b or start_b >= end_a
