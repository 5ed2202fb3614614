#!/usr/bin/env python3
"""Real NetBox and Nautobot servers for the `fabricgen sot` tests and benchmark (stdlib only).

    python3 tests/sot/servers.py up [--background] [--only netbox|nautobot]
    python3 tests/sot/servers.py wait [--timeout S]
    python3 tests/sot/servers.py status
    python3 tests/sot/servers.py down

`make sot-servers` / `make sot-servers-down` run `up` / `down`; `.ci/run` runs `up --background` before
the test suite, so the migrations (minutes on 2 cores) overlap the other tests, and the SoT tests wait
for `state.json` to say ready (bounded, see tests/sot/conftest.py).

Everything lives in one state folder ($FABRICGEN_SOT_STATE, default .fabricgen/sot-servers in the
checkout): one PostgreSQL cluster and one Redis of its own (Debian's packages, never the system
services), NetBox from ../shared/netbox ($FABRICGEN_NETBOX_SRC) copied there and run in a Python 3.12
venv, Nautobot from PyPI in a Python 3.11 venv.  Every server listens on 127.0.0.1 only; NetBox's
census and release check and Nautobot's installation metrics are off (no traffic leaves the machine).
The API tokens are written to files of mode 0600 in the state folder and never printed.
`down` stops exactly the processes `up` started (by the PIDs it recorded).
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import hashlib
import json
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
STATE = Path(os.environ.get("FABRICGEN_SOT_STATE", ROOT / ".fabricgen" / "sot-servers"))
NETBOX_SRC = Path(os.environ.get("FABRICGEN_NETBOX_SRC", ROOT.parent / "shared" / "netbox"))
NAUTOBOT_VERSION = "3.2.7"
HOST = "127.0.0.1"
PORTS = {
    "postgres": int(os.environ.get("FABRICGEN_SOT_PG_PORT", "55432")),
    "redis": int(os.environ.get("FABRICGEN_SOT_REDIS_PORT", "56379")),
    "netbox": int(os.environ.get("FABRICGEN_SOT_NETBOX_PORT", "58001")),
    "nautobot": int(os.environ.get("FABRICGEN_SOT_NAUTOBOT_PORT", "58002")),
}
WORKERS = os.environ.get("FABRICGEN_SOT_WORKERS", "3")  # gunicorn workers per server
PG_BIN = Path(os.environ.get("FABRICGEN_PG_BIN", "")
              or next(iter(sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)), "/usr/lib/postgresql/bin"))
SERVERS = ("netbox", "nautobot")
QUIET_ENV = {"NAUTOBOT_INSTALLATION_METRICS_ENABLED": "false", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
             "PYTHONUNBUFFERED": "1"}


# --------------------------------------------------------------------------- state


def _state_file() -> Path:
    return STATE / "state.json"


_lock = threading.Lock()


def read_state() -> dict[str, Any]:
    try:
        return dict(json.loads(_state_file().read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return {}


def _update(name: str, **fields: Any) -> None:
    with _lock:
        state = read_state()
        state.setdefault(name, {}).update(fields, updated=time.time())
        tmp = _state_file().with_suffix(".tmp")
        tmp.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        tmp.replace(_state_file())


def _log(name: str) -> Path:
    return STATE / f"{name}.log"


def _run(name: str, cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None,
         user: str | None = None) -> None:
    """Run `cmd`, its output appended to the component's log; raise with the log's tail if it fails."""
    full = {**os.environ, **QUIET_ENV, **(env or {})}
    if user is not None:
        cmd = ["runuser", "-u", user, "--", *cmd]
    with _log(name).open("a", encoding="utf-8") as log:
        log.write(f"\n$ {' '.join(cmd)}\n")
        log.flush()
        rc = subprocess.call(cmd, env=full, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    if rc != 0:
        raise RuntimeError(f"{cmd[0] if user is None else cmd[3]} exited {rc}; see {_log(name)}:\n{tail(_log(name))}")


def _spawn(name: str, cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> int:
    """Start a long-running process in its own session; its PID goes into the state for `down`."""
    full = {**os.environ, **QUIET_ENV, **(env or {})}
    log = _log(name).open("a", encoding="utf-8")
    log.write(f"\n$ {' '.join(cmd)}\n")
    log.flush()
    proc = subprocess.Popen(cmd, env=full, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    return proc.pid


def tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _ours(pid: int | None, marker: str) -> bool:
    """True if `pid` is alive and still the process this script started (its command line holds `marker`):
    a recorded PID the system gave to another process since is never signalled."""
    if not _alive(pid):
        return False
    try:
        return marker in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return False


def _secret_file(name: str, length: int = 60) -> str:
    """A generated secret kept in the state folder (mode 0600), the same one on every `up`."""
    path = STATE / "secrets" / name
    if not path.is_file():
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(secrets.token_hex(length // 2))
    return path.read_text(encoding="utf-8").strip()


def _wait_http(url: str, seconds: float, pid: int | None = None) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if pid is not None and not _alive(pid):
            raise RuntimeError(f"the server process {pid} exited before {url} answered")
        try:
            with urllib.request.urlopen(url, timeout=5) as resp:  # noqa: S310 - 127.0.0.1 only
                if resp.status < 500:
                    return
        except urllib.error.HTTPError as exc:
            if exc.code < 500:
                return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(1)
    raise RuntimeError(f"{url} did not answer within {seconds:.0f} s")


# --------------------------------------------------------------------------- PostgreSQL and Redis


def _pg_user() -> str | None:
    """PostgreSQL refuses to run as root: as root its cluster belongs to the `postgres` user."""
    return "postgres" if os.geteuid() == 0 else None


def _chown(path: Path, user: str | None) -> None:
    if user is not None:
        pw = pwd.getpwnam(user)
        os.chown(path, pw.pw_uid, pw.pw_gid)


def _pg_root() -> Path:
    """The cluster's folder: in the state folder, unless the `postgres` user cannot reach it (a checkout under a
    private folder) or its socket path would be too long; then a folder of its own under /var/tmp."""
    root = STATE / "pg"
    user = _pg_user()
    reachable = user is None or subprocess.call(["runuser", "-u", user, "--", "test", "-x", str(STATE)],
                                                stderr=subprocess.DEVNULL) == 0
    if reachable and len(str(root / "sock" / ".s.PGSQL.00000")) < 100:
        return root
    digest = hashlib.sha256(str(STATE).encode()).hexdigest()[:12]
    return Path("/var/tmp") / f"fabricgen-sot-pg-{digest}"


def postgres_up() -> None:
    name = "postgres"
    if _ours(read_state().get(name, {}).get("pid"), "postgres"):
        return
    if not (PG_BIN / "initdb").is_file():
        raise RuntimeError(f"PostgreSQL's initdb not found in {PG_BIN} (fix: apt-get install postgresql)")
    user = _pg_user()
    root = _pg_root()
    data, sock = root / "data", root / "sock"
    for d in (root, sock):
        d.mkdir(parents=True, exist_ok=True)
        _chown(d, user)
    logfile = root / "server.log"
    logfile.touch()
    _chown(logfile, user)
    if not (data / "PG_VERSION").is_file():
        _run(name, [str(PG_BIN / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8"],
             user=user)
    opts = f"-c listen_addresses={HOST} -p {PORTS['postgres']} -k {sock} -c fsync=off -c synchronous_commit=off " \
           "-c full_page_writes=off -c max_connections=200"
    _run(name, [str(PG_BIN / "pg_ctl"), "-D", str(data), "-l", str(logfile), "-o", opts, "-w", "-t", "120", "start"],
         user=user)
    pid = int((data / "postmaster.pid").read_text().split()[0])
    _update(name, pid=pid, status="ready", port=PORTS["postgres"], root=str(root))
    password = _secret_file("db-password", 32)
    psql = [str(PG_BIN / "psql"), "-h", str(sock), "-p", str(PORTS["postgres"]), "-U", "postgres", "-v",
            "ON_ERROR_STOP=1", "-q"]
    role = f"""DO $$ BEGIN
IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'fabricgen') THEN
  CREATE ROLE fabricgen LOGIN PASSWORD '{password}' CREATEDB;
END IF; END $$;"""
    _run(name, [*psql, "-c", role], user=user)
    for db in SERVERS:
        query = [*psql, "-tAc", f"SELECT 1 FROM pg_database WHERE datname = '{db}'"]
        out = subprocess.run(["runuser", "-u", user, "--", *query] if user else query, capture_output=True,
                             text=True, check=False)
        if out.stdout.strip() != "1":
            _run(name, [*psql, "-c", f"CREATE DATABASE {db} OWNER fabricgen"], user=user)


def postgres_down() -> None:
    state = read_state().get("postgres", {})
    data = Path(state.get("root") or STATE / "pg") / "data"
    pid = state.get("pid")
    if _alive(pid) and (data / "postmaster.pid").is_file():
        _run("postgres", [str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"], user=_pg_user())
    _update("postgres", pid=None, status="down")


def redis_up() -> None:
    name = "redis"
    if _ours(read_state().get(name, {}).get("pid"), "redis-server"):
        return
    exe = shutil.which("redis-server")
    if exe is None:
        raise RuntimeError("redis-server not found (fix: apt-get install redis-server)")
    (STATE / "redis").mkdir(parents=True, exist_ok=True)
    pid = _spawn(name, [exe, "--bind", HOST, "--port", str(PORTS["redis"]), "--dir", str(STATE / "redis"),
                        "--save", "", "--appendonly", "no", "--protected-mode", "yes"])
    _update(name, pid=pid, status="starting", port=PORTS["redis"])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        out = subprocess.run(["redis-cli", "-h", HOST, "-p", str(PORTS["redis"]), "ping"], capture_output=True,
                             text=True, check=False)
        if out.stdout.strip() == "PONG":
            _update(name, status="ready")
            return
        if not _alive(pid):
            break
        time.sleep(0.5)
    raise RuntimeError(f"redis did not start; see {_log(name)}:\n{tail(_log(name))}")


# --------------------------------------------------------------------------- the two servers


def _pyenv_roots() -> list[str]:
    """Where pyenv may keep its Pythons: $PYENV_ROOT, ~/.pyenv, and the root above any pyenv `shims` or `bin`
    folder on PATH (CI runs with an empty HOME, where ~/.pyenv is not the machine's pyenv)."""
    roots = [os.environ.get("PYENV_ROOT", ""), str(Path.home() / ".pyenv")]
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        p = Path(entry)
        if p.name in ("shims", "bin") and (p.parent / "versions").is_dir():
            roots.append(str(p.parent))
    return list(dict.fromkeys(r for r in roots if r))


def _runs(exe: str, version: str) -> bool:
    """True if `exe` starts and is Python `version` (a pyenv shim on PATH may name a version it cannot run)."""
    try:
        out = subprocess.run([exe, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], capture_output=True,
                             text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and out.stdout.strip() == version


def _python(version: str) -> str:
    """A Python `version` interpreter: $FABRICGEN_PYTHON<maj><min>, pyenv's, else one on PATH that runs."""
    env = os.environ.get("FABRICGEN_PYTHON" + version.replace(".", ""))
    if env:
        return env
    for root in _pyenv_roots():
        found = sorted(glob.glob(f"{root}/versions/{version}.*/bin/python{version}"), reverse=True)
        for exe in found:
            if _runs(exe, version):
                return exe
    exe = shutil.which(f"python{version}")
    if exe is None or not _runs(exe, version):
        raise RuntimeError(f"no Python {version} found (fix: install it, e.g. with pyenv, or set "
                           f"FABRICGEN_PYTHON{version.replace('.', '')})")
    return exe


def _venv(name: str, version: str, requirements: list[str]) -> Path:
    venv = STATE / f"{name}-venv"
    marker = venv / ".fabricgen-installed"
    wanted = json.dumps(requirements)
    if marker.is_file() and marker.read_text(encoding="utf-8") == wanted:
        return venv
    _run(name, [_python(version), "-m", "venv", "--clear", str(venv)])
    _run(name, [str(venv / "bin" / "pip"), "install", "-q", "--upgrade", "pip"])
    _run(name, [str(venv / "bin" / "pip"), "install", "-q", *requirements])
    marker.write_text(wanted, encoding="utf-8")
    return venv


def _db() -> dict[str, str]:
    return {"user": "fabricgen", "password": _secret_file("db-password", 32), "host": HOST,
            "port": str(PORTS["postgres"])}


TOKEN_SCRIPT = """
from django.contrib.auth import get_user_model
from {token_module} import Token
User = get_user_model()
user, _ = User.objects.get_or_create(username="fabricgen-tests")
user.is_superuser = True
if hasattr(user, "is_staff"):
    user.is_staff = True
user.save()
Token.objects.filter(user=user, description="fabricgen tests").delete()
token = Token(user=user, description="fabricgen tests"{extra})
token.save()
with open({path!r}, "w") as fh:
    fh.write({plaintext} + "\\n")
"""


def _make_token(name: str, manage: list[str], env: dict[str, str], token_module: str, extra: str,
                plaintext: str) -> Path:
    path = STATE / f"{name}.token"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.close(fd)
    script = TOKEN_SCRIPT.format(token_module=token_module, extra=extra, path=str(path), plaintext=plaintext)
    _run(name, [*manage, "shell", "-c", script], env=env)
    return path


def netbox_up() -> None:
    name = "netbox"
    if _ours(read_state().get(name, {}).get("pid"), "gunicorn"):
        return
    _update(name, status="installing", url=f"http://{HOST}:{PORTS[name]}")
    if not (NETBOX_SRC / "netbox" / "manage.py").is_file():
        raise RuntimeError(f"NetBox source not found at {NETBOX_SRC} (fix: set FABRICGEN_NETBOX_SRC)")
    src = STATE / "netbox-src"
    if not (src / "netbox" / "manage.py").is_file():
        tmp = STATE / "netbox-src.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(NETBOX_SRC, tmp, symlinks=True)
        for p in [tmp, *tmp.rglob("*")]:  # the shared copy is read-only; this one is ours to write
            if not p.is_symlink():
                p.chmod(p.stat().st_mode | 0o200)
        tmp.replace(src)
    reqs = (src / "requirements.txt").read_text(encoding="utf-8").split()
    venv = _venv(name, "3.12", reqs)
    db = _db()
    config = f"""# written by tests/sot/servers.py
ALLOWED_HOSTS = ["{HOST}", "localhost"]
DATABASES = {{"default": {{"ENGINE": "django.db.backends.postgresql", "NAME": "netbox", "USER": "{db['user']}",
    "PASSWORD": "{db['password']}", "HOST": "{db['host']}", "PORT": "{db['port']}", "CONN_MAX_AGE": 300}}}}
REDIS = {{
    "tasks": {{"HOST": "{HOST}", "PORT": {PORTS['redis']}, "USERNAME": "", "PASSWORD": "", "DATABASE": 0,
               "SSL": False}},
    "caching": {{"HOST": "{HOST}", "PORT": {PORTS['redis']}, "USERNAME": "", "PASSWORD": "", "DATABASE": 1,
                 "SSL": False}},
}}
SECRET_KEY = "{_secret_file('netbox-secret-key', 60)}"
API_TOKEN_PEPPERS = {{1: "{_secret_file('netbox-pepper', 60)}"}}
CENSUS_REPORTING_ENABLED = False
ISOLATED_DEPLOYMENT = True
RELEASE_CHECK_URL = None
MAX_PAGE_SIZE = 5000
"""
    (src / "netbox" / "netbox" / "configuration.py").write_text(config, encoding="utf-8")
    manage = [str(venv / "bin" / "python"), str(src / "netbox" / "manage.py")]
    _update(name, status="migrating")
    _run(name, [*manage, "migrate", "--no-input"])
    token = _make_token(name, manage, {}, "users.models", ", version=1", "token.token")
    _update(name, status="starting", token_file=str(token))
    pid = _spawn(name, [str(venv / "bin" / "gunicorn"), "--bind", f"{HOST}:{PORTS[name]}", "--workers", WORKERS,
                        "--threads", "2", "--timeout", "600", "--pythonpath", str(src / "netbox"),
                        "netbox.wsgi"], cwd=src / "netbox")
    _update(name, pid=pid)
    _wait_http(f"http://{HOST}:{PORTS[name]}/api/status/", 300, pid)
    _update(name, status="ready")


def _nautobot_env() -> dict[str, str]:
    db = _db()
    return {
        "NAUTOBOT_ROOT": str(STATE / "nautobot-root"),
        "NAUTOBOT_CONFIG": str(STATE / "nautobot-root" / "nautobot_config.py"),
        "NAUTOBOT_DB_ENGINE": "django.db.backends.postgresql",
        "NAUTOBOT_DB_NAME": "nautobot", "NAUTOBOT_DB_USER": db["user"], "NAUTOBOT_DB_PASSWORD": db["password"],
        "NAUTOBOT_DB_HOST": db["host"], "NAUTOBOT_DB_PORT": db["port"],
        "NAUTOBOT_REDIS_HOST": HOST, "NAUTOBOT_REDIS_PORT": str(PORTS["redis"]),
        "NAUTOBOT_SECRET_KEY": _secret_file("nautobot-secret-key", 60),
        "NAUTOBOT_ALLOWED_HOSTS": f"{HOST} localhost",
        "NAUTOBOT_INSTALLATION_METRICS_ENABLED": "false",
    }


NAUTOBOT_CONFIG = """# written by tests/sot/servers.py
from nautobot.core.settings import *  # noqa: F403
from nautobot.core.settings_funcs import parse_redis_connection

INSTALLATION_METRICS_ENABLED = False
MAX_PAGE_SIZE = 5000
CACHES = {"default": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": parse_redis_connection(redis_database=3),
                      "OPTIONS": {"CLIENT_CLASS": "django_redis.client.DefaultClient"}}}
CELERY_BROKER_URL = parse_redis_connection(redis_database=2)
# Natural keys from settings, not the Constance table: Nautobot works out every serialized object's
# natural key (each API record and each change-log entry; an interface's includes its device's and
# location's), and without these reads both settings through Constance (a Redis round trip each) and
# the location tree's depth (a query) every time; profiled, that was about a quarter of a push's server
# time (docs/sot.md).  DEVICE_UNIQUENESS is Nautobot's default; location names are unique here.
DEVICE_UNIQUENESS = "location_tenant_name"
LOCATION_NAME_AS_NATURAL_KEY = True
"""


def nautobot_up() -> None:
    name = "nautobot"
    if _ours(read_state().get(name, {}).get("pid"), "gunicorn"):
        return
    _update(name, status="installing", url=f"http://{HOST}:{PORTS[name]}")
    pins = ROOT / "tests" / "sot" / "nautobot-constraints.txt"
    reqs = [f"nautobot=={NAUTOBOT_VERSION}", "gunicorn"] + (["-c", str(pins)] if pins.is_file() else [])
    venv = _venv(name, "3.11", reqs)
    env = _nautobot_env()
    root = Path(env["NAUTOBOT_ROOT"])
    root.mkdir(parents=True, exist_ok=True)
    Path(env["NAUTOBOT_CONFIG"]).write_text(NAUTOBOT_CONFIG, encoding="utf-8")
    manage = [str(venv / "bin" / "nautobot-server")]
    _update(name, status="migrating")
    _run(name, [*manage, "migrate", "--no-input"], env=env)
    token = _make_token(name, manage, env, "nautobot.users.models", "", "token.key")
    _update(name, status="starting", token_file=str(token))
    pid = _spawn(name, [str(venv / "bin" / "gunicorn"), "--bind", f"{HOST}:{PORTS[name]}", "--workers", WORKERS,
                        "--threads", "2", "--timeout", "600", "nautobot.core.wsgi:application"], env=env)
    _update(name, pid=pid)
    _wait_http(f"http://{HOST}:{PORTS[name]}/api/status/", 300, pid)
    _update(name, status="ready")


UPS = {"netbox": netbox_up, "nautobot": nautobot_up}


def up(only: list[str]) -> int:
    STATE.mkdir(parents=True, exist_ok=True)
    STATE.chmod(0o755)
    started = time.monotonic()
    _update("run", status="starting", started=time.time(), servers=only)
    try:
        postgres_up()
        redis_up()
    except Exception as exc:  # noqa: BLE001 - recorded for the tests' wait, then reported
        for name in only:
            _update(name, status="failed", error=f"database services: {exc}")
        print(f"error: {exc}", file=sys.stderr)
        return 1
    failures: list[str] = []

    def one(name: str) -> None:
        t0 = time.monotonic()
        try:
            UPS[name]()
            _update(name, seconds=round(time.monotonic() - t0, 1))
        except Exception as exc:  # noqa: BLE001
            _update(name, status="failed", error=str(exc))
            failures.append(f"{name}: {exc}")

    threads = [threading.Thread(target=one, args=(n,)) for n in only]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    _update("run", status="done", runner=None, seconds=round(time.monotonic() - started, 1))
    for f in failures:
        print(f"error: {f}", file=sys.stderr)
    if not failures:
        state = read_state()
        for n in only:
            print(f"{n}: {state[n]['url']} ready (token in {state[n]['token_file']})")
        print(f"up in {time.monotonic() - started:.0f} s")
    return 1 if failures else 0


def down() -> int:
    state = read_state()
    runner = state.get("run", {}).get("runner")
    if _ours(runner, "servers.py"):  # a background `up` still installing or migrating: its whole process group
        with contextlib.suppress(ProcessLookupError):
            os.killpg(runner, signal.SIGTERM)
    for name, marker in (("netbox", "gunicorn"), ("nautobot", "gunicorn"), ("redis", "redis-server")):
        pid = state.get(name, {}).get("pid")
        if _ours(pid, marker):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGTERM)  # its own session: gunicorn's workers with it
            deadline = time.monotonic() + 20
            while _alive(pid) and time.monotonic() < deadline:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)
                time.sleep(0.2)
            if _alive(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)
        if name in state:
            _update(name, pid=None, status="down")
    if "postgres" in state:
        postgres_down()
    print("sot servers down")
    return 0


