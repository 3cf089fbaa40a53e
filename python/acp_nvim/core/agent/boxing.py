"""How an agent process starts: boxed (``core/box``) as its config says, or plainly, and why."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .. import box
from ..box import overlay as overlays
from ..box.command import checked_prefix
from ..box.plan import DEFAULT_ENV_SWITCH, agent_box, command_box, default_on
from ..config import AgentSpec
from ..terminal.place import CHECK


@dataclass(frozen=True, slots=True)
class Boxing:
    """The agent's argv and environment, and the box its commands run in (None: unboxed)."""

    argv: list[str]
    env: dict[str, str]
    bwrap: str = ""
    box: box.Box | None = None
    note: str | None = None
    """One line for the session's start when the agent runs unboxed; None when boxed."""
    overlay: overlays.Overlay | None = None
    """Where the agent's writes to the workspace go (None: straight to the user's tree)."""
    writes: str = ""
    """Why the workspace is shown read-write without an overlay ('' with one)."""

    @property
    def summary(self) -> str:
        if self.box is None:
            return "not boxed"
        how = ("its writes are proposals (overlay)" if self.overlay is not None
               else f"it writes the workspace ({self.writes})")
        return f"boxed by {self.bwrap}; {how}"

    def command_prefix(self, command: str, env: Iterable[tuple[str, str]], cwd: str) -> tuple[str, ...]:
        """What runs a command of the agent in its box (``bwrap … --``); () for an unboxed agent."""
        if self.box is None:
            return ()
        argv = box.wrap(self.bwrap, [], cwd, command_box(self.box, command, env))
        return tuple(argv) if self.overlay is None else tuple(checked_prefix(self.overlay.mount(argv), CHECK))


def prepare(name: str, spec: AgentSpec, cwd: str, roots: list[str], editor_env: Mapping[str, str],
            programs: Sequence[tuple[str, Sequence[str]]] = ()) -> Boxing:
    """The agent's start (blocking: may probe ``bwrap`` once per editor); ``programs`` are the ones the
    agent starts itself (its stdio MCP servers), shown in its box."""
    plain = Boxing([spec.command, *spec.args], {**editor_env, **spec.env})
    settings = spec.boxed(default_on(editor_env))
    if settings is None:
        opt_in = f"the box is opt-in: box = true or {DEFAULT_ENV_SWITCH}=on"
        why = "box = false" if spec.box.enabled is False else opt_in
        return Boxing(plain.argv, plain.env, note=unboxed_line(name, why))
    found = box.find()
    if isinstance(found, box.Missing):
        return Boxing(plain.argv, plain.env, note=unboxed_line(name, found.reason))
    made, program = agent_box(settings.plan(), spec.command, spec.args, cwd, roots, spec.env, editor_env, programs)
    argv = box.wrap(found.path, [program, *spec.args], cwd, made)
    layers, why = _overlay(found, made.roots)
    argv = layers.mount(argv) if layers is not None else argv
    return Boxing(argv, {"PATH": made.env.get("PATH", "")}, found.path, made, overlay=layers, writes=why)


def _overlay(found: box.Bwrap, roots: Sequence[str]) -> tuple[overlays.Overlay | None, str]:
    """The overlay the agent writes into, or why there is none."""
    if not found.overlay:
        return None, f"{found.label} has no overlays: 0.10 or newer has"
    failed = overlays.works(found.path)
    if failed:
        return None, f"an overlay cannot be mounted here: {failed}"
    try:
        return overlays.Overlay(roots), ""
    except OSError as exc:
        return None, f"no folder for the overlay: {exc.strerror or exc}"


def unboxed_line(name: str, why: str) -> str:
    return (f"agent {name!r} runs without a box ({why}): it and its commands can read and write "
            "everything you can (:help acp_nvim-box)")


def start_note(name: str, spec: AgentSpec, editor_env: Mapping[str, str]) -> str | None:
    """The line a session's start shows when its agent will run unboxed (blocking: may probe
    ``bwrap``); None for a boxed or remote agent."""
    if spec.remote:
        return None
    if spec.boxed(default_on(editor_env)) is None:
        return unboxed_line(name, "box = false") if spec.box.enabled is False else None
    found = box.find()
    return unboxed_line(name, found.reason) if isinstance(found, box.Missing) else None
