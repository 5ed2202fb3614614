"""`make sonic-platform`: regenerate the SONiC facts fabricgen ships, from SONiC's own files.

fabricgen renders SONiC SKUs offline from records in ``fabricgen/catalog/sonic_facts/``:

* ``skus/<HWSKU>.json``: one per supported SKU, `fabricgen.catalog.skus.sku_facts` of its
  sonic-buildimage ``device/<vendor>/<platform>/<HWSKU>/`` directory (ports with every
  port_config.ini column, hwsku.json speeds and FEC, pg_profile_lookup.ini rows, the buffer
  model and QoS template it ships, platform and ASIC);
* ``gcu_rules.json``: what GCU (``config apply-patch`` / ``config replace``) lets through live,
  per table, field, operation and ASIC family, from sonic-utilities'
  ``gcu_field_operation_validators.conf.json``.

The facts carry over; the layout is fabricgen's.  tests/catalog/test_skus.py and
tests/deploy/test_deploy_impact.py regenerate both from the test oracle (../shared/sonic-platform) and
fail on any difference, so a drift between the shipped records and SONiC's files fails CI.

    python tools/sonic_facts.py [SRC]   SRC: a sonic-buildimage tree (or the test oracle's pack);
                                        without it the pinned files are fetched (tools/sonic_fetch.py)
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fabricgen.base.outdir import write_atomically  # noqa: E402
from fabricgen.catalog import skus  # noqa: E402
from tools import sonic_fetch  # noqa: E402

FACTS = skus.SHIPPED_SKUS.parent
GCU_FILE = FACTS / "gcu_rules.json"
GCU_VENDORS = (("mellanox_asics", "exact"), ("broadcom_asics", "substring"))  # GCU's own lookup, in its order


def supported_skus() -> dict[str, str]:
    """HWSKU -> its device/<vendor>/<platform> directory, for every SKU fabricgen ships."""
    return {name: platform for platform, names in sonic_fetch.SKUS.items() for name in names}


def sku_record(src: Path, name: str) -> dict[str, Any]:
    """The shipped record of SKU `name`: its facts plus where they came from."""
    platform = supported_skus()[name]
    facts = skus.sku_facts(src / platform / name)
    facts["source"] = {"repository": "sonic-net/sonic-buildimage", "commit": sonic_fetch.COMMIT,
                       "path": f"{platform}/{name}"}
    return facts


def gcu_rules(conf: Mapping[str, Any]) -> dict[str, Any]:
    """GCU's field-operation rules in fabricgen's layout (what `deploy.impact.gcu_allows` reads)."""
    helper = conf.get("helper_data", {}).get("rdma_config_update_validator", {})
    families = [{"family": family, "match": match, "hwskus": list(hwskus)}
                for key, match in GCU_VENDORS for family, hwskus in helper.get(key, {}).items()]
    tables: dict[str, Any] = {}
    for table, body in conf.get("tables", {}).items():
        validators = [str(v).rsplit(".", 1)[-1] for v in body.get("field_operation_validators", [])]
        scenarios = body.get("validator_data", {}).get("rdma_config_update_validator", {})
        tables[table] = {"validators": validators,
                         "rules": [{"name": name, "fields": list(s.get("fields", [])),
                                    "operations": list(s.get("operations", [])),
                                    "since": dict(s.get("platforms", {}))} for name, s in scenarios.items()]}
    return {"format": skus.FACTS_FORMAT,
            "source": {"repository": "sonic-net/sonic-utilities", "commit": sonic_fetch.UTILITIES_COMMIT,
                       "path": sonic_fetch.GCU_RULES},
            "asic_families": families, "tables": tables}


def dumps(record: Mapping[str, Any]) -> str:
    """Stable JSON, one top-level key per line and one list item per line, so a regenerated file diffs well."""
    out = []
    for key, value in record.items():
        if isinstance(value, list) and value:
            items = ",\n".join("  " + json.dumps(v, sort_keys=True) for v in value)
            out.append(f" {json.dumps(key)}: [\n{items}\n ]")
        else:
            out.append(f" {json.dumps(key)}: {json.dumps(value, sort_keys=True)}")
    return "{\n" + ",\n".join(out) + "\n}\n"


def generate(src: Path) -> list[Path]:
    """Write every shipped record from the sonic-buildimage tree `src` (and its sonic-utilities GCU file)."""
    device_root = src if (src / "device").is_dir() else src.parent
    missing = [n for n, p in supported_skus().items() if not (device_root / p / n / "port_config.ini").is_file()]
    if missing:
        raise FileNotFoundError(f"{src}: no SKU files for {', '.join(missing)}")
    gcu = src / "sonic-utilities" / sonic_fetch.GCU_RULES
    if not gcu.is_file():
        raise FileNotFoundError(f"{gcu}: GCU's field rules are missing")
    written = []
    skus.SHIPPED_SKUS.mkdir(parents=True, exist_ok=True)
    for name in sorted(supported_skus()):
        path = skus.SHIPPED_SKUS / f"{name}.json"
        write_atomically(path, dumps(sku_record(device_root, name)))
        written.append(path)
    stale = [p for p in skus.SHIPPED_SKUS.glob("*.json") if p.stem not in supported_skus()]
    for path in stale:  # a SKU dropped from sonic_fetch.SKUS (every file here is this tool's)
        path.unlink()
    write_atomically(GCU_FILE, dumps(gcu_rules(json.loads(gcu.read_text(encoding="utf-8")))))
    return [*written, GCU_FILE]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    src = Path(args[0]) if args else sonic_fetch.default_dest()
    try:
        if not args and not src.is_dir():
            sonic_fetch.fetch_platform(src)
        written = generate(src)
    except (OSError, ValueError, RuntimeError) as exc:  # URLError is an OSError
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{len(written)} SONiC fact files from {src} -> {FACTS} (review `git diff`, then commit)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
