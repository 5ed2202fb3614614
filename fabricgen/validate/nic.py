"""The live NIC side: each server's RoCE settings read over SSH and compared with the plan.

The live version of `fabricgen check`'s NIC consistency: what the NICs do now, not what their
script says.  Per back-end NIC, one SSH command reads:

=================  ==========================================================================
trust, PFC mask    ``mlnx_qos -i <netdev>``: ``Priority trust state: dscp`` and the ``enabled``
                   row of ``PFC configuration`` (mlnx-tools)
RDMA CM ToS        ``cma_roce_tos -d <rdma dev>`` (prints the default ToS of RDMA-CM QPs), and
                   ``/sys/class/infiniband/<dev>/tc/1/traffic_class`` where MLNX_OFED has it
ECN per priority   ``/sys/class/net/<netdev>/ecn/roce_np|roce_rp/enable/<prio>`` (MLNX_OFED /
                   DOCA-OFED), else the firmware's ``ROCE_CC_PRIO_MASK_P<port>`` (``mlxconfig q``)
CNP DSCP, 802.1p   ``ecn/roce_np/cnp_dscp`` / ``cnp_802p_prio`` (OFED), else the firmware's
                   ``CNP_DSCP_P<port>`` / ``CNP_802P_PRIO_P<port>``
NCCL               ``/etc/nccl.conf``, as the NIC script writes it: ``NCCL_IB_TC`` must be the RoCE ToS
                   and ``NCCL_IB_QPS_PER_CONNECTION`` the plan's (a file without them fails)
=================  ==========================================================================

The RDMA device of each netdev comes from sysfs (never from its position).  A setting nothing on
the host can show (no OFED sysfs, no mlxconfig) is reported as unverified, not as a failure.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fabricgen.catalog.rules import ids
from fabricgen.plan.model import Plan, QosPolicy, Server
from fabricgen.plan.qos import pfc_mask
from fabricgen.validate.checks import Outcome

if TYPE_CHECKING:
    from fabricgen.connect import ConnectionSettings

NIC_CHECKS = ids("live", platform="host")  # the same ids as the scripts' static check (catalog/rules.py)
MISSING = "(missing)"
_TRUST = re.compile(r"Priority trust state:\s*(\w+)")
_PFC_ROW = re.compile(r"^\s*enabled:?\s+((?:[01]\s+){7}[01])\s*$", re.MULTILINE)
_MLXCONFIG = re.compile(r"^\s+([A-Z0-9_]+_P\d+)\s+(\S+)", re.MULTILINE)
_FW_VALUE = re.compile(r"^(?:\w+\()?(\d+)\)?$")
_NCCL_TC = re.compile(r"^\s*NCCL_IB_TC\s*=\s*(\S+)", re.MULTILINE)
_NCCL_QPS = re.compile(r"^\s*NCCL_IB_QPS_PER_CONNECTION\s*=\s*(\S+)", re.MULTILINE)


def nccl_advice(policy: QosPolicy) -> str:
    dscp = ",".join(str(d) for d in policy.roce_dscp)
    return (f"NCCL_IB_TC={policy.nic_roce_tos}: NCCL sets the traffic class of its own RDMA QPs from NCCL_IB_TC, "
            f"not from the RDMA-CM default ToS. Left unset or 0, its traffic leaves with DSCP 0 and rides priority 0: "
            f"lossy, no PFC, no ECN. Export NCCL_IB_TC={policy.nic_roce_tos} (DSCP {dscp} with ECT(0)) in every job, "
            f"or put it in /etc/nccl.conf.")


def _fw_keys(port: int) -> list[str]:
    return [f"CNP_DSCP_P{port}", f"CNP_802P_PRIO_P{port}", f"ROCE_CC_PRIO_MASK_P{port}"]


def read_script(server: Server) -> str:
    """One shell command that prints every NIC's settings, in sections (see the module docstring)."""
    lines = []
    for nic in sorted(server.nics, key=lambda n: (n.nic, n.port)):
        q = shlex.quote(nic.ifname)
        keys = " ".join(_fw_keys(nic.port + 1))
        lines += [
            f"echo '### nic {nic.ifname}'",
            f'dev=""; for p in /sys/class/infiniband/*/device/net/{q}; do [ -e "$p" ] || continue; '
            'dev=${p#/sys/class/infiniband/}; dev=${dev%%/*}; break; done; echo "rdma_dev=$dev"',
            "echo '--- mlnx_qos'",
            f"if command -v mlnx_qos >/dev/null 2>&1; then mlnx_qos -i {q} 2>&1; else echo '{MISSING}'; fi",
            "echo '--- cma_roce_tos'",
            'if [ -n "$dev" ] && command -v cma_roce_tos >/dev/null 2>&1; then cma_roce_tos -d "$dev" 2>&1; '
            f"else echo '{MISSING}'; fi",
            "echo '--- traffic_class'",
            f'cat "/sys/class/infiniband/$dev/tc/1/traffic_class" 2>/dev/null || echo \'{MISSING}\'',
            "echo '--- ecn'",
            f"for p in 0 1 2 3 4 5 6 7; do echo \"$p $(cat /sys/class/net/{q}/ecn/roce_np/enable/$p 2>/dev/null "
            f"|| echo -) $(cat /sys/class/net/{q}/ecn/roce_rp/enable/$p 2>/dev/null || echo -)\"; done",
            "echo '--- cnp'",
            f"echo \"$(cat /sys/class/net/{q}/ecn/roce_np/cnp_dscp 2>/dev/null || echo -) "
            f"$(cat /sys/class/net/{q}/ecn/roce_np/cnp_802p_prio 2>/dev/null || echo -)\"",
            "echo '--- mlxconfig'",
            f'if [ -n "$dev" ] && command -v mlxconfig >/dev/null 2>&1; then mlxconfig -d "$dev" q {keys} 2>&1; '
            f"else echo '{MISSING}'; fi",
        ]
    lines += ["echo '### nccl'", 'cat "${NCCL_CONF_FILE:-/etc/nccl.conf}" 2>/dev/null; true']  # where NCCL reads it
    return "; ".join(lines)


