# A CUDA runner for `perf-lint profile` on a GPU host, and the VS Code dev container:
#   docker build -f docker/cuda.Dockerfile -t perf-lint-cuda .
#   docker run --rm --gpus all -v "$PWD":/src perf-lint-cuda profile /src/train.py --rule TPL101
# The official PyTorch CUDA image already has torch, so the `profile` extra adds nothing.
FROM pytorch/pytorch:2.7.0-cuda12.6-cudnn9-runtime

LABEL org.opencontainers.image.title="perf-lint-cuda" \
      org.opencontainers.image.description="perf-lint with its profiler on CUDA"

WORKDIR /opt/perf-lint
COPY pyproject.toml README.md ./
COPY perf_lint/ perf_lint/
COPY analyzers/ analyzers/
COPY server/ server/
COPY cli/ cli/
COPY profiler/ profiler/
# hadolint ignore=DL3013
RUN pip install --no-cache-dir ".[profile]"  # the local source tree: its version is this checkout

WORKDIR /src
ENTRYPOINT ["perf-lint"]
CMD ["--help"]
