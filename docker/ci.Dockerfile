# perf-lint for any CI system:
#   docker build -f docker/ci.Dockerfile -t perf-lint .
#   docker run --rm -v "$PWD":/src perf-lint check /src
# Static checks only: no torch in this image (the analyzer never imports it).
FROM python:3.12.8-slim-bookworm

LABEL org.opencontainers.image.title="perf-lint" \
      org.opencontainers.image.description="PyTorch performance pitfalls, found statically"

WORKDIR /opt/perf-lint
COPY pyproject.toml README.md ./
COPY perf_lint/ perf_lint/
COPY analyzers/ analyzers/
COPY server/ server/
COPY cli/ cli/
COPY profiler/ profiler/
RUN pip install --no-cache-dir . \
    && useradd --create-home --uid 1000 lint

USER 1000
WORKDIR /src
ENTRYPOINT ["perf-lint"]
CMD ["check", "/src"]