@dataclass
class NicReading:
    """What one NIC shows; None = the host cannot show it."""

    ifname: str
    rdma_dev: str = ""
    trust: str | None = None
    pfc: str | None = None
    roce_tos: int | None = None
    traffic_class: int | None = None
    ecn: dict[int, tuple[str, str]] = field(default_factory=dict)  # prio -> (np, rp) sysfs text, "-" = absent
    cnp_sysfs: tuple[str, str] = ("-", "-")  # (dscp, 802.1p) text, "-" = absent
    firmware: dict[str, int] = field(default_factory=dict)  # mlxconfig query values


def _int(text: str) -> int | None:
    m = _FW_VALUE.match(text.strip())
    return int(m.group(1)) if m else None


def _sections(text: str) -> tuple[dict[str, dict[str, str]], str]:
    """Script output -> ({ifname: {section: text}}, nccl.conf text)."""
    nics: dict[str, dict[str, str]] = {}
    nccl: list[str] = []
    current: dict[str, str] | None = None
    section = ""
    in_nccl = False
    for line in text.splitlines():
        if line.startswith("### nic "):
            current, section, in_nccl = nics.setdefault(line[8:].strip(), {}), "head", False
            current[section] = ""
        elif line.startswith("### nccl"):
            current, in_nccl = None, True
        elif line.startswith("--- ") and current is not None:
            section = line[4:].strip()
            current[section] = ""
        elif in_nccl:
            nccl.append(line)
        elif current is not None:
            current[section] += line + "\n"
    return nics, "\n".join(nccl)


def parse_readings(text: str) -> tuple[dict[str, NicReading], str]:
    nics, nccl = _sections(text)
    out: dict[str, NicReading] = {}
    for ifname, sec in nics.items():
        r = NicReading(ifname)
        m = re.search(r"rdma_dev=(\S*)", sec.get("head", ""))
        r.rdma_dev = m.group(1) if m else ""
        qos = sec.get("mlnx_qos", "")
        if m := _TRUST.search(qos):
            r.trust = m.group(1)
        if m := _PFC_ROW.search(qos):
            r.pfc = ",".join(m.group(1).split())
        tos = sec.get("cma_roce_tos", "").strip().splitlines()
        r.roce_tos = _int(tos[-1]) if tos and MISSING not in tos[-1] else None
        tc = sec.get("traffic_class", "")
        if MISSING not in tc and (m := re.search(r"(?:tclass=)?(\d+)", tc)):
            r.traffic_class = int(m.group(1))
        for line in sec.get("ecn", "").splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[0].isdigit():
                r.ecn[int(parts[0])] = (parts[1], parts[2])
        cnp = sec.get("cnp", "").split()
        if len(cnp) == 2:
            r.cnp_sysfs = (cnp[0], cnp[1])
        for key, value in _MLXCONFIG.findall(sec.get("mlxconfig", "")):
            v = _int(value)
            if v is not None:
                r.firmware[key] = v
        out[ifname] = r
    return out, nccl


