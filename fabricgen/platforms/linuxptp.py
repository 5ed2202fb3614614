"""linuxptp's ptp4l.conf for one planned clock: Linux + FRR boundary clocks, server NIC clients, grandmasters.

Every keyword is ptp4l's own (linuxptp 3.1, `man ptp4l` and the example configs Debian ships in
/usr/share/doc/linuxptp/configs: default.cfg, G.8275.1.cfg, G.8275.2.cfg):

* ``[global]``: ``domainNumber``, ``priority1``/``priority2``, ``slaveOnly`` (clients never become
  master), ``network_transport`` (UDPv4 or L2), ``delay_mechanism E2E``, ``time_stamping``,
  ``dscp_event``/``dscp_general`` (the intent's PTP DSCP), ``uds_address`` (pmc's socket: one per
  ptp4l, so a server's NIC clocks do not share one), ``summary_interval``;
* G.8275.1: ``dataset_comparison G.8275.x``, ``G.8275.defaultDS.localPriority``, ``ptp_dst_mac
  01:80:C2:00:00:0E`` (the non-forwardable address), the faster message rates of Debian's example;
* G.8275.2: ``dataset_comparison G.8275.x``, ``hybrid_e2e 1``, ``inhibit_multicast_service 1``,
  ``unicast_listen 1`` and, on each port toward the grandmaster, a ``[unicast_master_table]`` naming
  that port's peer address (the plan knows it);
* software timestamping (labs sharing one kernel clock): ``free_running 1`` -- ptp4l measures offset
  and path delay but never steers the clock, so a namespace lab cannot fight over it;
* one ``[<port>]`` section per planned PTP port.
"""

from __future__ import annotations

from fabricgen.plan.model import Plan, PtpClock, PtpPlan

CONF_FILE = "ptp4l.conf"  # a Linux switch's boundary clock: `ptp4l -f ptp4l.conf`
PTP_DST_MAC_8275_1 = "01:80:C2:00:00:0E"  # G.8275.1's non-forwardable multicast address
UDS_DIR = "/var/run"


def uds_address(instance: str = "") -> str:
    """pmc's socket of a ptp4l: /var/run/ptp4l, or /var/run/ptp4l-<ifname> for one of a server's NIC clocks."""
    return f"{UDS_DIR}/ptp4l-{instance}" if instance else f"{UDS_DIR}/ptp4l"


def ptp4l_conf(clock: PtpClock, ptp: PtpPlan, plan: Plan, ports: list[str] | None = None,
               instance: str = "", header: str = "") -> str:
    """The ptp4l.conf of one clock: its [global] section and one section per PTP port."""
    names = ports if ports is not None else [p.name for p in clock.ports]
    g: list[tuple[str, object]] = [
        ("domainNumber", ptp.domain),
        ("priority1", clock.priority1),
        ("priority2", clock.priority2),
        ("slaveOnly", 1 if clock.kind == "client" else 0),
        ("network_transport", ptp.transport),
        ("delay_mechanism", "E2E"),
        ("time_stamping", ptp.timestamping),
        ("dscp_event", ptp.dscp),
        ("dscp_general", ptp.dscp),
        ("uds_address", uds_address(instance)),
        ("summary_interval", 0),
    ]
    if ptp.timestamping == "software" and clock.kind != "grandmaster":
        g.append(("free_running", 1))
    if ptp.profile in ("g8275.1", "g8275.2"):
        g += [("dataset_comparison", "G.8275.x"), ("G.8275.defaultDS.localPriority", 128)]
    if ptp.profile == "g8275.1":
        g += [("ptp_dst_mac", PTP_DST_MAC_8275_1), ("logAnnounceInterval", -3), ("logSyncInterval", -4),
              ("logMinDelayReqInterval", -4)]
    if ptp.profile == "g8275.2":
        g += [("hybrid_e2e", 1), ("inhibit_multicast_service", 1), ("unicast_listen", 1)]
    lines = [f"# {header}"] if header else []
    lines += ["[global]"] + [f"{k} {v}" for k, v in g]
    masters = _unicast_masters(clock, plan) if ptp.profile == "g8275.2" else {}
    tables = {port: i + 1 for i, port in enumerate(masters)}  # one table per upstream port: its own peer
    for port, ip in masters.items():
        lines += ["", "[unicast_master_table]", f"table_id {tables[port]}", "logQueryInterval 2", f"UDPv4 {ip}"]
    for name in names:
        lines += ["", f"[{name}]"]
        if name in tables:
            lines.append(f"unicast_master_table {tables[name]}")
    return "\n".join(lines) + "\n"


def _unicast_masters(clock: PtpClock, plan: Plan) -> dict[str, str]:
    """G.8275.2: port -> the address of the peer it takes time from (its upstream ports' peers)."""
    out: dict[str, str] = {}
    for port in clock.ports:
        if port.role != "upstream":
            continue
        peer = plan.switches.get(port.peer)
        if peer is not None:
            try:
                itf = peer.interface(port.peer_port)
            except KeyError:
                continue
            out[port.name] = itf.ipv4.split("/")[0]
        else:
            for srv in plan.hosts():
                for nic in srv.nics if srv.name == port.peer else ():
                    if nic.ifname == port.peer_port and nic.ip:
                        out[port.name] = nic.ip.split("/")[0]
    return out
