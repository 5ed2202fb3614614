"""The API token of a source of truth: from the environment or a file, never from the command line.

First hit wins: `--token-file FILE`, `$FABRICGEN_<SERVER>_TOKEN`, `$FABRICGEN_<SERVER>_TOKEN_FILE`
(<SERVER> = NETBOX, NAUTOBOT, ...).  The token is never printed or logged: every message names
where it came from, not what it is, and `redact` scrubs it from any text that could reach output.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from fabricgen.errors import FabricError

MAX_TOKEN_FILE = 4096


def env_names(server: str) -> tuple[str, str]:
    up = server.upper()
    return f"FABRICGEN_{up}_TOKEN", f"FABRICGEN_{up}_TOKEN_FILE"


def find_token(server: str, token_file: str | None) -> tuple[str, str]:
    """(token, where it came from); FabricError naming the fix when there is none."""
    var, file_var = env_names(server)
    if token_file:
        return _from_file(Path(token_file), "--token-file"), f"file {token_file}"
    value = os.environ.get(var, "").strip()
    if value:
        return value, f"${var}"
    path = os.environ.get(file_var, "").strip()
    if path:
        return _from_file(Path(path), f"${file_var}"), f"file {path} (${file_var})"
    raise FabricError.single(
        f"--{server}", "token", f"no API token for {server}",
        f"export {var}=<token>, or put it in a file (mode 0600) and pass --token-file FILE or set ${file_var}; "
        "a token is never taken from the command line")


def _from_file(path: Path, how: str) -> str:
    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_TOKEN_FILE:
            raise FabricError.single(str(path), "token", f"{how}: not a regular file of at most "
                                     f"{MAX_TOKEN_FILE} bytes", "put only the token in the file")
        text = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise FabricError.single(str(path), "token", f"{how}: cannot read the token file "
                                 f"({type(exc).__name__})", "check the path and its permissions") from None
    if not text or len(text.split()) != 1:
        raise FabricError.single(str(path), "token", f"{how}: the file must hold the token alone on one line",
                                 "put only the token in the file")
    return text


def redact(text: str, token: str) -> str:
    """`text` with every occurrence of the token (and of its longer pieces) replaced."""
    if not token:
        return text
    out = text.replace(token, "<token>")
    if "." in token:  # NetBox v2 tokens: nbt_<key>.<secret>; never show the secret half either
        secret = token.split(".", 1)[1]
        if len(secret) >= 8:
            out = out.replace(secret, "<token>")
    return out
