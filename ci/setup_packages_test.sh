#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Bazel entry point of ci/setup_packages_test.py (scripts/setup.sh installs nothing that would
# rebuild /boot's initramfs).
set -euo pipefail
exec python3 ci/setup_packages_test.py scripts/setup.sh
