"""Published AI back-end designs, reproduced with default knobs.

Each intent holds only the design's own inputs (GPUs, NICs, switch models, tiers, planes); spines,
super-spines, the leaf port split and the scalable unit are fabricgen's defaults.  The published
counts come from the vendors' pages (cited per design) and are asserted as they are published.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from fabricgen.intent import Intent
from fabricgen.model import Plan
from fabricgen.plan import build_plan, summary

FIBRE_RUNS = {"gpu_leaf_m": 3, "leaf_spine_m": 150, "spine_super_spine_m": 300}  # DAC to the nodes, DR optics above

# Pools inside 198.18.0.0/15, large enough for 16K GPUs.
POOLS = {"loopbacks": "198.18.0.0/20", "p2p": "198.18.128.0/17", "gpu": "198.19.0.0/17",
         "management": "198.19.128.0/17"}


def intent(name: str, servers: int, leaf: dict[str, Any], spine: dict[str, Any] | None = None,
           super_spine: dict[str, Any] | None = None, *, tiers: int = 2, planes: int = 1, nics: int = 8,
           nic_speed: str = "400G", cabling: dict[str, float] | None = None) -> dict[str, Any]:
    models: dict[str, Any] = {"leaf": leaf}
    if spine:
        models["spine"] = spine
    if super_spine:
        models["super_spine"] = super_spine
    return {
        "fabric": {"name": name},
        "servers": {"count": servers, "gpus_per_server": 8, "nics_per_server": nics, "nic_speed": nic_speed,
                    "ports_per_nic": planes},
        "switch_models": models,
        "platforms": {"leaf": "sonic", "spine": "sonic", "super_spine": "sonic"},
        "topology": {"tiers": tiers, "planes": planes},
        "addressing": dict(POOLS),
        "bgp": {"leaf_asn_base": 4200000000, "spine_asn_base": 4200100000, "super_spine_asn": 4200200000},
        "cabling": cabling or {"gpu_leaf_m": 3, "leaf_spine_m": 30, "spine_super_spine_m": 150},
    }


def plan_of(data: dict[str, Any]) -> Plan:
    return build_plan(Intent.model_validate(data))


def parallel_links(plan: Plan, tier: str) -> set[int]:
    """Distinct numbers of parallel links between the switch pairs of one tier (one value = equal spread)."""
    pairs = Counter((link.a_device, link.z_device) for link in plan.links if link.tier == tier)
    return set(pairs.values())


def counts(plan: Plan) -> tuple[int, int, int, dict[str, int]]:
    s = summary(plan)
    return s["leaves"], s["spines"], s["super_spines"], s["links"]


# NVIDIA DGX SuperPOD: scalable units of 32 DGX nodes x 8 x 400G, 64-port 400G switches (QM9700: 32
# twin-port OSFP cages, 2 x 400G each).  Component counts of the compute fabric per SU count:
# https://docs.nvidia.com/dgx-superpod/reference-architecture-scalable-infrastructure-b200/latest/dgx-superpod-architecture.html
#   (2 SU: 16 leaf, 8 spine, 512 + 512 cables; 4 SU: 32 leaf, 16 spine, 1024 + 1024 cables;
#    16 SU: 128 leaf, 128 spine, 64 core, 4096 + 4096 + 4096 cables)
# https://docs.nvidia.com/dgx-superpod/reference-architecture/scalable-infrastructure-b300-xdr/latest/dgx-superpod-architecture.html
#   (1 SU: 8 leaf, 4 spine: half the spines of 2 SU)
# The DGX H100 RA (RA-11333-001) uses the same SU of 32 DGX H100 nodes; the 4-SU example
# (32 leaves x 32 uplinks -> 16 spines with 2 links per pair) is the same design.
QM9700 = {"model": "QM9700-class 64 x 400G", "ports": 32, "port_speed": "800G", "breakout": 2, "cage": "osfp"}


@pytest.mark.parametrize(("sus", "leaves", "spines", "per_pair"), [
    (1, 8, 4, 8), (2, 16, 8, 4), (4, 32, 16, 2),
])
def test_dgx_superpod_h100_one_to_four_su(sus: int, leaves: int, spines: int, per_pair: int) -> None:
    plan = plan_of(intent(f"dgx{sus}", 32 * sus, QM9700, QM9700, cabling=FIBRE_RUNS))
    assert counts(plan) == (leaves, spines, 0, {"gpu_leaf": 256 * sus, "leaf_spine": 256 * sus,
                                                 "spine_super_spine": 0})
    assert parallel_links(plan, "leaf_spine") == {per_pair}
    # Transceivers: one twin-port 2 x 400G-DR4 OSFP per used switch cage (16 uplink cages a leaf, 32 a
    # spine), one MPO fibre per 400G link; GPU ports: one 800G-to-2x400G DAC per leaf cage.
    s = summary(plan)
    links = 256 * sus
    assert s["modules"] == {"OSFP 2x400G-DR4 twin-port": links // 2 + links // 2}
    assert s["cables"] == {"MPO-12 fibre": links, "800G to 2x400G DAC breakout": links // 2}
    assert s["ports"] == 4 * links


def test_dgx_superpod_three_tier_16_su() -> None:
    plan = plan_of(intent("dgx16", 512, QM9700, QM9700, QM9700, tiers=3, cabling=FIBRE_RUNS))
    assert counts(plan) == (128, 128, 64, {"gpu_leaf": 4096, "leaf_spine": 4096, "spine_super_spine": 4096})
    assert parallel_links(plan, "leaf_spine") == {1}
    # Every super-spine uses its whole radix, not 8 of 64 ports.
    assert {len(s.interfaces) for s in plan.by_role("super_spine")} == {64}
    s = summary(plan)
    assert s["modules"] == {"OSFP 2x400G-DR4 twin-port": 4096 + 4096}  # 2 per link end pair / 2 ports a cage
    assert s["cables"] == {"MPO-12 fibre": 8192, "800G to 2x400G DAC breakout": 2048}


# NVIDIA Spectrum-X with SN5600 (64 x 800G OSFP, 51.2T): 128 HGX nodes x 8 x 400G = 1,024 GPUs.  The
# leaf splits 32 cages into 64 x 400G GPU ports and keeps 32 x 800G uplinks; 16 leaves, 8 spines
# (the reproduction: 64 spines before).  Source: NVIDIA HGX AI Factory RA, 128-node design point,
# https://docs.nvidia.com/enterprise-reference-architectures/hgx-ai-factory-h100-h200-b200/latest/networking-physical-topologies.html
SN5600_LEAF = {"model": "SN5600", "ports": 64, "port_speed": "800G", "cage": "osfp",
               "downlink": {"speed": "400G"}, "uplink": {"speed": "800G"}}
SN5600 = {"model": "SN5600", "ports": 64, "port_speed": "800G", "cage": "osfp"}


def test_spectrum_x_1024_gpus() -> None:
    plan = plan_of(intent("spx1k", 128, SN5600_LEAF, SN5600, cabling=FIBRE_RUNS))
    assert counts(plan) == (16, 8, 0, {"gpu_leaf": 1024, "leaf_spine": 512, "spine_super_spine": 0})
    assert parallel_links(plan, "leaf_spine") == {4}
    assert {link.speed for link in plan.links if link.tier == "leaf_spine"} == {800}
    s = summary(plan)
    assert s["oversubscription"] == {"leaf": "1.00:1"}
    # 800G-DR8 OSFP in 512 leaf uplink cages and 512 spine cages, one MPO-16 per 800G link; the GPU
    # side is 32 cages per leaf, each a 800G-to-2x400G DAC to two servers.
    assert s["modules"] == {"OSFP 800G-DR8": 1024}
    assert s["cables"] == {"MPO-16 fibre": 512, "800G to 2x400G DAC breakout": 512}


# Cisco Nexus 9364D-GX2A (64 x 400G QSFP-DD), 1,024 GPUs (128 servers x 8 x 400G), non-blocking,
# rail-optimized: Cisco Data Center Networking Blueprint for AI/ML Applications,
# https://www.cisco.com/c/en/us/td/docs/dcn/whitepapers/cisco-data-center-networking-blueprint-for-ai-ml-applications.html
# and "Building AI/ML Data Center Fabric using VXLAN EVPN" (leaf: half the ports to GPUs, half to spines),
# https://www.cisco.com/c/en/us/td/docs/dcn/whitepapers/building-aiml-dc-fabric-using-vxlan-evpn-for-gpuaas.html
N9364D = {"model": "N9364D-GX2A", "ports": 64, "port_speed": "400G", "cage": "qsfp-dd"}


def test_cisco_nexus_9364d_1024_gpus() -> None:
    plan = plan_of(intent("nx1k", 128, N9364D, N9364D))
    assert counts(plan) == (32, 16, 0, {"gpu_leaf": 1024, "leaf_spine": 1024, "spine_super_spine": 0})
    assert parallel_links(plan, "leaf_spine") == {2}


# Juniper AI data center JVD: rail-optimized stripes of 8 leaves; servers per stripe = half the leaf
# ports (N1 = ports / 2); QFX5240-64CD (64 x 800G split 2 x 400G = 128 x 400G) as leaf and spine:
# "2048 - 8192 GPU ... 16 Stripes from 64 Spines ..., maintaining a 1:1 subscription".
# https://www.juniper.net/documentation/us/en/software/jvd/jvd-ai-dc-apstra-nvidia-weka/scaling.html
# https://www.juniper.net/documentation/us/en/software/jvd/jvd-ai-dc-apstra-nvidia-weka/calculating-leaf-spine-servers-gpu.html
# (The scaling page says "1024 leaf nodes"; 16 stripes x 8 rails is 128 leaves, which is what we assert.)
QFX5240 = {"model": "QFX5240-64CD", "ports": 64, "port_speed": "800G", "breakout": 2, "cage": "qsfp-dd"}


def test_juniper_jvd_8192_gpus() -> None:
    plan = plan_of(intent("jvd8k", 1024, QFX5240, QFX5240))
    assert counts(plan) == (128, 64, 0, {"gpu_leaf": 8192, "leaf_spine": 8192, "spine_super_spine": 0})
    assert parallel_links(plan, "leaf_spine") == {1}
    assert len({leaf.su for leaf in plan.by_role("leaf")}) == 16  # stripes
    assert all(sum(i.tier == "gpu_leaf" for i in leaf.interfaces) == 64 for leaf in plan.by_role("leaf"))


# Multi-plane: DeepSeek-V3's multi-plane fat-tree (MPFT), 8 planes, each a 2-tier fat tree of 64-port
# 400G switches, one 400G NIC per GPU in its own plane, 16,384 GPUs; per plane 2,048 endpoints on 64
# leaves and 32 spines (768 switches, 16,384 switch-to-switch links in all).
# https://eeumee.net/2025/12/03/multi-plane-network-topology-deepseek-v3 (summary of "Insights into
# DeepSeek-V3", ISCA 2025, section on the multi-plane network topology).
QM9700_FLAT = {"model": "QM9700-class 64 x 400G", "ports": 64, "port_speed": "400G"}


def test_multi_plane_deepseek_mpft() -> None:
    # The model gives every NIC one port per plane, so 8 planes need 8 NIC ports (servers.ports_per_nic):
    # this stands for MPFT's 8 single-port NICs, one per plane, until the intent can say "one NIC per plane".
    plan = plan_of(intent("mpft", 2048, QM9700_FLAT, QM9700_FLAT, planes=8, nics=1))
    leaves, spines, supers, links = counts(plan)
    assert (leaves, spines, supers, leaves + spines) == (512, 256, 0, 768)
    assert links == {"gpu_leaf": 16384, "leaf_spine": 16384, "spine_super_spine": 0}
    assert sum(s.gpus for s in plan.servers) == 16384
    per_plane = Counter((s.plane, s.role) for s in plan.switches.values())
    assert set(per_plane.values()) == {64, 32}
