"""The headroom `plan` says the switch will use, against the switch's own code.

sonic-swss cfgmgr/buffer_headroom_mellanox.lua (../shared/sonic-platform/sonic-swss, e6b0c5b5d) is
what a dynamic-model Spectrum switch runs to size a lossless PG.  It runs here in Lua (lupa) with a
stand-in for the three Redis calls it makes (the ASIC_TABLE entry of asic_table.j2, the
LOSSLESS_TRAFFIC_PATTERN and DEFAULT_LOSSLESS_BUFFER_PARAMETER its SKU template writes), and
`sonic_buffers.spectrum_headroom` must return exactly what it returns.
"""

from __future__ import annotations

from pathlib import Path

import lupa  # a dev dependency (pyproject): Lua 5.x in a wheel
import pytest

from fabricgen.catalog.skus import SPECTRUM_ASICS
from fabricgen.platforms.sonic.buffers import spectrum_headroom

REDIS = """
local db = {
  ["6"] = { ["ASIC_TABLE|{asic}"] = {cell_size = "{cell}", pipeline_latency = "{pipeline}",
                                      mac_phy_delay = "{mac_phy}", peer_response_time = "3.8"} },
  ["4"] = { ["LOSSLESS_TRAFFIC_PATTERN|AZURE"] = {mtu = "1024", small_packet_percentage = "50"},
            ["DEFAULT_LOSSLESS_BUFFER_PARAMETER|AZURE"] = {default_dynamic_th = "0"},
            ["BUFFER_POOL|ingress_lossless_pool"] = {type = "ingress", mode = "dynamic"} },
}
local cur = "0"
redis = { call = function(op, a, b)
  if op == "SELECT" then cur = a; return "OK" end
  local t = db[cur] or {}
  if op == "KEYS" then
    local prefix = string.sub(a, 1, -2); local out = {}
    for k, _ in pairs(t) do if string.sub(k, 1, #prefix) == prefix then table.insert(out, k) end end
    return out
  end
  if op == "HGETALL" then
    local out = {}
    for f, v in pairs(t[a] or {}) do table.insert(out, f); table.insert(out, v) end
    return out
  end
  if op == "HGET" then return (t[a] or {})[b] end
end }
"""


def lua_headroom(pack: Path, asic: str, speed: int, cable: int, mtu: int, lanes: int) -> tuple[int, int, int]:
    a = next(x for x in SPECTRUM_ASICS.values() if x.name == asic)
    rt = lupa.LuaRuntime()
    rt.execute(REDIS.replace("{asic}", asic).replace("{cell}", str(a.cell_size))
               .replace("{pipeline}", f"{a.pipeline_latency_kb:g}").replace("{mac_phy}", f"{a.mac_phy_delay_kb:g}"))
    rt.execute(f'ARGV = {{"{speed * 1000}", "{cable}m", "{mtu}", "0", "{lanes}"}}; KEYS = {{"p"}}')
    script = (pack / "sonic-swss/cfgmgr/buffer_headroom_mellanox.lua").read_text(encoding="utf-8")
    ret = rt.execute(f"local function run()\n{script}\nend\nreturn run()")
    fields = dict(str(ret[i]).split(":") for i in range(1, len(ret) + 1))
    return int(fields["xon"]), int(fields["xoff"]), int(fields["size"])


@pytest.mark.parametrize("asic", ["MELLANOX-SPECTRUM", "MELLANOX-SPECTRUM-4"])
@pytest.mark.parametrize(("speed", "lanes"), [(100, 4), (200, 4), (400, 4), (400, 8), (800, 8)])
@pytest.mark.parametrize("cable", [1, 3, 5, 30, 40, 300])
def test_spectrum_headroom_is_the_switchs_own(sonic_platform: Path, asic: str, speed: int, lanes: int,
                                             cable: int) -> None:
    a = next(x for x in SPECTRUM_ASICS.values() if x.name == asic)
    gen = int(asic.rsplit("-", 1)[-1]) if asic[-1].isdigit() else 1
    ours = spectrum_headroom(speed, cable, 9216, lanes, a.cell_size, a.pipeline_latency_kb, a.mac_phy_delay_kb,
                             asic_generation=gen)
    assert ours == lua_headroom(sonic_platform, asic, speed, cable, 9216, lanes)
