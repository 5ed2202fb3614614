"""`fabricgen docs`: fabric documentation in Markdown, as AVD writes it for its fabrics.

One overview (summary, diagram, address pools, bill of materials), one cabling
page and one page per device (interfaces, addresses, BGP neighbours, QoS).
Every number comes from the plan and its public views (`plan.summary`,
`plan.cabling_csv`), so the documents always match what `render` writes.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from pathlib import Path

from fabricgen.analyze import diagram
from fabricgen.analyze.fabric import from_plan
from fabricgen.plan.model import Plan, Switch
from fabricgen.render.summary import cabling_csv, summary


def _table(head: list[str], rows: list[list[object]]) -> str:
    def esc(v: object) -> str:
        return str(v).replace("|", "\\|")

    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(esc(v) for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def overview(plan: Plan) -> str:
    s = summary(plan)
    out = [f"# {s['fabric']}\n", f"{plan.settings.description}\n" if plan.settings.description else "",
           "![fabric](diagram.svg)\n", "## Summary\n"]
    rows: list[list[object]] = [
        ["GPUs", s["gpus"]], ["servers", s["servers"]], ["tiers", s["tiers"]], ["planes", s["planes"]],
        ["leaves", s["leaves"]], ["spines", s["spines"]], ["super-spines", s["super_spines"]],
        ["switches", s["switches"]],
    ]
    rows += [[f"links {tier}", n] for tier, n in s["links"].items() if n]
    rows += [[f"oversubscription {tier}", r] for tier, r in s["oversubscription"].items()]
    rows += [["BGP ASN scheme", plan.settings.asn_scheme]]
    out.append(_table(["item", "value"], rows))
    out.append("\n## Address pools\n")
    out.append(_table(["pool", "used", "size", "use"],
                      [[name, u["used"], u["size"], f"{100 * u['used'] / u['size']:.1f}%"]
                       for name, u in s["pools"].items()]))
    out.append("\n## Bill of materials\n")
    models = Counter((sw.role, sw.model, sw.platform) for sw in plan.switches.values())
    out.append(_table(["role", "model", "platform", "count"],
                      [[r.replace("_", "-"), m, p, n] for (r, m, p), n in sorted(models.items())]))
    out.append("\n")
    out.append(_table(["transceiver module", "count"], [[k, v] for k, v in s["modules"].items()]))
    out.append("\n")
    out.append(_table(["cable", "count"], [[k, v] for k, v in s["cables"].items()]))
    out.append("\n## Devices\n")
    out += [f"- [{name}](devices/{name}.md) ({sw.role.replace('_', '-')}, AS {sw.asn})\n"
            for name, sw in plan.switches.items()]
    out.append("\nCabling: [cabling.md](cabling.md)\n")
    return "".join(out)


def device(plan: Plan, sw: Switch) -> str:
    out = [f"# {sw.hostname}\n\n"]
    out.append(_table(["role", "platform", "model", "ASN", "loopback", "management"],
                      [[sw.role.replace("_", "-"), sw.platform, sw.model, sw.asn, sw.loopback, sw.mgmt_ip]]))
    out.append("\n## Interfaces\n")
    out.append(_table(["interface", "speed", "tier", "peer", "peer interface", "IPv4", "MTU", "QoS profile"],
                      [[i.name, f"{i.speed}G", i.tier, i.peer_device, i.peer_interface, i.ipv4 or "-", i.mtu,
                        i.qos_profile or "-"] for i in sw.interfaces]))
    if sw.bgp is not None:
        out.append("\n## BGP\n")
        out.append(f"AS {sw.bgp.asn}, router-id {sw.bgp.router_id}, maximum-paths {sw.bgp.maximum_paths}, "
                   f"timers {sw.bgp.keepalive}/{sw.bgp.holdtime}, BFD {'on' if sw.bgp.bfd else 'off'}\n\n")
        out.append(_table(["neighbor", "remote AS", "peer", "interface", "allowas-in"],
                          [[n.ip, n.remote_asn, n.peer_device, n.interface, n.allowas_in or "-"]
                           for n in sw.bgp.neighbors]))
    q = plan.qos
    if q is not None:
        out.append("\n## QoS\n")
        out.append(_table(["RoCE DSCP", "RoCE TC", "lossless TCs", "CNP DSCP", "CNP TC", "PFC watchdog"],
                          [[",".join(map(str, q.roce_dscp)), q.roce_tc, ",".join(map(str, q.lossless_tcs)),
                            q.cnp_dscp, q.cnp_tc,
                            f"{q.watchdog_action} after {q.watchdog_detection_ms} ms" if q.watchdog_enabled
                            else "off"]]))
        used = sorted({i.qos_profile for i in sw.interfaces if i.qos_profile})
        if used:
            out.append("\n")
            out.append(_table(["profile", "speed", "cable m", "xon", "xoff", "size", "ECN min", "ECN max"],
                              [[p.name, f"{p.speed}G", f"{p.cable_m:g}", p.xon, p.xoff, p.size, p.ecn_min,
                                p.ecn_max] for p in (plan.qos_profiles[n] for n in used)]))
    return "".join(out)


def cabling(plan: Plan) -> str:
    rows = list(csv.reader(io.StringIO(cabling_csv(plan))))
    return f"# Cabling of {plan.settings.name}\n\n" + (_table(rows[0], [list(r) for r in rows[1:]]) if rows
                                                            else "no cables\n")


def write_docs(plan: Plan, outdir: str | Path) -> int:
    """Write the documents; returns how many files."""
    out = Path(outdir)
    files = {"index.md": overview(plan), "cabling.md": cabling(plan),
             "diagram.svg": diagram.draw(from_plan(plan))}
    for name, sw in plan.switches.items():
        files[f"devices/{name}.md"] = device(plan, sw)
    for rel, text in files.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    return len(files)
