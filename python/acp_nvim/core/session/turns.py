"""What runs a session's turns: the prompt queue, the stream of ``session/update``, the agent's
questions, steering and the failed-turn offers, wired to the guards and the session's health."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..config import Settings
from ..connection.mode_policy import ModeWatch
from ..conversation.asking import QuestionDesk
from ..conversation.details import SessionDetails
from ..conversation.failed_turns import FailedTurns
from ..conversation.prompt import Prompt, TurnRunner
from ..conversation.queue import PromptQueue
from ..conversation.steering import Steering
from ..conversation.updates import UpdateRouter
from ..log.ring import LogRing
from ..port import EditorPort
from ..prompting import attachments
from ..questions import Questions
from ..transcript.conversation import Conversation
from .guards import Guards
from .health import Health
from .lifecycle import Lifecycle
from .signals import Signals


@dataclass(frozen=True, slots=True)
class TurnParts:
    queue: PromptQueue
    """The prompts, run one turn at a time."""
    stream: UpdateRouter
    """``session/update`` straight to the transcript (and the observers of tool calls and modes)."""
    desk: QuestionDesk
    """``elicitation/*`` and ``$/cancel_request``."""
    steering: Steering
    failed_turns: FailedTurns

    @classmethod
    def build(cls, key: str, agent: str, settings: Settings, editor: EditorPort, questions: Questions,
              details: SessionDetails, transcript: Conversation, log: LogRing, signals: Signals, lifecycle: Lifecycle,
              health: Health, guards: Guards, mode_watch: ModeWatch, submit: Callable[[Prompt], str]) -> TurnParts:
        turns = TurnRunner(transcript, details, guards.side, guards.permissions.start_turn,
                           attachments.Packer(editor.buffer_text, settings.media.max_bytes, transcript.notice),
                           guards.checkpoints)
        queue = PromptQueue(key, health, turns, transcript, log, settings.timeouts, health.watch_hooks())
        desk = QuestionDesk(key, agent, questions, editor, transcript, log,
                            closed=lambda: queue.cancelling or lifecycle.ended, waiting=health.waiting)
        steering = Steering(settings.chat.steer, queue.prompts, transcript, log, signals.changed, signals.report)
        failed_turns = FailedTurns(transcript, settings.action_keys, health.agent_names, submit, signals.changed,
                                   signals.report, known_reset=details.limits.reset_of_reached)
        stream = UpdateRouter(transcript, details, log, [queue.note_tool_call, guards.reconciler.observe,
                                                         guards.permissions.on_tool_call, guards.checkpoints.observe],
                              signals.changed, mode_watch.reported, turns=queue)
        return cls(queue, stream, desk, steering, failed_turns)
