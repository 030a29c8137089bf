"""Which onnxruntime providers the embedder asks for on each device setting."""

from __future__ import annotations

import pytest

from locus.retrieval.adapters.onnx_embedder import execution_providers
from locus.retrieval.domain.errors import EmbedderUnavailable

CPU_ONLY = ["CPUExecutionProvider"]
WITH_CUDA = ["CUDAExecutionProvider", "CPUExecutionProvider"]


def test_auto_takes_the_gpu_when_onnxruntime_has_it() -> None:
    assert execution_providers("auto", WITH_CUDA) == WITH_CUDA
    assert execution_providers("auto", CPU_ONLY) == CPU_ONLY


def test_cpu_never_uses_the_gpu() -> None:
    assert execution_providers("cpu", WITH_CUDA) == CPU_ONLY


def test_cuda_without_a_cuda_provider_is_refused_with_a_fix() -> None:
    with pytest.raises(EmbedderUnavailable, match="install onnxruntime-gpu"):
        execution_providers("cuda", CPU_ONLY)
