"""`fabricgen check`: prove generated configs against each platform's own schema or parser.

Every checker returns `Finding`s (findings.py) so results merge and print the same way:

    findings.py    Finding + table / JSON / JUnit output
    sonic_yang.py  SONiC config_db.json against SONiC's YANG models (libyang)        rule "sonic-yang"
    frr_parser.py  FRR configs through FRR's own parser (vtysh --dryrun)              rule "frr-parse"
    nxos.py        NX-OS structure over its indentation tree (config_tree.py)      rules "nxos-*"
    facts.py       per-device RoCE facts; extract/<platform>.py fills them from its files
    roce.py        fabric-wide RoCE invariants over per-device facts                rules "roce-*"
    addresses.py   every address configured once across the fabric                 rule "addr-duplicate"
    yang_models.py where the pinned SONiC YANG models are found (or fetched from)

The checkers are imported lazily by their callers: libyang and vtysh are only needed
when those checks actually run.
"""

from fabricgen.check.findings import Finding, format_findings

__all__ = ["Finding", "format_findings"]
