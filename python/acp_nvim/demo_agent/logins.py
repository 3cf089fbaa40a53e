"""More ways to log in to the demo agent (``ACP_DEMO_REQUIRE_AUTH=all``), for the client's login flows.

* ``demo-terminal`` (a ``terminal`` method): the client runs the agent with ``--login`` in a
  terminal; it asks for a line and writes ``ACP_DEMO_LOGIN_FILE``. An agent started after that
  needs no login (``authenticate`` with this id succeeds too, for clients that still send it).
* ``demo-key`` (an ``env_var`` method, which ACP's schema no longer has): offered only with
  ``ACP_DEMO_ENV_VAR_LOGIN=1``, as older agents do. The client starts the agent with
  ``DEMO_API_KEY`` set; ``authenticate`` succeeds when it is (a key in the environment needs no
  login at all).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from acp.schema import AuthEnvVar, EnvVarAuthMethod, TerminalAuthMethod

ALL = "all"
LOGIN_FILE_ENV = "ACP_DEMO_LOGIN_FILE"
KEY_ENV = "DEMO_API_KEY"
ENV_VAR_LOGIN_ENV = "ACP_DEMO_ENV_VAR_LOGIN"
TERMINAL = TerminalAuthMethod(id="demo-terminal", name="Demo terminal login", args=["--login"],
                              description="type anything in a terminal", type="terminal")
ENV_VAR = EnvVarAuthMethod(id="demo-key", name="Demo API key", type="env_var",
                           vars=[AuthEnvVar(name=KEY_ENV, label="Demo API key", secret=True)])


def methods() -> list[TerminalAuthMethod | EnvVarAuthMethod]:
    """The methods offered besides the agent's own: ``terminal``, and ``env_var`` when asked for."""
    return [TERMINAL, ENV_VAR] if os.environ.get(ENV_VAR_LOGIN_ENV) == "1" else [TERMINAL]


def logged_in(method_id: str) -> bool:
    """Whether ``method_id`` (one of these) is satisfied now."""
    if method_id == TERMINAL.id:
        login_file = os.environ.get(LOGIN_FILE_ENV)
        return login_file is not None and Path(login_file).exists()
    return method_id == ENV_VAR.id and bool(os.environ.get(KEY_ENV))


def terminal_login() -> int:
    """``--login``: the interactive part of the terminal method."""
    sys.stdout.write("Demo login. Type anything and press Enter: ")
    sys.stdout.flush()
    answer = sys.stdin.readline().strip()
    login_file = os.environ.get(LOGIN_FILE_ENV)
    if not answer or not login_file:
        sys.stdout.write("not logged in\n")
        return 1
    Path(login_file).write_text("logged in\n", encoding="utf-8")
    sys.stdout.write("logged in\n")
    return 0
