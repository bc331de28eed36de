"""A partner host lends its own lab a cluster even while it serves other labs under contract: Google serves
Anthropic's TPU contract and still lends Google DeepMind a cluster from the rest of its fleet."""

from __future__ import annotations

from model.hardware import systems
from model.market.model import MarketModel
from model.scenario import load_scenario_dict


def test_google_deepmind_trains_at_google_beside_anthropic_s_tpu_contract():
    tree = load_scenario_dict("scenarios/baseline.toml")
    tree["end"] = "2026-12"
    model = MarketModel.from_params(tree, seed=0)
    google = model.buyer("google")
    deepmind = model.buyer("google_deepmind")
    catalog = systems()
    lent_in: list[int] = []  # months of 2026 (1-12) in which DeepMind trains on a cluster at Google
    for _ in range(model.n_months):
        model.step()
        t = model.month
        if model.year < 2026:
            continue
        given = google.given_h100e(t, excluding="google_deepmind")
        assert given > 0  # Anthropic's contract is served from Google's fleet in 2026
        hosted = [c for c, owner in deepmind.hosted_clusters(t) if owner == "google"]
        free_h100e = google.h100e() - given  # what Google holds beyond what it gives others under contract
        assert all(c.gpus * catalog[c.system].h100e_per_gpu <= free_h100e + 1e-6 for c in hosted)
        biggest = max((c.gpus for c in hosted), default=0)
        if free_h100e > 0.05 * google.h100e():
            assert biggest > 0  # a cluster is lent from what is left
        if biggest > 0:
            lent_in.append(t % 12 + 1)  # the baseline starts in January
    # Anthropic's contract (1M TPUs from 2026-01) takes all of Google's compute while its fleet is smaller than
    # the contract (the first months of 2026); from then on, every month, DeepMind trains at Google beside it
    assert lent_in and lent_in[0] <= 6 and lent_in == list(range(lent_in[0], 13))
