"""The catalog: NVIDIA systems and model architectures, loaded from sourced data files."""

from model.hardware.systems import PRECISIONS, SYSTEM_KEYS, Source, System, get_system, load_systems, systems
from model.hardware.workloads import Workload, custom_workload, get_workload, workloads

__all__ = [
    "PRECISIONS",
    "SYSTEM_KEYS",
    "Source",
    "System",
    "Workload",
    "custom_workload",
    "get_system",
    "get_workload",
    "load_systems",
    "systems",
    "workloads",
]
