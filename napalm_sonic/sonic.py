"""napalm driver for SONiC switches (platform name ``sonic``).

SONiC's configuration is two files, and a fabricgen candidate is always both:

* ``config_db.json`` - applied with the Generic Config Updater (``config replace``),
  which touches only the tables that differ;
* ``frr.conf`` - FRR in ``split-unified`` mode (``DEVICE_METADATA.localhost.
  docker_routing_config_mode``), applied inside the ``bgp`` container exactly as
  FrrDriver applies it on a Linux switch (``frr-reload.py``), so the routing
  config is the operator's and not regenerated from ConfigDB.

Candidate formats accepted by ``load_replace_candidate``:

* ``filename`` = a **directory** holding ``config_db.json`` and ``frr.conf`` (what
  ``fabricgen render`` writes per switch);
* ``filename`` = a **bundle file**, or ``config`` = a bundle string: one JSON object
  ``{"config_db.json": {...ConfigDB...}, "frr.conf": "<FRR config text>"}``
  (``config_db.json`` may also be given as JSON text);
* ``config`` = a ``dict`` of the same two keys.

``get_config()`` returns running/startup/candidate in the same bundle format, so its
output can be fed back to ``load_replace_candidate``.

Commands (``sudo -n``: a sudo that would prompt for a password fails at once
instead of hanging the session):

* FRR side: ``sudo -n docker exec -i bgp sh -c '<cmd>'`` (``vtysh``, ``frr-reload.py``,
  files under the container's ``/etc/frr`` = the host's ``/etc/sonic/frr``);
* LLDP: ``sudo -n docker exec -i lldp lldpcli show neighbors -f json``;
* ``show runningconfiguration all``, ``show version``;
* ``sudo -n config checkpoint|replace|rollback|save -y|list-checkpoints``.

Extra optional_args: ``frr_container`` ("bgp"), ``lldp_container`` ("lldp"),
``checkpoint_prefix`` ("fabricgen"), ``save_config`` (True: ``config save -y`` after a
commit/rollback so the change survives a reboot), ``gcu_timeout`` (900 s),
``replace_scope`` ("owned": the candidate is fabricgen's part of the ConfigDB and goes into the
running one table by table as `platforms.sonic_configdb.merge_owned` says -- the device's
lanes, aliases, SKU buffer pools and profiles, identity and every table fabricgen does not
render are kept, and a candidate that reaches into them or would leave a reference dangling
is refused before anything is uploaded; "all": the candidate is the whole ConfigDB),
``restart_timeout`` (180 s: for ``systemctl restart bgp`` and its daemons to answer again),
``apply`` ("gcu": ``config replace`` through GCU, as below; "day0": the day-0 path for a HWSKU whose
lossless config GCU refuses live -- ``fabricgen plan`` says which -- the merged ConfigDB goes in with
``config load -y``, ``config save -y`` and ``config reload -y`` (every service restarts, the bgp
container too, which then reads the frr.conf installed first); deploy labels it ``reload-required``).

The bgp container reads ``docker_routing_config_mode`` and ``frr_mgmt_framework_config`` only when
it starts (``BGP_CONTAINER_BOOT_FIELDS``): a commit that changes either restarts the container
(``systemctl restart bgp``, as SONiC itself does) right after ``config replace``, and waits until
vtysh reaches every daemon the new value runs (bfdd with ``frr_mgmt_framework_config`` "true")
before FRR's part goes in; deploy labels that change ``daemon-restart``.  Without the restart the
ConfigDB would say BFD runs while bfdd never started, and FRR's ``bfd`` block could not be applied.
"""

from __future__ import annotations

import json
import shlex
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from napalm.base import models
from napalm.base.exceptions import CommandErrorException, ReplaceConfigException

from fabricgen.napalm_kit import (
    BGP_CONTAINER_BOOT_FIELDS,
    BGP_SERVICE,
    ConfigUndetermined,
    OwnershipError,
    SonicHealthGetters,
    bgp_container_daemons,
    merge_owned,
)
from napalm_frr.config import sanitize_frr_config, unified_diff
from napalm_frr.frr import READ_ONLY, FrrDriver
from napalm_frr.parsers.decode import load_json
from napalm_frr.parsers.facts import parse_key_values, parse_uptime
from napalm_sonic import parsers as SP

