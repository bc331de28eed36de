"""The systems of the catalog from `data/systems.csv`, where every value carries its source and kind: NVIDIA's (HGX
H100 … Feynman), Google's TPUs, AWS's Trainium and AMD's Instinct, one schema for all, each with its `vendor`.

The file is long-form (`system,field,value,kind,source_url,note`) so that each value has its own provenance and a
bad row can be reported by line and field. It is loaded and validated once. Google's and AWS's chips are not sold
to others (`sold_to_others`): their owners use and rent them, and others get them only under contract.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import MappingProxyType

from model.errors import InputError

DATA_FILE = Path(__file__).with_name("data") / "systems.csv"

NVIDIA_SYSTEM_KEYS = (
    "hgx_h100",
    "hgx_h200",
    "hgx_h20",
    "hgx_b200",
    "hgx_b300",
    "gb200_nvl72",
    "gb300_nvl72",
    "vr_nvl72",
    "rubin_cpx",
    "rubin_ultra_nvl144",
    "feynman",
)
OTHER_VENDOR_SYSTEM_KEYS = (
    "tpu_v4",
    "tpu_v5e",
    "tpu_v5p",
    "tpu_v6e",
    "tpu_v7",
    "trn1",
    "trn2",
    "trn2_ultraserver",
    "trn3",
    "mi300x",
    "mi325x",
    "mi355x",
    "mi450_helios",
)
SYSTEM_KEYS = NVIDIA_SYSTEM_KEYS + OTHER_VENDOR_SYSTEM_KEYS
"""Every system of the catalog, NVIDIA's first. What NVIDIA sells is `NVIDIA_SYSTEM_KEYS` (vendor "NVIDIA")."""
VENDORS = ("NVIDIA", "Google", "AWS", "AMD")
TOPOLOGIES = ("switched", "full_mesh", "torus2d", "torus3d")
"""Scale-up fabric: a switch (NVLink, NeuronSwitch, UALink) gives every chip its whole bandwidth to any other; a full
mesh (AMD Infinity Fabric, 8 GPUs) gives one link per peer; a torus (TPU ICI, Trainium2 NeuronLink) links each chip
to its neighbours along each dimension, so collectives run as rings along dimensions."""
KINDS = ("official", "estimate", "projection")
STATUSES = ("shipping", "announced", "dropped", "projection")
PRECISIONS = ("bf16", "fp8", "fp4")

TEXT_FIELDS = ("name", "aliases", "status", "architecture", "vendor", "scaleup_topology")
DATE_FIELDS = ("announced", "first_shipment", "volume")
INT_FIELDS = ("gpus_per_system", "cpus_per_system", "nvlink_domain_gpus")
OPTIONAL_INT_FIELDS = ("racks_per_system",)
FLOAT_FIELDS = (
    "bf16_dense_tflops",
    "fp8_dense_tflops",
    "fp4_dense_tflops",
    "hbm_gb",
    "hbm_tb_s",
    "fast_memory_tb",
    "nvlink_gb_s",
    "scaleout_gbit_s",
    "attention_exp_tera_per_s",
    "gpu_tdp_w",
    "system_power_kw",
    "price_usd_low",
    "price_usd_high",
)
FLAG_FIELDS = ("scaleout_in_network_reduction", "sold_to_others")
OPTIONAL_TEXT_FIELDS = ("export_market",)
OPTIONAL_FIELDS = ("bf16_sparse_tflops", "fp8_sparse_tflops", "fp4_sparse_tflops", "int8_dense_tops", "torus_dims",
                   "chip_price_usd_low", "chip_price_usd_high", "last_shipment", *OPTIONAL_INT_FIELDS,
                   *OPTIONAL_TEXT_FIELDS)
LAST_SHIPMENT_FIELD = "last_shipment"
"""The month a system's maker last made it (TPU v4, v5e): no orders after it; absent, it is made to the end."""
CHIP_PRICE_FIELDS = ("chip_price_usd_low", "chip_price_usd_high")
REQUIRED_FIELDS = TEXT_FIELDS + DATE_FIELDS + INT_FIELDS + FLOAT_FIELDS + FLAG_FIELDS
NULLABLE_FIELDS = ("fp4_dense_tflops",)  # "NA": the precision is not supported (Hopper has no FP4)
ALL_FIELDS = REQUIRED_FIELDS + OPTIONAL_FIELDS
_DATE = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")
_DIMS = re.compile(r"^\d+(x\d+){1,2}$")


