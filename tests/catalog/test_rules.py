"""The rule catalogue is the one place rule ids are declared: every checker's ids come from it, a property
checked statically and live has one id, and each id is documented once."""

from __future__ import annotations

import ast

from fabricgen.catalog import rules
from tests.conftest import ROOT


def test_every_checker_takes_its_ids_from_the_catalogue() -> None:
    from fabricgen.check import addresses, frr_parser, nic, ptp, roce, sonic_yang, tenants
    from fabricgen.platforms.eos import check as eos
    from fabricgen.platforms.nxos import check as nxos
    from fabricgen.validate import checks, health
    from fabricgen.validate import nic as live_nic
    from fabricgen.validate import ptp as live_ptp

    used = {*roce.RULES, *nic.RULES, *addresses.RULES, *nxos.RULES, *eos.RULES, sonic_yang.RULE, frr_parser.RULE,
            *checks.CHECKS, *health.RULES, *live_nic.NIC_CHECKS, *ptp.RULES, *live_ptp.RULES,
            *tenants.RULES}
    assert used == set(rules.BY_ID)  # every id is run somewhere, and nothing runs an undeclared one


def test_a_nic_property_has_one_id_in_the_script_check_and_on_the_live_nic() -> None:
    from fabricgen.check import nic
    from fabricgen.validate import nic as live_nic

    assert set(nic.RULES) & set(live_nic.NIC_CHECKS) == {"nic-roce-dscp", "nic-cnp-dscp", "nic-pfc-mask",
                                                         "nic-trust"}


def test_no_module_spells_a_rule_id_of_its_own() -> None:
    """A `RULES = (...)` / `RULE = "..."` literal outside the catalogue would be a second declaration."""
    wrong = []
    for path in (ROOT / "fabricgen").rglob("*.py"):
        if path.name == "rules.py" and path.parent.name == "catalog":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = {t.id for t in getattr(node, "targets", []) if isinstance(t, ast.Name)}
            if isinstance(node, ast.Assign) and names & {"RULES", "RULE", "CHECKS", "NIC_CHECKS"} and isinstance(
                    node.value, (ast.Tuple, ast.Constant)):
                wrong.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not wrong, wrong


def test_the_docs_table_lists_every_rule_with_its_stage() -> None:
    text = rules.markdown()
    for r in rules.RULES:
        assert f"| `{r.id}` |" in text
    assert rules.ids("config", "roce-")[0] == "roce-lossless-chain"
    assert rules.rule("roce-ecn-range").severity == "warning"
