"""`fabricgen check`: prove generated configs against each platform's own schema or parser.

Every checker returns `Finding`s (base/findings.py) so results merge and print the same way:

    sonic_yang.py  SONiC config_db.json against SONiC's YANG models (libyang)        rule "sonic-yang"
      yang_schema.py       the models in one libyang context; the index of config_db tables
      configdb_to_yang.py  config_db -> YANG-JSON instance data, typed per leaf (RFC 7951)
      yang_errors.py       libyang's errors -> findings at config_db JSON pointers
      sonic_shapes.py      which config_dbs YANG cannot tell apart: libyang runs once per clean shape
    frr_parser.py  FRR configs through FRR's own parser (vtysh --dryrun)              rule "frr-parse"
    frr_shapes.py  which frr.confs FRR's parser cannot tell apart: vtysh runs once per shape
    (platforms/nxos/check.py: NX-OS structure over its indentation tree              rules "nxos-*")
    (platforms/facts.py: per-device RoCE facts; platforms/<os>/extract.py fills them from its files)
    roce.py        fabric-wide RoCE invariants over per-device facts                rules "roce-*"
    addresses.py   every address configured once across the fabric                 rule "addr-duplicate"
    yang_models.py where the pinned SONiC YANG models are found (or fetched from)

The checkers are imported lazily by their callers: libyang and vtysh are only needed
when those checks actually run.
"""

from fabricgen.base.findings import Finding, format_findings

__all__ = ["Finding", "format_findings"]