@dataclass(frozen=True)
class Source:
    """Where a value comes from: `kind` is official, estimate or projection."""

    kind: str
    url: str
    note: str = ""


@dataclass(frozen=True)
class System:
    """One purchasable or deployable system (a server, rack, UltraServer or TPU cube/pod). Per-GPU figures are per
    package (a chip: a two-die Ironwood or Trainium is one); FLOP/s are dense unless named sparse. `nvlink_*` fields
    describe the scale-up domain whatever its name (NVLink, ICI, NeuronLink, Infinity Fabric, UALink)."""

    key: str
    name: str
    aliases: tuple[str, ...]
    status: str
    architecture: str
    """GPU architecture family (Hopper, Blackwell, Rubin, Feynman, TPU v7, Trainium2, CDNA 3 ...): GPUs of one family
    in one site train together."""
    vendor: str
    """Who designs it and sells or rents it: NVIDIA, Google, AWS or AMD."""
    sold_to_others: bool
    """False for Google's TPUs and AWS's Trainium: used and rented by their owner, supplied to others by contract."""
    gpus_per_system: int
    cpus_per_system: int
    bf16_dense_tflops: float
    fp8_dense_tflops: float
    fp4_dense_tflops: float | None
    bf16_sparse_tflops: float | None
    fp8_sparse_tflops: float | None
    fp4_sparse_tflops: float | None
    int8_dense_tops: float | None
    """Dense int8 tensor peak, where the catalog has it (TPU v5p/v6e: 2x BF16; TPU MLPerf GPT-3 runs used int8)."""
    hbm_gb: float
    hbm_tb_s: float
    fast_memory_tb: float
    nvlink_domain_gpus: int
    nvlink_gb_s: float
    scaleup_topology: str
    """How the scale-up domain is wired (TOPOLOGIES): switched, full_mesh, torus2d or torus3d."""
    torus_dims: tuple[int, ...] | None
    """A torus's shape over the whole scale-up domain (e.g. (16, 16, 24) for a TPU v5p slice); None if not a torus."""
    scaleout_gbit_s: float
    attention_exp_tera_per_s: float
    """Softmax exponentials per second (MUFU.EX2, in 1e12/s): the second roofline of attention next to the tensor
    peak, the one Blackwell Ultra doubled."""
    scaleout_in_network_reduction: bool
    """The scale-out fabric reduces in the switches (InfiniBand SHARP): collectives across NVLink domains take a
    tree, not a ring of per-hop latencies."""
    gpu_tdp_w: float
    system_power_kw: float
    price_usd_low: float
    price_usd_high: float
    """What the buyer pays for the deployed system: accelerators plus hosts, DRAM, NICs, chassis, in-rack power and
    cooling and any scale-up switches."""
    chip_price_usd_low: float | None
    chip_price_usd_high: float | None
    """One accelerator chip alone, where the system price is derived from it (TPU, Trainium, AMD); None where only
    the whole system's price is known (NVIDIA)."""
    announced: str
    first_shipment: str
    volume: str
    last_shipment: str | None
    """The last month the system was made (its maker's production ended: TPU v4, v5e); None while it is made."""
    racks_per_system: int | None
    """Racks one system spans where it is more than one (a Trn2 UltraServer, a TPU v5e/v6e pod); None: one rack or
    less. Cooling is decided per rack: a two-rack system of 58 kW draws 29 kW per rack."""
    export_market: str | None
    """The one market a system is made for under export controls (HGX H20: China, after the US rule of October
    2023): only buyers in that market may order it, and they may order nothing else (any vendor). None: sold
    wherever export rules allow."""
    sources: Mapping[str, Source] = field(repr=False, compare=False)

    def dense_tflops(self, precision: str) -> float | None:
        """Dense tensor peak per GPU at `precision` (bf16, fp8, fp4/nvfp4/mxfp4, int8); None if unsupported."""
        if precision == "int8":
            return self.int8_dense_tops
        key = "fp4" if precision in ("nvfp4", "mxfp4") else precision
        if key not in PRECISIONS:
            raise ValueError(f"unknown precision {precision!r}; expected one of bf16, fp8, nvfp4, int8")
        return getattr(self, f"{key}_dense_tflops")

    @property
    def price_usd_mid(self) -> float:
        return 0.5 * (self.price_usd_low + self.price_usd_high)

    @property
    def system_power_kw_per_gpu(self) -> float:
        return self.system_power_kw / self.gpus_per_system

    @property
    def rack_power_kw(self) -> float:
        """Power per rack, or per server for a system smaller than a rack (HGX, MI3xx: servers fill racks only as
        far as air can cool them): what one enclosure's cooling must remove."""
        return self.system_power_kw / (self.racks_per_system or 1)

    @property
    def h100e_per_gpu(self) -> float:
        """H100-equivalents per GPU: dense BF16 peak over H100's 989 TFLOP/s (DESIGN.md)."""
        return self.bf16_dense_tflops / 989.0

    @property
    def nvlink_tb_s_per_system(self) -> float:
        return self.nvlink_gb_s * self.gpus_per_system / 1000.0

    def rack_figures(self) -> dict[str, float]:
        """System-level figures derived from per-GPU values (what spec sheets quote per rack)."""
        g = self.gpus_per_system
        return {
            "fp4_dense_pflops": (self.fp4_dense_tflops or 0.0) * g / 1000.0,
            "fp4_sparse_pflops": (self.fp4_sparse_tflops or 0.0) * g / 1000.0,
            "fp8_dense_pflops": self.fp8_dense_tflops * g / 1000.0,
            "bf16_dense_pflops": self.bf16_dense_tflops * g / 1000.0,
            "hbm_tb": self.hbm_gb * g / 1000.0,
            "nvlink_tb_s": self.nvlink_tb_s_per_system,
            "scaleout_gbit_s_per_gpu": self.scaleout_gbit_s,
        }


def _fail(path: Path, line: int, system: str, field_name: str, message: str) -> InputError:
    return InputError(f"{path}: line {line} (system {system!r}, field {field_name!r}): {message}")


def _parse_value(path: Path, line: int, system: str, name: str, raw: str):
    if name in TEXT_FIELDS or name in OPTIONAL_TEXT_FIELDS:
        if not raw:
            raise _fail(path, line, system, name, "expected text, got an empty value")
        for choice_field, choices in (("status", STATUSES), ("vendor", VENDORS), ("scaleup_topology", TOPOLOGIES)):
            if name == choice_field and raw not in choices:
                raise _fail(path, line, system, name, f"expected one of {', '.join(choices)}, got {raw!r}")
        return tuple(a.strip() for a in raw.split(";") if a.strip()) if name == "aliases" else raw
    if name in FLAG_FIELDS:
        if raw not in ("yes", "no"):
            raise _fail(path, line, system, name, f"expected yes or no, got {raw!r}")
        return raw == "yes"
    if name == "torus_dims":
        if not _DIMS.match(raw):
            raise _fail(path, line, system, name, f"expected dimensions such as 16x16x24, got {raw!r}")
        return tuple(int(d) for d in raw.split("x"))
    if name in DATE_FIELDS or name == LAST_SHIPMENT_FIELD:
        if not _DATE.match(raw):
            raise _fail(path, line, system, name, f"expected a month YYYY-MM, got {raw!r}")
        return raw
    if raw == "NA":
        if name in NULLABLE_FIELDS:
            return None
        raise _fail(path, line, system, name, "expected a number; 'NA' is allowed only for unsupported precisions")
    try:
        number = float(raw)
    except ValueError:
        raise _fail(path, line, system, name, f"expected a number, got {raw!r}") from None
    if not number > 0:
        raise _fail(path, line, system, name, f"expected a positive number, got {raw!r}")
    if name in INT_FIELDS or name in OPTIONAL_INT_FIELDS:
        if number != int(number):
            raise _fail(path, line, system, name, f"expected a whole number, got {raw!r}")
        return int(number)
    return number


