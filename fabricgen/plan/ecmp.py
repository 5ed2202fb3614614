"""ECMP step of the plan: each role's hash as rendered, and which fabric ports run adaptive routing.

Hash seeds differ per tier by default (ecmp.seeds), so a flow's choice at one hop says nothing about
its choice at the next (no polarization).  Whether a switch renders the intent's seed, derives its own
(SONiC: from DEVICE_METADATA.type), keys each switch randomly (the Linux kernel) or has no seed at all
(EOS through pyavd) is its platform's `hash_seed` capability; `plan_hashing` records what each role will
actually do, which is what `fabricgen analyze ecmp` models, and warns where that is not what was asked.

Adaptive routing (NX-OS dynamic load balancing, Spectrum-X AR) only works between two switches
that both do it: an NX-OS DLB member forwards to the DLB MAC of its neighbour, which a
non-DLB neighbour does not own (vendor reference §1.10).  So a fabric port is active only when
the switches at both ends render the intent's mode: the role's model where its record says
which modes it does (`skus`, e.g. an N9364E-SG2 does only policy-driven DLB, which fabricgen does
not render), else its platform (`platforms.registry` capabilities).  Everything the intent asked for but the plan
cannot give becomes a warning, never a silent drop.
"""

from __future__ import annotations

from collections import Counter

from fabricgen.catalog.registry import capabilities, load, platform
from fabricgen.errors import Problem
from fabricgen.intent.load_balancing import AdaptiveRouting as AdaptiveRoutingIntent
from fabricgen.intent.load_balancing import Ecmp
from fabricgen.plan.model import ROLES, AdaptiveRouting, Plan, Switch, SwitchHash

MAX_NAMED = 4


def adaptive_routing_of(plan: Plan, sw: Switch, mode: str) -> tuple[bool, str]:
    """(renders `mode` on `sw`, what decides it: "model N9364E-SG2-Q" or "platform sonic")."""
    hw = plan.hardware.get(sw.role)
    if hw is not None and hw.sku is not None and hw.sku.adaptive_routing_modes is not None:
        return mode in hw.sku.adaptive_routing_modes, f"{sw.platform} model {hw.sku.name}"
    return capabilities(sw.platform).adaptive_routing(mode), f"platform {sw.platform}"


def plan_adaptive_routing(plan: Plan, ar: AdaptiveRoutingIntent) -> None:
    """Mark every fabric port whose both ends do adaptive routing; the plan keeps the settings and active ports."""
    active: dict[str, list[str]] = {}
    missing: Counter[str] = Counter()  # platform without the capability -> fabric ports left on plain ECMP
    examples: dict[str, list[str]] = {}
    if ar.enabled:
        able: dict[str, tuple[bool, str]] = {}  # role -> (renders the mode, what decides it)
        for sw in plan.switches.values():
            if sw.role not in able:
                able[sw.role] = adaptive_routing_of(plan, sw, ar.mode)
        peer_able = {name: able[peer.role] for name, peer in plan.switches.items()}  # by hostname, once
        for sw in plan.switches.values():
            mine = able[sw.role]
            for itf in sw.interfaces:
                if itf.tier == "gpu_leaf":
                    continue
                theirs = peer_able[itf.peer_device]
                itf.adaptive_routing = mine[0] and theirs[0]
                if itf.adaptive_routing:
                    active.setdefault(sw.hostname, []).append(itf.name)
                    continue
                for can, what in (mine, theirs):
                    if not can:
                        missing[what] += 1
                        named = examples.setdefault(what, [])
                        if len(named) < MAX_NAMED:
                            named.append(f"{sw.hostname} {itf.name}")
                        break
    plan.adaptive_routing = AdaptiveRouting(ar.enabled, ar.mode if ar.enabled else "", ar.flowlet_aging_us,
                                            ar.mac_address.lower(), active)
    for name, count in sorted(missing.items()):
        shown = ", ".join(examples[name]) + (" ..." if count > len(examples[name]) else "")
        plan.warnings.append(Problem(
            "ecmp.adaptive_routing.enabled",
            f"adaptive routing ({ar.mode}) is not rendered on {count} fabric port(s) because {name} at one end "
            f"cannot do it; they use plain ECMP ({shown})",
            "accept plain ECMP on those links, or use switches that do adaptive routing at both ends",
        ))


def plan_hashing(plan: Plan, ecmp: Ecmp) -> None:
    """Each role's ECMP hash as its platform renders it; a warning names every capability that falls short."""
    explicit = plan.settings.explicit
    algorithm_asked = "ecmp.algorithm" in explicit
    for role in ROLES:
        name = plan.settings.platforms.get(role)
        if name is None or not any(sw.role == role for sw in plan.switches.values()):
            continue
        rec = platform(name)
        caps = rec.capabilities
        tier = getattr(ecmp.seeds, role)
        where = f"ecmp.seeds.{role}"
        seeds_asked = any(p == where or p.startswith(where + ".") for p in explicit)
        per_switch = False
        if caps.hash_seed == "config":
            seed, rotate, how = tier.seed, tier.rotate, f"{name} config, from {where}"
        elif caps.hash_seed == "fixed":
            seed, rotate, how = load(rec.hash_seed_fn)(role)
            if seeds_asked and (seed, rotate) != (tier.seed, tier.rotate):
                plan.warnings.append(Problem(where, f"{name} lacks the capability `hash-seed`: its {role} switches "
                                             f"hash with seed {seed}, offset {rotate} ({how}), not the intent's "
                                             f"{tier.seed}/{tier.rotate}", f"set {where} to seed: {seed}, rotate: "
                                             f"{rotate} to say what the switches do"))
        elif caps.hash_seed == "random":
            seed, rotate, per_switch = 0, 0, True
            how = "the kernel's random key per switch (frr.conf sets none)"
            if seeds_asked:
                plan.warnings.append(Problem(where, f"{name} lacks the capability `hash-seed`: each switch hashes "
                                             "with the kernel's own random key, not the intent's seed", "leave "
                                             f"{where} out for {name} switches (their seeds differ anyway)"))
        else:
            seed, rotate, how = 0, 0, f"none: {name} renders no hash seed, every switch of a model hashes alike"
            plan.warnings.append(Problem(where, f"{name} lacks the capability `hash-seed`: its {role} switches "
                                         "keep the chip's default seed, the same as every other switch of the "
                                         "model, so consecutive hops can repeat a choice (ECMP polarization)",
                                         "give another tier a platform whose seed differs (`fabricgen analyze "
                                         "ecmp` shows the effect), or accept it"))
        rendered = ""
        if algorithm_asked:
            if caps.has(f"hash-algorithm {ecmp.algorithm}"):
                rendered = ecmp.algorithm
            else:
                plan.warnings.append(Problem("ecmp.algorithm", f"{name} ({role}) lacks the capability "
                                             f"`hash-algorithm {ecmp.algorithm}`: its switches keep their own "
                                             "hash function", "leave ecmp.algorithm out, or accept that the "
                                             "analysis models a hash those switches may not use"))
        plan.hashing[role] = SwitchHash(ecmp.algorithm, seed, rotate, per_switch, rendered, how, ecmp.qp_hashing)
