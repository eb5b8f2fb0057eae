"""Score write-back to LangSmith (see :mod:`ariadne_lc.export.writeback`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final
from uuid import UUID

from ariadne_lc.errors import ConfigurationError, MissingExtraError
from ariadne_lc.export.writeback._protocol import (
    RETRYABLE_STATUS,
    Score,
    ScoreTarget,
    WriteBackError,
    http_status,
    score_metadata,
)

if TYPE_CHECKING:
    import langsmith

__all__ = ["LangSmithScoreWriter"]


class LangSmithScoreWriter:
    """Feedback in LangSmith, through ``langsmith.Client.create_feedback``.

    The run is ``target.run_id`` when set (traces from LangSmith's own LangChain tracer), otherwise the
    run id LangSmith derives from the span id when it ingests OTLP
    (``langsmith.integrations.otel.langsmith_run_id_from_otel_span_id``). ``value`` → feedback score,
    ``label`` → feedback value, ``explanation`` → comment, ``metadata`` → ``extra``; ``key`` makes the
    feedback id deterministic.

    LangSmith deprecates run feedback without the project (session) id and warns on every call without
    it, so pass ``project_id``. The request is synchronous; the client retries it up to
    ``stop_after_attempt`` times before :class:`WriteBackError` is raised.

    Only tested against a local stand-in for the LangSmith API, not a real LangSmith server.

    Args:
        client: A ``langsmith.Client``; one is built from the ``LANGSMITH_*`` variables when omitted.
        project_id: The tracing project's id (``client.read_project(project_name=...).id``).
        stop_after_attempt: Attempts per write, including the first.
    """

    backend: Final = "langsmith"

    def __init__(
        self,
        client: langsmith.Client | None = None,
        *,
        project_id: UUID | str | None = None,
        stop_after_attempt: int = 3,
    ) -> None:
        if stop_after_attempt < 1:
            raise ConfigurationError(f"stop_after_attempt must be at least 1, got {stop_after_attempt}")
        if client is None:
            try:
                import langsmith as _langsmith
            except ImportError as exc:  # pragma: no cover - langsmith comes with langchain-core
                raise MissingExtraError("LangSmithScoreWriter", "langsmith", "It needs the langsmith package.") from exc
            client = _langsmith.Client()
        self._client = client
        self._project_id = project_id
        self._stop_after_attempt = stop_after_attempt

    def write(self, target: ScoreTarget, score: Score) -> None:
        """Create the feedback. Raises :class:`WriteBackError` on any failure."""
        from langsmith import utils as ls_utils
        from langsmith.integrations.otel import langsmith_run_id_from_otel_span_id

        run_id = target.run_id or langsmith_run_id_from_otel_span_id(int(target.span_id, 16))
        try:
            self._client.create_feedback(
                run_id=run_id,
                key=score.name,
                score=score.value,
                value=score.label,
                comment=score.explanation,
                extra=score_metadata(score) or None,
                feedback_id=score.stable_id(target) if score.key is not None else None,
                session_id=self._project_id,
                stop_after_attempt=self._stop_after_attempt,
            )
        except (ls_utils.LangSmithConnectionError, ls_utils.LangSmithRequestTimeout) as exc:
            raise WriteBackError(self.backend, f"cannot reach LangSmith: {exc}", retryable=True) from exc
        except Exception as exc:
            status = http_status(exc)
            retryable = status is not None and (status in RETRYABLE_STATUS or status >= 500)
            raise WriteBackError(self.backend, f"feedback not created: {exc}", retryable=retryable) from exc