def load_systems(path: Path | str = DATA_FILE) -> dict[str, System]:
    """Read and validate a systems file; raise InputError naming the line, system and field on any problem."""
    path = Path(path)
    values: dict[str, dict[str, object]] = {}
    sources: dict[str, dict[str, Source]] = {}
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        expected_columns = ["system", "field", "value", "kind", "source_url", "note"]
        if reader.fieldnames != expected_columns:
            raise InputError(f"{path}: line 1: expected columns {','.join(expected_columns)}, got {reader.fieldnames}")
        for row in reader:
            line = reader.line_num
            system = (row["system"] or "").strip()
            name = (row["field"] or "").strip()
            if None in row:  # more cells than columns: an unquoted comma, most often in the note
                raise _fail(path, line, system, name, f"expected 6 cells, got {6 + len(row[None])} (quote a note "
                                                      "that contains a comma)")
            if system not in SYSTEM_KEYS:
                raise _fail(path, line, system, name, f"unknown system; expected one of {', '.join(SYSTEM_KEYS)}")
            if name not in ALL_FIELDS:
                raise _fail(path, line, system, name, f"unknown field; expected one of {', '.join(ALL_FIELDS)}")
            if name in values.get(system, {}):
                raise _fail(path, line, system, name, "duplicate field")
            kind = (row["kind"] or "").strip()
            if kind not in KINDS:
                raise _fail(path, line, system, name, f"expected kind one of {', '.join(KINDS)}, got {kind!r}")
            url = (row["source_url"] or "").strip()
            if not url.startswith(("http://", "https://")):
                raise _fail(path, line, system, name, f"expected a source URL, got {url!r}")
            value = _parse_value(path, line, system, name, (row["value"] or "").strip())
            values.setdefault(system, {})[name] = value
            sources.setdefault(system, {})[name] = Source(kind=kind, url=url, note=(row["note"] or "").strip())
    catalog: dict[str, System] = {}
    for key in SYSTEM_KEYS:
        have = values.get(key)
        if have is None:
            raise InputError(f"{path}: system {key!r} is missing")
        missing = [f for f in REQUIRED_FIELDS if f not in have]
        if missing:
            raise InputError(f"{path}: system {key!r}: missing field(s) {', '.join(missing)}")
        dates = [have[f] for f in DATE_FIELDS]
        if not dates[0] <= dates[1] <= dates[2]:
            raise InputError(f"{path}: system {key!r}: expected announced <= first_shipment <= volume, got {dates}")
        last = have.get(LAST_SHIPMENT_FIELD)
        if last is not None and last < dates[1]:
            raise InputError(f"{path}: system {key!r}: expected last_shipment {last} not before first_shipment "
                             f"{dates[1]}")
        if have["price_usd_low"] > have["price_usd_high"]:
            raise InputError(f"{path}: system {key!r}: price_usd_low exceeds price_usd_high")
        chips = [have.get(f) for f in CHIP_PRICE_FIELDS]
        if (chips[0] is None) != (chips[1] is None):
            raise InputError(f"{path}: system {key!r}: expected both chip_price_usd_low and chip_price_usd_high or "
                             "neither")
        for bound, chip in zip(("low", "high"), chips, strict=True):
            if chip is not None and have[f"price_usd_{bound}"] <= chip * have["gpus_per_system"]:
                raise InputError(f"{path}: system {key!r}: price_usd_{bound} {have[f'price_usd_{bound}']:g} expected "
                                 f"above its chips alone ({have['gpus_per_system']} x chip_price_usd_{bound} "
                                 f"{chip:g}): a system price includes the server or rack around the chips")
        torus = str(have["scaleup_topology"]).startswith("torus")
        dims = have.get("torus_dims")
        if torus != (dims is not None):
            raise InputError(f"{path}: system {key!r}: torus_dims expected exactly when scaleup_topology is a torus, "
                             f"got topology {have['scaleup_topology']!r} and torus_dims {dims!r}")
        if dims is not None and (math.prod(dims) != have["nvlink_domain_gpus"]
                                 or len(dims) != int(str(have["scaleup_topology"])[-2])):
            raise InputError(f"{path}: system {key!r}: torus_dims {'x'.join(map(str, dims))} expected "
                             f"{str(have['scaleup_topology'])[-2]} dimensions multiplying to nvlink_domain_gpus "
                             f"{have['nvlink_domain_gpus']}")
        kwargs = {f: have.get(f) for f in ALL_FIELDS}
        catalog[key] = System(key=key, sources=MappingProxyType(sources[key]), **kwargs)
    return catalog


@cache
def systems() -> Mapping[str, System]:
    """The packaged catalog, loaded once."""
    return MappingProxyType(load_systems())


@cache
def _alias_index() -> dict[str, str]:
    index: dict[str, str] = {}
    for key, system in systems().items():
        for label in (key, system.name, *system.aliases):
            index[_normalise(label)] = key
    return index


def _normalise(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", label.lower())


def get_system(key_or_alias: str) -> System:
    """Look a system up by key or by any of its names (renamed products are aliases of one key)."""
    key = _alias_index().get(_normalise(key_or_alias))
    if key is None:
        raise InputError(f"unknown system {key_or_alias!r}; expected one of {', '.join(SYSTEM_KEYS)}")
    return systems()[key]