def judge_server(server: Server, policy: QosPolicy, output: str) -> list[Outcome]:
    """Every NIC of ``server`` against the plan's NIC settings (see NIC_CHECKS)."""
    readings, nccl = parse_readings(output)
    out: list[Outcome] = []
    prio, cnp_prio = policy.roce_tc, policy.cnp_tc

    def add(check: str, nic: str, want: str, got: str | None, ok: bool, why_unknown: str = "") -> None:
        if got is None:
            out.append(Outcome(server.name, check, nic, True, want, f"unverified: {why_unknown}"))
        else:
            out.append(Outcome(server.name, check, nic, ok, want, got))

    for nic in sorted(server.nics, key=lambda n: (n.nic, n.port)):
        r = readings.get(nic.ifname, NicReading(nic.ifname))
        name = f"{nic.ifname} ({r.rdma_dev or 'no RDMA device'})"
        if not r.rdma_dev:
            out.append(Outcome(server.name, "nic-roce-dscp", name, False, "an RDMA device for the netdev",
                               f"none under /sys/class/infiniband/*/device/net/{nic.ifname} (mlx5_ib not loaded?)"))
        add("nic-trust", name, f"trust {policy.nic_trust}", None if r.trust is None else f"trust {r.trust}",
            r.trust == policy.nic_trust, "mlnx_qos not installed")
        want_pfc = pfc_mask(policy.lossless_tcs)
        add("nic-pfc-mask", name, f"PFC {want_pfc}", None if r.pfc is None else f"PFC {r.pfc}", r.pfc == want_pfc,
            "mlnx_qos not installed")
        tos_ok = r.roce_tos == policy.nic_roce_tos and r.traffic_class in (None, policy.nic_roce_tos)
        verbs = "" if r.traffic_class is None else f", verbs traffic_class {r.traffic_class}"
        got_tos = None if r.roce_tos is None else f"RDMA-CM ToS {r.roce_tos}{verbs}"
        add("nic-roce-dscp", name, f"ToS {policy.nic_roce_tos}", got_tos, tos_ok, "cma_roce_tos not installed")
        port = nic.port + 1
        if policy.nic_ecn:
            np_rp = r.ecn.get(prio, ("-", "-"))
            mask = r.firmware.get(f"ROCE_CC_PRIO_MASK_P{port}")
            if np_rp != ("-", "-"):
                add("nic-ecn", name, f"ECN NP and RP on priority {prio}", f"roce_np {np_rp[0]}, roce_rp {np_rp[1]} "
                    f"on priority {prio}", np_rp == ("1", "1"))
            else:
                add("nic-ecn", name, f"ECN (DCQCN) on priority {prio}",
                    None if mask is None else f"ROCE_CC_PRIO_MASK_P{port}={mask}", mask is not None and bool(
                        mask >> prio & 1), "no OFED ecn/ sysfs and no mlxconfig")
        dscp, p8021 = r.cnp_sysfs
        if dscp != "-":
            got_cnp: str | None = f"CNP DSCP {dscp}, 802.1p {p8021}"
            cnp_ok = dscp == str(policy.nic_cnp_dscp) and p8021 in (str(cnp_prio), "-")
        else:
            fw_dscp, fw_prio = r.firmware.get(f"CNP_DSCP_P{port}"), r.firmware.get(f"CNP_802P_PRIO_P{port}")
            got_cnp = None if fw_dscp is None else f"CNP_DSCP_P{port}={fw_dscp}, CNP_802P_PRIO_P{port}={fw_prio}"
            cnp_ok = fw_dscp == policy.nic_cnp_dscp and fw_prio in (None, cnp_prio)
        add("nic-cnp-dscp", name, f"CNP DSCP {policy.nic_cnp_dscp}, 802.1p {cnp_prio}", got_cnp, cnp_ok,
            "no OFED ecn/ sysfs and no mlxconfig")
    for rule, pattern, key, want in (("nccl-tc", _NCCL_TC, "NCCL_IB_TC", policy.nic_roce_tos),
                                      ("nccl-qps", _NCCL_QPS, "NCCL_IB_QPS_PER_CONNECTION",
                                       policy.nic_qps_per_connection)):
        m = pattern.search(nccl)
        got = f"{key}={m.group(1)}" if m else f"no {key} (the NIC script writes it)"
        out.append(Outcome(server.name, rule, f"/etc/nccl.conf {key}", m is not None and m.group(1) == str(want),
                           f"{key}={want}", got))
    return out


def collect_nics(plan: Plan, creds: ConnectionSettings, workers: int) -> list[Outcome]:
    """Every server's NICs over SSH (host keys verified), judged against the plan."""
    from concurrent.futures import ThreadPoolExecutor

    from fabricgen.connect import describe, ssh_run

    policy = plan.qos
    assert policy is not None

    def one(srv: Server) -> list[Outcome]:
        try:
            output = ssh_run(srv.mgmt_ip, creds, read_script(srv))
        except Exception as exc:  # noqa: BLE001 - an unreachable server is a finding, not a crash
            return [Outcome(srv.name, "nic-trust", "ssh", False, f"reachable over SSH at {srv.mgmt_ip}",
                            describe(exc))]
        return judge_server(srv, policy, output)

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return [o for found in pool.map(one, plan.servers) for o in found]
