#!/usr/bin/env bash
# Installs every Debian package dynacomm needs to build, test and run. Idempotent: quiet
# and quick when everything is already there. Needs root (or sudo) only when something is
# missing.
set -euo pipefail

packages=(
  build-essential cmake ccache pkg-config
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev zlib1g-dev
  libzmq3-dev cppzmq-dev
  libtorch-dev libgloo-dev  # libgloo-dev: the headers of the Gloo libtorch links (c10d)
  dataset-fashion-mnist
  iproute2 procps      # --net netns: ip, tc, sysctl
  python3-torch        # the PyTorch DDP peer of dynacomm bench (bench/peers/ddp.py)
  python3-torchvision  # examples/torchscript_model.py: a torchvision model as a .pt file
  pybind11-dev python3-dev  # dynacomm._core, the Python package's C++ worker (src/python)
  clang libclang-rt-14-dev  # the libFuzzer targets (fuzz/, scripts/fuzz.sh)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