def wait(timeout: float, only: list[str]) -> int:
    deadline = time.monotonic() + timeout
    while True:
        state = read_state()
        statuses = {n: state.get(n, {}).get("status") for n in only}
        if all(s == "ready" for s in statuses.values()):
            return 0
        failed = [n for n, s in statuses.items() if s == "failed"]
        if failed:
            for n in failed:
                print(f"{n} failed: {state[n].get('error')}", file=sys.stderr)
            return 1
        if time.monotonic() > deadline:
            print(f"not ready after {timeout:.0f} s: {statuses}", file=sys.stderr)
            return 1
        time.sleep(2)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("action", choices=["up", "down", "wait", "status"])
    p.add_argument("--only", choices=SERVERS, action="append", help="one server (default: both)")
    p.add_argument("--background", action="store_true", help="up: return at once, the servers start behind")
    p.add_argument("--timeout", type=float, default=1800.0, help="wait: seconds (default 1800)")
    args = p.parse_args(argv)
    only = args.only or list(SERVERS)
    if args.action == "up" and args.background:
        STATE.mkdir(parents=True, exist_ok=True)
        for n in only:
            _update(n, status="queued", error=None)
        log = (STATE / "up.log").open("a", encoding="utf-8")
        proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "up",
                                 *[f"--only={n}" for n in only]], stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        _update("run", runner=proc.pid)
        print(f"sot servers starting in the background (pid {proc.pid}, log {STATE / 'up.log'})")
        return 0
    if args.action == "up":
        return up(only)
    if args.action == "down":
        return down()
    if args.action == "wait":
        return wait(args.timeout, only)
    print(json.dumps({k: {f: v for f, v in s.items() if f != "token"} for k, s in read_state().items()}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
