"""The intent's `tenancy:` and `tenants:` sections: who owns which servers (or NICs) and how they are kept apart.

The plan turns them into VRFs, VNIs and route targets per leaf (fabricgen.plan.tenants); docs/tenants.md
tells the whole story.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from fabricgen.intent.fields import Int, IntentModel, Text, invalid, label

# Linux caps an interface name at 15 characters (IFNAMSIZ - 1); a tenant name becomes part of one
# (the lab's `<leaf>-<tenant>` namespace, the VXLAN/bridge devices `vx<id>`/`br<id>`), and SONiC's
# VRF name is `Vrf<name>` (sonic-vrf.yang: pattern "Vrf[a-zA-Z0-9_-]+").
TENANT_NAME_LEN = 12
TenantName = Annotated[str, AfterValidator(label(TENANT_NAME_LEN, prefix=False))]
_MEMBER = re.compile(r"(?P<first>[a-z0-9][a-z0-9-]*?)(?:-(?P<last>[a-z][a-z0-9-]*[0-9]))?(?::(?P<nics>\d+(?:-\d+)?))?",
                     re.ASCII)
MAX_TENANT_ID = 1000  # its L3VNI VLAN (3000 + id) stays a VLAN id; fits a type-1 RD's 2-byte number


def parse_member(text: str) -> tuple[str, str, tuple[int, int] | None]:
    """`gpu0001`, `gpu0001-gpu0008` (servers), `gpu0003:0-3` (NICs 0..3 of a server or range): (first, last, nics).

    A name that itself has a '-' (prefix `gpu-`) parses as one server when the plan has it
    (fabricgen.plan.tenants); the split here is only the range reading.
    """
    m = _MEMBER.fullmatch(text)
    if m is None:
        raise ValueError(text)
    nics = m.group("nics")
    span: tuple[int, int] | None = None
    if nics is not None:
        lo, _, hi = nics.partition("-")
        span = (int(lo), int(hi or lo))
        if span[0] > span[1]:
            raise ValueError(text)
    return m.group("first"), m.group("last") or m.group("first"), span


def _member(value: str) -> str:
    try:
        parse_member(value)
    except ValueError:
        raise invalid(f"{value!r} is not a server, a server range or a server's NICs",
                      "write gpu0001 (a server), gpu0001-gpu0008 (servers) or gpu0003:0-3 (NICs 0..3, "
                      "tenancy.scope: gpu)") from None
    return value


Member = Annotated[str, AfterValidator(_member)]


class Tenancy(IntentModel):
    """How tenants are isolated (Juniper's AI multitenancy JVD: server vs GPU isolation; Nokia EDA: leaking vs EVPN).

    `server` scope puts a tenant's VRF on every leaf of the stripes (scalable units) its servers sit
    in; `gpu` scope only on the leaves wired to its NICs.  `vrf-lite` leaks each tenant's routes
    through the default VRF with no encapsulation; `evpn-vxlan` carries them as EVPN type-5 routes
    in an L3VNI per tenant.
    """

    scope: Literal["server", "gpu"] = "server"
    mechanism: Literal["vrf-lite", "evpn-vxlan"] = "evpn-vxlan"
    vni_base: Int = Field(default=10_000, ge=1, le=16_777_215 - MAX_TENANT_ID,
                          description="a tenant's L3VNI is vni_base + its id")
    table_base: Int = Field(default=1_000, ge=1, le=4_000_000,
                            description="a tenant's VRF table (Linux/FRR) is table_base + its id")
    rt_admin: Int = Field(default=65_000, ge=1, le=65_535,
                          description="administrator field of every route target (<rt_admin>:<vni>): the same on "
                          "every leaf, whatever its ASN")
    outer: Literal["ipv4", "ipv6"] = Field(default="ipv4", description="VXLAN outer header: 50 or 70 bytes")


class Tenant(IntentModel):
    """A tenant: the servers (or, with scope gpu, the NICs) it owns, and the tenants it may reach."""

    name: TenantName
    id: Int = Field(ge=1, le=MAX_TENANT_ID, description="the tenant's number: its VNI, VRF table, RD and RT "
                    "derive from it, so adding or renaming a tenant renumbers nothing")
    servers: list[Member] = Field(min_length=1, max_length=4096)
    vni: Int | None = Field(default=None, ge=1, le=16_777_215, description="default: tenancy.vni_base + id")
    reach: list[TenantName] = Field(default_factory=list, max_length=64,
                                    description="other tenants whose routes this one imports (leaked by intent)")
    description: Text = ""


def check_tenants(tenants: list[Tenant], tenancy: Tenancy | None) -> None:
    """Names, ids and VNIs are identities: two tenants sharing one would share a VRF, a VNI or an RT.

    A rule across `tenancy:` and `tenants:` (the Intent's validator calls it), so `at` is relative to the intent.
    """
    if tenants and tenancy is None:
        raise invalid("tenants are listed but tenancy is missing", "add tenancy: {scope: server, mechanism: "
                      "evpn-vxlan} (or vrf-lite, or scope gpu)", at="tenants")
    seen: dict[tuple[str, object], int] = {}
    for i, t in enumerate(tenants):
        vni = t.vni if t.vni is not None else (tenancy.vni_base + t.id if tenancy else 0)
        for what, value in (("name", t.name), ("id", t.id), ("vni", vni)):
            first = seen.setdefault((what, value), i)
            if first != i:
                field = "vni" if what == "vni" and t.vni is not None else ("id" if what == "vni" else what)
                raise invalid(f"tenant {t.name!r} has the {what} {value} of tenants.{first} "
                              f"({tenants[first].name!r})", f"give tenants.{i} a {what} of its own"
                              + (" (its vni is tenancy.vni_base + id unless given)" if what == "vni" else ""),
                              at=f"tenants.{i}.{field}")
    names = {t.name for t in tenants}
    for i, t in enumerate(tenants):
        for j, other in enumerate(t.reach):
            if other == t.name or other not in names:
                raise invalid(f"tenant {t.name!r} may reach {other!r}, " + (
                    "itself" if other == t.name else "which is not a tenant"),
                    f"list other tenants' names ({', '.join(sorted(names - {t.name})) or 'none'})",
                    at=f"tenants.{i}.reach.{j}")
        if tenancy is not None and tenancy.scope == "server":
            for j, member in enumerate(t.servers):
                if parse_member(member)[2] is not None:
                    raise invalid(f"{member!r} gives NICs of a server, but tenancy.scope is server (whole "
                                  "servers)", "list whole servers, or use tenancy.scope: gpu",
                                  at=f"tenants.{i}.servers.{j}")