CONFIG_DB = "config_db.json"
FRR_CONF = "frr.conf"


def parse_bundle(obj: Any) -> tuple[dict[str, Any], str]:
    """A candidate bundle (dict, or JSON text of one) -> (config_db dict, frr.conf text)."""
    if isinstance(obj, str):
        try:
            obj = json.loads(obj)
        except json.JSONDecodeError as exc:
            raise ReplaceConfigException(
                f"a SONiC candidate string must be a JSON bundle {{{CONFIG_DB!r}: ..., {FRR_CONF!r}: ...}}: {exc}"
            ) from exc
    if not isinstance(obj, dict) or set(obj) != {CONFIG_DB, FRR_CONF}:
        keys = sorted(obj) if isinstance(obj, dict) else type(obj).__name__
        raise ReplaceConfigException(
            f"a SONiC candidate needs exactly the keys {CONFIG_DB!r} and {FRR_CONF!r}, got {keys}")
    db = obj[CONFIG_DB]
    if isinstance(db, str):
        try:
            db = json.loads(db)
        except json.JSONDecodeError as exc:
            raise ReplaceConfigException(f"{CONFIG_DB} is not valid JSON: {exc}") from exc
    if not isinstance(db, dict) or not db:
        raise ReplaceConfigException(f"{CONFIG_DB} must be a non-empty JSON object (the whole ConfigDB)")
    frr = obj[FRR_CONF]
    if not isinstance(frr, str):
        raise ReplaceConfigException(f"{FRR_CONF} must be text")
    return db, frr


def boot_fields(config_db: dict[str, Any]) -> dict[str, str]:
    """The DEVICE_METADATA.localhost fields the bgp container reads only when it starts."""
    meta = config_db.get("DEVICE_METADATA", {}).get("localhost", {})
    return {name: str(meta[name]) for name in BGP_CONTAINER_BOOT_FIELDS if name in meta}


def make_bundle(config_db: Any, frr_conf: str) -> str:
    return json.dumps({CONFIG_DB: config_db, FRR_CONF: frr_conf}, indent=4, sort_keys=True) + "\n"


