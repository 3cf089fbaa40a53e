"""What stands between a session's agent and the user's files and shell: the file side, the
permission broker, the write and exec gates, the unreviewed flag and the terminals."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..checkpoints.recorder import Recorder
from ..config import AgentSpec, Settings
from ..files.paths import PathPolicy
from ..files.reconcile import Reconciler
from ..files.service import FileService
from ..files.side import FileSide
from ..log.ring import LogRing
from ..permissions.accepted import AcceptedEdits
from ..permissions.broker import PermissionBroker, Scope
from ..permissions.exec_gate import ExecGate
from ..permissions.unreviewed import UnreviewedEdits
from ..permissions.write_gate import WriteGate
from ..port import EditorPort
from ..questions import Questions
from ..terminal.service import TerminalService
from ..transcript.conversation import Conversation


@dataclass(frozen=True, slots=True)
class Guards:
    side: FileSide
    files: FileService
    reconciler: Reconciler
    permissions: PermissionBroker
    unreviewed: UnreviewedEdits
    write_gate: WriteGate
    """Every write passes it (fs writes, buffer writes, reverts, corrections); it follows disk writers."""
    terminal_gate: ExecGate
    terminals: TerminalService
    """terminal/* through the editor, gated by the permission policy."""
    checkpoints: Recorder
    """Each turn's files before the agent changed them (fs, disk, commands), for a rewind."""

    @classmethod
    def build(cls, key: str, agent: str, spec: AgentSpec, settings: Settings, editor: EditorPort, cwd: str,
              questions: Questions, log: LogRing, transcript: Conversation, report: Callable[[str], None],
              waiting: Callable[[bool], None]) -> Guards:
        policy = PathPolicy.for_workspace(cwd, [*settings.workspace_roots, *([spec.cwd] if spec.cwd else [])])
        side = FileSide.create(editor, policy, questions=questions, owner=key, log=log, notice=transcript.notice)
        files = side.service
        permissions = PermissionBroker(
            Scope(key, agent, cwd), settings.permissions, questions=questions, editor=editor, transcript=transcript,
            files=files, accepted=AcceptedEdits(policy), report=report, waiting=waiting)
        unreviewed = UnreviewedEdits(transcript, settings.keymaps.revert)
        write_gate = WriteGate(permissions, transcript, cwd, report, unreviewed.flag, side.ledger.view_open)
        files.gate = write_gate
        files.changes.listeners.append(write_gate.disk_changed)
        terminal_gate = ExecGate(permissions, transcript, cwd)
        terminals = TerminalService(key, editor, files.policy, cwd, settings.terminals, allow=terminal_gate.allow,
                                    refresh=transcript.tools.refresh_terminal, log=log)
        transcript.terminal_view = terminals.preview
        checkpoints = Recorder(key, cwd, settings.checkpoints, editor, files, transcript,
                               lambda: side.reconciler.unsaved, report)
        terminals.around = checkpoints
        return cls(side, files, side.reconciler, permissions, unreviewed, write_gate, terminal_gate, terminals,
                   checkpoints)
