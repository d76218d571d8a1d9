#!/usr/bin/env bash
# Installs what building and testing sentry needs on Debian 12 (run as root). Idempotent.
set -euo pipefail
pkgs=(build-essential cmake ninja-build libseccomp-dev libabsl-dev libspdlog-dev libgtest-dev
      libgmock-dev libcli11-dev nlohmann-json3-dev
      # tests/workloads: the programs its scripts run (/usr/share/doc/bash comes with bash)
      bash python3 gcc make libc6-dev git tar gzip coreutils findutils grep sed mawk diffutils
      util-linux mount
      # tests/suites: CPython's own regression tests, for /usr/bin/python3; tests/workloads
      sqlite3 libpython3.11-testsuite
      # tests/workloads/egress.sh: its test network. dnsmasq-base is dnsmasq's program alone:
      # the package dnsmasq would also start a system-wide DNS server on port 53.
      iproute2 dnsmasq-base
      # tests/workloads/egress.sh: ping (ping sockets to the far side, inside the sandbox)
      iputils-ping
      # tests/workloads/network.sh: the other programs that talk over sockets
      socat curl nodejs openssh-client
      # tests/policy/audit.sh: checks the audit trail against docs/audit.schema.json
      python3-jsonschema
      # tests/policy/review.sh: GNU patch applies `sentry-run diff` output
      patch
      # tests/workloads/everyday.sh: keyctl
      keyutils
      # tests/guest/ptrace_tools.sh: the tracers it runs inside the sandbox
      strace gdb
      # tests/guest/namespace_tools.sh: bwrap inside the sandbox (util-linux has unshare)
      bubblewrap
      # tests/oci: a private dockerd (with its containerd and runc, to compare against) and a
      # busybox image built locally from busybox-static
      docker.io containerd busybox-static
      # tests/oci/podman.sh: podman 4.3 (with conmon) driving sentry as its --runtime
      podman)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi
