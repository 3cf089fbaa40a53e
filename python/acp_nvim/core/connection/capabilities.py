"""What an agent offers, read from its ``initialize`` result: past sessions (list, resume, load,
fork, close, delete), additional directories, logout, and what prompts may carry."""

from __future__ import annotations

from acp.schema import InitializeResponse, PromptCapabilities, SessionCapabilities

from ..prompting import attachments


def session_caps(info: InitializeResponse | None) -> SessionCapabilities | None:
    caps = info.agent_capabilities if info is not None else None
    return caps.session_capabilities if caps is not None else None


def offers(info: InitializeResponse | None, what: str) -> bool:
    """Whether the agent offers ``what``: list, resume, fork, close, delete, additional_directories, load, logout."""
    caps = info.agent_capabilities if info is not None else None
    if caps is None:
        return False
    if what == "load":
        return bool(caps.load_session)
    if what == "logout":
        return caps.auth is not None and caps.auth.logout is not None
    sessions = caps.session_capabilities
    return sessions is not None and getattr(sessions, what, None) is not None


def extra_dirs(info: InitializeResponse | None, roots: list[str]) -> list[str] | None:
    """``workspace_roots`` as ``additionalDirectories`` where the agent offers them (else None: not sent)."""
    return list(roots) if roots and offers(info, "additional_directories") else None


def prompt_capabilities(info: InitializeResponse | None) -> PromptCapabilities | None:
    """What the agent takes in prompts besides text (embedded context, images, audio)."""
    caps = info.agent_capabilities if info is not None else None
    return caps.prompt_capabilities if caps is not None else None


def accepts(info: InitializeResponse | None) -> attachments.Accepts:
    """What prompts may carry besides text and links (embedded context, images, audio)."""
    return attachments.Accepts.of(prompt_capabilities(info))


def embedded_context(info: InitializeResponse | None) -> bool:
    """Whether the agent accepts embedded resources in prompts (else: resource links)."""
    caps = prompt_capabilities(info)
    return bool(caps and caps.embedded_context)
