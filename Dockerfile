# 3gs for people who build images with Docker (or Podman, Buildah, Kaniko).
#
#   docker build -t 3gs --build-arg VERSION=$(git describe --tags --always) --build-arg COMMIT=$(git rev-parse HEAD) .
#   docker run -p 127.0.0.1:8080:8080 -v 3gs-data:/data 3gs
#
# The release image is built without Docker, by `go run -C release .`
# (docs/release.md); this file makes the same image: FROM scratch, the
# static binary at /3gs, user 65532, /data as the volume, the same command,
# environment and health check. Keep the two in step (release/image.go).

ARG GO_VERSION=1.26.8

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
WORKDIR /src
# Modules first, so a change to the code reuses the download layer.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG TARGETOS TARGETARCH
ARG VERSION=v0.0.0-docker
ARG COMMIT=unknown
# Static (CGO off) and cross-compiled on the build machine's platform;
# -trimpath and the explicit stamp as in release/build.go, since a build
# context has no .git for the go command to read the commit from.
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -buildvcs=false \
      -ldflags="-s -w -X github.com/three-good-sources/3gs/internal/cli.stampVersion=${VERSION} -X github.com/three-good-sources/3gs/internal/cli.stampCommit=${COMMIT}" \
      -o /out/rootfs/3gs ./cmd/3gs
# The files a scratch image lacks: a user for the server, CA certificates
# for peers' registries and --follow origins over HTTPS (the release image
# takes them from Go's x509roots/fallback instead), a /tmp, and an empty
# /data the user owns, mode 700 since it holds the curator key and tokens.
# Each tree is copied by its contents below, which keeps the modes of the
# directories inside it (a COPY of a directory itself would not).
RUN mkdir -p /out/rootfs/etc/ssl/certs /out/rootfs/tmp /out/volume/data \
 && cp /etc/ssl/certs/ca-certificates.crt /out/rootfs/etc/ssl/certs/ \
 && printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/data:/sbin/nologin\n' > /out/rootfs/etc/passwd \
 && printf 'root:x:0:\nnonroot:x:65532:\n' > /out/rootfs/etc/group \
 && chmod 1777 /out/rootfs/tmp && chmod 700 /out/volume/data

FROM scratch
COPY --from=build /out/rootfs/ /
COPY --from=build --chown=65532:65532 /out/volume/ /
USER 65532:65532
ENV HOME=/data THREEGS_PEER_CACHE=/data/peers
WORKDIR /data
VOLUME /data
EXPOSE 8080
STOPSIGNAL SIGTERM
# No curl in scratch: the binary asks its own /health (3gs health).
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 CMD ["/3gs", "health"]
LABEL org.opencontainers.image.title="3gs" \
      org.opencontainers.image.source="https://github.com/three-good-sources/3gs" \
      org.opencontainers.image.licenses="Apache-2.0" \
      io.modelcontextprotocol.server.name="io.github.three-good-sources/3gs"
ENTRYPOINT ["/3gs"]
CMD ["serve", "--http", "0.0.0.0:8080"]
