"""The intent's `ptp:` section: PTP (IEEE 1588) profile, domain, grandmasters, boundary-clock tiers, thresholds.

The plan places the clocks (fabricgen.plan.ptp); docs/ptp.md tells the whole story.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from fabricgen.intent.fields import Flag, HostPrefix, Int, IntentModel, invalid

PtpProfile = Literal["default-1588", "g8275.1", "g8275.2"]
# Each profile's domain range and default (IEEE 1588-2019 default profile: 0-127, default 0; ITU-T G.8275.1:
# 24-43, default 24; G.8275.2: 44-63, default 44).
PTP_DOMAINS: dict[str, tuple[int, int, int]] = {"default-1588": (0, 127, 0), "g8275.1": (24, 43, 24),
                                                "g8275.2": (44, 63, 44)}
ClockTier = Literal["leaf", "spine", "super_spine"]


class PtpGrandmaster(IntentModel):
    """Where the grandmasters attach: the hosts of one `endpoints:` group, on the leaves' server ports."""

    endpoints: HostPrefix = Field(description="name of the endpoints: group whose hosts are the grandmasters; "
                                              "the first host is the preferred one, the others stand by")
    priority1: Int = Field(default=10, ge=0, le=254, description="priority1 of the preferred grandmaster "
                                                                  "(standbys: one more each); lower wins the BMCA")


class PtpThresholds(IntentModel):
    """What `validate --ptp` accepts.  Defaults are hardware-timestamping values: ANTA's PTP tests (offset
    within +-1000 ns, last sync under 60 s) and NVIDIA Cumulus's PTP monitor (mean path delay 200 ns)."""

    offset_ns: Int = Field(default=1000, ge=1, le=1_000_000_000, description="largest |offset from master|")
    path_delay_ns: Int = Field(default=200, ge=1, le=1_000_000_000, description="largest mean path delay")
    last_sync_s: Int = Field(default=60, ge=1, le=86_400, description="longest time since the last sync")


class Ptp(IntentModel):
    """PTP (IEEE 1588) as a fabric service: boundary clocks on the switches, the servers' NICs as clients."""

    profile: PtpProfile = "default-1588"
    domain: Int | None = Field(default=None, ge=0, le=127, description="default: the profile's default domain")
    grandmaster: PtpGrandmaster
    boundary_clocks: tuple[ClockTier, ...] = Field(
        default=("leaf", "spine", "super_spine"), description="tiers whose switches run a boundary clock "
        "(tiers the fabric lacks are ignored)")
    servers: Flag = Field(default=True, description="the GPU servers' NICs sync as PTP clients")
    timestamping: Literal["hardware", "software"] = Field(
        default="hardware", description="linuxptp's time_stamping; software only for labs (no PHC)")
    dscp: Int = Field(default=46, ge=0, le=63, description="DSCP of PTP event and general messages (EF)")
    thresholds: PtpThresholds = PtpThresholds()

    @model_validator(mode="after")
    def _domain_in_profile(self) -> Ptp:
        lo, hi, _ = PTP_DOMAINS[self.profile]
        if self.domain is not None and not lo <= self.domain <= hi:
            raise invalid(f"domain {self.domain} is outside the {self.profile} profile's domains {lo}-{hi}",
                          f"use a domain from {lo} to {hi}, or leave it out ({PTP_DOMAINS[self.profile][2]})",
                          at="domain")
        if len(set(self.boundary_clocks)) != len(self.boundary_clocks):
            raise invalid("a tier is listed twice", "list each tier once", at="boundary_clocks")
        return self

    @property
    def domain_number(self) -> int:
        return self.domain if self.domain is not None else PTP_DOMAINS[self.profile][2]


def check_grandmaster_group(ptp: Ptp | None, endpoint_names: list[str]) -> None:
    """The grandmasters are the hosts of an `endpoints:` group, so the group `ptp.grandmaster.endpoints` names
    must exist (a cross-section rule: the Intent's validator calls it)."""
    if ptp is None or ptp.grandmaster.endpoints in endpoint_names:
        return
    raise invalid(f"no endpoints: group is named {ptp.grandmaster.endpoints!r}",
                  "add an endpoints: group for the grandmasters (e.g. {name: gm, role: other, count: 1, "
                  "per: su}) and name it here" if not endpoint_names else f"use one of: {', '.join(endpoint_names)}",
                  at="ptp.grandmaster.endpoints")
