"""Arista EOS switch families: which Broadcom chip family a model is built on, and so which EOS keywords it takes.

EOS speaks two dialects for the same QoS ideas, one per chip family (Arista's AVD models both in its
eos_cli_config_gen schema, ``qos_profiles[].tx_queues`` and ``qos_profiles[].uc_tx_queues``):

* **Strata** (Trident, Tomahawk: 7050X, 7060X, 7260X, 7300X, 7358X, 7368X, 7388X) switches have unicast and
  multicast egress queues of their own: ``uc-tx-queue N`` / ``mc-tx-queue N``.  A plain ``tx-queue N`` is
  not a Strata command, and an EOS config session aborts on the first line it rejects.
* **Sand** (Jericho, Qumran: 7020R, 7280R, 7500R, 7800R, 7700R) switches queue on VOQs and take ``tx-queue N``.

Sources: the AVD eos_cli_config_gen schema (both keys, pyavd 6.4); the AMD Instinct cluster networking
guide's DCQCN sample for an Arista 7388 (``uc-tx-queue 3`` with ``random-detect ecn ... weight 0`` and
``random-detect ecn count``); Arista's model names (DCS-7060X6 = Tomahawk 5, DCS-7800R3 = Jericho2).

A model the table does not know is taken as Strata, what the EOS platform record describes (7050X,
7060X); ``chip_family`` says so in its reason, and `fabricgen plan` prints it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

ChipFamily = Literal["strata", "sand"]


@dataclass(frozen=True, slots=True)
class EosFamily:
    """One Arista product family by model-name prefix."""

    prefix: str  # "7060X" matches DCS-7060X6-64PE and 7060X6-64PE (the longest matching prefix wins)
    chip: ChipFamily
    asic: str


FAMILIES: tuple[EosFamily, ...] = (
    EosFamily("7050X", "strata", "Trident"),
    EosFamily("7050CX", "strata", "Trident"),
    EosFamily("7050SX", "strata", "Trident"),
    EosFamily("7050TX", "strata", "Trident"),
    EosFamily("7060X", "strata", "Tomahawk"),
    EosFamily("7060CX", "strata", "Tomahawk"),
    EosFamily("7060DX", "strata", "Tomahawk"),
    EosFamily("7060PX", "strata", "Tomahawk"),
    EosFamily("7060SX", "strata", "Tomahawk"),
    EosFamily("7260X", "strata", "Tomahawk"),
    EosFamily("7260CX", "strata", "Tomahawk"),
    EosFamily("7300X", "strata", "Trident"),
    EosFamily("7358X", "strata", "Tomahawk"),
    EosFamily("7368X", "strata", "Tomahawk"),
    EosFamily("7388X", "strata", "Tomahawk"),
    EosFamily("7020R", "sand", "Qumran"),
    EosFamily("7280R", "sand", "Jericho"),
    EosFamily("7280CR", "sand", "Jericho"),
    EosFamily("7280DR", "sand", "Jericho"),
    EosFamily("7280PR", "sand", "Jericho"),
    EosFamily("7280SR", "sand", "Jericho"),
    EosFamily("7500R", "sand", "Jericho"),
    EosFamily("7700R", "sand", "Jericho"),
    EosFamily("7800R", "sand", "Jericho"),
)
DEFAULT_CHIP: ChipFamily = "strata"
_MODEL = re.compile(r"^(?:DCS-)?(7\d{3}[A-Z]*)", re.IGNORECASE)


def family(model: str) -> EosFamily | None:
    """The family of an Arista model name ("DCS-7060X6-64PE", "7280R3-36"), None when unknown."""
    m = _MODEL.match(model.strip())
    if m is None:
        return None
    head = m.group(1).upper()
    best = [f for f in FAMILIES if head.startswith(f.prefix)]
    return max(best, key=lambda f: len(f.prefix)) if best else None


# How a chip hashes on the RoCE BTH destination QP (ecmp.qp_hashing), by ASIC; an ASIC not listed has no
# confirmed way.  The QP is bytes 5-7 of the BTH, the UDP payload of RoCEv2 (UDP port 4791), so bytes 13-15
# after the start of the outer L4 header:
# * Tomahawk: UDF fields, `port-channel load-balance trident udf eth-type ipv4 header outer l4 offset 13|14|15
#   mask 0xff` (aristanetworks/avd#5386, "ROCEv2 static hashing in TH platforms"; pyavd
#   port_channel.load_balance_trident_udf, PR #5493);
# * Jericho: a Sand load-balance profile, `fields udp dst-port 4791 payload bytes 5-7` (aristanetworks/avd#4925,
#   Arista TOI EOS-4.33.1F 21077 "conditional UDP payload hashing"; pyavd load_balance.policies.sand_profiles,
#   PR #5515), on EOS 4.33.1F or later.
QP_HASHING: dict[str, str] = {"Tomahawk": "trident-udf", "Jericho": "sand-profile"}


def qp_hashing(model: str) -> str:
    """How the model hashes on the RoCE QP ("trident-udf", "sand-profile"), "" where no way is confirmed."""
    fam = family(model)
    return QP_HASHING.get(fam.asic, "") if fam is not None else ""


def chip_family(model: str) -> tuple[ChipFamily, str]:
    """(chip family, why) of a model: its family's, or Strata for a model the table does not know."""
    fam = family(model)
    if fam is None:
        return DEFAULT_CHIP, (f"model {model!r} is not an Arista family fabricgen knows: taken as Strata "
                              "(7050X / 7060X), uc-tx-queue")
    keyword = "uc-tx-queue" if fam.chip == "strata" else "tx-queue"
    return fam.chip, f"{fam.prefix} ({fam.asic}, {fam.chip.capitalize()}): {keyword}"
