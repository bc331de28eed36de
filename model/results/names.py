"""Display names of the agents the shipped scenarios name, and of a system with its vendor, in one place for the
report, `compare` and the app.

Tables keep the keys (`agent` is the model's key); only what a reader sees goes through here. Any other key shows
with spaces, capitalised.
"""

from __future__ import annotations

AGENT_NAMES: dict[str, str] = {
    "microsoft": "Microsoft", "aws": "AWS", "google": "Google", "meta": "Meta", "oracle": "Oracle",
    "coreweave": "CoreWeave", "nebius": "Nebius", "lambda": "Lambda", "crusoe": "Crusoe", "nscale": "Nscale",
    "openai": "OpenAI", "anthropic": "Anthropic", "xai": "xAI", "google_deepmind": "Google DeepMind",
    "meta_ai": "Meta (lab)", "rest_of_market": "Rest of market", "china": "China (H20 only)",
    "nvidia": "NVIDIA",
}


def agent_name(key: str) -> str:
    """Display name of an agent key ("xai" -> "xAI"); unknown keys are shown with spaces, capitalised."""
    return AGENT_NAMES.get(key) or key.replace("_", " ").capitalize()


def with_vendor(system_name: str, vendor: str) -> str:
    """A system's display name with its vendor in front ("Google · TPU7x Ironwood"), unless the name already
    starts with it ("AMD Instinct MI355X") or the vendor is not known."""
    if not vendor or vendor == "unknown" or system_name.lower().startswith(vendor.lower()):
        return system_name
    return f"{vendor} · {system_name}"