class SonicDriver(SonicHealthGetters, FrrDriver):
    """napalm driver for SONiC: GCU for ConfigDB, frr-reload in the bgp container for FRR."""

    vendor = "SONiC"
    platform = "sonic"

    def __init__(self, hostname: str, username: str, password: str, timeout: int = 60,
                 optional_args: dict[str, Any] | None = None) -> None:
        args = dict(optional_args or {})
        args.setdefault("sudo", True)
        # The container's /etc/frr is the host's /etc/sonic/frr, but the ConfigDB candidate is
        # uploaded on the host: one directory both sides have.  GCU's `config save` makes saved =
        # running for ConfigDB; FRR's frr.conf is checked by the deploy's post-commit verification.
        args.setdefault("candidate_dir", "/tmp")
        args.setdefault("verify_reload", False)
        args.setdefault("repair_daemons", False)  # done by deploy's post-commit verification instead
        super().__init__(hostname, username, password, timeout, args)
        self.frr_container: str = str(args.get("frr_container", "bgp"))
        self.lldp_container: str = str(args.get("lldp_container", "lldp"))
        self.checkpoint_prefix: str = str(args.get("checkpoint_prefix", "fabricgen"))
        self.save_config: bool = bool(args.get("save_config", True))
        self.gcu_timeout: float = float(args.get("gcu_timeout", 900))
        self.replace_scope: str = str(args.get("replace_scope", "owned"))
        self.restart_timeout: float = float(args.get("restart_timeout", 180))
        self.apply: str = str(args.get("apply", "gcu"))
        if self.replace_scope not in ("owned", "all"):
            raise ValueError(f"replace_scope must be 'owned' or 'all', not {self.replace_scope!r}")
        if self.apply not in ("gcu", "day0"):
            raise ValueError(f"apply must be 'gcu' or 'day0', not {self.apply!r}")
        self._db_candidate: dict[str, Any] | None = None
        self._db_candidate_path: str | None = None
        self._last_checkpoint: str | None = None
        self._running_boot: dict[str, str] | None = None  # the running ConfigDB's container boot fields

    # ------------------------------------------------------------------ command wrappers

    def _sudo(self) -> str:
        return "sudo -n " if self.sudo else ""

    def _frr_sh(self, command: str) -> str:
        return f"{self._sudo()}docker exec -i {self.frr_container} sh -c {shlex.quote(command)}"

    def _vtysh(self, *commands: str) -> str:
        args = " ".join(f"-c {shlex.quote(c)}" for c in commands)
        return f"{self._sudo()}docker exec -i {self.frr_container} {self.vtysh_bin} {args}"

    def _lldpcli(self, args: str) -> str:
        return f"{self._sudo()}docker exec -i {self.lldp_container} {self.lldpcli_bin} {args}"

    def _gcu(self, args: str) -> str:
        return f"{self._sudo()}config {args}"

    def _now(self) -> datetime:
        return datetime.now(UTC)

    def _checkpoint_name(self) -> str:
        return f"{self.checkpoint_prefix}-{self._now().strftime('%Y%m%dT%H%M%SZ')}"

    # ------------------------------------------------------------------ getters

    def get_facts(self) -> models.FactsDict:
        """From SONiC ``show version``: os_version = SONiC Software Version, model = HwSKU,
        serial = Serial Number; hostname/uptime from the host."""
        ver = SP.parse_sonic_show_version(self._check("show version"))
        kv = parse_key_values(self._check(self._host_sh(self._FACTS_PROBE)))
        hostname = kv.get("hostname", "")
        serial = ver.get("Serial Number", "")
        return {
            "os_version": ver.get("SONiC Software Version", ""),
            "uptime": parse_uptime(kv.get("uptime", "")),
            "interface_list": self._interface_names(),
            "vendor": self.vendor,
            "serial_number": "" if serial == "N/A" else serial,
            "model": ver.get("HwSKU", ""),
            "hostname": hostname.split(".")[0],
            "fqdn": hostname,
        }

    def _running_config_db(self) -> dict[str, Any]:
        data = load_json(self._check("show runningconfiguration all"), "show runningconfiguration all")
        if not isinstance(data, dict):
            raise CommandErrorException(f"{self.hostname}: show runningconfiguration all: not a JSON object")
        data.pop("bgpraw", None)  # FRR's running config: compared through FRR itself
        return data

    def get_config(self, retrieve: str = "all", full: bool = False, sanitized: bool = False,
                   format: str = "text") -> models.ConfigDict:
        """Bundles (see module doc): running = ConfigDB + ``show running-config``;
        startup = /etc/sonic/config_db.json + the container's frr.conf; candidate = loaded one."""
        out: models.ConfigDict = {"running": "", "startup": "", "candidate": ""}
        if retrieve in ("all", "running"):
            frr = self._check(self._vtysh("show running-config"))
            out["running"] = make_bundle(self._running_config_db(), frr)
        if retrieve in ("all", "startup"):
            db = load_json(self._check(f"{self._sudo()}cat /etc/sonic/config_db.json"), "config_db.json")
            res = self._run(self._frr_sh(f"cat {shlex.quote(self.frr_config_path)}"))
            out["startup"] = make_bundle(db, res.stdout if res.ok else "")
        if retrieve in ("all", "candidate") and self._db_candidate is not None:
            out["candidate"] = make_bundle(self._db_candidate, self._candidate or "")
        if sanitized:
            out = {"running": sanitize_frr_config(out["running"]), "startup": sanitize_frr_config(out["startup"]),
                   "candidate": sanitize_frr_config(out["candidate"])}
        return out

    # ------------------------------------------------------------------ config

    @staticmethod
    def _read_candidate(filename: str | None, config: Any) -> tuple[dict[str, Any], str]:
        if filename:
            path = Path(filename)
            if path.is_dir():
                missing = [n for n in (CONFIG_DB, FRR_CONF) if not (path / n).is_file()]
                if missing:
                    raise ReplaceConfigException(f"{path} lacks {', '.join(missing)}")
                return parse_bundle({CONFIG_DB: (path / CONFIG_DB).read_text(encoding="utf-8"),
                                     FRR_CONF: (path / FRR_CONF).read_text(encoding="utf-8")})
            return parse_bundle(path.read_text(encoding="utf-8"))
        if config is None:
            raise ReplaceConfigException("load_replace_candidate needs a filename or a config")
        return parse_bundle(config)

    def _with_device_owned(self, db: dict[str, Any]) -> dict[str, Any]:
        """The candidate as a whole ConfigDB: fabricgen's part put into the running one.

        `config replace` removes everything the target lacks.  fabricgen renders the fabric
        (ports' admin state, speed, MTU; addresses, QoS, per-port buffer assignments); the box's
        own (lanes, aliases, the SKU's buffer pools and profiles, identity, MGMT_INTERFACE, AAA,
        NTP, FEATURE, ...) stays as it is (`merge_owned`), so a push can never cut the management
        session or leave BUFFER_PORT_INGRESS_PROFILE_LIST pointing at a profile that is gone.
        ``replace_scope="all"`` replaces the whole ConfigDB instead.
        """
        if self.replace_scope == "all":
            self._running_boot = None  # read at commit
            return db
        running = self._running_config_db()
        self._running_boot = boot_fields(running)
        try:
            return merge_owned(running, db)
        except OwnershipError as exc:
            raise ReplaceConfigException(f"{self.hostname}: the candidate does not fit the device, nothing was "
                                         f"changed: {exc}") from exc

    def load_replace_candidate(self, filename: str | None = None, config: Any = None) -> None:
        """Upload both parts (see module doc for the formats); FRR's part is checked with
        ``vtysh --dryrun``.  ConfigDB is validated by GCU (YANG) at commit."""
        db, frr = self._read_candidate(filename, config)
        db = self._with_device_owned(db)
        self.discard_config()
        token = self._new_token()
        if self.read_only:  # compared from memory; only a commit needs it on the device
            db_path = READ_ONLY
        else:
            db_path = self._remote_candidate_path(token, CONFIG_DB)
            self._upload(self._host_sh, db_path, SP.pretty_json(db))
        self._db_candidate_path = db_path
        self._db_candidate = db
        self._candidate_path = self._frr_load(frr, token)
        self._candidate = frr

    def compare_config(self) -> str:
        """ConfigDB diff then FRR diff, each a unified diff ("" if neither changes).

        ConfigDB: ``show runningconfiguration all`` minus its ``bgpraw`` key vs the
        candidate, both as sorted 4-space JSON (``running/config_db.json`` ->
        ``candidate/config_db.json``).  FRR: as FrrDriver.compare_config
        (``running/frr.conf`` -> ``candidate/frr.conf``).
        """
        if self._db_candidate is None or self._candidate is None or self._candidate_path is None:
            return ""
        old = SP.pretty_json(self._running_config_db()).splitlines()
        new = SP.pretty_json(self._db_candidate).splitlines()
        db_files = (f"running/{CONFIG_DB}", f"candidate/{CONFIG_DB}")
        db_diff = unified_diff(old, new, *db_files)
        frr_diff = self._frr_diff(self._candidate_path, self._candidate,
                                  f"running/{FRR_CONF}", f"candidate/{FRR_CONF}")
        frr_sides = self.last_sides
        if frr_diff and frr_sides is None:  # frr-reload's listing: label from the text
            self.last_sides = None
        else:
            self.last_sides = ([(*db_files, old, new)] if db_diff else []) + (frr_sides or [])
        return db_diff + frr_diff

    def _config_rollback(self, checkpoint: str) -> str:
        res = self._run(self._gcu(f"rollback {shlex.quote(checkpoint)}"), timeout=self.gcu_timeout)
        return "" if res.ok else f"config rollback {checkpoint} exited {res.exit_status}: {res.error_text()[:2000]}"

    def _config_save(self) -> str:
        if not self.save_config:
            return ""
        res = self._run(self._gcu("save -y"), timeout=self.gcu_timeout)
        return "" if res.ok else f"config save exited {res.exit_status}: {res.error_text()[:2000]}"

    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        """Checkpoint, replace ConfigDB, apply FRR, save; undo everything on any failure.

        1. FRR read-only checks (``vtysh --dryrun -f``, ``frr-reload.py --test``) - no change yet;
        2. ``sudo -n config checkpoint <prefix>-<UTC timestamp>``;
        3. ``sudo -n config replace <uploaded config_db.json>``;
        4. only if the bgp container's boot fields change: ``systemctl restart bgp`` and wait for
           its daemons -- before FRR, whose new lines may need a daemon only the restart starts
           (a ``bfd`` block needs bfdd);
        5. FRR: save rollback point, install frr.conf, ``frr-reload.py --reload`` (+verify);
        6. ``sudo -n config save -y`` (``save_config``).
        A failure at 3 or 4 rolls ConfigDB back to the checkpoint; at 5 FRR restores its
        rollback point and ConfigDB is rolled back; at 6 both are rolled back.  A container
        restarted at 4 is restarted again on the old values.  Then ReplaceConfigException is raised.
        """
        if revert_in is not None:
            raise NotImplementedError("commit confirm (revert_in) is not supported; use rollback()")
        if self._db_candidate_path is None or self._candidate_path is None:
            raise ReplaceConfigException("no candidate loaded (load_replace_candidate first)")
        self._frr_precheck(self._candidate_path)
        before = self._running_boot if self._running_boot is not None else boot_fields(self._running_config_db())
        after = boot_fields(self._db_candidate or {})

        checkpoint = self._checkpoint_name()
        res = self._run(self._gcu(f"checkpoint {shlex.quote(checkpoint)}"), timeout=self.gcu_timeout)
        if not res.ok:
            raise ReplaceConfigException(f"{self.hostname}: config checkpoint failed, nothing changed: "
                                         f"{res.error_text()[:2000]}")

        restarted = False

        def fail(reason: str, frr_applied: bool) -> ReplaceConfigException:
            problems = []
            if frr_applied:
                try:
                    self._frr_rollback()
                except CommandErrorException as exc:
                    problems.append(str(exc))
            undo = self._config_rollback(checkpoint)
            if undo:
                problems.append(undo)
            elif restarted:  # the container back on the fields it ran with
                again = self._restart_bgp_container(before)
                if again:
                    problems.append(again)
            if problems:
                return ConfigUndetermined(
                    f"{self.hostname}: commit failed ({reason}) AND undoing it failed ({'; '.join(problems)}); "
                    f"the device config is undetermined (checkpoint {checkpoint})")
            return ReplaceConfigException(
                f"{self.hostname}: commit failed, rolled back to checkpoint {checkpoint}: {reason}")

        if self.apply == "day0":
            self._commit_day0(checkpoint, after, fail)
            return
        res = self._run(self._gcu(f"replace {shlex.quote(self._db_candidate_path)}"), timeout=self.gcu_timeout)
        if not res.ok:
            raise fail(f"config replace exited {res.exit_status}: {res.error_text()[:2000]}", frr_applied=False)
        if after != before:
            restarted = True
            reason = self._restart_bgp_container(after)
            if reason:
                raise fail(reason, frr_applied=False)
        try:
            self._frr_apply(self._candidate_path)
        except ReplaceConfigException as exc:
            raise fail(str(exc), frr_applied=False) from exc
        saved = self._config_save()
        if saved:
            raise fail(saved, frr_applied=True)
        self._last_checkpoint = checkpoint
        self._running_boot = after
        self.discard_config()

    def _commit_day0(self, checkpoint: str, after: dict[str, str], fail: Any) -> None:
        """The day-0 path: frr.conf installed and applied first, then ``config load -y`` of the merged ConfigDB,
        ``config save -y`` and ``config reload -y``; then wait for the bgp container's daemons.  A failure before
        the reload is rolled back to the checkpoint; after it the switch runs the loaded config."""
        assert self._db_candidate_path is not None and self._candidate_path is not None
        try:
            self._frr_apply(self._candidate_path)
        except ReplaceConfigException as exc:
            raise fail(str(exc), frr_applied=False) from exc
        for step in (f"load -y {shlex.quote(self._db_candidate_path)}", "save -y"):
            res = self._run(self._gcu(step), timeout=self.gcu_timeout)
            if not res.ok:
                raise fail(f"config {step.split()[0]} exited {res.exit_status}: {res.error_text()[:2000]}",
                           frr_applied=True)
        res = self._run(self._gcu("reload -y"), timeout=self.gcu_timeout)
        if not res.ok:
            raise ReplaceConfigException(f"{self.hostname}: config reload exited {res.exit_status} after the day-0 "
                                         f"config was loaded and saved: {res.error_text()[:2000]}")
        waited = self._wait_daemons(after)
        if waited:
            raise ReplaceConfigException(f"{self.hostname}: after config reload: {waited}")
        self._last_checkpoint = checkpoint
        self._running_boot = after
        self.discard_config()

    def _restart_bgp_container(self, metadata: dict[str, str]) -> str:
        """``systemctl restart bgp``, then wait until vtysh reaches every daemon `metadata` runs ("" = done)."""
        command = f"{self._sudo()}systemctl restart {BGP_SERVICE}"
        res = self._run(command, timeout=self.restart_timeout)
        if not res.ok:
            return f"`{command}` exited {res.exit_status}: {res.error_text()[:2000]}"
        return self._wait_daemons(metadata)

    def _wait_daemons(self, metadata: dict[str, str]) -> str:
        """Wait until vtysh reaches every daemon `metadata` runs ("" = done, else why not)."""
        wanted = bgp_container_daemons(metadata)
        deadline = time.monotonic() + self.restart_timeout
        while True:
            res = self._run(self._vtysh("show daemons"))
            running = set(res.stdout.split()) if res.ok else set()
            if running.issuperset(wanted):
                return ""
            if time.monotonic() >= deadline:
                missing = ", ".join(d for d in wanted if d not in running)
                return (f"the bgp container was restarted for {', '.join(BGP_CONTAINER_BOOT_FIELDS)}, but "
                        f"{missing} did not answer within {self.restart_timeout:g} s")
            self._sleep(2.0)

    def _sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def discard_config(self) -> None:
        if self._db_candidate_path and self._db_candidate_path != READ_ONLY and self.transport is not None:
            self._run(self._host_sh(f"rm -f {shlex.quote(self._db_candidate_path)}"))
        self._db_candidate = None
        self._db_candidate_path = None
        super().discard_config()

    def _latest_checkpoint(self) -> str:
        if self._last_checkpoint:
            return self._last_checkpoint
        names = SP.parse_checkpoints(self._check(self._gcu("list-checkpoints")))
        ours = sorted(n for n in names if n.startswith(f"{self.checkpoint_prefix}-"))
        if not ours:
            raise CommandErrorException(f"{self.hostname}: no {self.checkpoint_prefix}-* checkpoint to roll back to")
        return ours[-1]

    def rollback(self) -> None:
        """``config rollback`` to the last commit's checkpoint, the bgp container restarted if the
        checkpoint holds other boot fields (before FRR, as in a commit), FRR rollback point reload,
        ``config save -y``."""
        checkpoint = self._latest_checkpoint()
        before = self._running_boot if self._running_boot is not None else boot_fields(self._running_config_db())
        undo = self._config_rollback(checkpoint)
        if undo:
            raise CommandErrorException(f"{self.hostname}: {undo}")
        after = boot_fields(self._running_config_db())
        if after != before:
            restarted = self._restart_bgp_container(after)
            if restarted:
                raise CommandErrorException(f"{self.hostname}: ConfigDB rolled back, FRR not: {restarted}")
        self._running_boot = after
        self._frr_rollback()
        saved = self._config_save()
        if saved:
            raise CommandErrorException(f"{self.hostname}: rolled back but {saved}")
        self._last_checkpoint = None
