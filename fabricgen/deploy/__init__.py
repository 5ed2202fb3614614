"""Deploy: push a checked build with nornir + napalm, one change at a time, interruptible and resumable.

Modules: ``run`` (the run: build, lock, journal, Ctrl-C), ``phases`` (one device: lock, diff,
commit, check, rollback), ``state`` (fabric lock and journal), ``report`` (outcomes and
summary), ``cli`` (``fabricgen deploy``).
"""

from fabricgen.deploy.cli import register_cli
from fabricgen.deploy.phases import candidate_config
from fabricgen.deploy.report import DeployReport, DeviceOutcome
from fabricgen.deploy.run import CHECK_TIMEOUT, Abandoned, DeployOptions, run_deploy, select
from fabricgen.deploy.state import DeployRefused

__all__ = ["CHECK_TIMEOUT", "Abandoned", "DeployOptions", "DeployRefused", "DeployReport", "DeviceOutcome",
           "candidate_config", "register_cli", "run_deploy", "select"]
