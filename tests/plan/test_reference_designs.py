"""Published AI back-end designs, reproduced with default knobs.

Each intent holds only the design's own inputs (GPUs, NICs, switch models, tiers, planes); spines,
super-spines, the leaf port split and the scalable unit are fabricgen's defaults.  The published
counts come from the vendors' pages (cited per design) and are asserted as they are published.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from fabricgen.intent.model import Intent
from fabricgen.plan.build import build_plan
from fabricgen.plan.model import Plan
from fabricgen.plan.physical import build_physical
from fabricgen.render.summary import summary

pytestmark = pytest.mark.slow

FIBRE_RUNS = {"gpu_leaf_m": 3, "leaf_spine_m": 150, "spine_super_spine_m": 300}  # DAC to the nodes, DR optics above
# DGX SuperPOD: nodes reach the leaf racks over multimode fibre (one cable per 400G port), DR optics above.
SUPERPOD_RUNS = {"gpu_leaf_m": 50, "leaf_spine_m": 150, "spine_super_spine_m": 300}

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


def cables_per_tier(plan: Plan) -> dict[str, int]:
    """Physical cables per tier, as the SuperPOD RA counts them (node-leaf, leaf-spine, spine-core)."""
    return dict(Counter(c.tier for c in build_physical(plan).cables))


def counts(plan: Plan) -> tuple[int, int, int, dict[str, int]]:
    s = summary(plan)
    return s["leaves"], s["spines"], s["super_spines"], s["links"]


# NVIDIA DGX SuperPOD: scalable units of 32 DGX nodes x 8 x 400G, 64-port 400G switches (QM9700: 32
# twin-port OSFP cages, 2 x 400G each).  Component counts of the compute fabric per SU count, as the
# page's table states them (switches per tier and cables per tier):
# https://docs.nvidia.com/dgx-superpod/reference-architecture-scalable-infrastructure-b200/latest/dgx-superpod-architecture.html
#   (2 SU: 16 leaf, 8 spine, 512 + 512 cables; 4 SU: 32 leaf, 16 spine, 1024 + 1024 cables;
#    16 SU: 128 leaf, 128 spine, 64 core, 4096 + 4096 + 4096 cables)
#   (the 1-SU row is derived: half of 2 SU, 8 leaf, 4 spine, 256 + 256 cables; the page starts at 2 SU)
# The DGX H100 RA (RA-11333-001) uses the same SU of 32 DGX H100 nodes; the 4-SU example
# (32 leaves x 32 uplinks -> 16 spines with 2 links per pair) is the same design.  Parallel links per
# pair are derived (32 uplinks spread evenly over the stated spines).  The pages count cables, not
# transceivers: the module counts below are derived (one module per used cage, fabricgen.plan.physical).
QM9700 = {"model": "QM9700-class 64 x 400G", "ports": 32, "port_speed": "800G", "breakout": 2, "cage": "osfp"}


@pytest.mark.parametrize(("sus", "leaves", "spines", "per_pair"), [
    (1, 8, 4, 8), (2, 16, 8, 4), (4, 32, 16, 2),
])
def test_dgx_superpod_h100_one_to_four_su(sus: int, leaves: int, spines: int, per_pair: int) -> None:
    plan = plan_of(intent(f"dgx{sus}", 32 * sus, QM9700, QM9700, cabling=SUPERPOD_RUNS))
    assert counts(plan) == (leaves, spines, 0, {"gpu_leaf": 256 * sus, "leaf_spine": 256 * sus,
                                                 "spine_super_spine": 0})
    assert parallel_links(plan, "leaf_spine") == {per_pair}
    # Published: 256 node-leaf + 256 leaf-spine cables per SU, one fibre per 400G link.
    assert cables_per_tier(plan) == {"gpu_leaf": 256 * sus, "leaf_spine": 256 * sus}
    s = summary(plan)
    assert s["cables"] == {"MPO-12 fibre": 512 * sus}
    # Derived: a twin-port 2 x 400G OSFP in every used switch cage (16 GPU and 16 uplink cages a leaf,
    # 32 cages a spine), one 400G-SR4 OSFP per node NIC.
    links = 256 * sus
    assert s["modules"] == {"OSFP 2x400G-SR4 twin-port": links // 2, "OSFP 2x400G-DR4 twin-port": links,
                            "OSFP 400G-SR4": links}
    assert s["ports"] == 4 * links


def test_dgx_superpod_three_tier_16_su() -> None:
    plan = plan_of(intent("dgx16", 512, QM9700, QM9700, QM9700, tiers=3, cabling=SUPERPOD_RUNS))
    assert counts(plan) == (128, 128, 64, {"gpu_leaf": 4096, "leaf_spine": 4096, "spine_super_spine": 4096})
    assert parallel_links(plan, "leaf_spine") == {1}
    # Every super-spine uses its whole radix, not 8 of 64 ports.
    assert {len(s.interfaces) for s in plan.by_role("super_spine")} == {64}
    # Published: 4096 + 4096 + 4096 cables.
    assert cables_per_tier(plan) == {"gpu_leaf": 4096, "leaf_spine": 4096, "spine_super_spine": 4096}
    s = summary(plan)
    assert s["cables"] == {"MPO-12 fibre": 3 * 4096}
    # Derived: twin-port modules in 2048 leaf GPU cages and 2 x 4096 / 2 x 2 switch-to-switch cages.
    assert s["modules"] == {"OSFP 2x400G-SR4 twin-port": 2048, "OSFP 2x400G-DR4 twin-port": 8192,
                            "OSFP 400G-SR4": 4096}


# NVIDIA DGX SuperPOD with DGX B300 on Quantum-X800 XDR: SUs of 72 DGX B300 nodes x 8 x 800G,
# Q3400-class switches with 144 x 800G ports (72 twin-port 1.6T OSFP cages).  Table 3 ("Example Compute
# Fabric Components for DGX SuperPOD Counts") states per SU count: leaf, spine, node-leaf and
# leaf-spine cables: 1 SU 8 / 4 / 576 / 576, 2 SU 16 / 8 / 1152 / 1152, 4 SU 32 / 18 / 2304 / 2304,
# 8 SU 64 / 36 / 4608 / 4608, 18 SU 144 / 72 / 10368 / 10368.
# https://docs.nvidia.com/dgx-superpod/reference-architecture/scalable-infrastructure-b300-xdr/latest/dgx-superpod-architecture.html
# 18 spines at 4 SU (not 16) and 36 at 8 SU (not 32) are the fewest that divide a leaf's 72 uplinks
# evenly: the canonical default.  Parallel links per pair and the modules are derived.
Q3400 = {"model": "Q3400-class 144 x 800G", "ports": 72, "port_speed": "1600G", "breakout": 2, "cage": "osfp"}


@pytest.mark.parametrize(("sus", "leaves", "spines", "per_pair"), [
    (1, 8, 4, 18), (2, 16, 8, 9), (4, 32, 18, 4), (8, 64, 36, 2), (18, 144, 72, 1),
])
def test_dgx_superpod_b300_xdr(sus: int, leaves: int, spines: int, per_pair: int) -> None:
    plan = plan_of(intent(f"xdr{sus}", 72 * sus, Q3400, Q3400, nic_speed="800G", cabling=SUPERPOD_RUNS))
    links = 576 * sus
    assert counts(plan) == (leaves, spines, 0, {"gpu_leaf": links, "leaf_spine": links, "spine_super_spine": 0})
    assert cables_per_tier(plan) == {"gpu_leaf": links, "leaf_spine": links}  # published
    assert parallel_links(plan, "leaf_spine") == {per_pair}
    assert {c["name"] for c in summary(plan)["choices"]} >= {"spines", "scalable unit"}  # defaults, not knobs
    assert summary(plan)["modules"] == {"OSFP 2x800G-SR4 twin-port": links // 2, "OSFP 2x800G-DR8 twin-port": links,
                                        "OSFP 800G-SR4": links}


# NVIDIA Spectrum-X with SN5600 (64 x 800G OSFP, 51.2T): 128 HGX nodes x 8 x 400G = 1,024 GPUs.
# Source: NVIDIA HGX AI Factory RA (H100/H200/B200), which states a 2-8-9-400 node (8 GPUs, 400 Gb/s
# per GPU), Spectrum-X at the 32, 64 and 128 node design points, and a rail-optimized, full
# non-blocking compute fabric:
# https://docs.nvidia.com/enterprise-reference-architectures/hgx-ai-factory-h100-h200-b200/latest/networking-physical-topologies.html
# https://docs.nvidia.com/reference-architectures/hgx-ai-factory-h100-h200-b200/abstract.md
# The stored copies reachable here show those statements but not the page's switch table, so the
# counts are derived from them: the leaf splits 32 cages into 64 x 400G GPU ports and keeps 32 x 800G
# uplinks (non-blocking), 1,024 GPU ports / 64 = 16 leaves, 16 x 32 uplinks / 64 ports = 8 spines with
# 4 links per pair (the reproduction: 64 spines before).  Modules and cables are derived too.
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
# rail-optimized.  Sources: "Building AI/ML Data Center Fabric using VXLAN EVPN for GPUaaS" (its
# sections: "Building a Non-Blocking, Rail-Optimized Network for AI/ML", "Leaf Port Allocation per
# Slice", "Spine Uplink Strategy", "GPU Downlink Strategy", all on the 9364D-GX2A),
# https://www.cisco.com/c/en/us/td/docs/dcn/whitepapers/building-aiml-dc-fabric-using-vxlan-evpn-for-gpuaas.html
# and the Cisco Data Center Networking Blueprint for AI/ML Applications ("Building a 400Gbps Network"),
# https://www.cisco.com/c/en/us/td/docs/dcn/whitepapers/cisco-data-center-networking-blueprint-for-ai-ml-applications.html
# The stored copies reachable here give those headings and the switch, not a switch or cable count
# for 1,024 GPUs; every count below is derived from what they state (64 x 400G, non-blocking, so half
# the ports down and half up): 1,024 GPU ports / 32 = 32 leaves, 32 x 32 uplinks / 64 ports = 16
# spines, 2 links per leaf-spine pair.  No module or cable count is published, so none is asserted.
N9364D = {"model": "N9364D-GX2A", "ports": 64, "port_speed": "400G", "cage": "qsfp-dd"}


def test_cisco_nexus_9364d_1024_gpus() -> None:
    plan = plan_of(intent("nx1k", 128, N9364D, N9364D))
    assert counts(plan) == (32, 16, 0, {"gpu_leaf": 1024, "leaf_spine": 1024, "spine_super_spine": 0})
    assert parallel_links(plan, "leaf_spine") == {2}


# Juniper AI data center JVD: rail-optimized stripes of 8 leaves, QFX5240-64CD (64 x 800G split
# 2 x 400G = 128 x 400G) as leaf and spine; the calculating page sizes a stripe from the leaf's
# server-facing ports (its body is not in the stored copy reachable here).
# https://www.juniper.net/documentation/us/en/software/jvd/jvd-ai-dc-apstra-nvidia-weka/scaling.html
# https://www.juniper.net/documentation/us/en/software/jvd/jvd-ai-dc-apstra-nvidia-weka/calculating-leaf-spine-servers-gpu.html
# The scaling page (Table 18, "Medium") states: 2048 - 8192 GPU, QFX5240-64CD as spine and leaf, "16
# Stripes from 64 Spines and 1024 leaf nodes, maintaining a 1:1 subscription".  64 spines and 16
# stripes are asserted as published; its "1024 leaf nodes" contradicts 16 stripes x 8 rail leaves
# (one per GPU of the 8-GPU servers) = 128, which is derived and asserted.  Servers per stripe (64),
# links per tier and 1 link per pair are derived; the pages publish no module or cable count.
QFX5240 = {"model": "QFX5240-64CD", "ports": 64, "port_speed": "800G", "breakout": 2, "cage": "qsfp-dd"}


def test_juniper_jvd_8192_gpus() -> None:
    plan = plan_of(intent("jvd8k", 1024, QFX5240, QFX5240))
    assert counts(plan) == (128, 64, 0, {"gpu_leaf": 8192, "leaf_spine": 8192, "spine_super_spine": 0})
    assert parallel_links(plan, "leaf_spine") == {1}
    assert len({leaf.su for leaf in plan.by_role("leaf")}) == 16  # stripes
    assert all(sum(i.tier == "gpu_leaf" for i in leaf.interfaces) == 64 for leaf in plan.by_role("leaf"))


# Multi-plane: DeepSeek-V3's multi-plane fat-tree (MPFT), 8 planes, each a 2-tier fat tree of 64-port
# 400G switches, one 400G NIC per GPU in its own plane.  Published (the paper's comparison table, as
# summarised at https://eeumee.net/tag/networkarchitecture): MPFT has 16,384 endpoints and 768 switches.
# Paper: "Insights into DeepSeek-V3: Scaling Challenges and Reflections on Hardware for AI
# Architectures", ISCA 2025, https://arxiv.org/html/2505.09343v1 (section on the multi-plane network).
# Derived: per plane 2,048 endpoints on 64 leaves (32 down, 32 up) and 32 spines, 16,384
# switch-to-switch links in all.
QM9700_FLAT = {"model": "QM9700-class 64 x 400G", "ports": 64, "port_speed": "400G"}


def test_multi_plane_deepseek_mpft() -> None:
    # The model gives every NIC one port per plane, so 8 planes need 8 NIC ports (servers.ports_per_nic):
    # this stands for MPFT's 8 single-port NICs, one per plane, until the intent can say "one NIC per plane".
    plan = plan_of(intent("mpft", 2048, QM9700_FLAT, QM9700_FLAT, planes=8, nics=1))
    leaves, spines, supers, links = counts(plan)
    assert leaves + spines + supers == 768  # published
    assert (leaves, spines, supers) == (512, 256, 0)
    assert links == {"gpu_leaf": 16384, "leaf_spine": 16384, "spine_super_spine": 0}
    assert sum(s.gpus for s in plan.servers) == 16384
    per_plane = Counter((s.plane, s.role) for s in plan.switches.values())
    assert set(per_plane.values()) == {64, 32}


# One plug per cage: every published design above, with the short default runs (DAC to the nodes, AOC
# between switches) where split cages meet split cages, and with fibre runs.  Before, a split cage whose
# halves went to different split peers got one AOC per half: 2 plugs in one cage (32,768 cages of a
# B300 16-SU design, 8,192 of Juniper's 8K design).
PUBLISHED = [
    ("b300-16su", lambda: intent("xdr16", 72 * 16, Q3400, Q3400, nic_speed="800G")),
    ("b300-16su-fibre", lambda: intent("xdr16f", 72 * 16, Q3400, Q3400, nic_speed="800G", cabling=SUPERPOD_RUNS)),
    ("h100-4su", lambda: intent("h4", 128, QM9700, QM9700)),
    ("superpod-3tier", lambda: intent("sp16", 512, QM9700, QM9700, QM9700, tiers=3)),
    ("spectrum-x", lambda: intent("spx1k", 128, SN5600_LEAF, SN5600)),
    ("nexus-9364d", lambda: intent("nx1k", 128, N9364D, N9364D)),
    ("juniper-8k", lambda: intent("jvd8k", 1024, QFX5240, QFX5240)),
    ("mpft", lambda: intent("mpft", 2048, QM9700_FLAT, QM9700_FLAT, planes=8, nics=1)),
]


@pytest.mark.parametrize(("name", "make"), PUBLISHED, ids=[p[0] for p in PUBLISHED])
def test_no_cage_carries_more_plugs_than_it_takes(name: str, make: Any) -> None:
    from fabricgen.plan.physical import cage_plugs, overfull_cages

    physical = build_physical(plan_of(make()))
    assert overfull_cages(physical) == []
    plugs = cage_plugs(physical)
    assert plugs and set(plugs.values()) == {1}


def test_split_cages_to_split_peers_take_modules_and_fibres() -> None:
    """Juniper's 8K design at 30 m: every leaf-spine link joins two 2x400G halves of cages whose other halves
    go to other peers, so each cage gets a twin-port module and each link a fibre; the GPU side stays one
    800G-to-2x400G DAC breakout per leaf cage."""
    physical = build_physical(plan_of(intent("jvd8k", 1024, QFX5240, QFX5240)))
    kinds = physical.cable_counts()
    assert kinds == {"MPO-12 fibre": 8192, "800G to 2x400G DAC breakout": 4096}
    assert physical.modules == {"QSFP-DD 2x400G-SR4 twin-port": 8192}  # 4,096 leaf + 4,096 spine uplink cages
