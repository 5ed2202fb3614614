"""NIC scripts rendered once per shape (fabricgen.platforms.host.render._Shape): every server's script is byte for
byte the template's own render of that server, on fabrics whose servers have several shapes (tenant MTUs,
endpoints with fewer NICs, dual-plane NICs, PTP clients, which never share one)."""

from __future__ import annotations

import copy
from typing import Any

import jinja2
import pytest
import yaml

from fabricgen.base.templating import environment
from fabricgen.intent.model import Intent
from fabricgen.plan.build import build_plan, load_plan
from fabricgen.plan.model import Plan
from fabricgen.platforms.host import render as host
from tests.conftest import ROOT, small_intent

ENDPOINTS: dict[str, Any] = {
    "endpoints": [{"name": "storage", "role": "storage", "count": 2, "per": "leaf"},
                  {"name": "ufm", "role": "ufm", "count": 1, "per": "su"}],
}


def _plans() -> dict[str, Plan]:
    tenants = yaml.safe_load((ROOT / "inventory" / "examples" / "tenants-gpu-evpn.yaml").read_text(encoding="utf-8"))
    tenants["tenants"] = tenants["tenants"][:2]  # gpu0025-gpu0032 in no tenant: the fabric MTU beside the tenants'
    dual = small_intent(topology__planes=2, servers__count=4, servers__ports_per_nic=2)
    with_endpoints = copy.deepcopy(small_intent(servers__count=6)) | ENDPOINTS
    return {
        "tenants-gpu-evpn": build_plan(Intent.model_validate(tenants)),
        "ptp": load_plan(ROOT / "inventory" / "lab" / "ptp.yaml"),
        "dual-plane": build_plan(Intent.model_validate(dual)),
        "endpoints": build_plan(Intent.model_validate(with_endpoints)),
    }


PLANS = _plans()


@pytest.mark.parametrize("name", sorted(PLANS))
def test_every_script_equals_the_templates_own_render(name: str) -> None:
    plan, env = PLANS[name], environment()
    host._SHAPES.clear()
    for srv in plan.hosts():
        assert host.nic_script(srv, plan, env) == host._direct(env, host._context(srv, plan)), srv.name
    shapes = list(host._SHAPES.values())
    assert all(s.fmt is not None and s.proven for s in shapes), "a shape fell back to one render per server"
    if name != "ptp":  # PTP clients carry their own ptp4l.conf: rendered one by one
        assert 1 <= len(shapes) < len(plan.hosts())


def test_the_fabrics_have_several_shapes() -> None:
    """What the test above covers: more than one shape per fabric where the servers differ."""
    for name in ("tenants-gpu-evpn", "endpoints"):
        plan, env = PLANS[name], environment()
        host._SHAPES.clear()
        for srv in plan.hosts():
            host.nic_script(srv, plan, env)
        assert len(host._SHAPES) >= 2, name
    plan = PLANS["tenants-gpu-evpn"]
    assert len({host._context(s, plan)["mtu"] for s in plan.hosts()}) == 2, "tenant and fabric MTU"
    assert PLANS["ptp"].ptp is not None


def test_a_template_that_transforms_a_servers_own_string_is_rendered_per_server() -> None:
    """A shape is kept only if it reproduces its first server's direct render; `upper` breaks that."""
    template = "{{ server | upper }} {{ mtu }}\n{% for n in nics %}{{ n.leaf }}\n{% endfor %}"
    env = jinja2.Environment(loader=jinja2.DictLoader({host.TEMPLATE: template}), undefined=jinja2.StrictUndefined)
    plan = PLANS["endpoints"]
    first, second = plan.servers[:2]
    assert host.nic_script(first, plan, env).startswith(first.name.upper() + " ")
    assert host.nic_script(second, plan, env).startswith(second.name.upper() + " ")
    assert [s.fmt for (e, _), s in host._SHAPES.items() if e is env] == [None]
