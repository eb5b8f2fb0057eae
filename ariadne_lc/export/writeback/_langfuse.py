"""Score write-back to Langfuse (see :mod:`ariadne_lc.export.writeback`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ariadne_lc.errors import ConfigurationError, MissingExtraError
from ariadne_lc.export.writeback._protocol import Score, ScoreTarget, WriteBackError, score_metadata

if TYPE_CHECKING:
    import langfuse

__all__ = ["LangfuseScoreWriter"]


class LangfuseScoreWriter:
    """Scores in Langfuse, through the Langfuse Python SDK's ``create_score``.

    Langfuse keys OTLP-ingested traces by the OpenTelemetry ids, so the target's ``trace_id`` and
    ``span_id`` are Langfuse's trace id and observation id. A numeric ``value`` becomes a ``NUMERIC``
    score (the label goes into its metadata and is prefixed to the comment); a score with only a
    label becomes a ``CATEGORICAL`` score. ``key`` makes the score id deterministic, so writing the
    same score twice updates it.

    Delivery is fire-and-forget: ``create_score`` queues the score for a background thread, which logs
    (does not raise) rejected batches. ``write`` raises :class:`WriteBackError` only if the SDK itself
    raises. Call :meth:`flush` before the process exits.

    Only tested against a local stand-in for the ingestion endpoint, not a real Langfuse server.

    Args:
        client: A ``langfuse.Langfuse``. When omitted one is built from the arguments or the
            ``LANGFUSE_*`` variables, with a private tracer provider, because a Langfuse client built
            without one installs itself as the *global* tracer provider.
        public_key, secret_key, base_url: Passed to ``Langfuse`` when ``client`` is omitted.
        environment: Langfuse environment of the scores.
    """

    backend: Final = "langfuse"

    def __init__(
        self,
        client: langfuse.Langfuse | None = None,
        *,
        public_key: str | None = None,
        secret_key: str | None = None,
        base_url: str | None = None,
        environment: str | None = None,
    ) -> None:
        if client is not None and (public_key or secret_key or base_url):
            raise ConfigurationError("pass either a Langfuse client or its keys/base_url, not both")
        if client is None:
            try:
                from langfuse import Langfuse
                from opentelemetry.sdk.trace import TracerProvider
            except ImportError as exc:
                raise MissingExtraError("LangfuseScoreWriter", "langfuse", "It needs the langfuse package.") from exc
            client = Langfuse(
                public_key=public_key,
                secret_key=secret_key,
                base_url=base_url,
                tracer_provider=TracerProvider(shutdown_on_exit=False),
            )
        self._client = client
        self._environment = environment

    def write(self, target: ScoreTarget, score: Score) -> None:
        """Queue the score. Raises :class:`WriteBackError` only if the SDK raises synchronously."""
        metadata = score_metadata(score)
        score_id = score.stable_id(target).hex if score.key is not None else None
        try:
            if score.value is not None:
                if score.label is not None:
                    metadata["label"] = score.label
                comment = score.explanation
                if score.label is not None:
                    comment = f"{score.label}: {comment}" if comment else score.label
                self._client.create_score(
                    name=score.name,
                    value=float(score.value),
                    data_type="NUMERIC",
                    trace_id=target.trace_id,
                    observation_id=target.span_id,
                    score_id=score_id,
                    comment=comment,
                    metadata=metadata or None,
                    environment=self._environment,
                )
            else:
                assert score.label is not None  # Score guarantees a value or a label
                self._client.create_score(
                    name=score.name,
                    value=score.label,
                    data_type="CATEGORICAL",
                    trace_id=target.trace_id,
                    observation_id=target.span_id,
                    score_id=score_id,
                    comment=score.explanation,
                    metadata=metadata or None,
                    environment=self._environment,
                )
        except Exception as exc:
            raise WriteBackError(self.backend, f"score not queued: {exc!r}", retryable=False) from exc

    def flush(self) -> None:
        """Block until queued scores have been sent (or their failure logged by the SDK)."""
        self._client.flush()
