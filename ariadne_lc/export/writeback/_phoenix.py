"""Score write-back to Arize Phoenix (see :mod:`ariadne_lc.export.writeback`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Literal

from ariadne_lc.errors import ConfigurationError, MissingExtraError
from ariadne_lc.export.writeback._protocol import RETRYABLE_STATUS, Score, ScoreTarget, WriteBackError, score_metadata

if TYPE_CHECKING:
    from phoenix.client import Client as PhoenixClient

__all__ = ["PhoenixScoreWriter"]


class PhoenixScoreWriter:
    """Span annotations in Arize Phoenix, through ``arize-phoenix-client``.

    Each score becomes one annotation on the agent span: ``name`` → annotation name, ``value`` → score,
    ``label``, ``explanation``, ``metadata``; ``key`` → the annotation ``identifier`` (Phoenix keeps one
    annotation per span, name and identifier, and updates it on a second write).

    ``sync=False`` (the default) queues the annotation in Phoenix: Phoenix retries attaching it for about
    ten minutes if the span has not arrived yet (the agent's spans are exported in batches, so it often
    has not), but a bad annotation is then dropped without telling us. ``sync=True`` inserts at once and
    reports an unknown span as a retryable 404.

    Args:
        client: A ``phoenix.client.Client``; built from ``base_url``/``api_key`` (or Phoenix's own
            ``PHOENIX_*`` variables) when omitted.
        base_url: Phoenix's URL, e.g. ``http://localhost:6006``.
        api_key: For Phoenix with authentication on.
        annotator_kind: ``"CODE"`` for rule-based audits, ``"LLM"`` when an LLM judge scored.
        sync: Insert synchronously (see above).

    Note:
        With the full ``arize-phoenix`` server package installed in the same environment, importing
        ``phoenix.client`` imports the whole server (several seconds). Install only
        ``arize-phoenix-client`` where the audit runs.
    """

    backend: Final = "phoenix"

    def __init__(
        self,
        client: PhoenixClient | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        annotator_kind: Literal["LLM", "CODE", "HUMAN"] = "CODE",
        sync: bool = False,
    ) -> None:
        if client is not None and (base_url is not None or api_key is not None):
            raise ConfigurationError("pass either a Phoenix client or base_url/api_key, not both")
        if client is None:
            try:
                from phoenix.client import Client
            except ImportError as exc:
                raise MissingExtraError("PhoenixScoreWriter", "phoenix", "It needs arize-phoenix-client.") from exc
            client = Client(base_url=base_url, api_key=api_key)
        self._client = client
        self._annotator_kind: Literal["LLM", "CODE", "HUMAN"] = annotator_kind
        self._sync = sync

    def write(self, target: ScoreTarget, score: Score) -> None:
        """Add or update the annotation. Raises :class:`WriteBackError` on any failure."""
        import httpx

        try:
            self._client.spans.add_span_annotation(
                span_id=target.span_id,
                annotation_name=score.name,
                annotator_kind=self._annotator_kind,
                label=score.label,
                score=score.value,
                explanation=score.explanation,
                metadata=score_metadata(score) or None,
                identifier=score.key,
                sync=self._sync,
            )
        except httpx.HTTPStatusError as exc:
            status = exc.response.status_code
            retryable = status in RETRYABLE_STATUS or status >= 500
            raise WriteBackError(self.backend, f"HTTP {status} for span {target.span_id}", retryable=retryable) from exc
        except httpx.TransportError as exc:
            raise WriteBackError(self.backend, f"cannot reach Phoenix: {exc}", retryable=True) from exc
        except Exception as exc:
            raise WriteBackError(self.backend, f"annotation rejected: {exc!r}", retryable=False) from exc
