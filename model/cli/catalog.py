"""`airace catalog`: the systems and workloads of the catalog, as a table or as JSON with every source."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict, fields

from model.cli.args import EXIT_OK
from model.errors import dumps_strict


def register(sub) -> None:
    p = sub.add_parser("catalog", help="list systems (every vendor) and workloads with their key figures",
                       description="Systems (NVIDIA HGX H100 … Feynman, Google TPUs, AWS Trainium, AMD Instinct) "
                       "with their vendor, per-chip specs, scale-up domain, dates and prices, and the "
                       "workload catalog. --json prints everything, with the source URL and kind of every value.")
    p.add_argument("--json", action="store_true", help="print the whole catalog as one JSON object")
    p.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    from model.hardware import systems, workloads

    if args.json:
        out = {"systems": {}, "workloads": {}}
        for key, system in systems().items():
            entry = {f.name: getattr(system, f.name) for f in fields(system) if f.name != "sources"}
            entry["sources"] = {f: asdict(s) for f, s in system.sources.items()}
            entry["derived"] = system.rack_figures()
            out["systems"][key] = entry
        for key, w in workloads().items():
            entry = asdict(w)
            entry.update(params_total=w.params_total, params_active=w.params_active,
                         flops_per_token_seq8192=w.flops_per_token(8192))
            out["workloads"][key] = entry
        sys.stdout.write(dumps_strict(out, indent=1) + "\n")
        return EXIT_OK
    header = (f"{'key':<19} {'vendor':<6} {'status':<10} {'GPUs':>4} {'BF16 TF':>8} {'FP8 TF':>7} {'FP4 TF':>7} "
              f"{'HBM GB':>6} {'TB/s':>5} {'NVL':>4} {'NVL GB/s':>8} {'NIC Gb/s':>8} {'kW':>6} {'price $M':>13} "
              f"{'first':>7} {'volume':>7} {'scale-up':<9} {'sold':<4}")
    print("Systems (per-GPU dense peaks; NVL = scale-up domain: NVLink, ICI, NeuronLink, Infinity Fabric, UALink; "
          "sold: sold to others, else used and rented by its vendor; sources: airace catalog --json)")
    print(header)
    print("-" * len(header))
    for key, s in systems().items():
        fp4 = f"{s.fp4_dense_tflops:7.0f}" if s.fp4_dense_tflops else f"{'-':>7}"
        price = f"{s.price_usd_low / 1e6:.2f}-{s.price_usd_high / 1e6:.2f}"
        print(f"{key:<19} {s.vendor:<6} {s.status:<10} {s.gpus_per_system:>4} {s.bf16_dense_tflops:>8.0f} "
              f"{s.fp8_dense_tflops:>7.0f} {fp4} {s.hbm_gb:>6.0f} {s.hbm_tb_s:>5.1f} {s.nvlink_domain_gpus:>4} "
              f"{s.nvlink_gb_s:>8.0f} {s.scaleout_gbit_s:>8.0f} {s.system_power_kw:>6.1f} {price:>13} "
              f"{s.first_shipment:>7} {s.volume:>7} {s.scaleup_topology:<9} {'yes' if s.sold_to_others else 'no'}")
    kinds = [src.kind for s in systems().values() for src in s.sources.values()]
    print(f"\n{len(kinds)} sourced values: " + ", ".join(f"{kinds.count(k)} {k}" for k in sorted(set(kinds))))
    print("\nWorkloads (parameters computed from shape)")
    for key, w in workloads().items():
        moe = f", MoE {w.experts_active}/{w.experts_routed}" if w.is_moe else ""
        print(f"  {key:<22} {w.params_total / 1e9:8.1f}B total, {w.params_active / 1e9:7.1f}B active{moe}")
    return EXIT_OK
